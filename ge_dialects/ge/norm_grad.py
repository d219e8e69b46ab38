"""Backward ops of normalization and softmax, named after GE's: what the VJPs of `ge.batch_norm`,
`ge.layer_norm`, `ge.softmax` and `ge.lrn` (ge_dialects/ge/nn.py) emit.

Each recomputes the statistics it needs from the forward input instead of taking them as operands,
so the backward depends only on values the forward graph already has (x, scale, the softmax output),
and checkpointing may drop or recompute the forward's statistics freely.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import TensorType
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, result_def, traits_def
from xdsl.traits import Pure

from ge.ge_dialects.ge.base import FloatProp, GeOp, InferArgs, IntProp
from ge.ge_dialects.ge.facts import ComputesIn, Engine, Reduction, RunsOn, StorageFormats, Transcendental
from ge.ge_dialects.ge.layout import NC1HWC0
from ge.ge_dialects.ge.nn import LrnOp, _check_channel_vector, _check_unidirectional, _shape, _trailing_elements
from ge.ge_dialects.ge.types import FLOAT_TYPES, elements, tensor


def _check_like_x(a: InferArgs, name: str, x: str) -> None:
    """`name` (an incoming gradient) must have `x`'s element type and shape."""
    a.expect_same_dtype(x, name)
    got, want = a.shape(name), a.shape(x)
    if len(got) != len(want) or any(g is not None and w is not None and g != w for g, w in zip(got, want)):
        raise a.fail(f"operand '{name}' of shape {_shape(got)} must have the shape of '{x}' {_shape(want)}")


@irdl_op_definition
class BatchNormGradOp(GeOp):
    """GE's BNTrainingUpdateGrad + BNTrainingReduceGrad as one op: the gradients of
    `ge.batch_norm` with respect to X, scale and B, given dy (the cotangent of Y).

    training_mode = 1: the batch mean and variance are recomputed from x (over N and the spatial
    dims, as the forward does), `mean` and `var` (the running statistics the forward took) are not
    read, and dx includes the terms through the batch statistics. training_mode = 0: `mean` and
    `var` are the statistics the forward normalized with, constants to it, so dx = dy * scale /
    sqrt(var + epsilon). dscale = sum(dy * x_hat), dbias = sum(dy) per channel in both modes."""

    name = "ge.batch_norm_grad"
    NO_GRADIENT: ClassVar = "it is a backward op, and second derivatives are not built"
    DATA_OPERANDS: ClassVar = ("dy", "x")  # scale and the statistics stay f32, as the forward's do
    dy = operand_def(TensorType)
    x = operand_def(TensorType)
    scale = operand_def(TensorType)
    mean = operand_def(TensorType)
    var = operand_def(TensorType)
    dx = result_def(TensorType)
    dscale = result_def(TensorType)
    dbias = result_def(TensorType)
    epsilon = opt_prop_def(FloatProp)
    training_mode = opt_prop_def(IntProp)
    traits = traits_def(
        Pure(),
        RunsOn(Engine.VECTOR),
        Transcendental(),
        StorageFormats(ComputesIn("batch-norm-grad-nc1hwc0", NC1HWC0, ("dy", "x"), ("dx",), backward=True)),
    )
    DEFAULTS: ClassVar = {"epsilon": 1e-5, "training_mode": 0}

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        dtype = a.expect_dtype("x", FLOAT_TYPES)
        x = a.shape("x")
        if len(x) < 2:
            raise a.fail(f"operand 'x' must have rank >= 2 (N, C, ...), got rank {len(x)}")
        _check_like_x(a, "dy", "x")
        for name in ("scale", "mean", "var"):
            _check_channel_vector(a, name, x[1])
        a.expect_same_dtype("mean", "var")
        if a.prop("training_mode") not in (0, 1):
            raise a.fail(f"training_mode must be 0 or 1, got {a.prop('training_mode')}")
        channels = tensor(a.dtype("scale"), (x[1],))
        return [tensor(dtype, x, a.fmt("x")), channels, channels]

    def input_passes(self) -> int:
        """Two in training mode: the sums of dy and dy * x-hat over the batch (GE's
        BNTrainingUpdateGrad) must be complete before dx can be computed from them
        (BNTrainingReduceGrad), and a channel's batch does not stay on chip in between."""
        return 2 if self.p("training_mode") == 1 else 1


