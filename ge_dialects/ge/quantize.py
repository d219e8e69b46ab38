"""Linear quantization (GE's AscendQuant / AscendDequant, and the integer Cube ops).

QuantizeLinear and DequantizeLinear map between a float tensor and a quantized one (int8, uint8,
int16, uint16, int4, uint4, int2, uint2, float8, float4) through a scale and a zero point, one per
tensor, one per index of `axis`, or one per block of `block_size` indices along `axis`
(`scale_axis` holds the rule the verifiers and the kernels share). DynamicQuantizeLinear computes
a uint8 scale and zero point from the data's range. MatMulInteger and ConvInteger multiply
integers with int32 accumulation after subtracting zero points; QLinearMatMul and QLinearConv do
the same and requantize the result. The products are Cube work (`matmul_macs`, `conv_macs`, the
shape rules of ge.matmul and ge.conv). Rounding to integers has no derivative worth the name, and
the integer products have integer operands: none of these ops has a gradient, and all keep their
types under mixed precision (their result types are what they mean).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import TensorType, f32, i8, i16, i32
from xdsl.ir import Attribute
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure

from ge.ge_dialects.ge.base import GeOp, InferArgs, IntProp, IntsProp, StrProp
from ge.ge_dialects.ge.facts import Carries, Engine, Reduction, RunsOn, StorageFormats
from ge.ge_dialects.ge.layout import ACTIVATION_FORMATS, conv_formats
from ge.ge_dialects.ge.nn import _check_scalar, conv_macs, conv_shape, matmul_macs, matmul_shape
from ge.ge_dialects.ge.nn import _shape as _dims
from ge.ge_dialects.ge.tensor_ops import ONNX_ELEMENT_TYPES
from ge.ge_dialects.ge.types import (
    FLOAT8_TYPES,
    FLOAT_TYPES,
    Shape,
    f4E2M1FN,
    i2,
    i4,
    shape_of,
    tensor,
    tensor_type_of,
    type_name,
    ui2,
    ui4,
    ui8,
    ui16,
)

QUANTIZED_INT_TYPES = (i8, ui8, i16, ui16, i4, ui4, i2, ui2)
"""The integer types QuantizeLinear rounds to (saturating to the type's range)."""
QUANTIZED_TYPES = QUANTIZED_INT_TYPES + FLOAT8_TYPES + (f4E2M1FN,)
"""Every type QuantizeLinear produces and DequantizeLinear reads (with int32, for DequantizeLinear)."""
SCALE_TYPES = FLOAT_TYPES
"""The types of scales (and of the float data they scale)."""
PRODUCT_TYPES = (i8, ui8)
"""The operand types of the integer products."""


SINGLE: set[Shape] = {(), (1,)}
"""The shapes of one value (onnxruntime reads a scalar and a 1-element vector alike)."""


class QuantizeError(ValueError):
    """A scale or zero point does not fit the data (the verifier's message)."""


def scale_axis(data: Shape, scale: Shape, axis: int, block_size: int, what: str) -> int | None:
    """The axis of `data` a scale of shape `scale` runs along; None for one scale for the whole
    tensor (a scalar, or a 1-D tensor of one element, as onnxruntime reads it). With
    `block_size` > 0 the scale has the data's shape except along `axis`, where each scale covers
    `block_size` indices (the last block may be short); otherwise a 1-D scale has one value per
    index of `axis`. Raises QuantizeError naming `what` when the shapes do not fit."""
    rank = len(data)
    if block_size < 0:
        raise QuantizeError(f"block_size must be non-negative, got {block_size}")
    if block_size == 0 and (not scale or tuple(scale) == (1,)):
        return None
    if not -rank <= axis < rank:
        raise QuantizeError(f"axis {axis} is out of range for data of rank {rank}")
    axis = axis + rank if axis < 0 else axis
    if block_size > 0:
        if len(scale) != rank:
            raise QuantizeError(
                f"{what} of shape {_dims(scale)} must have the data's rank {rank} for blocked quantization"
            )
        for i, (d, s) in enumerate(zip(data, scale)):
            if d is None or s is None:
                continue
            blocks = -(-d // block_size)
            if i == axis and blocks != s:
                raise QuantizeError(
                    f"{what} has {s} blocks along axis {axis}, but {d} indices in blocks of {block_size} make {blocks}"
                )
            if i != axis and d != s:
                raise QuantizeError(
                    f"{what} of shape {_dims(scale)} must match the data {_dims(data)} outside axis {axis}"
                )
        return axis
    if len(scale) != 1:
        raise QuantizeError(f"{what} of rank {len(scale)} needs block_size (blocked quantization); per axis it is 1-D")
    if scale[0] is not None and data[axis] is not None and scale[0] != data[axis]:
        raise QuantizeError(f"{what} has {scale[0]} values, but axis {axis} of the data has {data[axis]}")
    return axis


def _check_scale(a: InferArgs, data: str, scale: str, zero_point: str, divides: bool) -> None:
    """The scale (and its zero point, of the same shape) fit `data` per tensor, axis or block; a
    constant scale holds no NaN, nor a 0 when it divides the data."""
    s = a.shape(scale)
    z = a.shape(zero_point) if a.has(zero_point) else s
    if z != s and not {z, s} <= SINGLE:
        raise a.fail(f"{zero_point} of shape {_dims(z)} must have {scale}'s shape {_dims(s)}")
    try:
        scale_axis(a.shape(data), s, a.prop("axis"), a.prop("block_size"), scale)
    except QuantizeError as e:
        raise a.fail(str(e)) from None
    _check_scale_values(a, scale, divides)


def _check_scale_values(a: InferArgs, scale: str, divides: bool) -> None:
    value = a.const(scale)
    if value is None:
        return
    values = np.asarray(value, dtype=np.float32)
    if np.isnan(values).any():
        raise a.fail(f"{scale} holds NaN")
    if divides and (values == 0).any():
        raise a.fail(f"{scale} holds 0, and the data is divided by it")


def _output_type(a: InferArgs, code: int, allowed: Sequence[Attribute], default: Attribute) -> Attribute:
    """The element type `output_dtype` names (an ONNX data type number), or `default` for 0."""
    if code == 0:
        return default
    target = ONNX_ELEMENT_TYPES.get(code)
    if target is None or target not in allowed:
        names = ", ".join(type_name(t) for t in allowed)
        raise a.fail(f"output_dtype {code} is not one of the types it may name ({names})")
    return target


class _LinearOp(GeOp):
    """What QuantizeLinear and DequantizeLinear share: keep their types, no gradient, and run on
    the Vector unit (GE's AscendQuant and AscendDequant are AI Core ops)."""

    PRECISION: ClassVar = "keep"
    NO_GRADIENT: ClassVar = (
        "rounding to a grid is piecewise constant (its derivative is zero almost everywhere); "
        "quantization-aware training uses a straight-through estimator, a rewrite of the graph"
    )

    def engine(self) -> Engine:
        """The Vector unit, though a quantized result is no float: the arithmetic is (a float
        division or product per element), unlike the integer ops GE places on the AI CPU."""
        return Engine.VECTOR


@irdl_op_definition
class QuantizeLinearOp(_LinearOp):
    """ONNX QuantizeLinear: y = saturate(round(x / y_scale) + y_zero_point), rounding half to even
    (integer types, clamped to their range) or converting to a float8 / float4 type (`saturate` 1
    clamps to its largest finite value). The result type is `y_zero_point`'s, else
    `output_dtype`'s, else uint8. The division is f32 (for f16 and bf16 data and scales too, as
    onnxruntime divides) unless `precision` (an ONNX float type number) names another type."""

    name = "ge.quantize_linear"
    ONNX: ClassVar = ("QuantizeLinear",)
    x = operand_def(TensorType)
    y_scale = operand_def(TensorType)
    y_zero_point = opt_operand_def(TensorType)
    y = result_def(TensorType)
    axis = opt_prop_def(IntProp)
    block_size = opt_prop_def(IntProp)
    saturate = opt_prop_def(IntProp)
    output_dtype = opt_prop_def(IntProp)
    precision = opt_prop_def(IntProp)
    traits = traits_def(
        Pure(),
        RunsOn(Engine.VECTOR),
        StorageFormats(
            Carries("quantize", ACTIVATION_FORMATS, ("x",), ("y",), (("per_tensor", "y_scale"),), changes_c0=True)
        ),
    )
    DEFAULTS: ClassVar = {"axis": 1, "block_size": 0, "saturate": 1, "output_dtype": 0, "precision": 0}

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        a.expect_dtype("x", SCALE_TYPES)
        scale_type = a.expect_dtype("y_scale", SCALE_TYPES)
        target = _output_type(a, a.prop("output_dtype"), QUANTIZED_TYPES, ui8)
        if a.has("y_zero_point"):
            zero_type = a.expect_dtype("y_zero_point", QUANTIZED_TYPES)
            if a.prop("output_dtype") and zero_type != target:
                raise a.fail(f"output_dtype names {type_name(target)}, but y_zero_point is {type_name(zero_type)}")
            target = zero_type
        if a.prop("saturate") not in (0, 1):
            raise a.fail(f"saturate must be 0 or 1, got {a.prop('saturate')}")
        _output_type(a, a.prop("precision"), SCALE_TYPES, scale_type)
        _check_scale(a, "x", "y_scale", "y_zero_point", divides=True)
        return [tensor(target, a.shape("x"), a.fmt("x"))]

    def division_type(self) -> Attribute:
        code = self.p("precision")
        return ONNX_ELEMENT_TYPES[code] if code else f32


@irdl_op_definition
class DequantizeLinearOp(_LinearOp):
    """ONNX DequantizeLinear: y = (x - x_zero_point) * x_scale, in f32 and rounded once to the
    result type (`output_dtype`, else the scale's). An int32 x has no zero point other than 0."""

    name = "ge.dequantize_linear"
    ONNX: ClassVar = ("DequantizeLinear",)
    x = operand_def(TensorType)
    x_scale = operand_def(TensorType)
    x_zero_point = opt_operand_def(TensorType)
    y = result_def(TensorType)
    axis = opt_prop_def(IntProp)
    block_size = opt_prop_def(IntProp)
    output_dtype = opt_prop_def(IntProp)
    traits = traits_def(
        Pure(),
        RunsOn(Engine.VECTOR),
        StorageFormats(
            Carries("dequantize", ACTIVATION_FORMATS, ("x",), ("y",), (("per_tensor", "x_scale"),), changes_c0=True)
        ),
    )
    DEFAULTS: ClassVar = {"axis": 1, "block_size": 0, "output_dtype": 0}

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        x_type = a.expect_dtype("x", QUANTIZED_TYPES + (i32,))
        scale_type = a.expect_dtype("x_scale", SCALE_TYPES)
        if a.has("x_zero_point"):
            a.expect_same_dtype("x", "x_zero_point")
            if x_type == i32:
                zero = a.const_ints("x_zero_point")
                if zero is not None and any(zero):
                    raise a.fail(f"x_zero_point of an int32 x must be 0, got {next(z for z in zero if z)}")
        _check_scale(a, "x", "x_scale", "x_zero_point", divides=False)
        target = _output_type(a, a.prop("output_dtype"), SCALE_TYPES, scale_type)
        return [tensor(target, a.shape("x"), a.fmt("x"))]


@irdl_op_definition
class DynamicQuantizeLinearOp(GeOp):
    """ONNX DynamicQuantizeLinear: x (f32) to uint8 with a scale and zero point from the data's
    range widened to include 0: y_scale = (max - min) / 255 (1 when max = min, as onnxruntime
    has it), y_zero_point = round(clamp(-min / y_scale, 0, 255)), y as QuantizeLinear computes it;
    all in f32."""

    name = "ge.dynamic_quantize_linear"
    ONNX: ClassVar = ("DynamicQuantizeLinear",)
    PRECISION: ClassVar = "keep"
    x = operand_def(TensorType)
    y = result_def(TensorType)
    y_scale = result_def(TensorType)
    y_zero_point = result_def(TensorType)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR), Reduction())
    NO_GRADIENT: ClassVar = _LinearOp.NO_GRADIENT
    engine = _LinearOp.engine

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        a.expect_dtype("x", (f32,))
        return [tensor(ui8, a.shape("x"), a.fmt("x")), tensor(f32, ()), tensor(ui8, ())]

    def reduced_row_elements(self) -> int:
        """The whole tensor: its range sets the scale."""
        return math.prod(d or 1 for d in shape_of(tensor_type_of(self.x)))

    def vector_elements(self) -> int:
        """Two passes: the range, then the quantization."""
        return 2 * math.prod(d or 1 for d in shape_of(tensor_type_of(self.x)))


