"""`fold-qdq` on a QDQ model written by onnxruntime's `quantize_static` (a Conv, a Reshape and a
MatMul; per-channel and per-tensor weights): the folded module computes with QLinearConv and
QLinearMatMul and no DQ / Q around them, and its outputs equal onnxruntime's within one step of
the output grid. onnxruntime at ORT_ENABLE_ALL folds the same QDQ groups itself (its optimized
model has QLinearConv and QLinearMatMul), so it is the oracle for the folded graph; at
ORT_DISABLE_ALL it runs the QDQ graph in float, the oracle for the unfolded import."""

from __future__ import annotations

import collections
import dataclasses
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from exact_integer_oracle import exact_model, u8s8_saturates
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
from xdsl.dialects.builtin import i8

from ge.frontend.onnx_importer import import_model
from ge.ge_dialects import ge
from ge.ge_dialects.ge.types import ui8
from ge.ge_dialects.ge.weights import attach_weights
from ge.interpreter.runner import run
from ge.passes import ge_optimize, remarks
from ge.passes.fold_qdq import FoldQdqPass
from ge.passes.ge_optimize import GeOptimizePass
from ge.passes.rewrite import Check, apply_rules
from ge.passes.rules import fold_qdq as rules
from ge.passes.tensor_values import tensor_type
from ge.tools.common import parse_module, print_module

X_SHAPE = (1, 3, 6, 1)
VARIANTS = {
    "per-channel-u8": dict(per_channel=True, activation_type=QuantType.QUInt8),
    "per-tensor-s8": dict(per_channel=False, activation_type=QuantType.QInt8),
}


def _float_model() -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    inits = [
        numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "conv.weight"),
        numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "conv.bias"),
        numpy_helper.from_array(rng.standard_normal((6, 5)).astype(np.float32), "fc.weight"),
        numpy_helper.from_array(np.array([1, 4, 6], np.int64), "shape"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "conv.weight", "conv.bias"], ["c"], name="/conv/Conv", pads=[1, 1, 1, 1]),
        helper.make_node("Reshape", ["c", "shape"], ["r"], name="/reshape"),
        helper.make_node("MatMul", ["r", "fc.weight"], ["y"], name="/fc/MatMul"),
    ]
    graph = helper.make_graph(
        nodes,
        "conv_matmul",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, X_SHAPE)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 5])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


class _Reader(CalibrationDataReader):
    """A few random inputs for calibration."""

    def __init__(self) -> None:
        rng = np.random.default_rng(1)
        self.batches = iter([{"x": rng.standard_normal(X_SHAPE).astype(np.float32)} for _ in range(4)])

    def get_next(self):
        return next(self.batches, None)


@pytest.fixture(scope="module")
def quantized(tmp_path_factory):
    """Per variant: the QDQ model's path, onnxruntime's outputs at ORT_ENABLE_ALL and
    ORT_DISABLE_ALL, the op types of its optimized model, the inputs and the output scale."""
    folder = tmp_path_factory.mktemp("qdq")
    onnx.save(_float_model(), folder / "float.onnx")
    inputs = {"x": np.random.default_rng(2).standard_normal(X_SHAPE).astype(np.float32) * 1.5}
    out = {}
    for name, options in VARIANTS.items():
        path = folder / f"{name}.onnx"
        quantize_static(
            folder / "float.onnx", path, _Reader(), quant_format=QuantFormat.QDQ, weight_type=QuantType.QInt8, **options
        )
        model = onnx.load(path)
        y_scale = next(numpy_helper.to_array(t) for t in model.graph.initializer if t.name == "y_scale")
        results = {}
        for level in (ort.GraphOptimizationLevel.ORT_ENABLE_ALL, ort.GraphOptimizationLevel.ORT_DISABLE_ALL):
            so = ort.SessionOptions()
            so.graph_optimization_level = level
            if level == ort.GraphOptimizationLevel.ORT_ENABLE_ALL:
                so.optimized_model_filepath = str(folder / f"{name}.opt.onnx")
            results[level] = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"]).run(None, inputs)[0]
        folded = onnx.load(folder / f"{name}.opt.onnx")
        if u8s8_saturates():  # its folded graph's products, exact (exact_integer_oracle)
            so = ort.SessionOptions()
            so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
            session = ort.InferenceSession(
                exact_model(folded).SerializeToString(), so, providers=["CPUExecutionProvider"]
            )
            results[ort.GraphOptimizationLevel.ORT_ENABLE_ALL] = session.run(None, inputs)[0]
        optimized = [n.op_type for n in folded.graph.node]
        out[name] = (model, results, optimized, inputs, float(y_scale))
    return out