@irdl_op_definition
class LayerNormGradOp(GeOp):
    """GE's LayerNormGrad: the gradients of `ge.layer_norm` with respect to X, Scale and B, given dy
    (the cotangent of Y). The mean and inverse standard deviation over dims axis.. are recomputed
    from x; dscale and dbias are summed back to the shape of `scale` (which broadcasts to x)."""

    name = "ge.layer_norm_grad"
    NO_GRADIENT: ClassVar = "it is a backward op, and second derivatives are not built"
    DATA_OPERANDS: ClassVar = ("dy", "x", "scale")
    dy = operand_def(TensorType)
    x = operand_def(TensorType)
    scale = operand_def(TensorType)
    dx = result_def(TensorType)
    dscale = result_def(TensorType)
    dbias = result_def(TensorType)
    axis = opt_prop_def(IntProp)
    epsilon = opt_prop_def(FloatProp)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR), Reduction(), Transcendental())
    DEFAULTS: ClassVar = {"axis": -1, "epsilon": 1e-5}

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        dtype = a.expect_dtype("x", FLOAT_TYPES)
        _check_like_x(a, "dy", "x")
        a.expect_same_dtype("x", "scale")
        x = a.shape("x")
        a.normalize_axis(a.prop("axis"), len(x))
        _check_unidirectional(a, "scale", x)
        scale = tensor(dtype, a.shape("scale"))
        return [tensor(dtype, x, a.fmt("x")), scale, scale]

    def reduced_row_elements(self) -> int:
        return _trailing_elements(self.x, self.p("axis"))


@irdl_op_definition
class SoftmaxGradOp(GeOp):
    """GE's SoftmaxGrad: dx = y * (dy - sum(dy * y, axis, keepdims)), the gradient of
    `ge.softmax` through its output y."""

    name = "ge.softmax_grad"
    NO_GRADIENT: ClassVar = "it is a backward op, and second derivatives are not built"
    DATA_OPERANDS: ClassVar = ("y", "dy")
    y = operand_def(TensorType)
    dy = operand_def(TensorType)
    dx = result_def(TensorType)
    axis = opt_prop_def(IntProp)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR), Reduction())
    DEFAULTS: ClassVar = {"axis": -1}

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        dtype = a.expect_dtype("y", FLOAT_TYPES)
        _check_like_x(a, "dy", "y")
        a.normalize_axis(a.prop("axis"), a.rank("y"))
        return [tensor(dtype, a.shape("y"), a.fmt("y"))]

    def reduced_row_elements(self) -> int:
        return _trailing_elements(self.y, self.p("axis"))


@irdl_op_definition
class LrnGradOp(GeOp):
    """GE's LRNGrad: the gradient of `ge.lrn` with respect to X, given dy. With d = bias + alpha /
    size * (the window sum of X^2), dx = dy * d^-beta - 2 * alpha * beta / size * X * (the
    transposed window sum of dy * X * d^(-beta-1)); d is recomputed from X."""

    name = "ge.lrn_grad"
    NO_GRADIENT: ClassVar = "it is a backward op, and second derivatives are not built"
    DATA_OPERANDS: ClassVar = ("dy", "X")
    dy = operand_def(TensorType)
    X = operand_def(TensorType)
    dX = result_def(TensorType)
    size = opt_prop_def(IntProp)
    alpha = opt_prop_def(FloatProp)
    beta = opt_prop_def(FloatProp)
    bias = opt_prop_def(FloatProp)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR), Transcendental())
    DEFAULTS: ClassVar = {"alpha": 1e-4, "beta": 0.75, "bias": 1.0}

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        (x_type,) = LrnOp.infer(a)
        _check_like_x(a, "dy", "X")
        return [x_type]

    def vector_elements(self) -> int:
        """Two window sums (the forward's and the transposed one) of `size` lane-operations per element."""
        return 2 * self.p("size") * elements(self.dX)


NORM_GRAD_OPS = [BatchNormGradOp, LayerNormGradOp, SoftmaxGradOp, LrnGradOp]

__all__ = ["BatchNormGradOp", "LayerNormGradOp", "SoftmaxGradOp", "LrnGradOp", "NORM_GRAD_OPS"]