def _check_product_zero_point(a: InferArgs, data: str, zero_point: str, rows: bool) -> None:
    """An integer product's zero point is its operand's type and is one value, or one per row of
    the left operand (shape (M,) or (..., M, 1)) / per column of the right one ((N,) or
    (..., 1, N)): as ONNX's MatMulInteger allows."""
    if not a.has(zero_point):
        return
    a.expect_same_dtype(data, zero_point)
    shape, z = a.shape(data), a.shape(zero_point)
    if math.prod(d or 1 for d in z) == 1 and len(z) <= 1 and all(d is not None for d in z):
        return
    if len(shape) < 2:
        raise a.fail(f"{zero_point} of shape {_dims(z)} must be one value for a 1-D {data}")
    fits = [(shape[-2],), (*shape[:-2], shape[-2], 1)] if rows else [(shape[-1],), (*shape[:-2], 1, shape[-1])]
    if not any(len(z) == len(f) and all(x is None or y is None or x == y for x, y in zip(z, f)) for f in fits):
        per = "per row" if rows else "per column"
        raise a.fail(
            f"{zero_point} of shape {_dims(z)} does not fit {data} of shape {_dims(shape)}: one value, or one {per} "
            f"{' or '.join(_dims(f) for f in fits)}"
        )


def _check_channel_param(a: InferArgs, weights: str, name: str) -> None:
    """A conv's weight zero point or scale: one value, or one per output channel."""
    z, m = a.shape(name), a.shape(weights)[0]
    if len(z) > 1 or (len(z) == 1 and z[0] not in (1, m) and None not in (z[0], m)):
        raise a.fail(f"{name} of shape {_dims(z)} must be one value or one per output channel ({m})")