def _imported(model):
    module, weights = import_model(model)
    attach_weights(module, weights)
    return module


def _fold(module):
    with remarks.collected() as found:
        FoldQdqPass().apply(None, module)
    module.verify()
    return collections.Counter((r.kind, r.rule) for r in found)


def _ops(module) -> collections.Counter:
    return collections.Counter(type(op) for op in module.walk())


def _assert_within_one_step(got, want, step):
    assert got.shape == want.shape
    worst = float(np.abs(got.astype(np.float64) - want.astype(np.float64)).max())
    assert worst <= step * (1 + 1e-6), f"differs by {worst / step:.2f} steps of {step}"


@pytest.mark.parametrize("variant", VARIANTS)
def test_folded_module_has_qlinear_ops_and_matches_onnxruntime(quantized, variant):
    model, results, optimized, inputs, step = quantized[variant]
    # what onnxruntime computes for this model at ORT_ENABLE_ALL: it folds the groups itself
    assert {"QLinearConv", "QLinearMatMul"} <= set(optimized)
    assert "Conv" not in optimized and "MatMul" not in optimized

    module = _imported(model)
    before = run(module, inputs)["y"]
    _assert_within_one_step(before, results[ort.GraphOptimizationLevel.ORT_DISABLE_ALL], step)
    assert _ops(module)[ge.ConvOp] == 1 and _ops(module)[ge.MatMulOp] == 1

    counts = _fold(module)
    # the Reshape between them runs on the conv's integers (the Q / DQ pair around it dropped)
    assert counts == {("applied", "qdq-conv"): 1, ("applied", "qdq-drop"): 1, ("applied", "qdq-matmul"): 1}
    ops = _ops(module)
    assert ops[ge.QLinearConvOp] == 1 and ops[ge.QLinearMatMulOp] == 1
    assert ops[ge.ConvOp] == 0 and ops[ge.MatMulOp] == 0
    for op in module.walk():
        if isinstance(op, ge.QLinearConvOp | ge.QLinearMatMulOp):
            assert not any(isinstance(v.owner, ge.DequantizeLinearOp) for v in op.operands)
            assert not any(isinstance(u.operation, ge.QuantizeLinearOp) for u in op.results[0].uses)
    # the weights', the bias's and the Reshape's DQ ops are gone: only the output's remains
    assert ops[ge.DequantizeLinearOp] == 1 and ops[ge.QuantizeLinearOp] == 1  # and the input's Q
    assert tensor_type(next(op for op in module.walk() if isinstance(op, ge.ReshapeOp)).results[0]).element_type in (
        i8,
        ui8,
    )

    after = run(module, inputs)["y"]
    _assert_within_one_step(after, results[ort.GraphOptimizationLevel.ORT_ENABLE_ALL], step)


def test_mutation_bias_on_the_wrong_grid_is_caught(quantized, monkeypatch):
    """Mutation: the fold quantizes the conv bias with twice the scale x_scale * w_scale; the
    comparison with onnxruntime must fail."""
    model, results, _, inputs, step = quantized["per-channel-u8"]
    right = rules._int32_bias

    def wrong(m):
        bias = right(m)
        return np.round(bias / 2).astype(np.int32)

    monkeypatch.setattr(rules, "_int32_bias", wrong)
    module = _imported(model)
    assert _fold(module)[("applied", "qdq-conv")] == 1
    with pytest.raises(AssertionError, match="steps"):
        _assert_within_one_step(run(module, inputs)["y"], results[ort.GraphOptimizationLevel.ORT_ENABLE_ALL], step)


def test_bias_dequantized_with_another_scale_stays_float(quantized):
    """A bias DQ whose scale is not x_scale * w_scale (here doubled) is refused with a remark:
    its int32 values are on another grid than the conv's sums."""
    model, _, _, _, _ = quantized["per-channel-u8"]
    model = onnx.ModelProto.FromString(model.SerializeToString())
    for t in model.graph.initializer:
        if t.name == "conv.bias_quantized_scale":
            t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t) * 2, t.name))
    module = _imported(model)
    with remarks.collected() as found:
        FoldQdqPass().apply(None, module)
    refused = [r for r in found if r.rule == "qdq-conv"]
    assert [r.kind for r in refused] == ["rejected"]
    assert "is not x_scale * w_scale" in refused[0].reason
    assert _ops(module)[ge.ConvOp] == 1 and _ops(module)[ge.QLinearConvOp] == 0


