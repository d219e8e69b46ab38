"""Backward fusion (docs/fusion.md, "Backward fusion"): bias_grad, norm_grad and batch_norm_activation
on training steps, the engine's shared producers and the benefit's critical-path charge; each
constraint and engine feature with a mutation test (dropped, a wrong or missing group is caught)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import training_models
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerType, ModuleOp
from xdsl.ir import BlockArgument

from ge.frontend import models
from ge.frontend.onnx_importer import import_model
from ge.ge_dialects import fused, ge
from ge.ge_dialects.ge.base import constant_value
from ge.ge_dialects.ge.weights import attach_weights, clone_with_weights
from ge.interpreter.runner import main_function, run
from ge.passes import remarks
from ge.passes.fuse_ops import FuseOpsPass
from ge.passes.fusion import engine as fusion_engine
from ge.passes.fusion import rules as fusion_rules
from ge.passes.fusion.census import census
from ge.passes.fusion.cost import CostModel
from ge.passes.fusion.engine import Candidate, FusionEngine, FusionRule
from ge.passes.ge_optimize import GeOptimizePass
from ge.passes.pipeline import apply_all, parse_passes
from ge.target import DEFAULT_TARGET, load_target
from ge.tools.common import make_context, parse_module

LIT = Path(__file__).parent / "fusion" / "fuse_ops_backward.mlir"
STEP = "autodiff,apply-optimizer{kind=momentum lr=0.01}"


def lit_case(name: str) -> ModuleOp:
    """One `// -----` case of the lit test, by its function's name."""
    for chunk in LIT.read_text().split("// -----"):
        if f"func.func @{name}(" in chunk:
            return parse_module(chunk, "<test>")
    raise KeyError(name)


def rule(name: str) -> FusionRule:
    return next(r for r in fusion_rules.RULES if r.name == name)


def without(rule_: FusionRule, constraint: str) -> FusionRule:
    """The rule with one constraint dropped (a mutation)."""
    kept = tuple(c for c in rule_.constraints if c.name != constraint)
    assert len(kept) == len(rule_.constraints) - 1
    return replace(rule_, constraints=kept)


def fuse(module: ModuleOp, rules: list[FusionRule]) -> ModuleOp:
    target = load_target(DEFAULT_TARGET)
    FusionEngine(rules, CostModel(target), target.buffers.ub).run(module)
    module.verify()
    return module


def groups(module: ModuleOp, name: str) -> list[fused.GroupOp]:
    return [op for op in module.walk() if isinstance(op, fused.GroupOp) and op.rule.data == name]


def work(group: fused.GroupOp) -> list[str]:
    """The group's ops, without the scalar constants outlining clones in."""
    return [op.name for op in group.members if not isinstance(op, ge.ConstantOp)]


# -- invariants the constraints guard ----------------------------------------------------------------


def _summed_axes(group: fused.GroupOp, op: ge.ReduceSumOp) -> list[int]:
    """The constant axes of a member reduce_sum (outlining makes a non-scalar constant an operand)."""
    axes = op.axes
    assert axes is not None
    if isinstance(axes, BlockArgument):
        axes = group.operands[axes.index]
    values = constant_value(axes)
    assert values is not None, "reduce_sum axes are not constant"
    rank = len(op.data.type.get_shape())
    return sorted(int(a) % rank for a in values.reshape(-1))


def assert_bias_sums_only(module: ModuleOp) -> None:
    """Every reduce_sum in a backward group sums to a bias's shape: over leading axes, or all but
    the channel axis 1."""
    for g in groups(module, "bias_grad") + groups(module, "norm_grad"):
        for op in g.members:
            if isinstance(op, ge.ReduceSumOp):
                axes = _summed_axes(g, op)
                kept = [a for a in range(len(op.data.type.get_shape())) if a not in axes]
                assert kept and (axes == list(range(len(axes))) or kept == [1]), f"{g.rule.data} sums axes {axes}"


