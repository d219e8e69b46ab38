"""The declarative rewrite passes on the reference models (numerics before/after and how many
rewrites applied), simplify on random chains of no-op-ish ops, every rewrite pass on random graphs,
and the engine used with a rule table of one's own."""

from __future__ import annotations

import collections

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numerics import assert_pass_keeps_numerics, op_counts
from random_graphs import ge_graphs
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, f16, f32, f64
from xdsl.ir import Block, Region

from ge.ge_dialects import ge
from ge.ge_dialects.ge.types import numpy_dtype, tensor
from ge.interpreter.runner import run
from ge.passes import remarks
from ge.passes.fold_bias_add import FoldBiasAddPass
from ge.passes.fold_conv_bn import FoldConvBnPass
from ge.passes.recognize_attention import RecognizeAttentionPass
from ge.passes.recognize_gelu import RecognizeGeluPass
from ge.passes.recognize_layer_norm import RecognizeLayerNormPass
from ge.passes.rewrite import Const, Op, Reject, Rule, apply_rules
from ge.passes.simplify import SimplifyPass
from ge.tools.common import parse_module

PROPERTY = settings(
    max_examples=60,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _model(references, name, **options):
    """The small model (every block of the full one; the counts below are per block)."""
    module, inputs = references.module(name, **options), references.model(name, **options)[1]
    return module, inputs, run(module, inputs)


def _rewrite(module, passes) -> collections.Counter:
    """Applies the passes; returns how often each (kind, rule) remark was emitted."""
    with remarks.collected() as found:
        for p in passes:
            p.apply(None, module)
    module.verify()
    return collections.Counter((r.kind, r.rule) for r in found)


def _applied(counts: collections.Counter, prefix: str) -> int:
    """How many rewrites rules named `prefix...` applied."""
    return sum(n for (kind, rule), n in counts.items() if kind == "applied" and rule.startswith(prefix))


def _assert_same(module, inputs, reference, rtol, atol):
    out = run(module, inputs)
    for name, want in reference.items():
        np.testing.assert_allclose(out[name], want, rtol=rtol, atol=atol, err_msg=name)


# -- the reference models ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def resnet50(references):
    return _model(references, "resnet50")


@pytest.fixture(scope="module")
def mobilenet_v2(references):
    return _model(references, "mobilenet_v2")


@pytest.fixture(scope="module")
def bert13(references):
    return _model(references, "bert_base", opset=13)


@pytest.fixture(scope="module")
def gpt2_13(references):
    return _model(references, "gpt2", opset=13)


def test_resnet50_folds_every_batch_norm(resnet50):
    module, inputs, reference = resnet50
    before = op_counts(module)
    assert before["ge.batch_norm"] == 53
    counts = _rewrite(module, [FoldConvBnPass(), FoldBiasAddPass()])
    assert counts[("applied", "conv-bn")] == 53
    assert not [k for k in counts if k[0] == "rejected"]
    after = op_counts(module)
    assert after["ge.batch_norm"] == 0 and after["ge.conv"] == before["ge.conv"] == 53
    _assert_same(module, inputs, reference, rtol=1e-4, atol=1e-5)


def test_mobilenet_v2_folds_every_batch_norm(mobilenet_v2):
    module, inputs, reference = mobilenet_v2
    assert op_counts(module)["ge.batch_norm"] == 52
    counts = _rewrite(module, [FoldConvBnPass(), FoldBiasAddPass()])
    assert counts[("applied", "conv-bn")] == 52
    assert op_counts(module)["ge.batch_norm"] == 0
    _assert_same(module, inputs, reference, rtol=1e-4, atol=1e-5)


def test_bert_base_opset13_recognizes_layer_norm_gelu_attention(bert13):
    module, inputs, reference = bert13
    counts = _rewrite(module, [SimplifyPass(), RecognizeLayerNormPass(), RecognizeGeluPass(), RecognizeAttentionPass()])
    # The models' LayerNorms have gamma 1 and beta 0: simplify removes x*1 and x+0 first, so the
    # rule without gamma and beta is the one that applies. Two layers: two LayerNorms, a GELU and an
    # attention each, and the embeddings' LayerNorm.
    assert _applied(counts, "layer-norm") == 5
    assert counts[("applied", "gelu-erf")] == 2
    assert counts[("applied", "attention")] == 2
    after = op_counts(module)
    assert (after["ge.layer_norm"], after["ge.gelu"], after["ge.attention"]) == (5, 2, 2)
    for gone in ("ge.reduce_mean", "ge.pow", "ge.sqrt", "ge.erf", "ge.softmax"):
        assert after[gone] == 0, gone
    _assert_same(module, inputs, reference, rtol=1e-4, atol=1e-5)


def test_gpt2_opset13_recognizes_layer_norm_gelu_tanh_attention(gpt2_13):
    module, inputs, reference = gpt2_13
    counts = _rewrite(module, [SimplifyPass(), RecognizeLayerNormPass(), RecognizeGeluPass(), RecognizeAttentionPass()])
    assert _applied(counts, "layer-norm") == 5  # ln_1 and ln_2 of both blocks, ln_f
    assert counts[("applied", "gelu-tanh")] == 2
    assert counts[("applied", "attention")] == 2
    attention = [op for op in module.walk() if isinstance(op, ge.AttentionOp)]
    assert all(op.p("mask_kind") == "keep" and op.p("k_transposed") == 1 for op in attention)
    _assert_same(module, inputs, reference, rtol=1e-4, atol=1e-5)


# -- simplify on random chains -----------------------------------------------------------------

_DTYPES = {1: f32, 10: f16, 11: f64}


@st.composite
def chains(draw):
    """A function of one input through a random chain of identity, transpose, reshape, cast,
    dropout and x*1 / x+0 / x/1, some intermediate values also returned."""
    rank = draw(st.integers(1, 4))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank)))
    block = Block(arg_types=[tensor(f32, shape)])
    x, outputs = block.args[0], []

    def add(op):
        block.add_op(op)
        return op.results[0]

    def const(array):
        return add(ge.ConstantOp.inline(np.asarray(array)))

    for _ in range(draw(st.integers(1, 8))):
        dims = x.type.get_shape()
        dtype = numpy_dtype(x.type.element_type)
        kind = draw(st.sampled_from(["identity", "transpose", "reshape", "cast", "dropout", "arith"]))
        if kind == "identity":
            x = add(ge.IdentityOp.create({"x": x}))
        elif kind == "transpose":
            perm = draw(st.permutations(range(len(dims))))
            x = add(ge.TransposeOp.create({"data": x}, {"perm": perm}))
        elif kind == "reshape":
            size = int(np.prod(dims))
            target = draw(
                st.sampled_from(
                    [list(dims), list(dims)[::-1], [size], [-1], [1, *dims], [0, -1] if len(dims) > 1 else [-1]]
                )
            )
            x = add(ge.ReshapeOp.create({"data": x, "shape": const(np.array(target, np.int64))}))
        elif kind == "cast":
            to = draw(st.sampled_from(sorted(_DTYPES)))
            x = add(ge.CastOp.create({"input": x}, {"to": to}))
        elif kind == "dropout":
            mode = draw(st.sampled_from(["absent", "off", "ratio0", "train"]))
            operands = {"data": x}
            if mode != "absent":
                operands["training_mode"] = const(np.array(mode != "off"))
            if mode in ("ratio0", "train"):
                operands["ratio"] = const(np.array(0.0 if mode == "ratio0" else 0.5, dtype))
            x = add(ge.DropoutOp.create(operands, {"seed": 3} if mode == "train" else None))
        else:
            cls, value = draw(st.sampled_from([(ge.MulOp, 1), (ge.AddOp, 0), (ge.DivOp, 1), (ge.SubOp, 0)]))
            c = const(np.full(draw(st.sampled_from([(), (1,)])), value, dtype))
            a, b = (c, x) if cls in (ge.MulOp, ge.AddOp) and draw(st.booleans()) else (x, c)
            x = add(cls.create({"a": a, "b": b}))
        if draw(st.integers(0, 4)) == 0:
            outputs.append(x)
    outputs.append(x)
    block.add_op(func.ReturnOp(*outputs))
    fn = func.FuncOp("main", FunctionType.from_lists([block.args[0].type], [v.type for v in outputs]), Region(block))
    values = np.random.default_rng(draw(st.integers(0, 2**16))).standard_normal(shape).astype(np.float32)
    return ModuleOp([fn]), {"arg0": values}