def test_mutation_without_the_bias_scale_check_the_numerics_break(quantized, monkeypatch):
    """Mutation: with the bias scale check off (any scale accepted), the model whose bias DQ has
    twice the scale folds, and the folded module no longer computes what the QDQ graph does."""
    model, _, _, inputs, step = quantized["per-channel-u8"]
    model = onnx.ModelProto.FromString(model.SerializeToString())
    for t in model.graph.initializer:
        if t.name == "conv.bias_quantized_scale":
            t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t) * 2, t.name))
    module = _imported(model)
    want = run(module, inputs)["y"]
    monkeypatch.setattr(rules, "_BIAS_RTOL", 10.0)
    assert _fold(module)[("applied", "qdq-conv")] == 1
    with pytest.raises(AssertionError, match="steps"):
        _assert_within_one_step(run(module, inputs)["y"], want, step)


LIT = Path(__file__).with_name("fold_qdq.mlir")


@pytest.mark.parametrize("index", range(len(rules.RULES)))
def test_mutation_every_rule_is_needed(index):
    """Mutation: dropping a rule of the table changes what the pass makes of the lit inputs."""
    cases = [c for c in LIT.read_text().split("// -----") if "func.func" in c]

    def outcome(table):
        texts = []
        for case in cases:
            module = parse_module(case, "<test>")
            with remarks.collected():
                apply_rules(module, table, "fold-qdq")
            texts.append(print_module(module))
        return texts

    dropped = [r for i, r in enumerate(rules.RULES) if i != index]
    assert outcome(list(rules.RULES)) != outcome(dropped)


def test_ge_optimize_folds_qdq_before_the_cleanup(quantized, monkeypatch):
    """At O2 the groups are folded; with fold-qdq moved after the cleanup (a mutation of the
    level's stages) constant folding has turned the weights' DQ ops into float constants first
    and nothing folds, which is why the stage comes first."""
    model, results, _, inputs, step = quantized["per-tensor-s8"]
    module = _imported(model)
    GeOptimizePass(level=2).apply(None, module)
    ops = _ops(module)
    assert ops[ge.QLinearConvOp] == 1 and ops[ge.QLinearMatMulOp] == 1
    _assert_within_one_step(run(module, inputs)["y"], results[ort.GraphOptimizationLevel.ORT_ENABLE_ALL], step)

    shapes, qdq, cleanup, *rest = ge_optimize.LEVELS[2]
    monkeypatch.setitem(ge_optimize.LEVELS, 2, (shapes, cleanup, qdq, *rest))
    module = _imported(model)
    GeOptimizePass(level=2).apply(None, module)
    assert _ops(module)[ge.QLinearConvOp] == 0


ONE_GRID = """
func.func @main(%q: tensor<1x2x4x4xui8>) -> (tensor<1x2x2x2xui8, #ge.fmt<NCHW>>, tensor<2x16xui8>, tensor<1x4x4x2xui8>, tensor<1x2x4x4xui8>) {
  %s = ge.constant dense<0.37> : tensor<f32>
  %z = ge.constant dense<131> : tensor<ui8>
  %z2 = ge.constant dense<120> : tensor<ui8>
  %shape = ge.constant dense<[2, 16]> : tensor<2xi64>
  %0 = ge.dequantize_linear %q, %s, x_zero_point = %z : (tensor<1x2x4x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2x4x4xf32>
  %1 = ge.max_pool %0 {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32, #ge.fmt<NCHW>>
  %2 = ge.quantize_linear %1, %s, y_zero_point = %z : (tensor<1x2x2x2xf32, #ge.fmt<NCHW>>, tensor<f32>, tensor<ui8>) -> tensor<1x2x2x2xui8, #ge.fmt<NCHW>>
  %3 = ge.reshape %0, %shape : (tensor<1x2x4x4xf32>, tensor<2xi64>) -> tensor<2x16xf32>
  %4 = ge.quantize_linear %3, %s, y_zero_point = %z : (tensor<2x16xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x16xui8>
  %5 = ge.transpose %0 {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x2x4x4xf32>) -> tensor<1x4x4x2xf32>
  %6 = ge.quantize_linear %5, %s, y_zero_point = %z2 : (tensor<1x4x4x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x4x4x2xui8>
  %7 = ge.quantize_linear %0, %s, y_zero_point = %z : (tensor<1x2x4x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2x4x4xui8>
  func.return %2, %4, %6, %7 : tensor<1x2x2x2xui8, #ge.fmt<NCHW>>, tensor<2x16xui8>, tensor<1x4x4x2xui8>, tensor<1x2x4x4xui8>
}
"""