class _IntegerProductOp(GeOp):
    """An integer matrix product or convolution on the Cube (int32 accumulation)."""

    PRECISION: ClassVar = "keep"
    NO_GRADIENT: ClassVar = "its operands are integers, which carry no gradient"
    FACTORS: ClassVar[tuple[str, str]] = ("A", "B")
    """The operands multiplied: the activation and the weight (or the second activation)."""


@irdl_op_definition
class MatMulIntegerOp(_IntegerProductOp):
    """ONNX MatMulInteger: (A - a_zero_point) @ (B - b_zero_point) with int32 accumulation, numpy
    matmul's shapes; a_zero_point per tensor or per row of A, b_zero_point per tensor or per column
    of B."""

    name = "ge.matmul_integer"
    ONNX: ClassVar = ("MatMulInteger",)
    A = operand_def(TensorType)
    B = operand_def(TensorType)
    a_zero_point = opt_operand_def(TensorType)
    b_zero_point = opt_operand_def(TensorType)
    Y = result_def(TensorType)
    traits = traits_def(Pure(), RunsOn(Engine.CUBE))
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        a.expect_dtype("A", PRODUCT_TYPES)
        a.expect_dtype("B", PRODUCT_TYPES)
        _check_product_zero_point(a, "A", "a_zero_point", rows=True)
        _check_product_zero_point(a, "B", "b_zero_point", rows=False)
        return [tensor(i32, matmul_shape(a, "A", "B"))]

    def macs(self) -> int:
        return matmul_macs(self.A, self.Y)


