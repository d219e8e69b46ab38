"""Node names survive optimization: every op a pass creates is named after what it comes from.

A user reads node names (dumps, profiles, `Graph.visualize`); an op without a location shows a
generated name (`ge.trans_data#5`, api/node.py `node_name`). Each registered pass runs here on a
small model whose ops are all named, after the passes that prepare its input, and afterwards no op
may lack a name; the passes that create ops must have created some, so no case checks nothing.
Then O3 on ResNet-50 (at 32x32: the same layers and formats) leaves no generated name, and the
names follow the rules: a fused group is its anchor's, an inserted TransData is `<value>/trans_data`,
a folded weight `<the weight it replaces>/bn_folded`.
"""

from __future__ import annotations

import functools
import gzip
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from training_models import cnn, deep_mlp, mlp
from xdsl.dialects import builtin, func
from xdsl.ir import Operation
from xdsl.traits import IsTerminator

from ge.frontend import models
from ge.frontend.onnx_importer import import_model
from ge.ge_dialects import fused, ge
from ge.ge_dialects.context import make_context
from ge.ge_dialects.ge.base import location_name
from ge.ge_dialects.ge.weights import attach_weights
from ge.interpreter.runner import main_function
from ge.passes import PROJECT_PASSES, XDSL_PASSES
from ge.passes.fuse_trans_data import LONE_OP_RULE
from ge.passes.fusion.engine import is_one_of
from ge.passes.fusion.rules import RULES as FUSION_RULES
from ge.passes.pipeline import apply_all, parse_passes


def small_resnet50() -> onnx.ModelProto:
    return models.small("resnet50", image=32)


def small_bert(opset: int = models.DEFAULT_OPSET) -> onnx.ModelProto:
    return models.bert_base(batch=1, seq=8, layers=1, hidden=32, heads=2, intermediate=64, vocab=100, opset=opset)


