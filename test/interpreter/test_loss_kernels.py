"""The loss kernels against onnxruntime: one-node SoftmaxCrossEntropyLoss and
NegativeLogLikelihoodLoss models imported and run by ge, compared with onnxruntime's outputs
(every reduction, weights, ignore_index hitting labels, extra dims, log_prob, f32 and f64)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx_oracle import compare_with_onnxruntime, node_model

from ge.frontend.onnx_importer import import_model
from ge.interpreter.ge import KernelError
from ge.interpreter.runner import run

ort = pytest.importorskip("onnxruntime")


def _operands(shape, dtype, weighted, ignore_index, label_dtype=np.int64):
    rng = np.random.default_rng(sum(shape))
    scores = (rng.standard_normal(shape) * 2).astype(dtype)
    labels = rng.integers(0, shape[1], (shape[0], *shape[2:])).astype(label_dtype)
    if ignore_index is not None:
        labels.reshape(-1)[::3] = ignore_index
    weights = rng.uniform(0.5, 2.0, shape[1]).astype(dtype) if weighted else None
    return scores, labels, weights


CASES = [
    ((5, 4), False, None),
    ((5, 4), True, 2),
    ((3, 4, 2, 3), True, -1),
    ((3, 4, 5), False, 0),
]


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("shape,weighted,ignore_index", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_cross_entropy_matches_onnxruntime(reduction, shape, weighted, ignore_index, dtype):
    scores, labels, weights = _operands(shape, dtype, weighted, ignore_index)
    attrs = {"reduction": reduction} | ({"ignore_index": ignore_index} if ignore_index is not None else {})
    inputs = {"scores": scores, "labels": labels, "weights": weights}
    model = node_model("SoftmaxCrossEntropyLoss", inputs, 2, **attrs)
    compare_with_onnxruntime(model, {k: v for k, v in inputs.items() if v is not None}, 1e-5, 1e-6)


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("shape,weighted,ignore_index", CASES)
def test_nll_loss_matches_onnxruntime(reduction, shape, weighted, ignore_index):
    scores, labels, weights = _operands(shape, np.float32, weighted, ignore_index, np.int32)
    attrs = {"reduction": reduction} | ({"ignore_index": ignore_index} if ignore_index is not None else {})
    inputs = {"input": scores, "target": labels, "weight": weights}
    model = node_model("NegativeLogLikelihoodLoss", inputs, 1, **attrs)
    compare_with_onnxruntime(model, {k: v for k, v in inputs.items() if v is not None}, 1e-5, 1e-6)


def test_a_label_out_of_range_is_a_one_line_error():
    scores, labels, _ = _operands((4, 3), np.float32, False, None)
    labels[2] = 3
    model = node_model("SoftmaxCrossEntropyLoss", {"scores": scores, "labels": labels}, 1)
    module, weights = import_model(model)
    with pytest.raises(KernelError, match=r"ge.softmax_cross_entropy_loss .*label 3 is out of range \[0, 3\)"):
        run(module, {"scores": scores, "labels": labels}, weights)


def test_f16_scores_give_an_f16_loss_within_f16_precision():
    """f16 scores are computed in f32 and rounded once: the loss is an f16 within f16's precision of
    the float64 formulation."""
    scores, labels, _ = _operands((4, 6), np.float32, False, None)
    scores = (scores * 4).astype(np.float16)
    model = node_model("SoftmaxCrossEntropyLoss", {"scores": scores, "labels": labels}, 1)
    module, weights = import_model(model)
    got = run(module, {"scores": scores, "labels": labels}, weights)["out0"]
    wide = scores.astype(np.float64)
    log_p = wide - wide.max(1, keepdims=True)
    log_p -= np.log(np.exp(log_p).sum(1, keepdims=True))
    want = -log_p[np.arange(4), labels].mean()
    assert got.dtype == np.float16 and np.isfinite(got)
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=1e-3)