def assert_layout_read_through(module: ModuleOp) -> None:
    """A trans_data inside a backward group feeds only the group's reduction (through unary ops)."""
    for g in groups(module, "bias_grad") + groups(module, "norm_grad"):
        for op in g.members:
            if isinstance(op, ge.TransDataOp):
                value = op.results[0]
                while True:
                    (use,) = value.uses
                    reader = use.operation
                    if isinstance(reader, ge.ReduceSumOp | ge.BatchNormGradOp | ge.LayerNormGradOp):
                        break
                    assert len(reader.operands) == 1, f"{op.name} feeds {reader.name}, not the reduction"
                    value = reader.results[0]


def assert_training_batch_norm_only(module: ModuleOp) -> None:
    for g in groups(module, "batch_norm_activation"):
        (bn,) = [op for op in g.members if isinstance(op, ge.BatchNormOp)]
        assert bn.p("training_mode") == 1, "an inference batch_norm was fused as a training one"


# -- constraints: each one, and its mutation ------------------------------------------------------


def test_bias_reduction_keeps_row_sums_out():
    module = fuse(lit_case("row_sum"), [rule("bias_grad")])
    assert not groups(module, "bias_grad")
    assert_bias_sums_only(module)


def test_mutation_bias_reduction_dropped_fuses_a_row_sum():
    module = fuse(lit_case("row_sum"), [without(rule("bias_grad"), "bias-reduction")])
    with pytest.raises(AssertionError, match="sums axes"):
        assert_bias_sums_only(module)


def test_layout_at_reduction_keeps_a_trans_data_that_feeds_the_mask_out():
    module = fuse(lit_case("nz_bias_grad"), [rule("bias_grad")])
    (g,) = groups(module, "bias_grad")
    assert work(g) == ["ge.relu_grad", "ge.trans_data", "ge.reduce_sum", "ge.reshape"]
    assert_layout_read_through(module)


def test_mutation_layout_at_reduction_dropped_fuses_a_layout_change_both_ways():
    module = fuse(lit_case("nz_bias_grad"), [without(rule("bias_grad"), "layout-at-reduction")])
    with pytest.raises(AssertionError, match="not the reduction"):
        assert_layout_read_through(module)


def test_training_batch_norm_only():
    module = fuse(lit_case("bn_relu"), [rule("batch_norm_activation")])
    assert len(groups(module, "batch_norm_activation")) == 1
    assert_training_batch_norm_only(module)


def test_mutation_training_batch_norm_dropped_fuses_an_inference_one():
    module = fuse(lit_case("bn_relu"), [without(rule("batch_norm_activation"), "training-batch-norm")])
    with pytest.raises(AssertionError, match="inference batch_norm"):
        assert_training_batch_norm_only(module)


# -- engine features ------------------------------------------------------------------------------


def _bias_grad_of_shared_mask(rules: list[FusionRule]) -> None:
    module = fuse(lit_case("linear_bias_grad"), rules)
    (g,) = groups(module, "bias_grad")
    assert work(g) == ["ge.relu_grad", "ge.reduce_sum", "ge.reshape"]
    masked = g.results[0]
    assert {u.operation.name for u in masked.uses} == {"ge.matmul"}, "the shared result is written out"


def test_shared_producer_is_written_out_for_its_other_readers():
    _bias_grad_of_shared_mask([rule("bias_grad")])


def test_mutation_unshared_producers_cannot_fuse_the_mask():
    unshared = tuple(replace(step, shared=False) for step in rule("bias_grad").producers)
    with pytest.raises(AssertionError):  # the sum alone forms the group, without the mask
        _bias_grad_of_shared_mask([replace(rule("bias_grad"), producers=unshared)])


