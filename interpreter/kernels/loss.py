"""Kernels of the loss ops and their backward ops (ge_dialects/ge/loss.py), vectorised over every
position at once.

They compute in the scores' dtype (f64 included); f16 and bf16 widen to f32 and round once, as the
softmax kernel does (GE keeps SoftmaxCrossEntropyWithLogits in f32). A label that is neither in
[0, C) nor `ignore_index` is a data error naming the op.
"""

from __future__ import annotations

import numpy as np
from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ge.ge_dialects import ge
from ge.interpreter.kernels import DataError
from ge.interpreter.kernels.checked import kernel_impl


def _compute(x: np.ndarray) -> np.ndarray:
    """`x` in the type to compute in: float32 for f16/bf16, else unchanged."""
    return x.astype(np.float32) if x.dtype.itemsize < 4 else x


class Picks:
    """Which class each position picks and with what weight: w = weights[label] (1 without weights),
    0 where the label is ignore_index; `index` is the label made safe to gather with (N, 1, d1..dk)."""

    def __init__(self, op, labels: np.ndarray, weights: np.ndarray | None, classes: int, dtype: np.dtype):
        ignore = op.p("ignore_index")
        kept = labels != ignore if ignore is not None else np.ones(labels.shape, bool)
        bad = kept & ((labels < 0) | (labels >= classes))
        if bad.any():
            raise DataError(f"label {int(labels[bad][0])} is out of range [0, {classes}) and is not ignore_index")
        safe = np.where(kept, labels, 0).astype(np.intp)
        self.index = safe[:, None]
        picked = weights.astype(dtype)[safe] if weights is not None else np.ones(labels.shape, dtype)
        self.weight = np.where(kept, picked, 0).astype(dtype)
        self.reduction = op.p("reduction")

    def reduce(self, losses: np.ndarray) -> np.ndarray:
        """The per-position losses reduced as the op says (mean: divided by the sum of the weights)."""
        if self.reduction == "none":
            return losses
        total = losses.sum()
        if self.reduction == "sum":
            return np.asarray(total)
        with np.errstate(invalid="ignore", divide="ignore"):  # every position ignored: 0/0, as ONNX
            return np.asarray(total / self.weight.sum())

    def scale(self, dy: np.ndarray) -> np.ndarray:
        """d loss / d (picked log-probability) per position, negated: w * dy / denominator, (N, 1, ...)."""
        per_position = self.weight * dy
        if self.reduction == "mean":
            with np.errstate(invalid="ignore", divide="ignore"):
                per_position = per_position / self.weight.sum()
        return per_position[:, None]


def _log_softmax(x: np.ndarray) -> np.ndarray:
    shifted = x - x.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


def _picks(op, ins, data: str, labels: str, weights: str, dtype) -> Picks:
    return Picks(op, ins[labels], ins[weights], ins[data].shape[1], dtype)


def softmax_cross_entropy_loss(op, ins):
    scores = ins["scores"]
    x = _compute(scores)
    picks = _picks(op, ins, "scores", "labels", "weights", x.dtype)
    log_prob = _log_softmax(x)
    losses = -np.take_along_axis(log_prob, picks.index, axis=1)[:, 0] * picks.weight
    output = picks.reduce(losses).astype(scores.dtype)
    if len(op.results) == 1:
        return output
    return output, log_prob.astype(scores.dtype)


def nll_loss(op, ins):
    data = ins["input"]
    x = _compute(data)
    picks = _picks(op, ins, "input", "target", "weight", x.dtype)
    losses = -np.take_along_axis(x, picks.index, axis=1)[:, 0] * picks.weight
    return picks.reduce(losses).astype(data.dtype)


def softmax_cross_entropy_loss_grad(op, ins):
    scores = ins["scores"]
    x = _compute(scores)
    picks = _picks(op, ins, "scores", "labels", "weights", x.dtype)
    grad = np.exp(_log_softmax(x))
    np.put_along_axis(grad, picks.index, np.take_along_axis(grad, picks.index, axis=1) - 1, axis=1)
    grad *= picks.scale(_compute(ins["dy"]))
    return grad.astype(scores.dtype)


def nll_loss_grad(op, ins):
    dy = ins["dy"]
    shape = tuple(op.p("input_shape"))
    d = _compute(dy)
    picks = Picks(op, ins["target"], ins["weight"], shape[1], d.dtype)
    grad = np.zeros(shape, d.dtype)
    np.put_along_axis(grad, picks.index, -picks.scale(d), axis=1)
    return grad.astype(dy.dtype)


@register_impls
class LossFunctions(InterpreterFunctions):
    """The interpreter implementations of the loss ops: each runs its kernel above."""

    run_softmax_cross_entropy_loss = impl(ge.SoftmaxCrossEntropyLossOp)(kernel_impl(softmax_cross_entropy_loss))
    run_nll_loss = impl(ge.NllLossOp)(kernel_impl(nll_loss))
    run_softmax_cross_entropy_loss_grad = impl(ge.SoftmaxCrossEntropyLossGradOp)(
        kernel_impl(softmax_cross_entropy_loss_grad)
    )
    run_nll_loss_grad = impl(ge.NllLossGradOp)(kernel_impl(nll_loss_grad))