@irdl_op_definition
class QLinearMatMulOp(_IntegerProductOp):
    """ONNX QLinearMatMul: MatMulInteger's int32 product requantized to y's type,
    y = saturate(round(acc * (a_scale * b_scale / y_scale)) + y_zero_point), rounding half to
    even; the multiplier and the product with it are f32 (onnxruntime's requantization). Scales
    and zero points are per tensor, b's may be per column."""

    name = "ge.qlinear_matmul"
    ONNX: ClassVar = ("QLinearMatMul",)
    a = operand_def(TensorType)
    a_scale = operand_def(TensorType)
    a_zero_point = operand_def(TensorType)
    b = operand_def(TensorType)
    b_scale = operand_def(TensorType)
    b_zero_point = operand_def(TensorType)
    y_scale = operand_def(TensorType)
    y_zero_point = operand_def(TensorType)
    y = result_def(TensorType)
    FACTORS: ClassVar = ("a", "b")
    traits = traits_def(Pure(), RunsOn(Engine.CUBE))

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        a.expect_dtype("a", PRODUCT_TYPES)
        a.expect_dtype("b", PRODUCT_TYPES)
        target = a.expect_dtype("y_zero_point", PRODUCT_TYPES)
        for scale in ("a_scale", "b_scale", "y_scale"):
            a.expect_dtype(scale, SCALE_TYPES)
            _check_scale_values(a, scale, divides=scale == "y_scale")
        for name in ("a_scale", "a_zero_point", "y_scale", "y_zero_point"):
            _check_scalar(a, name)
        _check_product_zero_point(a, "a", "a_zero_point", rows=True)
        _check_product_zero_point(a, "b", "b_zero_point", rows=False)
        if (
            a.shape("b_scale") != a.shape("b_zero_point")
            and not {a.shape("b_scale"), a.shape("b_zero_point")} <= SINGLE
        ):
            raise a.fail(f"b_scale of shape {_dims(a.shape('b_scale'))} must have b_zero_point's shape")
        return [tensor(target, matmul_shape(a, "a", "b"))]

    def macs(self) -> int:
        return matmul_macs(self.a, self.y)