def test_mutation_retrying_without_the_last_follower_loses_the_group(monkeypatch):
    """The farthest producer goes first: the old retry (drop the last follower) never removes the
    layout change in front of the mask, so no group forms."""

    def drop_last_follower(self: Candidate) -> Candidate | None:
        if self.members[-1] is self.anchor:
            return None
        members = self.members[:-1]
        return Candidate(self.rule, self.anchor, members, fusion_engine._outputs(members))

    test_layout_at_reduction_keeps_a_trans_data_that_feeds_the_mask_out()
    monkeypatch.setattr(Candidate, "shrunk", drop_last_follower)
    with pytest.raises(ValueError):
        test_layout_at_reduction_keeps_a_trans_data_that_feeds_the_mask_out()


def test_gradient_inputs_walk_the_gradient_not_the_saved_forward_value():
    """relu_grad's `y` comes from a forward relu: the walk follows `dy` only, so the forward op stays
    out even though it is elementwise and the step takes shared producers."""
    text = """
func.func @f(%x: tensor<64x256xf32>, %dy: tensor<64x256xf32>, %w: tensor<256x128xf32>) -> (tensor<64x256xf32>, tensor<64x128xf32>, tensor<256xf32>) {
  %y = ge.relu %x : (tensor<64x256xf32>) -> tensor<64x256xf32>
  %0 = ge.relu_grad %dy, %y : (tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<64x256xf32>
  %1 = ge.matmul %0, %w : (tensor<64x256xf32>, tensor<256x128xf32>) -> tensor<64x128xf32>
  %axes = ge.constant dense<0> : tensor<1xi64>
  %2 = ge.reduce_sum %0, axes = %axes {keepdims = 0 : i64} : (tensor<64x256xf32>, tensor<1xi64>) -> tensor<256xf32>
  func.return %y, %1, %2 : tensor<64x256xf32>, tensor<64x128xf32>, tensor<256xf32>
}
"""

    def only_the_gradient(rules: list[FusionRule]) -> None:
        module = fuse(parse_module(text, "<test>"), rules)
        (g,) = groups(module, "bias_grad")
        assert work(g) == ["ge.relu_grad", "ge.reduce_sum"]

    only_the_gradient([rule("bias_grad")])
    every_operand = replace(rule("bias_grad").producers[0], inputs=(0, 1))  # the mutation
    with pytest.raises(AssertionError):
        only_the_gradient([replace(rule("bias_grad"), producers=(every_operand,))])


class _Fixed(CostModel):
    """Every op 1 us, a relu_grad+reduce_sum group 1.9 us, a join 1 us: the group saves 0.1 us of
    device time but puts 0.9 us on the critical path (the matmul now waits for the sum)."""

    def __init__(self) -> None:
        super().__init__(load_target(DEFAULT_TARGET))

    @property
    def join_s(self) -> float:
        return 1e-6

    def op_time(self, op):
        return 0.0 if isinstance(op, ge.ConstantOp | func.ReturnOp) else 1e-6

    def group_time(self, pattern, members, outputs):
        return 1.9e-6


CRITICAL = """
func.func @f(%dy: tensor<64x256xf32>, %y: tensor<64x256xf32>, %w: tensor<256x128xf32>) -> (tensor<64x128xf32>, tensor<256xf32>) {
  %0 = ge.relu_grad %dy, %y : (tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<64x256xf32> loc("/mask")
  %1 = ge.matmul %0, %w : (tensor<64x256xf32>, tensor<256x128xf32>) -> tensor<64x128xf32>
  %axes = ge.constant dense<0> : tensor<1xi64>
  %2 = ge.reduce_sum %0, axes = %axes {keepdims = 0 : i64} : (tensor<64x256xf32>, tensor<1xi64>) -> tensor<256xf32> loc("/sum")
  func.return %1, %2 : tensor<64x128xf32>, tensor<256xf32>
}
"""


def _critical_path_growth_is_charged() -> None:
    module = parse_module(CRITICAL, "<test>")
    with remarks.collected() as found:
        FusionEngine([rule("bias_grad")], _Fixed(), 1 << 20).run(module)
    assert not groups(module, "bias_grad")
    assert any("critical path +0.90 us charged" in r.reason for r in found), [r.reason for r in found]


