"""Kernels of the elementwise ops.

Narrow floats (f16, bf16): +, -, *, / and max run in the narrow type (numpy and ml_dtypes round
each result once, as the Vector unit does); functions (sqrt, tanh, erf, sigmoid, gelu, hard_swish,
pow, exp, log, gelu_grad) compute in f32 and round the result once (assumed to be what Ascend's f16
kernels of them do; see docs/mixed_precision.md). relu_grad selects, which is exact in any type.
"""

from __future__ import annotations

import numpy as np
from scipy import special
from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ge.ge_dialects import ge
from ge.interpreter.kernels import donated, parallel
from ge.interpreter.kernels.checked import kernel_impl


def _wide(x: np.ndarray) -> np.ndarray:
    """`x` in the type to compute functions in: f32 for f16/bf16, else unchanged."""
    return x.astype(np.float32) if x.dtype.itemsize < 4 and x.dtype.kind not in "iub" else x


def _float_op(fn):
    """Runs `fn` on the input (f16/bf16 widened to f32) and rounds to the input's type once."""

    def run(op, ins):
        x = ins["x"]
        return np.asarray(fn(_wide(x)), dtype=x.dtype)

    return run


def _log(x: np.ndarray) -> np.ndarray:
    """ln x; -inf at 0 and NaN below, as IEEE (and ONNX's node tests) define them, without warnings."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(x)


def relu(op, ins):
    x = ins["x"]
    out = donated(op, ins, "x")
    return parallel.elementwise(np.maximum, np.empty_like(x) if out is None else out, x, x.dtype.type(0))


def identity(op, ins):
    return ins["x"].copy()


# erf(x) ~ x * P(x^2) / Q(x^2) on [-4, 4] (erf is +-1 in f32 beyond): Eigen's float erf, a
# rational approximation within 8 ulp of the true value (a test holds it there), evaluated as
# whole-array passes: 3.6x faster than scipy's erf, which runs a scalar series per element
# (16 ns each: 37 ms of a BERT-base run).
_ERF_P = tuple(
    np.float32(c)
    for c in (
        -2.72614225801306e-10,
        2.77068142495902e-08,
        -2.10102402082508e-06,
        -5.69250639462346e-05,
        -7.34990630326855e-04,
        -2.95459980854025e-03,
        -1.60960333262415e-02,
    )
)
_ERF_Q = tuple(
    np.float32(c)
    for c in (
        -1.45660718464996e-05,
        -2.13374055278905e-04,
        -1.68282697438203e-03,
        -7.37332916720468e-03,
        -1.42647390514189e-02,
    )
)


ERF_PASSES = 2 * len(_ERF_P) + 2 * len(_ERF_Q) + 2
"""About how many passes `erf_f32` makes over its array (its work estimate for `parallel`)."""


def erf_f32(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """erf of a float32 array by the rational approximation above, into `out` (which may be `x`)
    or a new array, in place after the first pass; NaN stays NaN."""
    x = np.clip(x, np.float32(-4), np.float32(4), out=out)
    x2 = x * x
    p = x2 * _ERF_P[0]
    for c in _ERF_P[1:-1]:
        p += c
        p *= x2
    p += _ERF_P[-1]
    p *= x
    q = x2 * _ERF_Q[0]
    for c in _ERF_Q[1:-1]:
        q += c
        q *= x2
    q += _ERF_Q[-1]
    return np.divide(p, q, out=x)


def erf(op, ins):
    x = ins["x"]
    if x.dtype.kind in "iu":
        return np.asarray(special.erf(x.astype(np.float64)).round(), dtype=x.dtype)
    wide = _wide(x)
    if wide.dtype == np.float32:
        return parallel.elementwise(erf_f32, np.empty_like(wide), wide, passes=ERF_PASSES).astype(x.dtype, copy=False)
    return np.asarray(special.erf(wide), dtype=x.dtype)


def sigmoid(op, ins):
    x = ins["x"]
    return np.asarray(special.expit(_wide(x)), dtype=x.dtype)


def hard_swish(op, ins):
    x = ins["x"]
    wide = _wide(x)
    return np.asarray(wide * np.clip(wide / 6 + 0.5, 0, 1), dtype=x.dtype)


_SQRT_2_OVER_PI = np.sqrt(2 / np.pi)
_GELU_TANH_CUBIC = 0.044715


def _gelu_into(x: np.ndarray, y: np.ndarray, tanh: bool) -> None:
    """y = x * Phi(x) (the tanh form if `tanh`), in whole-array passes written in place, in the order
    of the ops a GELU is recognized from (x**3, times 0.044715, plus x, times sqrt(2/pi), tanh; or x
    divided by sqrt 2, erf), so the fused op gives their bits."""
    t = x.dtype.type
    if tanh:
        np.power(x, 3, out=y)
        y *= t(_GELU_TANH_CUBIC)
        y += x
        y *= t(_SQRT_2_OVER_PI)
        np.tanh(y, out=y)
    else:
        np.divide(x, t(np.sqrt(2)), out=y)
        if x.dtype == np.float32:
            erf_f32(y, out=y)
        else:
            special.erf(y, out=y)
    y += 1
    y *= x
    y *= t(0.5)


def gelu(op, ins):
    """x * Phi(x), the erf form or the tanh form, over blocks on the run's threads (float32's erf is
    `erf_f32`, the function `ge.erf` computes, so a recognized GELU and the ops it replaces agree)."""
    x = ins["x"]
    tanh = op.p("approximate") == "tanh"
    wide = _wide(x)
    y = parallel.elementwise(
        lambda xs, out: _gelu_into(xs, out, tanh), np.empty_like(wide), wide, passes=ERF_PASSES + 5
    )
    return np.asarray(y, dtype=x.dtype)


def relu_grad(op, ins):
    """GE's ReluGrad: dy where the ReLU output y > 0, else 0 (a NaN y passes no gradient)."""
    dy = ins["dy"]
    with np.errstate(invalid="ignore"):
        on = ins["y"] > 0
    return np.where(on, dy, dy.dtype.type(0)).astype(dy.dtype, copy=False)