@PROPERTY
@given(chains())
def test_simplify_keeps_numerics_on_random_chains(case):
    module, inputs = case
    module.verify()
    with np.errstate(all="ignore"):
        before = run(module, inputs)
    _rewrite(module, [SimplifyPass()])
    with np.errstate(all="ignore"):
        after = run(module, inputs)
    for name, want in before.items():
        np.testing.assert_array_equal(after[name], want)
    left = op_counts(module)
    assert left["ge.identity"] == 0
    assert not _rewrite(module, [SimplifyPass()])[("applied", "identity")]  # a fixpoint


@PROPERTY
@given(ge_graphs())
def test_rewrite_passes_keep_numerics_on_random_graphs(graph):
    module, weights, inputs = graph
    assert_pass_keeps_numerics(
        module,
        weights,
        inputs,
        [
            SimplifyPass(),
            FoldConvBnPass(),
            FoldBiasAddPass(),
            RecognizeLayerNormPass(),
            RecognizeGeluPass(),
            RecognizeAttentionPass(),
        ],
        rtol=1e-4,
        atol=1e-5,
    )


# -- a rule table of one's own -----------------------------------------------------------------

_TEXT = """
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = ge.relu %x : (tensor<4xf32>) -> tensor<4xf32> loc("/inner")
  %1 = ge.relu %0 : (tensor<4xf32>) -> tensor<4xf32> loc("/outer")
  %two = ge.constant dense<2.0> : tensor<f32>
  %2 = ge.mul %two, %y : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32> loc("/double")
  %3 = ge.mul %y, %two : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32> loc("/double2")
  func.return %1, %2, %3 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
"""