class _IntegerConvOp(_IntegerProductOp):
    """The window properties of ge.conv, with its defaults."""

    auto_pad = opt_prop_def(StrProp)
    dilations = opt_prop_def(IntsProp)
    group = opt_prop_def(IntProp)
    kernel_shape = opt_prop_def(IntsProp)
    pads = opt_prop_def(IntsProp)
    strides = opt_prop_def(IntsProp)
    DEFAULTS: ClassVar = {"auto_pad": "NOTSET", "group": 1}


@irdl_op_definition
class ConvIntegerOp(_IntegerConvOp):
    """ONNX ConvInteger: the conv of (x - x_zero_point) and (w - w_zero_point) with int32
    accumulation (padding reads as x_zero_point, a 0 after the subtraction); x_zero_point per
    tensor, w_zero_point per tensor or per output channel."""

    name = "ge.conv_integer"
    ONNX: ClassVar = ("ConvInteger",)
    x = operand_def(TensorType)
    w = operand_def(TensorType)
    x_zero_point = opt_operand_def(TensorType)
    w_zero_point = opt_operand_def(TensorType)
    y = result_def(TensorType)
    FACTORS: ClassVar = ("x", "w")
    traits = traits_def(Pure(), RunsOn(Engine.CUBE))
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        a.expect_dtype("x", PRODUCT_TYPES)
        a.expect_dtype("w", PRODUCT_TYPES)
        if a.has("x_zero_point"):
            a.expect_same_dtype("x", "x_zero_point")
            _check_scalar(a, "x_zero_point")
        if a.has("w_zero_point"):
            a.expect_same_dtype("w", "w_zero_point")
            _check_channel_param(a, "w", "w_zero_point")
        shape, fmt = conv_shape(a, "x", "w")
        return [tensor(i32, shape, fmt)]

    def macs(self) -> int:
        return conv_macs(self.w, self.y)


@irdl_op_definition
class QLinearConvOp(_IntegerConvOp):
    """ONNX QLinearConv: ConvInteger's int32 sums plus the int32 bias B, requantized to y's type:
    y = saturate(round(acc * (x_scale * w_scale / y_scale)) + y_zero_point), rounding half to
    even, the multiplier (per output channel when w_scale is) and the product in f32
    (onnxruntime's requantization)."""

    name = "ge.qlinear_conv"
    ONNX: ClassVar = ("QLinearConv",)
    x = operand_def(TensorType)
    x_scale = operand_def(TensorType)
    x_zero_point = operand_def(TensorType)
    w = operand_def(TensorType)
    w_scale = operand_def(TensorType)
    w_zero_point = operand_def(TensorType)
    y_scale = operand_def(TensorType)
    y_zero_point = operand_def(TensorType)
    B = opt_operand_def(TensorType)
    y = result_def(TensorType)
    FACTORS: ClassVar = ("x", "w")
    traits = traits_def(
        Pure(),
        RunsOn(Engine.CUBE),
        conv_formats("qlinear-conv", "x", "y", "w"),
    )

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        a.expect_dtype("x", PRODUCT_TYPES)
        a.expect_dtype("w", PRODUCT_TYPES)
        a.expect_same_dtype("x", "x_zero_point")
        a.expect_same_dtype("w", "w_zero_point")
        target = a.expect_dtype("y_zero_point", PRODUCT_TYPES)
        for scale in ("x_scale", "w_scale", "y_scale"):
            a.expect_dtype(scale, (f32,))
            _check_scale_values(a, scale, divides=scale == "y_scale")
        for name in ("x_scale", "x_zero_point", "y_scale", "y_zero_point"):
            _check_scalar(a, name)
        _check_channel_param(a, "w", "w_scale")
        _check_channel_param(a, "w", "w_zero_point")
        if a.has("B"):
            a.expect_dtype("B", (i32,))
        shape, fmt = conv_shape(a, "x", "w")
        return [tensor(target, shape, fmt)]

    def macs(self) -> int:
        return conv_macs(self.w, self.y)


QUANTIZE_OPS = [
    QuantizeLinearOp,
    DequantizeLinearOp,
    DynamicQuantizeLinearOp,
    MatMulIntegerOp,
    ConvIntegerOp,
    QLinearMatMulOp,
    QLinearConvOp,
]

__all__ = [
    "QuantizeLinearOp",
    "DequantizeLinearOp",
    "DynamicQuantizeLinearOp",
    "MatMulIntegerOp",
    "ConvIntegerOp",
    "QLinearMatMulOp",
    "QLinearConvOp",
    "QUANTIZE_OPS",
]
