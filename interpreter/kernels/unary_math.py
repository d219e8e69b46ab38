"""Kernels of the one-float functions (ge_dialects/ge/unary_math.py) and the bitwise ops
(ge_dialects/ge/bitwise.py). The functions compute f16/bf16 in f32 and round once, as the other
transcendental kernels do; outside a function's domain the result is NaN, without warnings."""

from __future__ import annotations

import numpy as np
from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ge.ge_dialects import ge
from ge.ge_dialects.ge.types import numpy_dtype
from ge.interpreter.kernels.checked import kernel_impl
from ge.interpreter.kernels.elementwise import _binary, _float_op, _unary


def _quiet(fn):
    """fn without numpy's warnings for a domain error (NaN) or an overflow (inf)."""

    def run(x):
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            return fn(x)

    return run


def _function(fn):
    return kernel_impl(_float_op(_quiet(fn)))


def is_inf(op, ins):
    x = ins["x"]
    positive, negative = op.p("detect_positive"), op.p("detect_negative")
    return np.isinf(x) & (((x > 0) & bool(positive)) | ((x < 0) & bool(negative)))


def bit_shift(op, ins):
    """ONNX's shift: a right shift of a signed type is arithmetic; a count below zero or of the
    type's width or more leaves only the sign fill (-1 for a negative value shifted right, else
    0), where numpy and C would take the count modulo the width."""
    a, b = ins["a"], ins["b"]
    bits = a.dtype.itemsize * 8
    right = op.p("direction") == "RIGHT"
    shift = np.right_shift if right else np.left_shift
    out_of_range = (b < 0) | (b >= bits)
    shifted = shift(a, np.where(out_of_range, 0, b).astype(a.dtype))
    fill = np.where(a < 0, a.dtype.type(-1), a.dtype.type(0)) if right and a.dtype.kind == "i" else a.dtype.type(0)
    return np.where(out_of_range, fill, shifted).astype(a.dtype)


def bit_cast(op, ins):
    """The same bytes viewed as the result type (the 4- and 2-bit types keep their bits in the low
    bits of a byte each, so they view as one another too)."""
    x = ins["input"]
    return np.asarray(x, order="C").view(numpy_dtype(op.output.type.element_type))


@register_impls
class UnaryMathFunctions(InterpreterFunctions):
    """The one-float functions' and the bitwise ops' interpreter implementations."""

    run_sin = impl(ge.SinOp)(_function(np.sin))
    run_cos = impl(ge.CosOp)(_function(np.cos))
    run_tan = impl(ge.TanOp)(_function(np.tan))
    run_asin = impl(ge.AsinOp)(_function(np.arcsin))
    run_acos = impl(ge.AcosOp)(_function(np.arccos))
    run_atan = impl(ge.AtanOp)(_function(np.arctan))
    run_sinh = impl(ge.SinhOp)(_function(np.sinh))
    run_cosh = impl(ge.CoshOp)(_function(np.cosh))
    run_asinh = impl(ge.AsinhOp)(_function(np.arcsinh))
    run_acosh = impl(ge.AcoshOp)(_function(np.arccosh))
    run_atanh = impl(ge.AtanhOp)(_function(np.arctanh))
    run_round = impl(ge.RoundOp)(kernel_impl(_unary(np.round)))
    run_is_nan = impl(ge.IsNaNOp)(kernel_impl(lambda op, ins: np.isnan(ins["x"])))
    run_is_inf = impl(ge.IsInfOp)(kernel_impl(is_inf))
    run_bitwise_and = impl(ge.BitwiseAndOp)(kernel_impl(_binary(np.bitwise_and)))
    run_bitwise_or = impl(ge.BitwiseOrOp)(kernel_impl(_binary(np.bitwise_or)))
    run_bitwise_xor = impl(ge.BitwiseXorOp)(kernel_impl(_binary(np.bitwise_xor)))
    run_bit_shift = impl(ge.BitShiftOp)(kernel_impl(bit_shift))
    run_bitwise_not = impl(ge.BitwiseNotOp)(kernel_impl(_unary(np.invert)))
    run_bit_cast = impl(ge.BitCastOp)(kernel_impl(bit_cast))
