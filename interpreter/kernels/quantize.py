"""Kernels of the quantization ops (ge_dialects/ge/quantize.py), equal to onnxruntime's CPU
kernels bit for bit on the integer types.

Quantizing divides in f32 (f16 and bf16 data and scales too, as onnxruntime does; an explicit
`precision` converts both to its type and divides there), rounds half to even (`np.rint`, as
MLAS's `nearbyintf` / `cvtps` do), adds the zero point and clamps to the type's range: clamping
before or after rounding gives the same integer. To float8 and float4 the quotient plus the zero
point converts as ge.cast converts, rounding to nearest even (ONNX's rule; without saturation
onnxruntime takes f8E4M3FN's [480, 496) to 448 where ONNX has NaN).
Dequantizing subtracts the zero point in integers, converts once to f32 and multiplies by the
scale. The integer products accumulate exactly: the zero-point-shifted operands are f64, whose
53-bit mantissa holds every sum of products of 8-bit values up to 2**37 terms, and the sum is
then wrapped to int32 as an int32 accumulator wraps. The requantization of QLinearMatMul and
QLinearConv is onnxruntime's: the multiplier (a_scale * b_scale) / y_scale in f32, the int32 sum
converted to f32 and multiplied by it in f32, then rounded half to even, offset by the zero point
and clamped.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ge.ge_dialects import ge
from ge.ge_dialects.ge.quantize import QuantizeError, scale_axis
from ge.ge_dialects.ge.types import numpy_dtype
from ge.interpreter.kernels import DataError
from ge.interpreter.kernels.checked import kernel_impl
from ge.interpreter.kernels.nn import conv

_FLOAT8 = tuple(np.dtype(d) for d in (ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e4m3fnuz, ml_dtypes.float8_e5m2))
_FLOAT8 += (np.dtype(ml_dtypes.float8_e5m2fnuz),)


def _is_int(dtype: np.dtype) -> bool:
    """Integer types, the 4- and 2-bit ones (numpy kind 'V' in ml_dtypes) included."""
    if dtype.kind in "iu":
        return True
    try:
        ml_dtypes.iinfo(dtype)
    except ValueError:
        return False
    return True


def spread(param: np.ndarray, shape: tuple[int, ...], axis: int | None, block_size: int) -> np.ndarray:
    """A scale or zero point laid over data of `shape`: one value, one per index of `axis`, or
    each value repeated over its block of `block_size` indices along `axis`."""
    if axis is None:
        return param.reshape(())
    if block_size:
        return np.repeat(param, block_size, axis=axis)[(slice(None),) * axis + (slice(0, shape[axis]),)]
    return param.reshape([-1 if i == axis else 1 for i in range(len(shape))])


def _layout(op, x: np.ndarray, scale: np.ndarray) -> int | None:
    """The axis the scale runs along; a scale that does not fit data whose dims the verifier
    could not see is the input's fault (a DataError)."""
    try:
        return scale_axis(x.shape, scale.shape, op.p("axis"), op.p("block_size"), "the scale")
    except QuantizeError as e:
        raise DataError(str(e)) from None


def _round_to(q: np.ndarray, zero: np.ndarray | int, dtype: np.dtype) -> np.ndarray:
    """round(q) + zero, half to even, clamped to the integer type's range; NaN becomes the type's
    smallest value (onnxruntime's)."""
    info = ml_dtypes.iinfo(dtype)
    y = np.clip(np.rint(q.astype(np.float64)) + zero, info.min, info.max)
    return np.where(np.isnan(y), info.min, y).astype(dtype)


def _to_float(v: np.ndarray, dtype: np.dtype, saturate: bool) -> np.ndarray:
    """A float32 array to a float8 / float4 type, rounding to nearest even; with `saturate` a
    float8 value out of range (an infinity too) becomes the largest finite one (NaN stays NaN).
    float4 has no infinity and always saturates."""
    if saturate and dtype in _FLOAT8:
        limit = float(ml_dtypes.finfo(dtype).max)
        v = np.clip(v, -limit, limit)
    with np.errstate(invalid="ignore", over="ignore"):
        return v.astype(dtype)