def test_a_users_own_rule_table():
    """relu(relu(x)) -> relu(x); 2*y -> y+y, refused for one node by a Reject and a benefit."""

    def double(m, b):
        return b.op(ge.AddOp, {"a": m["y"], "b": m["y"]}).results[0]

    table = [
        Rule("relu-relu", Op(ge.ReluOp, Op(ge.ReluOp, "x", name="inner")), lambda m, b: m["inner"]),
        Rule(
            "mul-two",
            Op(ge.MulOp, "y", Const("two", value=2.0, scalar=True)),
            double,
            rejects=[Reject("this node is kept", lambda m: m.root.location.desc.data == "/double2")],
            benefit=lambda m: 1.5,
        ),
    ]
    module = parse_module(_TEXT, "<test>")
    with remarks.collected() as found:
        apply_rules(module, table, "my-pass")
    module.verify()
    shown = sorted(str(r) for r in found)
    assert shown == [
        "remark: my-pass: applied mul-two on [/double]: replaced by ge.add (benefit 1.5)",
        "remark: my-pass: applied relu-relu on [/outer, /inner]: replaced by an existing value",
        "remark: my-pass: rejected mul-two on [/double2]: this node is kept",
    ]
    assert op_counts(module) == collections.Counter({"ge.relu": 1, "ge.add": 1, "ge.mul": 1, "ge.constant": 1})


def test_a_rule_without_benefit_is_refused():
    table = [Rule("relu-relu", Op(ge.ReluOp, Op(ge.ReluOp, "x", name="inner")), lambda m, b: m["inner"], benefit=0.0)]
    module = parse_module(_TEXT, "<test>")
    with remarks.collected() as found:
        apply_rules(module, table, "my-pass")
    assert [str(r) for r in found] == [
        "remark: my-pass: rejected relu-relu on [/outer, /inner]: benefit 0 is not positive (benefit 0)"
    ]
    assert op_counts(module)["ge.relu"] == 2


def test_patterns_are_asked_by_op_class_in_table_order():
    """ByOpClass asks each op only the patterns whose root class it is an instance of (a subclass
    too), in their order, and stops at the first that acts."""
    from xdsl.pattern_rewriter import PatternRewriter

    from ge.passes.rewrite.engine import ByOpClass

    asked: list[str] = []

    class Probe:
        def __init__(self, name, root, acts):
            self.name, self.root, self.acts = name, root, acts

        def match_and_rewrite(self, op, rewriter):
            asked.append(self.name)
            if self.acts:
                rewriter.has_done_action = True

    class SubRelu(ge.ReluOp):
        pass

    dispatch = ByOpClass(
        [
            Probe("add", ge.AddOp, True),
            Probe("relu-first", ge.ReluOp, False),
            Probe("sub-relu", SubRelu, True),
            Probe("relu-second", ge.ReluOp, True),
            Probe("relu-never", ge.ReluOp, True),
        ]
    )
    block = Block(arg_types=[tensor(f32, [2])])
    x = block.args[0]
    for op, expected in (
        (SubRelu(operands=[x], result_types=[x.type]), ["relu-first", "sub-relu"]),
        (ge.ReluOp(operands=[x], result_types=[x.type]), ["relu-first", "relu-second"]),
    ):
        block.add_op(op)
        asked.clear()
        dispatch.match_and_rewrite(op, PatternRewriter(op))
        assert asked == expected