def gelu_derivative(x: np.ndarray, approximate: str) -> np.ndarray:
    """d gelu / dx in x's type, for the erf form ("none") or the tanh form."""
    t = x.dtype.type
    if approximate == "tanh":
        cubic = t(_GELU_TANH_CUBIC)
        th = np.tanh(t(_SQRT_2_OVER_PI) * (x + cubic * x**3))
        return t(0.5) * (1 + th) + t(0.5) * x * (1 - th * th) * t(_SQRT_2_OVER_PI) * (1 + t(3) * cubic * x * x)
    cdf = t(0.5) * (1 + special.erf(x / t(np.sqrt(2))))
    pdf = np.exp(t(-0.5) * x * x) / t(np.sqrt(2 * np.pi))
    return cdf + x * pdf


def gelu_grad(op, ins):
    """GE's GeluGrad: dy * gelu'(x), computed in f32 for f16/bf16 and rounded once."""
    dy = ins["dy"]
    wide = _wide(dy)
    return np.asarray(wide * gelu_derivative(_wide(ins["x"]), op.p("approximate")), dtype=dy.dtype)


def _binary(ufunc):
    """a (op) b, written over a dying operand when one has the result's shape and type."""

    def run(op, ins):
        a, b = ins["a"], ins["b"]
        out = donated(op, ins, "a")
        if out is None:
            out = donated(op, ins, "b")
        if out is None:
            if a.dtype != b.dtype:
                return ufunc(a, b)
            out = np.empty(np.broadcast_shapes(a.shape, b.shape), a.dtype)
        return parallel.elementwise(ufunc, out, a, b)

    return run


def div(op, ins):
    a, b = ins["a"], ins["b"]
    if a.dtype.kind in "iu":
        # ONNX integer division truncates toward zero (C semantics), numpy's // floors.
        return np.asarray(np.trunc(a / b), dtype=a.dtype)
    return np.divide(a, b)


def mod(op, ins):
    """ONNX Mod: fmod 1 is C's fmod (the dividend's sign), 0 Python's % (the divisor's); integer
    division by zero is undefined in ONNX and left to numpy (0, with a warning silenced)."""
    a, b = ins["a"], ins["b"]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.fmod(a, b) if op.p("fmod") == 1 else np.mod(a, b)


def reciprocal(op, ins):
    x = ins["x"]
    with np.errstate(divide="ignore"):
        return np.asarray(np.reciprocal(_wide(x)), dtype=x.dtype)


def hard_sigmoid(op, ins):
    x = ins["x"]
    wide = _wide(x)
    alpha, beta = np.float32(op.p("alpha")), np.float32(op.p("beta"))
    return np.asarray(np.clip(wide * alpha + beta, 0, 1), dtype=x.dtype)


def leaky_relu(op, ins):
    x = ins["x"]
    return np.where(x >= 0, x, x * x.dtype.type(op.p("alpha")))


def thresholded_relu(op, ins):
    x = ins["x"]
    return np.where(x > x.dtype.type(op.p("alpha")), x, x.dtype.type(0))