def _divide(x: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """x / scale, a division (MLAS divides; a product with the reciprocal rounds differently)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return x / scale


def quantize_linear(op, ins):
    x, scale, zero = ins["x"], ins["y_scale"], ins["y_zero_point"]
    dtype = numpy_dtype(op.results[0].type.element_type)
    axis = _layout(op, x, scale)
    block = op.p("block_size")
    division = numpy_dtype(op.division_type())
    q = _divide(x.astype(division), spread(scale, x.shape, axis, block).astype(division)).astype(np.float32)
    if _is_int(dtype):
        z = 0 if zero is None else spread(zero.astype(np.int64), x.shape, axis, block)
        return _round_to(q, z, dtype)
    if zero is not None:
        q = q + spread(zero.astype(np.float32), x.shape, axis, block)
    return _to_float(q, dtype, bool(op.p("saturate")))


def dequantize_linear(op, ins):
    x, scale, zero = ins["x"], ins["x_scale"], ins["x_zero_point"]
    dtype = numpy_dtype(op.results[0].type.element_type)
    axis = _layout(op, x, scale)
    block = op.p("block_size")
    if _is_int(x.dtype):
        shifted = x.astype(np.int64)
        if zero is not None:
            shifted = shifted - spread(zero.astype(np.int64), x.shape, axis, block)
        values = shifted.astype(np.float32)
    else:
        values = x.astype(np.float32)
        if zero is not None:
            values = values - spread(zero.astype(np.float32), x.shape, axis, block)
    y = values * spread(scale, x.shape, axis, block).astype(np.float32)
    return y.astype(dtype)


def dynamic_quantize_linear(op, ins):
    """onnxruntime's: the range widened to include 0, scale (max - min) / 255 (1 for an all-zero
    tensor), zero point round(clamp(0 - min / scale, 0, 255)), all in f32."""
    x = ins["x"]
    low = np.float32(min(float(x.min()), 0.0)) if x.size else np.float32(0)
    high = np.float32(max(float(x.max()), 0.0)) if x.size else np.float32(0)
    scale = np.float32(1) if high == low else np.float32((high - low) / np.float32(255))
    zero = np.uint8(np.rint(np.clip(np.float32(0) - low / scale, np.float32(0), np.float32(255))))
    q = x / scale
    return _round_to(q, int(zero), np.dtype(np.uint8)), np.asarray(scale, np.float32), np.asarray(zero, np.uint8)


def _rows(zero: np.ndarray | None) -> np.ndarray | int:
    """A left operand's zero point laid over its rows: one value, (M,) or (..., M, 1)."""
    if zero is None:
        return 0
    if zero.size == 1:
        return zero.reshape(()).astype(np.float64)
    return (zero.reshape(-1, 1) if zero.ndim == 1 else zero).astype(np.float64)


def _columns(zero: np.ndarray | None) -> np.ndarray | int:
    """A right operand's zero point laid over its columns: one value, (N,) or (..., 1, N)."""
    if zero is None:
        return 0
    return (zero.reshape(()) if zero.size == 1 else zero).astype(np.float64)


def _wrap_int32(exact: np.ndarray) -> np.ndarray:
    """An exact integer-valued f64 sum as an int32 accumulator holds it (wrapped modulo 2**32)."""
    return exact.astype(np.int64).astype(np.int32)


def _matmul_sum(a, b, a_zero, b_zero) -> np.ndarray:
    return _wrap_int32(np.matmul(a.astype(np.float64) - _rows(a_zero), b.astype(np.float64) - _columns(b_zero)))


def _conv_sum(op, x, w, x_zero, w_zero) -> np.ndarray:
    """ge.conv's kernel on the shifted operands; the padding reads 0, x_zero_point shifted."""
    shifted_x = x.astype(np.float64) - (0 if x_zero is None else x_zero.reshape(()).astype(np.float64))
    shifted_w = w.astype(np.float64)
    if w_zero is not None:
        per_channel = w_zero.reshape(-1, *[1] * (w.ndim - 1)) if w_zero.size > 1 else w_zero.reshape(())
        shifted_w = shifted_w - per_channel.astype(np.float64)
    return _wrap_int32(conv(op, {"X": shifted_x, "W": shifted_w, "B": None}))


def _requantize(acc: np.ndarray, multiplier: np.ndarray, zero: np.ndarray) -> np.ndarray:
    return _round_to(acc.astype(np.float32) * multiplier, int(zero.reshape(())), zero.dtype)


def matmul_integer(op, ins):
    return _matmul_sum(ins["A"], ins["B"], ins["a_zero_point"], ins["b_zero_point"])


def conv_integer(op, ins):
    return _conv_sum(op, ins["x"], ins["w"], ins["x_zero_point"], ins["w_zero_point"])


def _f32(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float32)


def qlinear_matmul(op, ins):
    acc = _matmul_sum(ins["a"], ins["b"], ins["a_zero_point"], ins["b_zero_point"])
    b_scale = _f32(ins["b_scale"])
    multiplier = (_f32(ins["a_scale"]).reshape(()) * (b_scale.reshape(()) if b_scale.size == 1 else b_scale)) / _f32(
        ins["y_scale"]
    ).reshape(())
    return _requantize(acc, multiplier, ins["y_zero_point"])


def qlinear_conv(op, ins):
    acc = _conv_sum(op, ins["x"], ins["w"], ins["x_zero_point"], ins["w_zero_point"])
    if ins["B"] is not None:
        acc = acc + ins["B"].reshape(-1, *[1] * (acc.ndim - 2))
    w_scale = _f32(ins["w_scale"])
    channels = w_scale.reshape(-1, *[1] * (acc.ndim - 2)) if w_scale.size > 1 else w_scale.reshape(())
    multiplier = (_f32(ins["x_scale"]).reshape(()) * channels) / _f32(ins["y_scale"]).reshape(())
    return _requantize(acc, multiplier, ins["y_zero_point"])


@register_impls
class QuantizeFunctions(InterpreterFunctions):
    """The interpreter implementations of the quantization ops."""

    run_quantize_linear = impl(ge.QuantizeLinearOp)(kernel_impl(quantize_linear))
    run_dequantize_linear = impl(ge.DequantizeLinearOp)(kernel_impl(dequantize_linear))
    run_dynamic_quantize_linear = impl(ge.DynamicQuantizeLinearOp)(kernel_impl(dynamic_quantize_linear))
    run_matmul_integer = impl(ge.MatMulIntegerOp)(kernel_impl(matmul_integer))
    run_conv_integer = impl(ge.ConvIntegerOp)(kernel_impl(conv_integer))
    run_qlinear_matmul = impl(ge.QLinearMatMulOp)(kernel_impl(qlinear_matmul))
    run_qlinear_conv = impl(ge.QLinearConvOp)(kernel_impl(qlinear_conv))