def test_critical_path_growth_is_charged_to_the_benefit():
    _critical_path_growth_is_charged()


def test_mutation_uncharged_growth_fuses_a_slower_step(monkeypatch):
    monkeypatch.setattr(FusionEngine, "path_growth", staticmethod(lambda through, length: 0.0))
    with pytest.raises(AssertionError):
        _critical_path_growth_is_charged()


# -- training steps: fusion changes no number --------------------------------------------------------


def relu_mlp(batch: int = 8, sizes=(16, 32, 32, 4)):
    rng = np.random.default_rng(0)
    nodes, inits, x = [], [], "x"
    for i in range(len(sizes) - 1):
        w = numpy_helper.from_array(rng.standard_normal((sizes[i], sizes[i + 1])).astype(np.float32), f"fc{i}.weight")
        b = numpy_helper.from_array(rng.standard_normal(sizes[i + 1]).astype(np.float32), f"fc{i}.bias")
        inits += [w, b]
        nodes.append(helper.make_node("Gemm", [x, w.name, b.name], [f"h{i}"]))
        x = f"h{i}"
        if i < len(sizes) - 2:
            nodes.append(helper.make_node("Relu", [x], [f"a{i}"]))
            x = f"a{i}"
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, sizes[0]])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [batch, sizes[-1]])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _step(model, loss: str, precision: str) -> ModuleOp:
    """The training step at O2 (O3 without its UB fusion)."""
    module, weights = import_model(model, training=True)
    attach_weights(module, weights)
    apply_all(make_context(), module, parse_passes(f"{loss},{STEP}"))
    GeOptimizePass(level=2, precision_mode=precision).apply(make_context(), module)
    return module


def _inputs(module: ModuleOp, seed: int = 0) -> dict[str, np.ndarray]:
    """Normal floats; integers (labels, token ids) in {0, 1}, valid for every model here."""
    rng = np.random.default_rng(seed)
    fn = main_function(module)
    feeds = {}
    for t, attrs in zip(fn.function_type.inputs.data, fn.arg_attrs.data):
        name = attrs.data["ge.name"].data
        shape = tuple(t.get_shape())
        if isinstance(t.element_type, IntegerType):
            feeds[name] = rng.integers(0, 2, shape).astype(np.int64)
        else:
            feeds[name] = rng.standard_normal(shape).astype(np.float32)
    return feeds


STEPS = {
    "mlp": (lambda: relu_mlp(), "add-loss", {"bias_grad"}),
    "cnn_bn": (
        lambda: training_models.cnn(np.random.default_rng(0), dtype=np.float32, batch=4, mse=False)[0],
        "add-loss",
        {"norm_grad", "batch_norm_activation", "bias_grad"},
    ),
    "bert_small": (
        lambda: models.bert_base(batch=1, seq=16, layers=1, hidden=32, heads=2, intermediate=64, vocab=64),
        "add-loss{kind=mse}",
        {"norm_grad", "bias_grad"},
    ),
}


@pytest.mark.parametrize("precision", ["must_keep_origin_dtype", "allow_mix_precision"])
@pytest.mark.parametrize("name", list(STEPS))
def test_training_step_outputs_equal_with_and_without_fusion(name, precision):
    build, loss, expected_rules = STEPS[name]
    module = _step(build(), loss, precision)
    fused_module = clone_with_weights(module)
    FuseOpsPass().apply(make_context(), fused_module)
    fused_module.verify()
    applied = {rule for rule, n in census(fused_module).groups.items() if n}
    assert expected_rules <= applied, applied
    assert_bias_sums_only(fused_module)
    assert_layout_read_through(fused_module)
    assert_training_batch_norm_only(fused_module)
    inputs = _inputs(module)
    before, after = run(module, inputs), run(fused_module, inputs)
    assert before.keys() == after.keys()
    for key in before:
        np.testing.assert_array_equal(before[key], after[key], err_msg=key)
