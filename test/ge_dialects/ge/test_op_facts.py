"""Op facts (ge_dialects/ge/facts.py and the GeOp methods): every op declares its engine, the traits
agree with the op lists the consumers need (written out here by name), and the cost metrics count what the device
model charges. The mutation tests break a fact and show the lowering or the cost model notices."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import f32
from xdsl.ir import Block
from xdsl.ir.core import OpTraits
from xdsl.traits import Pure

from ge.device.engines import engine_of, launch_geometry, stays_outside_tasks
from ge.device.ir_work import ops_work
from ge.ge_dialects import ge
from ge.ge_dialects.ge.base import GeOp
from ge.ge_dialects.ge.facts import (
    Broadcasting,
    Carries,
    CopiesElements,
    Elementwise,
    Engine,
    PreservesZero,
    Reduction,
    RunsOn,
    StorageFormats,
    Transcendental,
)
from ge.ge_dialects.ge.types import tensor
from ge.interpreter.ge import folding_interpreter
from ge.interpreter.kernels import checked
from ge.passes.fusion import rules as fusion_rules
from ge.passes.layout import rules as layout_rules
from ge.target import load_target
from ge.tools.common import parse_module

GRAPH = """
func.func @main(%x: tensor<1x16x8x8xf32>, %w: tensor<32x16x3x3xf32>, %a: tensor<6x4xf32>, %b: tensor<6x5xf32>,
                %q: tensor<2x8x16xf32>, %k: tensor<2x10x16xf32>, %v: tensor<2x10x16xf32>, %i: tensor<3xi64>,
                %kt: tensor<2x16x10xf32>)
    -> (tensor<1x32x6x6xf32>, tensor<4x5xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<3xi64>, tensor<6x4xf32>) {
  %c = ge.conv %x, %w : (tensor<1x16x8x8xf32>, tensor<32x16x3x3xf32>) -> tensor<1x32x6x6xf32>
  %r = ge.relu %c : (tensor<1x32x6x6xf32>) -> tensor<1x32x6x6xf32>
  %g = ge.gemm %a, %b {transA = 1 : i64} : (tensor<6x4xf32>, tensor<6x5xf32>) -> tensor<4x5xf32>
  %m = ge.matmul %q, %kt : (tensor<2x8x16xf32>, tensor<2x16x10xf32>) -> tensor<2x8x10xf32>
  %t = ge.attention %q, %k, %v : (tensor<2x8x16xf32>, tensor<2x10x16xf32>, tensor<2x10x16xf32>) -> tensor<2x8x16xf32>
  %s = ge.tanh %t : (tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %n = ge.add %i, %i : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %sm = ge.softmax %a : (tensor<6x4xf32>) -> tensor<6x4xf32>
  func.return %r, %g, %t, %s, %n, %sm
      : tensor<1x32x6x6xf32>, tensor<4x5xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<3xi64>, tensor<6x4xf32>
}
"""


def _ops():
    module = parse_module(GRAPH, "<test>")
    return {op.name: op for op in next(iter(module.ops)).body.block.ops}


def _with_traits(monkeypatch, op_cls, *traits):
    monkeypatch.setattr(op_cls, "traits", OpTraits(lambda: traits))


# -- declarations --------------------------------------------------------------------------------


@pytest.mark.parametrize("op_cls", ge.ALL_OPS, ids=lambda c: c.name)
def test_every_op_declares_one_engine(op_cls):
    assert len(op_cls.get_traits_of_type(RunsOn)) == 1
    assert isinstance(op_cls.engine_class(), Engine)


@pytest.mark.parametrize("op_cls", ge.ALL_OPS, ids=lambda c: c.name)
def test_every_op_has_a_gradient_or_says_why_not(op_cls):
    has_vjp = op_cls.vjp is not GeOp.vjp
    assert has_vjp != bool(op_cls.NO_GRADIENT), f"{op_cls.name}: a vjp, or NO_GRADIENT with the reason (not both)"


def test_an_op_without_an_engine_is_refused(monkeypatch):
    """Mutation: drop ge.relu's RunsOn trait; asking its engine is an internal error naming it."""
    _with_traits(monkeypatch, ge.ReluOp, Pure())
    with pytest.raises(TypeError, match="ge.relu declares 0 RunsOn traits"):
        ge.ReluOp.engine_class()


def test_known_engines():
    engine = {op.name: op.engine_class() for op in ge.ALL_OPS}
    assert {n for n, e in engine.items() if e is Engine.CUBE} == {
        "ge.conv",
        "ge.matmul",
        "ge.gemm",
        "ge.conv_backprop_input",
        "ge.conv_backprop_filter",
        "ge.einsum",
        "ge.conv_transpose",
        "ge.deform_conv",
        "ge.matmul_integer",
        "ge.conv_integer",
        "ge.qlinear_matmul",
        "ge.qlinear_conv",
    }
    assert {n for n, e in engine.items() if e is Engine.CUBE_VECTOR} == {"ge.attention", "ge.lstm", "ge.lstm_grad"}
    assert {n for n, e in engine.items() if e is Engine.AICPU} == {
        "ge.shape",
        "ge.range",
        "ge.constant_of_shape",
        "ge.det",
        "ge.size",
        "ge.dft",
    }
    assert {n for n, e in engine.items() if e is Engine.NONE} == {"ge.constant", "ge.variable"}
    assert engine["ge.add"] is engine["ge.softmax"] is engine["ge.trans_data"] is Engine.VECTOR
    assert engine["ge.all_finite"] is engine["ge.loss_scale_update"] is Engine.VECTOR


def test_known_traits():
    def having(trait):
        return {op.name for op in ge.ALL_OPS if op.has_trait(trait)}

    assert {"ge.add", "ge.relu", "ge.where", "ge.cast", "ge.clip"} <= having(Elementwise)
    assert not {"ge.conv", "ge.softmax", "ge.transpose", "ge.reduce_mean", "ge.expand"} & having(Elementwise)
    assert having(Transcendental) == {
        "ge.erf",
        "ge.tanh",
        "ge.sigmoid",
        "ge.sqrt",
        "ge.div",
        "ge.mod",
        "ge.reciprocal",
        "ge.pow",
        "ge.gelu",
        "ge.softmax",
        "ge.lrn",
        "ge.lrn_grad",
        "ge.layer_norm",
        "ge.hard_swish",
        "ge.exp",
        "ge.log",
        "ge.gelu_grad",
        "ge.batch_norm_grad",
        "ge.layer_norm_grad",
        "ge.softmax_cross_entropy_loss",
        "ge.softmax_cross_entropy_loss_grad",
        "ge.apply_adam",
        "ge.apply_adagrad",
        *(f"ge.{f}" for f in ("sin", "cos", "tan", "asin", "acos", "atan")),
        *(f"ge.{f}" for f in ("sinh", "cosh", "asinh", "acosh", "atanh")),
        "ge.lp_pool",
        "ge.global_lp_pool",
    }
    assert having(Reduction) == {
        "ge.softmax",
        "ge.layer_norm",
        "ge.reduce_mean",
        "ge.reduce_sum",
        "ge.global_avg_pool",
        "ge.global_max_pool",
        "ge.global_lp_pool",
        "ge.instance_norm",
        "ge.layer_norm_grad",
        "ge.softmax_grad",
        "ge.softmax_cross_entropy_loss",
        "ge.softmax_cross_entropy_loss_grad",
        "ge.nll_loss",
        *(f"ge.reduce_{r}" for r in ("max", "min", "prod")),
        "ge.arg_max",
        "ge.arg_min",
        "ge.top_k",
        "ge.hardmax",
        "ge.dynamic_quantize_linear",
    }
    assert {"ge.add", "ge.where", "ge.expand"} <= having(Broadcasting)
    assert not {"ge.relu", "ge.cast", "ge.conv"} & having(Broadcasting)
    assert "ge.cast" not in carrying()  # a cast changes C0, so it is no format follower
    # gathers, scatters, tiles and masks read elements by position, and no format flows through them
    indexing = {op.name for op in ge.INDEXING_OPS}
    assert len(indexing) == 8
    assert not indexing & (having(Elementwise) | having(Broadcasting) | carrying() | having(PreservesZero))
    assert {op.engine_class() for op in ge.INDEXING_OPS} == {Engine.VECTOR}


def test_copies_elements_names_the_data_movement_ops_and_places_quantized_ones_on_the_ai_core():
    """CopiesElements: the ops fold-qdq moves a Q / DQ pair through. Moving 8-bit integers runs
    on the AI Core (Vector); 64-bit integers are shape arithmetic, on the AI CPU."""
    copying = {op.name for op in ge.ALL_OPS if op.has_trait(CopiesElements)}
    assert {"ge.reshape", "ge.transpose", "ge.max_pool", "ge.gather", "ge.trans_data"} <= copying
    assert not {"ge.avg_pool", "ge.add", "ge.cast", "ge.conv"} & copying
    module = parse_module(
        """
func.func @main(%q: tensor<2x4xui8>, %n: tensor<2x4xi64>) -> (tensor<8xui8>, tensor<8xi64>) {
  %s = ge.constant dense<8> : tensor<1xi64>
  %0 = ge.reshape %q, %s : (tensor<2x4xui8>, tensor<1xi64>) -> tensor<8xui8>
  %1 = ge.reshape %n, %s : (tensor<2x4xi64>, tensor<1xi64>) -> tensor<8xi64>
  func.return %0, %1 : tensor<8xui8>, tensor<8xi64>
}""",
        "<test>",
    )
    quantized, shapes = [op for op in module.walk() if isinstance(op, ge.ReshapeOp)]
    assert quantized.engine() is Engine.VECTOR and shapes.engine() is Engine.AICPU


def test_fusion_rule_sets_agree_with_the_traits():
    """What the fusion rules call elementwise, reductions and Cube ops must be what the ops say they are."""
    assert {op for op in ge.ALL_OPS if op.engine_class() is Engine.CUBE} == fusion_rules.CUBE
    assert {op for op in ge.ALL_OPS if op.has_trait(Elementwise)} == fusion_rules.ELEMENTWISE
    assert all(op.has_trait(Reduction) for op in fusion_rules.REDUCTIONS)


def test_preserves_zero_holds_for_each_op_that_declares_it():
    """Each PreservesZero op's kernel maps zeros to zeros (the trait lets it run on padded storage)."""
    zero = np.zeros((2, 3), np.float32)
    for op_cls in (op for op in ge.ALL_OPS if op.has_trait(PreservesZero)):
        defs = op_cls.get_irdl_definition().operands
        types = {name: tensor(f32, [2, 3]) for name, _ in defs}
        block = Block(arg_types=list(types.values()))
        op = op_cls.create(dict(zip(types, block.args)), {})
        (out,) = folding_interpreter().run_op(op, tuple(zero for _ in defs))
        assert not np.asarray(out).any(), op_cls.name
    assert {op.name for op in checked.LAYOUT_FREE} == {op.name for op in ge.ALL_OPS if op.has_trait(PreservesZero)}


def carrying() -> set[str]:
    """The ops a storage format flows through (a `Carries` declaration)."""
    return {
        op.name
        for op in ge.ALL_OPS
        if (trait := op.get_trait(StorageFormats)) is not None and any(isinstance(d, Carries) for d in trait.rules)
    }


def test_the_layout_table_is_the_ops_declarations():
    """assign-formats' rules are made from the ops' StorageFormats: each op class a rule names
    declares it, and each declaration is a rule of the table."""
    declared = {
        (op, d.rule) for op in ge.ALL_OPS if (trait := op.get_trait(StorageFormats)) is not None for d in trait.rules
    }
    tabled = {(op, r.name) for r in layout_rules.RULES for op in r.pattern.classes}
    assert declared == tabled
    assert {"ge.relu", "ge.add", "ge.clip", "ge.dropout", "ge.concat", "ge.softmax"} <= carrying()


def test_a_declaration_naming_an_unknown_condition_is_refused_by_name():
    from ge.ge_dialects.ge.facts import ComputesIn

    declared = ComputesIn("conv-nc1hwc0", "NC1HWC0", ("X",), ("Y",), (("weights_only", "W"),))
    with pytest.raises(KeyError, match="ge.conv's conv-nc1hwc0 names the condition 'weights_only'"):
        layout_rules.rule_of(declared, (ge.ConvOp,))


# -- instances and metrics -----------------------------------------------------------------------


def test_integer_vector_op_runs_on_the_ai_cpu():
    ops = _ops()
    assert ops["ge.add"].engine() is Engine.AICPU
    assert ops["ge.relu"].engine() is Engine.VECTOR
    assert ops["ge.conv"].engine() is Engine.CUBE


def test_metrics():
    ops = _ops()
    assert ops["ge.conv"].macs() == 32 * 6 * 6 * 16 * 3 * 3
    assert ops["ge.gemm"].macs() == 4 * 5 * 6  # transA: K is A's first dim
    assert ops["ge.matmul"].macs() == 2 * 8 * 10 * 16
    assert ops["ge.attention"].macs() == 2 * 8 * 16 * 10 + 2 * 8 * 10 * 16
    assert ops["ge.attention"].transcendental_elements() == 3 * 2 * 8 * 10
    assert ops["ge.attention"].vector_elements() == 0
    assert (ops["ge.tanh"].vector_elements(), ops["ge.tanh"].transcendental_elements()) == (0, 2 * 8 * 16)
    assert (ops["ge.relu"].vector_elements(), ops["ge.relu"].transcendental_elements()) == (32 * 36, 0)
    assert ops["ge.relu"].macs() == 0 and ops["ge.conv"].vector_elements() == 0
    assert ops["ge.softmax"].reduced_row_elements() == 4
    assert ops["ge.attention"].reduced_row_elements() == 10 + 16
    assert ops["ge.relu"].reduced_row_elements() == 1
    assert stays_outside_tasks(ops["func.return"]) and not stays_outside_tasks(ops["ge.conv"])


def _conv_relu_kernel() -> tuple[str, int, int, int]:
    """(engine, block_dim, cube MACs, vector element-ops) of conv + relu as lowering and the device
    model see them."""
    ops = _ops()
    conv, relu = ops["ge.conv"], ops["ge.relu"]
    engine = engine_of(conv)
    block_dim, _ = launch_geometry(conv, engine, load_target("ascend910b"))
    work = ops_work([conv, relu], list(conv.operands), list(relu.results), engine, block_dim)
    return engine, block_dim, work.cube_macs, work.vector_elems


def test_conv_kernel_runs_on_the_cube():
    engine, block_dim, macs, vector = _conv_relu_kernel()
    assert engine == "cube" and block_dim > 1
    assert macs == 32 * 6 * 6 * 16 * 3 * 3 and vector == 32 * 36


def test_mutation_sigmoid_marked_zero_preserving_is_caught(monkeypatch):
    """sigmoid(0) = 0.5: a PreservesZero trait on it would pad blocked tensors with 0.5s."""
    _with_traits(monkeypatch, ge.SigmoidOp, *ge.SigmoidOp.traits, PreservesZero())
    with pytest.raises(AssertionError, match="ge.sigmoid"):
        test_preserves_zero_holds_for_each_op_that_declares_it()


def test_conv_marked_vector_changes_lowering_and_cost(monkeypatch):
    """Mutation: mark ge.conv Vector; the lowering's engine and the device model's work change, so
    the check above fails."""
    _with_traits(monkeypatch, ge.ConvOp, Pure(), RunsOn(Engine.VECTOR))
    with pytest.raises(AssertionError):
        test_conv_kernel_runs_on_the_cube()
    engine, _, macs, vector = _conv_relu_kernel()
    assert engine == "vector" and macs == 0 and vector == 2 * 32 * 36


def test_lrn_work_is_its_window_per_element():
    """LRN squares and sums `size` channels per element on the Vector unit, then one power."""
    from xdsl.dialects.builtin import f32
    from xdsl.ir import Block

    from ge.ge_dialects.ge.types import tensor

    block = Block(arg_types=[tensor(f32, (1, 8, 4, 4))])
    lrn = ge.LrnOp.create({"X": block.args[0]}, {"size": 5}, name="/lrn")
    assert (lrn.vector_elements(), lrn.transcendental_elements(), lrn.macs()) == (5 * 128, 128, 0)


def test_a_scatter_works_on_its_data_and_its_updates():
    """A scatter copies the data, then writes (or combines) each update: one Vector lane-op per
    element of both; a gather, a tile or a mask is one per result element."""
    from xdsl.dialects.builtin import i64
    from xdsl.ir import Block

    from ge.ge_dialects.ge.types import tensor

    block = Block(arg_types=[tensor(f32, (6, 4)), tensor(i64, (3, 1)), tensor(f32, (3, 4)), tensor(i64, (6, 4))])
    data, indices, updates, elements = block.args
    scatter = ge.ScatterNDOp.create({"data": data, "indices": indices, "updates": updates}, name="/s")
    gather = ge.GatherNDOp.create({"data": data, "indices": indices}, name="/g")
    assert (scatter.vector_elements(), scatter.transcendental_elements(), scatter.macs()) == (24 + 12, 0, 0)
    assert gather.vector_elements() == 12
    assert ge.GatherElementsOp.create({"data": data, "indices": elements}, name="/e").vector_elements() == 24


def test_conv_transpose_macs_are_its_input_gradient_convs():
    """A transposed conv does the MACs of the conv it is the input gradient of: one per input
    element and weight element of an input channel (not per output element, which would count the
    stride's holes): here 1 x 4 x 3 x 3 inputs times 3 x 3 x 3 weights, and conv_backprop_input of
    the same operands agrees."""
    block = Block(arg_types=[tensor(f32, (1, 4, 3, 3)), tensor(f32, (4, 3, 3, 3))])
    x, w = block.args
    props = {"strides": [2, 2], "group": 2}
    transposed = ge.ConvTransposeOp.create({"X": x, "W": w}, props)
    backprop = ge.ConvBackpropInputOp.create({"dy": x, "W": w}, {**props, "input_shape": [1, 6, 7, 7]})
    assert transposed.macs() == backprop.macs() == 36 * 27
    assert transposed.vector_elements() == 0 and transposed.engine() is Engine.CUBE


def test_pool_and_instance_norm_work():
    """The reductions of pooling.py and instance_norm.py: their rows are the image, their lane
    work one pass (or a kernel's worth) per element, the roots transcendental."""
    block = Block(arg_types=[tensor(f32, (2, 3, 4, 5)), tensor(f32, (3,))])
    x, c = block.args
    global_max = ge.GlobalMaxPoolOp.create({"X": x}, {})
    global_lp = ge.GlobalLpPoolOp.create({"X": x}, {"p": 3})
    lp = ge.LpPoolOp.create({"X": x}, {"kernel_shape": [2, 3]})  # 2 x 3 x 3 x 3 results
    norm = ge.InstanceNormOp.create({"input": x, "scale": c, "B": c}, {})
    assert [op.reduced_row_elements() for op in (global_max, global_lp, lp, norm)] == [20, 20, 1, 20]
    assert (global_max.vector_elements(), global_max.transcendental_elements()) == (120, 0)
    assert (global_lp.vector_elements(), global_lp.transcendental_elements()) == (120, 6)
    assert (lp.vector_elements(), lp.transcendental_elements()) == (6 * 54, 54)
    assert (norm.vector_elements(), norm.transcendental_elements()) == (3 * 120, 0)


def test_mutation_conv_transpose_macs_per_output_are_caught(monkeypatch):
    """Mutation: conv_transpose counted as a conv over its result (per output element), which
    charges the stride's holes; the MAC check above fails."""
    monkeypatch.setattr(ge.ConvTransposeOp, "macs", lambda self: ge.ConvOp.macs(self))
    with pytest.raises(AssertionError):
        test_conv_transpose_macs_are_its_input_gradient_convs()


def test_onnx_names_are_default_domain_operators_and_make_the_import_table():
    from onnx import defs

    from ge.frontend.onnx_ops import ONNX_TO_GE

    declared = {name: op for op in ge.ALL_OPS for name in vars(op).get("ONNX", ())}
    assert declared == ONNX_TO_GE
    assert [n for n in declared if not defs.has(n, "")] == []


def test_mutation_an_onnx_name_claimed_twice_is_refused(monkeypatch):
    from ge.frontend import onnx_ops

    monkeypatch.setattr(ge.SubOp, "ONNX", ("Add",))
    with pytest.raises(AssertionError, match="ONNX Add is claimed by AddOp and SubOp"):
        onnx_ops._onnx_to_ge()


def test_reductions_and_selections_work_on_every_input_element():
    """reductions.py: a max, a product, an argmax reads each input element once, so their lane
    work is the input's, not the (small) result's; TopK and Hardmax then write their results; the
    row a tile must hold is the reduced set; Size is one AI CPU element."""
    from xdsl.dialects.builtin import i64

    block = Block(arg_types=[tensor(f32, (2, 3, 4))])
    (x,) = block.args
    axes = ge.ConstantOp.inline(np.array([1, 2], np.int64)).output
    k = ge.ConstantOp.inline(np.array([2], np.int64)).output
    max_ = ge.ReduceMaxOp.create({"data": x, "axes": axes}, {"keepdims": 0})
    prod = ge.ReduceProdOp.create({"data": x, "axes": axes}, {})
    arg = ge.ArgMinOp.create({"data": x}, {"axis": 1})
    top = ge.TopKOp.create({"X": x, "K": k}, {"axis": 1})
    hard = ge.HardmaxOp.create({"input": x}, {"axis": 0})
    size = ge.SizeOp.create({"data": x}, {})
    assert [op.vector_elements() for op in (max_, prod, arg, top, hard)] == [24, 24, 24, 24 + 2 * 16, 48]
    assert [op.reduced_row_elements() for op in (max_, prod, arg, top, hard)] == [12, 12, 3, 3, 2]
    assert size.engine() is Engine.AICPU and size.results[0].type == tensor(i64, ())


def test_mutation_reductions_counted_per_result_element_are_caught(monkeypatch):
    """Mutation: ReduceMax's work as the default, one lane-op per result element (2 here)."""
    monkeypatch.setattr(ge.ReduceMaxOp, "vector_elements", GeOp.vector_elements)
    with pytest.raises(AssertionError):
        test_reductions_and_selections_work_on_every_input_element()


def test_integer_products_count_the_macs_of_matmul_and_conv():
    """The integer matmuls and convs are Cube work counted as ge.matmul's and ge.conv's (one
    definition each), whatever the zero points and scales; quantizing is Vector work."""
    from xdsl.dialects.builtin import i8, i32

    from ge.ge_dialects.ge.types import ui8

    block = Block(arg_types=[tensor(ui8, (2, 8, 16)), tensor(i8, (16, 10)), tensor(ui8, (1, 16, 8, 8))])
    a, b, x = block.args
    w = Block(
        arg_types=[tensor(i8, (32, 16, 3, 3)), tensor(f32, ()), tensor(ui8, ()), tensor(i8, ()), tensor(i32, (32,))]
    )
    wt, scale, zx, zw, bias = w.args
    integer = ge.MatMulIntegerOp.create({"A": a, "B": b, "a_zero_point": None, "b_zero_point": None}, {})
    q = ge.QLinearMatMulOp.create(
        {"a": a, "a_scale": scale, "a_zero_point": zx, "b": b, "b_scale": scale, "b_zero_point": zw}
        | {"y_scale": scale, "y_zero_point": zx},
        {},
    )
    conv = ge.ConvIntegerOp.create({"x": x, "w": wt, "x_zero_point": zx, "w_zero_point": None}, {})
    qconv = ge.QLinearConvOp.create(
        {"x": x, "x_scale": scale, "x_zero_point": zx, "w": wt, "w_scale": scale, "w_zero_point": zw}
        | {"y_scale": scale, "y_zero_point": zx, "B": bias},
        {},
    )
    assert integer.macs() == q.macs() == 2 * 8 * 10 * 16 == ops_like_matmul()
    assert conv.macs() == qconv.macs() == 32 * 6 * 6 * 16 * 3 * 3
    assert {op.engine() for op in (integer, q, conv, qconv)} == {Engine.CUBE}
    assert integer.vector_elements() == conv.vector_elements() == 0
    quant = ge.QuantizeLinearOp.create({"x": scale, "y_scale": scale, "y_zero_point": None}, {})
    quant.verify()
    assert (
        quant.macs() == 0 and quant.engine_class() is quant.engine() is Engine.VECTOR
    )  # an integer result, float work


def ops_like_matmul() -> int:
    return _ops()["ge.matmul"].macs()