def _unary(fn):
    """fn(x) in x's own type (exact in every type: abs, neg, sign, floor, ceil, not)."""

    def run(op, ins):
        x = ins["x"]
        return np.asarray(fn(x), dtype=x.dtype)

    return run


def _compare(ufunc):
    def run(op, ins):
        return ufunc(ins["a"], ins["b"])

    return run


def power(op, ins):
    a, b = ins["a"], ins["b"]
    if a.dtype.kind in "iu":
        return np.asarray(np.power(a.astype(np.float64), b.astype(np.float64)), dtype=a.dtype)
    # f16/bf16 bases are computed in f32 (rounded once), so an f32 exponent such as 0.1 is not
    # rounded to the base's type first.
    wide = _wide(a)
    return np.asarray(np.power(wide, b.astype(wide.dtype)), dtype=a.dtype)


@register_impls
class ElementwiseFunctions(InterpreterFunctions):
    """The elementwise ops' interpreter implementations: each runs its kernel above."""

    run_relu = impl(ge.ReluOp)(kernel_impl(relu))
    run_sqrt = impl(ge.SqrtOp)(kernel_impl(_float_op(np.sqrt)))
    run_tanh = impl(ge.TanhOp)(kernel_impl(_float_op(np.tanh)))
    run_identity = impl(ge.IdentityOp)(kernel_impl(identity))
    run_erf = impl(ge.ErfOp)(kernel_impl(erf))
    run_sigmoid = impl(ge.SigmoidOp)(kernel_impl(sigmoid))
    run_hard_swish = impl(ge.HardSwishOp)(kernel_impl(hard_swish))
    run_gelu = impl(ge.GeluOp)(kernel_impl(gelu))
    run_exp = impl(ge.ExpOp)(kernel_impl(_float_op(np.exp)))
    run_log = impl(ge.LogOp)(kernel_impl(_float_op(_log)))
    run_relu_grad = impl(ge.ReluGradOp)(kernel_impl(relu_grad))
    run_gelu_grad = impl(ge.GeluGradOp)(kernel_impl(gelu_grad))
    run_add = impl(ge.AddOp)(kernel_impl(_binary(np.add)))
    run_sub = impl(ge.SubOp)(kernel_impl(_binary(np.subtract)))
    run_mul = impl(ge.MulOp)(kernel_impl(_binary(np.multiply)))
    run_equal = impl(ge.EqualOp)(kernel_impl(_compare(np.equal)))
    run_div = impl(ge.DivOp)(kernel_impl(div))
    run_pow = impl(ge.PowOp)(kernel_impl(power))
    run_maximum = impl(ge.MaximumOp)(kernel_impl(_binary(np.maximum)))
    run_minimum = impl(ge.MinimumOp)(kernel_impl(_binary(np.minimum)))
    run_mod = impl(ge.ModOp)(kernel_impl(mod))
    run_abs = impl(ge.AbsOp)(kernel_impl(_unary(np.abs)))
    run_neg = impl(ge.NegOp)(kernel_impl(_unary(np.negative)))
    run_sign = impl(ge.SignOp)(kernel_impl(_unary(np.sign)))
    run_floor = impl(ge.FloorOp)(kernel_impl(_unary(np.floor)))
    run_ceil = impl(ge.CeilOp)(kernel_impl(_unary(np.ceil)))
    run_reciprocal = impl(ge.ReciprocalOp)(kernel_impl(reciprocal))
    run_hard_sigmoid = impl(ge.HardSigmoidOp)(kernel_impl(hard_sigmoid))
    run_leaky_relu = impl(ge.LeakyReluOp)(kernel_impl(leaky_relu))
    run_thresholded_relu = impl(ge.ThresholdedReluOp)(kernel_impl(thresholded_relu))
    run_greater = impl(ge.GreaterOp)(kernel_impl(_compare(np.greater)))
    run_less = impl(ge.LessOp)(kernel_impl(_compare(np.less)))
    run_greater_equal = impl(ge.GreaterEqualOp)(kernel_impl(_compare(np.greater_equal)))
    run_less_equal = impl(ge.LessEqualOp)(kernel_impl(_compare(np.less_equal)))
    run_logical_and = impl(ge.LogicalAndOp)(kernel_impl(_compare(np.logical_and)))
    run_logical_or = impl(ge.LogicalOrOp)(kernel_impl(_compare(np.logical_or)))
    run_logical_xor = impl(ge.LogicalXorOp)(kernel_impl(_compare(np.logical_xor)))
    run_logical_not = impl(ge.LogicalNotOp)(kernel_impl(_unary(np.logical_not)))