def _one_grid_outputs():
    module = parse_module(ONE_GRID, "<test>")
    q = np.random.default_rng(3).integers(0, 256, (1, 2, 4, 4), dtype=np.uint8)
    before = run(module, {"arg0": q})  # a parsed function's inputs are named by position
    counts = _fold(module)
    return before, run(module, {"arg0": q}), counts, module


def test_dropped_and_cancelled_pairs_keep_every_integer():
    """A max pool (padded), a reshape and a Q / DQ pair on one grid: the folded module, computing
    on the integers, gives the QDQ graph's results bit for bit; the transpose's Q has another zero
    point and keeps its pair."""
    before, after, counts, module = _one_grid_outputs()
    assert counts == {("applied", "qdq-drop"): 2, ("applied", "qdq-cancel"): 1, ("rejected", "qdq-drop"): 1}
    assert _ops(module)[ge.QuantizeLinearOp] == 1 and _ops(module)[ge.DequantizeLinearOp] == 1
    for name, want in before.items():
        np.testing.assert_array_equal(after[name], want)


def test_mutation_without_the_one_grid_check_the_integers_change(monkeypatch):
    """Mutation: with the grids not compared, the transpose's pair (zero points 131 and 120) is
    dropped too, and its result is off by the zero points' difference."""
    monkeypatch.setattr(rules, "_why_not_one_grid", lambda dq, q: None)
    before, after, counts, _ = _one_grid_outputs()
    assert counts[("applied", "qdq-drop")] == 3
    assert any(not np.array_equal(after[k], v) for k, v in before.items())


def _quantized_gemm(trans_b: int, folder) -> onnx.ModelProto:
    """nn.Linear as quant_pre_process leaves it (Gemm, transB 0 or 1), through quantize_static."""
    rng = np.random.default_rng(5 + trans_b)
    weight = rng.standard_normal((32, 64) if trans_b else (64, 32)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Gemm", ["x", "W", "b"], ["y"], name="/fc/Gemm", transB=trans_b)],
        "gemm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, 32])],
        [
            numpy_helper.from_array(weight, "W"),
            numpy_helper.from_array(rng.standard_normal(32).astype(np.float32), "b"),
        ],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), folder / "float.onnx")

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.batches = iter([{"x": rng.standard_normal((8, 64)).astype(np.float32)} for _ in range(4)])

        def get_next(self):
            return next(self.batches, None)

    quantize_static(
        folder / "float.onnx",
        folder / "qdq.onnx",
        Reader(),
        quant_format=QuantFormat.QDQ,
        per_channel=True,
        weight_type=QuantType.QInt8,
        activation_type=QuantType.QUInt8,
    )
    return onnx.load(folder / "qdq.onnx")


def _qgemm_reference(model: onnx.ModelProto, inputs, folder) -> np.ndarray:
    """onnxruntime at ORT_ENABLE_ALL: it folds the group into its QGemm (integer arithmetic)."""
    so = ort.SessionOptions()
    so.optimized_model_filepath = str(folder / "folded.onnx")
    ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    folded = onnx.load(folder / "folded.onnx")
    assert "QGemm" in [n.op_type for n in folded.graph.node]
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, inputs)[0]