def rewrites() -> onnx.ModelProto:
    """What fold-bias-add and simplify rewrite by creating ops: a bias-free conv plus a per-channel
    Add, a Gemm plus an Add, two reshapes in a row (the outer shape copies a dim, so the merged one
    needs a new shape constant) and two transposes in a row."""
    rng = np.random.default_rng(0)
    weights = {
        "conv.weight": rng.standard_normal((4, 3, 3, 3)).astype(np.float32),
        "conv.shift": rng.standard_normal((1, 4, 1, 1)).astype(np.float32),
        "fc.weight": rng.standard_normal((8, 5)).astype(np.float32),
        "fc.shift": rng.standard_normal(5).astype(np.float32),
        "shape1": np.array([1, 8, 4, 8], np.int64),
        "shape2": np.array([0, 32, 8], np.int64),
        "shape3": np.array([1, 256], np.int64),
    }
    nodes = [
        helper.make_node("Conv", ["x", "conv.weight"], ["c"], name="/conv/Conv", pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c", "conv.shift"], ["ca"], name="/conv/Add"),
        helper.make_node("Reshape", ["ca", "shape1"], ["r1"], name="/Reshape"),
        helper.make_node("Reshape", ["r1", "shape2"], ["r2"], name="/Reshape_1"),
        helper.make_node("Transpose", ["r2"], ["t1"], name="/Transpose", perm=[0, 2, 1]),
        helper.make_node("Transpose", ["t1"], ["t2"], name="/Transpose_1", perm=[1, 0, 2]),
        helper.make_node("Reshape", ["t2", "shape3"], ["flat"], name="/Reshape_2"),
        helper.make_node("Gemm", ["p", "fc.weight"], ["g"], name="/fc/Gemm"),
        helper.make_node("Add", ["g", "fc.shift"], ["y"], name="/fc/Add"),
    ]
    graph = helper.make_graph(
        nodes,
        "rewrites",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8]),
            helper.make_tensor_value_info("p", TensorProto.FLOAT, [2, 8]),
        ],
        [
            helper.make_tensor_value_info("flat", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
        ],
        [numpy_helper.from_array(a, k) for k, a in weights.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


MODELS = {
    "resnet50@32": (small_resnet50, False),
    "bert": (small_bert, False),
    "bert@opset13": (functools.partial(small_bert, 13), False),  # LayerNorm exported as its parts
    "scripted_control": (
        lambda: onnx.load_from_string(
            gzip.decompress((Path(__file__).parents[1] / "corpus/dynamic/scripted_control.onnx.gz").read_bytes())
        ),
        False,
    ),
    "bert@dynamic": (
        lambda: models.bert_base(batch="batch", seq="seq", layers=1, hidden=32, heads=2, intermediate=64, vocab=100),
        False,
    ),
    "rewrites": (rewrites, False),
    "mlp": (lambda: mlp(np.random.default_rng(0))[0], True),
    "deep_mlp": (lambda: deep_mlp(np.random.default_rng(0), depth=4, width=8, batch=4)[0], True),
    "cnn_f32": (lambda: cnn(np.random.default_rng(0), np.float32)[0], True),
    "cnn_logits": (lambda: cnn(np.random.default_rng(0), np.float32, mse=False)[0], True),
}

O2 = "ge-optimize{level=2}"
O3 = "ge-optimize{level=3}"
LOWERED = f"{O3},lower-to-tasks,plan-memory"
FORWARD = "infer-shapes,fold-constants,simplify"
TRAINED = "autodiff{loss=loss},apply-optimizer{kind=sgd}"

#: (pass as ge-opt names it, model, the passes before it, whether it creates ops there).
CASES = [
    ("fold-conv-bn", "resnet50@32", "infer-shapes", True),
    ("fold-bias-add", "rewrites", "infer-shapes", True),
    ("fold-constants", "bert", "infer-shapes", True),
    ("simplify", "rewrites", "infer-shapes", True),
    ("recognize-layer-norm", "bert@opset13", FORWARD, True),
    ("recognize-gelu", "bert", FORWARD, True),
    ("recognize-attention", "bert", FORWARD, True),
    ("merge-constants", "bert", "infer-shapes", False),
    ("mixed-precision{mode=allow_mix_precision}", "resnet50@32", "infer-shapes", True),
    ("mixed-precision{mode=force_fp16}", "bert", O2, True),
    ("cancel-casts", "bert", "infer-shapes,mixed-precision{mode=force_fp16}", False),
    ("assign-formats", "resnet50@32", "infer-shapes,fold-conv-bn", True),
    ("insert-trans-data", "resnet50@32", "infer-shapes,assign-formats{insert=false}", True),
    ("cancel-trans-data", "resnet50@32", "infer-shapes,assign-formats", False),
    ("adjust-hw-layout", "resnet50@32", "infer-shapes,assign-formats", False),
    ("specialize-gears", "resnet50@32", "infer-shapes", False),
    ("fold-symbolic-shapes", "bert@dynamic", "", True),
    ('bind-dims{sizes="batch=1,seq=8"}', "bert@dynamic", O3, True),
    ("partition-dynamic", "scripted_control", "", True),
    ("sink-control-flow", "scripted_control", 'bind-dims{sizes="batch=2"},partition-dynamic', True),
    ('input-shape{shape="input_ids:1,8;attention_mask:1,8"}', "bert@dynamic", "", False),
    ("inline-control-flow", "resnet50@32", "infer-shapes", False),
    ("merge-trans-data", "resnet50@32", "infer-shapes,assign-formats,cancel-trans-data", False),
    ("fold-trans-data", "resnet50@32", "infer-shapes,assign-formats,cancel-trans-data,merge-trans-data", True),
    ("fuse-ops", "resnet50@32", O2, True),
    ("fuse-ops", "bert", O2, True),
    ("lower-to-tasks", "resnet50@32", O3, True),
    ("plan-memory", "bert", f"{O3},lower-to-tasks", False),
    ("relax-reuse", "bert", LOWERED, False),
    ("lower-to-streams{streams=4}", "bert", LOWERED, True),
    ("verify-streams", "bert", f"{LOWERED},lower-to-streams{{streams=4}}", False),
    ("add-loss{output=y}", "cnn_logits", "", True),
    ("autodiff{loss=loss}", "mlp", "", True),
    ("apply-optimizer{kind=sgd}", "mlp", "autodiff{loss=loss}", True),
    ("apply-optimizer{kind=momentum}", "mlp", "autodiff{loss=loss}", True),
    ("apply-optimizer{kind=adam}", "mlp", "autodiff{loss=loss}", True),
    ("checkpoint{policy=sqrt}", "deep_mlp", "autodiff{loss=loss}", True),
    ("loss-scale{kind=static}", "cnn_f32", TRAINED, True),
    ("loss-scale{kind=dynamic}", "cnn_f32", TRAINED, True),
    ("accumulate-gradients{micro_batches=2}", "mlp", "", True),
    ("data-parallel{devices=2}", "mlp", "autodiff{loss=loss}", True),
    ("infer-shapes", "bert", "", False),
    ("require-graph-level", "bert", "", False),
    ("set-target{target=ascend910}", "bert", "", False),
    ("cse", "bert", "infer-shapes", False),
    ("dce", "bert", "infer-shapes", False),
    ("canonicalize", "bert", "infer-shapes", False),
    (O3, "bert", "", True),
    (O3, "resnet50@32", "", True),
]


def load(model: str) -> builtin.ModuleOp:
    make, training = MODELS[model]
    module, weights = import_model(make(), training=training)
    attach_weights(module, weights)
    return module


def structural(op: Operation) -> bool:
    """Ops that are not nodes: the module, functions and terminators (returns, yields)."""
    return isinstance(op, builtin.ModuleOp | func.FuncOp) or op.has_trait(IsTerminator)


def generated(module: builtin.ModuleOp) -> list[Operation]:
    """The nodes with no name of their own: `Node.name` shows them as `<op>#<position>`."""
    return [op for op in module.walk() if not structural(op) and location_name(op) is None]


def _shown(ops: list[Operation]) -> str:
    return ", ".join(sorted({op.name for op in ops}))


@pytest.mark.parametrize("spec, model, before, creates", CASES, ids=[f"{c[0]}-on-{c[1]}" for c in CASES])
def test_a_pass_names_the_ops_it_creates(spec, model, before, creates):
    module = load(model)
    ctx = make_context()
    if before:
        apply_all(ctx, module, parse_passes(before))
    assert not generated(module), f"the input already has unnamed ops: {_shown(generated(module))}"
    old = {id(op) for op in module.walk()}
    apply_all(ctx, module, parse_passes(spec))
    made = [op for op in module.walk() if id(op) not in old and not structural(op)]
    unnamed = generated(module)
    assert not unnamed, f"{spec} made ops without a name: {len(unnamed)} ({_shown(unnamed)})"
    if creates:
        assert made, f"{spec} created no op on {model}: the case checks nothing"


def test_every_registered_pass_has_a_case():
    """A new pass joins the table above (a pass that creates ops must name them)."""
    covered = {parse_passes(spec)[0].name for spec, *_ in CASES if spec != O3} | {"ge-optimize"}
    assert set(PROJECT_PASSES) | set(XDSL_PASSES) <= covered | {p.name for p in parse_passes(O3)}


@pytest.fixture(scope="module")
def resnet_o3() -> builtin.ModuleOp:
    module = load("resnet50@32")
    apply_all(make_context(), module, parse_passes(O3))
    return module


def test_resnet50_after_o3_has_no_generated_name(resnet_o3):
    assert len(generated(resnet_o3)) == 0


@pytest.mark.parametrize("model, count", [("resnet50@32", 50), ("bert", 9)])
def test_a_group_is_named_after_its_anchor(model, count):
    """Not after its first member: BERT's groups start with a cloned scalar constant, a producer
    (the Add before a LayerNorm) or a layout op before the attention; a kernel fuse-trans-data
    forms around a lone op is named after that op, not after its conversion."""
    module = load(model)
    apply_all(make_context(), module, parse_passes(O3))
    rules = {r.name: r for r in FUSION_RULES}
    groups = [op for op in module.walk() if isinstance(op, fused.GroupOp)]
    assert len(groups) == count
    for group in groups:
        if group.rule.data == LONE_OP_RULE:
            anchor = next(m for m in group.members if not isinstance(m, ge.TransDataOp))
        else:
            anchor = next(m for m in group.members if is_one_of(m, rules[group.rule.data].anchor))
        assert location_name(group) == location_name(anchor), group.rule.data


def test_the_names_say_where_ops_come_from(resnet_o3):
    block = main_function(resnet_o3).body.block  # the graph's nodes (a group's body holds its members)
    names = {location_name(op): op for op in block.ops if location_name(op)}
    assert isinstance(names["input/trans_data"], ge.TransDataOp)  # the image into NC1HWC0
    pooled = names["/Flatten"]  # the pooled image's NC1HWC0 -> NCHW, a view, read by the flatten's load
    assert isinstance(pooled, fused.GroupOp) and pooled.rule.data == LONE_OP_RULE
    assert [location_name(m) for m in pooled.members] == ["/avgpool/GlobalAveragePool/trans_data", "/Flatten"]
    folded = names["conv1.weight/bn_folded"]  # conv1's weight with bn1 folded in (FRACTAL_Z after fold-trans-data)
    assert isinstance(folded, ge.ConstantOp) and folded.weight_key is not None
    assert isinstance(names["bn1.bias/bn_folded"], ge.ConstantOp)  # conv1 has no bias: bn1's offset becomes one
    assert isinstance(names["/conv1/Conv"], fused.GroupOp)
