"""Loss ops: ONNX SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss, and their backward ops
(GE's SoftmaxCrossEntropyWithLogits backprop and NLLLossGrad).

Both losses share ONNX's conventions: scores / log-probabilities (N, C, d1..dk), integer labels
(N, d1..dk), optional per-class weights (C,). Each position gets the weight w = weights[label]
(1 without weights), 0 where the label is `ignore_index`; the loss at a position is
-w * logp[label]. "none" keeps the per-position losses, "sum" adds them, "mean" divides the sum by
the sum of the weights w (so ignored positions count in neither), as ONNX specifies.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import TensorType, i32, i64
from xdsl.ir import SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    opt_result_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure

from ge.ge_dialects.ge.base import GeOp, InferArgs, IntProp, IntsProp, StrProp
from ge.ge_dialects.ge.facts import Engine, Reduction, RunsOn, Transcendental
from ge.ge_dialects.ge.grad import GradBuilder, static_shape
from ge.ge_dialects.ge.types import FLOAT_TYPES, Shape, elements, shape_of, tensor, tensor_type_of

REDUCTIONS = ("none", "sum", "mean")
LABEL_TYPES = (i64, i32)


def _show(shape: Shape) -> str:
    return "(" + ", ".join("?" if d is None else str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def _dims_agree(a: Shape, b: Shape) -> bool:
    return len(a) == len(b) and all(x is None or y is None or x == y for x, y in zip(a, b))


def check_reduction(a: InferArgs) -> str:
    reduction = a.prop("reduction")
    if reduction not in REDUCTIONS:
        raise a.fail(f'reduction must be "none", "sum" or "mean", got "{reduction}"')
    return reduction


def check_loss_operands(a: InferArgs, what: str, scores: Shape, labels: str, weights: str) -> Shape:
    """Checks labels (N, d1..dk) of an integer type and weights (C,) against `what`, the scores or
    log-probabilities (N, C, d1..dk); returns the per-position loss shape."""
    if len(scores) < 2:
        raise a.fail(f"{what} must have rank 2 or more (N, C, d1..dk), got {_show(scores)}")
    a.expect_dtype(labels, LABEL_TYPES)
    label_shape = a.shape(labels)
    want = (scores[0], *scores[2:])
    if not _dims_agree(label_shape, want):
        raise a.fail(
            f"operand '{labels}' must have shape {_show(want)} for {what} {_show(scores)}, got {_show(label_shape)}"
        )
    if a.has(weights):
        weight_shape = a.shape(weights)
        if not _dims_agree(weight_shape, (scores[1],)):
            raise a.fail(f"operand '{weights}' must have shape {_show((scores[1],))}, got {_show(weight_shape)}")
    return tuple(x if x is not None else y for x, y in zip(label_shape, want))


def loss_shape(reduction: str, positions: Shape) -> Shape:
    return positions if reduction == "none" else ()


def check_cotangent(a: InferArgs, name: str, reduction: str, positions: Shape) -> None:
    """The loss cotangent `name` has the loss's shape: scalar for sum/mean, the labels' for none."""
    want = loss_shape(reduction, positions)
    got = a.shape(name)
    if not _dims_agree(got, want):
        raise a.fail(
            f"operand '{name}' must have the loss's shape {_show(want)} (reduction {reduction}), got {_show(got)}"
        )


class LossOp(GeOp):
    """What the two losses share: properties, and the VJP shape (only `output` and, for the softmax
    loss, `log_prob` carry cotangents; labels and weights get none)."""

    reduction = opt_prop_def(StrProp)
    ignore_index = opt_prop_def(IntProp)
    DEFAULTS: ClassVar = {"reduction": "mean"}

    def loss_props(self) -> dict[str, object]:
        return {"reduction": self.p("reduction"), "ignore_index": self.p("ignore_index")}

    def reduced_row_elements(self) -> int:
        """The class row a tile holds (softmax over C; the pick of one class among C)."""
        dim = shape_of(tensor_type_of(self.operands[0]))[1]
        return dim if dim is not None else 1


@irdl_op_definition
class SoftmaxCrossEntropyLossOp(LossOp):
    """ONNX SoftmaxCrossEntropyLoss (opset 13+): log_softmax over axis 1, then the weighted negative
    log-likelihood of the labels; `log_prob` (optional) is the log_softmax."""

    name = "ge.softmax_cross_entropy_loss"
    ONNX: ClassVar = ("SoftmaxCrossEntropyLoss",)
    # SoftmaxCrossEntropyWithLogits: GE keeps a loss and its softmax f32 (a log of a small probability, a long sum)
    PRECISION: ClassVar = "black"
    DATA_OPERANDS: ClassVar = ("scores", "weights")  # labels stay integers
    scores = operand_def(TensorType)
    labels = operand_def(TensorType)
    weights = opt_operand_def(TensorType)
    output = result_def(TensorType)
    log_prob = opt_result_def(TensorType)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR), Reduction(), Transcendental())
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"labels", "weights"})

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        dtype = a.expect_dtype("scores", FLOAT_TYPES)
        a.expect_same_dtype("scores", "weights")
        reduction = check_reduction(a)
        scores = a.shape("scores")
        positions = check_loss_operands(a, "operand 'scores'", scores, "labels", "weights")
        return [tensor(dtype, loss_shape(reduction, positions)), tensor(dtype, scores)]

    def transcendental_elements(self) -> int:
        """An exp and a log per score, whatever the reduction leaves of the result."""
        return elements(self.scores)

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        d_output = cotangents[0]
        d_log_prob = cotangents[1] if len(cotangents) > 1 else None
        grad: SSAValue | None = None
        if d_output is not None:
            operands = {"dy": d_output, "scores": self.scores, "labels": self.labels, "weights": self.weights}
            grad = g.value(SoftmaxCrossEntropyLossGradOp, operands, self.loss_props())
        if d_log_prob is not None:
            # log_softmax's VJP: d - softmax * sum_c(d), the sum over the class axis.
            from ge.ge_dialects.ge.nn import SoftmaxOp

            probs = g.value(SoftmaxOp, {"input": self.scores}, {"axis": 1})
            total = g.reduce_sum(d_log_prob, [1], keepdims=True)
            through_log_prob = g.sub(d_log_prob, g.mul(probs, total))
            grad = through_log_prob if grad is None else g.add(grad, through_log_prob)
        return [grad, None, None] if self.weights is not None else [grad, None]


@irdl_op_definition
class NllLossOp(LossOp):
    """ONNX NegativeLogLikelihoodLoss: -input[n, target[n, d], d] weighted and reduced."""

    name = "ge.nll_loss"
    ONNX: ClassVar = ("NegativeLogLikelihoodLoss",)
    PRECISION: ClassVar = "black"  # NLLLoss: a loss stays f32
    DATA_OPERANDS: ClassVar = ("input", "weight")
    input = operand_def(TensorType)
    target = operand_def(TensorType)
    weight = opt_operand_def(TensorType)
    loss = result_def(TensorType)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR), Reduction())
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"target", "weight"})

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        dtype = a.expect_dtype("input", FLOAT_TYPES)
        a.expect_same_dtype("input", "weight")
        reduction = check_reduction(a)
        positions = check_loss_operands(a, "operand 'input'", a.shape("input"), "target", "weight")
        return [tensor(dtype, loss_shape(reduction, positions))]

    def vector_elements(self) -> int:
        """One pick, weight and sum per position."""
        return elements(self.target)

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        (d_loss,) = cotangents
        if d_loss is None:
            return [None] * len(self.operands)
        shape = list(static_shape(self.input))
        operands = {"dy": d_loss, "target": self.target, "weight": self.weight}
        grad = g.value(NllLossGradOp, operands, {**self.loss_props(), "input_shape": shape})
        return [grad, None, None] if self.weight is not None else [grad, None]


@irdl_op_definition
class SoftmaxCrossEntropyLossGradOp(LossOp):
    """GE's SoftmaxCrossEntropyWithLogits backprop, with ONNX's weights, ignore_index and reductions:
    d scores = (softmax(scores) - onehot(labels)) * w * dy / denominator (the sum of the weights w for
    mean, else 1), zero at ignored positions."""

    name = "ge.softmax_cross_entropy_loss_grad"
    NO_GRADIENT: ClassVar = "it is a backward op, and second derivatives are not built"
    PRECISION: ClassVar = "black"  # the loss's gradient stays f32 like the loss
    DATA_OPERANDS: ClassVar = ("dy", "scores", "weights")
    dy = operand_def(TensorType)
    scores = operand_def(TensorType)
    labels = operand_def(TensorType)
    weights = opt_operand_def(TensorType)
    d_scores = result_def(TensorType)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR), Reduction(), Transcendental())

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        dtype = a.expect_dtype("scores", FLOAT_TYPES)
        a.expect_same_dtype("scores", "dy", "weights")
        reduction = check_reduction(a)
        scores = a.shape("scores")
        positions = check_loss_operands(a, "operand 'scores'", scores, "labels", "weights")
        check_cotangent(a, "dy", reduction, positions)
        return [tensor(dtype, scores)]

    def reduced_row_elements(self) -> int:
        dim = shape_of(tensor_type_of(self.scores))[1]
        return dim if dim is not None else 1


@irdl_op_definition
class NllLossGradOp(LossOp):
    """GE's NLLLossGrad: d input = -onehot(target) * w * dy / denominator, for an input of
    `input_shape` (the log-probabilities are not needed, only their shape)."""

    name = "ge.nll_loss_grad"
    NO_GRADIENT: ClassVar = "it is a backward op, and second derivatives are not built"
    PRECISION: ClassVar = "black"  # NLLLossGrad: the loss's gradient stays f32 like the loss
    DATA_OPERANDS: ClassVar = ("dy", "weight")
    dy = operand_def(TensorType)
    target = operand_def(TensorType)
    weight = opt_operand_def(TensorType)
    d_input = result_def(TensorType)
    input_shape = opt_prop_def(IntsProp)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR))

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        dtype = a.expect_dtype("dy", FLOAT_TYPES)
        a.expect_same_dtype("dy", "weight")
        reduction = check_reduction(a)
        shape = a.prop("input_shape")
        if shape is None:
            raise a.fail("input_shape is required")
        if any(d < 0 for d in shape):
            raise a.fail(f"input_shape {list(shape)} has a negative dimension")
        positions = check_loss_operands(a, "input_shape", tuple(shape), "target", "weight")
        check_cotangent(a, "dy", reduction, positions)
        return [tensor(dtype, shape)]

    def reduced_row_elements(self) -> int:
        return 1


LOSS_OPS = [SoftmaxCrossEntropyLossOp, NllLossOp, SoftmaxCrossEntropyLossGradOp, NllLossGradOp]

__all__ = [
    "LOSS_OPS",
    "SoftmaxCrossEntropyLossOp",
    "NllLossOp",
    "SoftmaxCrossEntropyLossGradOp",
    "NllLossGradOp",
]