@pytest.mark.parametrize("trans_b", [0, 1])
def test_folded_gemm_equals_onnxruntimes_qgemm(trans_b, tmp_path):
    """Q(Gemm(DQ(x), DQ(w), DQ(bias))) becomes MatMulInteger, the int32 bias and the
    requantization, and gives onnxruntime's QGemm's results bit for bit."""
    model = _quantized_gemm(trans_b, tmp_path)
    inputs = {"x": np.random.default_rng(9).standard_normal((8, 64)).astype(np.float32)}
    want = _qgemm_reference(model, inputs, tmp_path)
    module = _imported(model)
    assert _fold(module)[("applied", "qdq-gemm")] == 1
    assert _ops(module)[ge.GemmOp] == 0 and _ops(module)[ge.MatMulIntegerOp] == 1
    np.testing.assert_array_equal(run(module, inputs)["y"], want)


def test_mutation_a_gemm_requantized_with_another_multiplier_is_caught(tmp_path, monkeypatch):
    """Mutation: the folded gemm's multiplier (x_scale * w_scale / y_scale) taken 1% too large."""
    model = _quantized_gemm(1, tmp_path)
    inputs = {"x": np.random.default_rng(9).standard_normal((8, 64)).astype(np.float32)}
    want = _qgemm_reference(model, inputs, tmp_path)
    right = rules._multiplier
    monkeypatch.setattr(rules, "_multiplier", lambda m: right(m) * np.float32(1.01))
    module = _imported(model)
    assert _fold(module)[("applied", "qdq-gemm")] == 1
    assert not np.array_equal(run(module, inputs)["y"], want)


NEGATIVE_SCALE = """
func.func @main(%q: tensor<1x1x2x2xui8>) -> tensor<1x1x1x1xui8, #ge.fmt<NCHW>> {
  %s = ge.constant dense<-0.5> : tensor<f32>
  %z = ge.constant dense<3> : tensor<ui8>
  %0 = ge.dequantize_linear %q, %s, x_zero_point = %z : (tensor<1x1x2x2xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x1x2x2xf32>
  %1 = ge.max_pool %0 {kernel_shape = array<i64: 2, 2>} : (tensor<1x1x2x2xf32>) -> tensor<1x1x1x1xf32, #ge.fmt<NCHW>>
  %2 = ge.quantize_linear %1, %s, y_zero_point = %z : (tensor<1x1x1x1xf32, #ge.fmt<NCHW>>, tensor<f32>, tensor<ui8>) -> tensor<1x1x1x1xui8, #ge.fmt<NCHW>>
  func.return %2 : tensor<1x1x1x1xui8, #ge.fmt<NCHW>>
}
"""


def test_mutation_a_max_pool_dropped_under_a_negative_scale_changes_its_result():
    """With the positive-scale condition off, qdq-drop takes the max of the integers, which under
    a negative scale is the min of the values: the result changes."""
    q = {"arg0": np.array([[[[1, 9], [4, 200]]]], np.uint8)}
    module = parse_module(NEGATIVE_SCALE, "<test>")
    want = run(module, q)
    assert _fold(module) == {("rejected", "qdq-drop"): 1}
    right = rules._why_not_drop

    def unsigned(m):
        reason = right(m)
        return None if reason is not None and "not positive" in reason else reason

    table = [dataclasses.replace(r, rejects=[Check(unsigned)]) if r.name == "qdq-drop" else r for r in rules.RULES]
    module = parse_module(NEGATIVE_SCALE, "<test>")
    with remarks.collected() as found:
        apply_rules(module, table, "fold-qdq")
    assert [(r.kind, r.rule) for r in found] == [("applied", "qdq-drop")]
    assert not all(np.array_equal(run(module, q)[k], v) for k, v in want.items())


def test_a_gemm_whose_bias_is_a_matrix_stays_float():
    """A bias of one value per output element (a [M, N] C) is no per-channel int32 bias."""
    text = (
        (Path(__file__).with_name("fold_qdq.mlir").read_text().split("// -----")[-1])
        .replace(
            "%bias = ge.constant dense<[1.0, -0.5]> : tensor<2xf32>",
            "%bias = ge.constant dense<[[1.0, -0.5], [0.5, 2.0]]> : tensor<2x2xf32>",
        )
        .replace("tensor<2xf32>) -> tensor<2x2xf32>", "tensor<2x2xf32>) -> tensor<2x2xf32>")
    )
    module = parse_module(text[text.index("\nfunc.func") + 1 :], "<test>")
    with remarks.collected() as found:
        FoldQdqPass().apply(None, module)
    reasons = [r.reason for r in found if r.rule == "qdq-gemm" and r.kind == "rejected"]
    assert "the bias has 4 values, not one per output channel (2)" in reasons
