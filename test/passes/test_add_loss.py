"""add-loss: the graph after the pass runs, and its loss output is the loss an independent numpy
formulation (and onnxruntime's SoftmaxCrossEntropyLoss) computes from the same logits and labels;
the original outputs are unchanged."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper

from ge.interpreter.runner import run
from ge.passes.add_loss import AddLossPass
from ge.tools.common import make_context, parse_module

GRAPH = """
func.func @main(%x: tensor<6x8xf32> {ge.name = "x"}, %w: tensor<8x5xf32> {ge.name = "w"},
                %s: tensor<2x3x4x4xf32> {ge.name = "s"}, %h: tensor<6x8xf16> {ge.name = "h"})
    -> (tensor<6x5xf32> {ge.name = "logits"}, tensor<2x3x4x4xf32> {ge.name = "seg"}, tensor<6x8xf16> {ge.name = "half"}) {
  %0 = ge.matmul %x, %w : (tensor<6x8xf32>, tensor<8x5xf32>) -> tensor<6x5xf32>
  %1 = ge.tanh %s : (tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  %2 = ge.relu %h : (tensor<6x8xf16>) -> tensor<6x8xf16>
  func.return %0, %1, %2 : tensor<6x5xf32>, tensor<2x3x4x4xf32>, tensor<6x8xf16>
}
"""

RNG = np.random.default_rng(7)
INPUTS = {
    "x": RNG.standard_normal((6, 8)).astype(np.float32),
    "w": RNG.standard_normal((8, 5)).astype(np.float32),
    "s": RNG.standard_normal((2, 3, 4, 4)).astype(np.float32) * 3,
    "h": RNG.standard_normal((6, 8)).astype(np.float16),
}


def _run_with_loss(labels: np.ndarray, **options) -> dict[str, np.ndarray]:
    module = parse_module(GRAPH, "<test>")
    before = run(module, INPUTS)
    AddLossPass(**options).apply(make_context(), module)
    module.verify()
    after = run(module, {**INPUTS, "labels": labels})
    for name, value in before.items():
        np.testing.assert_array_equal(after[name], value, err_msg=f"output {name} changed")
    assert after["loss"].shape == () and after["loss"].dtype == np.float32
    return after


def _numpy_cross_entropy(logits, labels, reduction, ignore_index=None, log_probs=False):
    """-log p[label] per position by explicit loops (logits (N, C, ...), labels (N, ...))."""
    logits = logits.astype(np.float64)
    total, count = 0.0, 0
    for n in range(labels.shape[0]):
        for pos in np.ndindex(labels.shape[1:]):
            label = labels[(n, *pos)]
            if label == ignore_index:
                continue
            row = np.array([logits[(n, c, *pos)] for c in range(logits.shape[1])])
            log_p = row if log_probs else row - row.max() - np.log(np.exp(row - row.max()).sum())
            total -= log_p[label]
            count += 1
    return total / count if reduction == "mean" else total


def _onnxruntime_cross_entropy(logits, labels, reduction, ignore_index):
    import onnxruntime as ort

    attrs = {"reduction": reduction} | ({"ignore_index": ignore_index} if ignore_index is not None else {})
    node = helper.make_node("SoftmaxCrossEntropyLoss", ["x", "y"], ["loss"], **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, logits.shape),
            helper.make_tensor_value_info("y", onnx.TensorProto.INT64, labels.shape),
        ],
        [helper.make_tensor_value_info("loss", onnx.TensorProto.FLOAT, [])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": logits, "y": labels})[0]


@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("ignore_index", [None, 2])
def test_softmax_cross_entropy_on_classifier_logits(reduction, ignore_index):
    labels = np.array([0, 2, 4, 1, 2, 3], np.int64)
    out = _run_with_loss(labels, output="logits", reduction=reduction, ignore_index=ignore_index)
    want = _numpy_cross_entropy(out["logits"], labels, reduction, ignore_index)
    np.testing.assert_allclose(out["loss"], want, rtol=1e-5)
    oracle = _onnxruntime_cross_entropy(out["logits"], labels, reduction, ignore_index)
    np.testing.assert_allclose(out["loss"], oracle, rtol=1e-5)


def test_softmax_cross_entropy_on_a_segmentation_map():
    labels = RNG.integers(0, 3, (2, 4, 4)).astype(np.int64)
    labels[0, 0] = -100
    out = _run_with_loss(labels, output="seg", ignore_index=-100)
    np.testing.assert_allclose(out["loss"], _numpy_cross_entropy(out["seg"], labels, "mean", -100), rtol=1e-5)
    np.testing.assert_allclose(out["loss"], _onnxruntime_cross_entropy(out["seg"], labels, "mean", -100), rtol=1e-5)


def test_nll_reads_the_output_as_log_probabilities():
    labels = RNG.integers(0, 3, (2, 4, 4)).astype(np.int64)
    out = _run_with_loss(labels, output="seg", kind="nll", reduction="sum")
    want = _numpy_cross_entropy(out["seg"], labels, "sum", log_probs=True)
    np.testing.assert_allclose(out["loss"], want, rtol=1e-5)


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_mse(reduction):
    target = RNG.standard_normal((2, 3, 4, 4)).astype(np.float32)
    out = _run_with_loss(target, output="seg", kind="mse", reduction=reduction)
    squares = (out["seg"].astype(np.float64) - target) ** 2
    np.testing.assert_allclose(out["loss"], squares.mean() if reduction == "mean" else squares.sum(), rtol=1e-5)


def test_mse_of_an_f16_output_is_cast_to_f32():
    target = RNG.standard_normal((6, 8)).astype(np.float16)
    out = _run_with_loss(target, output="half", kind="mse")
    squares = (out["half"].astype(np.float64) - target.astype(np.float64)) ** 2
    np.testing.assert_allclose(out["loss"], squares.mean(), rtol=1e-2)


def test_a_wrong_reduction_is_caught(monkeypatch):
    """Mutation: the pass builds a sum where a mean was asked; the comparison with numpy fails."""
    from ge.ge_dialects import ge

    original = ge.SoftmaxCrossEntropyLossOp.create.__func__

    def summing(cls, operands=(), props=None, *args, **kwargs):
        return original(cls, operands, {**(props or {}), "reduction": "sum"}, *args, **kwargs)

    monkeypatch.setattr(ge.SoftmaxCrossEntropyLossOp, "create", classmethod(summing))
    with pytest.raises(AssertionError, match="Not equal to tolerance"):
        test_softmax_cross_entropy_on_classifier_logits("mean", None)


@pytest.mark.parametrize("pipeline", ["add-loss{output=y}", "apply-optimizer{kind=sgd}", "loss-scale{kind=static}"])
def test_training_passes_need_a_main(pipeline):
    """The training passes rewrite `@main` (passes/graph_main.py): without one, one line naming the pass."""
    from xdsl.utils.exceptions import DiagnosticException

    from ge.passes.pipeline import parse_passes

    module = parse_module(
        "func.func @other(%x: tensor<2xf32>) -> tensor<2xf32> {\n  func.return %x : tensor<2xf32>\n}\n", "m.mlir"
    )
    (training_pass,) = parse_passes(pipeline)
    with pytest.raises(DiagnosticException, match=f"^{pipeline.split('{')[0]}: the module has no func.func @main$"):
        training_pass.apply(make_context(), module)
