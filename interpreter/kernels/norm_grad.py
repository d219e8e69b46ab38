"""Kernels of the normalization and softmax backward ops (ge_dialects/ge/norm_grad.py).

Like the forward kernels (interpreter/kernels/nn.py) they compute in the input's float type, f16
and bf16 widened to f32 (the statistics and the per-row sums would lose too much in f16), and round
once to the result types. The statistics are recomputed from x exactly as the forward computes them.
"""

from __future__ import annotations

import numpy as np
from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ge.ge_dialects import ge
from ge.interpreter.kernels.checked import kernel_impl
from ge.interpreter.kernels.nn import _compute, channel_window_sum, lrn_denominator


def _sum_to(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """`grad` summed back to the shape of an operand numpy broadcast up to it."""
    lead = grad.ndim - len(shape)
    stretched = tuple(lead + i for i, d in enumerate(shape) if d == 1 and grad.shape[lead + i] != 1)
    summed = grad.sum(axis=tuple(range(lead)) + stretched, keepdims=True) if lead or stretched else grad
    return summed.reshape(shape)


def batch_norm_grad(op, ins):
    x_in, scale_in = ins["x"], ins["scale"]
    wide = np.promote_types(_compute(x_in).dtype, _compute(scale_in).dtype)
    x, dy = x_in.astype(wide, copy=False), ins["dy"].astype(wide, copy=False)
    channel = (-1, *[1] * (x.ndim - 2))
    axes = (0, *range(2, x.ndim))
    scale = scale_in.astype(wide).reshape(channel)
    training = bool(op.p("training_mode"))
    if training:
        mean, var = x.mean(axis=axes, keepdims=True), x.var(axis=axes, keepdims=True)
    else:
        mean, var = (ins[n].astype(wide).reshape(channel) for n in ("mean", "var"))
    inv_std = 1 / np.sqrt(var + wide.type(op.p("epsilon")))
    x_hat = (x - mean) * inv_std
    dbias = dy.sum(axis=axes)
    dscale = (dy * x_hat).sum(axis=axes)
    if training:
        dy = _through_batch_statistics(dy, x_hat, dscale.reshape(channel), dbias.reshape(channel))
    dx = dy * (scale * inv_std)
    return dx.astype(x_in.dtype, copy=False), dscale.astype(scale_in.dtype), dbias.astype(scale_in.dtype)


def _through_batch_statistics(dy, x_hat, dscale, dbias) -> np.ndarray:
    """dy less what flows back through the batch mean (dy's mean) and the batch variance (dy's
    projection on x_hat), per channel: the training-mode terms of dx."""
    count = x_hat.size // x_hat.shape[1]
    return dy - (dbias + x_hat * dscale) / x_hat.dtype.type(count)


def layer_norm_grad(op, ins):
    x_in, scale_in = ins["x"], ins["scale"]
    x, dy, scale = _compute(x_in), _compute(ins["dy"]), _compute(scale_in)
    axes = tuple(range(op.p("axis") % x.ndim, x.ndim))
    centered = x - x.mean(axis=axes, keepdims=True)
    inv_std = 1 / np.sqrt((centered * centered).mean(axis=axes, keepdims=True) + x.dtype.type(op.p("epsilon")))
    x_hat = centered * inv_std
    dx_hat = dy * scale
    dx = inv_std * (
        dx_hat - dx_hat.mean(axis=axes, keepdims=True) - x_hat * (dx_hat * x_hat).mean(axis=axes, keepdims=True)
    )
    dscale = _sum_to(dy * x_hat, scale.shape)
    dbias = _sum_to(dy, scale.shape)
    return tuple(v.astype(x_in.dtype, copy=False) for v in (dx, dscale, dbias))


def softmax_grad(op, ins):
    y_in = ins["y"]
    y, dy = _compute(y_in), _compute(ins["dy"])
    dx = y * (dy - (dy * y).sum(axis=op.p("axis"), keepdims=True))
    return dx.astype(y_in.dtype, copy=False)


def lrn_grad(op, ins):
    """dy * d^-beta - 2 alpha beta / size * x * (the transposed window sum of dy * x * d^(-beta-1));
    channel c's window reaches channel j when j is in [c - (size-1)//2, c + size//2], so j's
    transposed window is [j - size//2, j + (size-1)//2]."""
    x_in = ins["X"]
    x, dy = _compute(x_in), _compute(ins["dy"])
    size, beta = op.p("size"), x.dtype.type(op.p("beta"))
    d = lrn_denominator(op, x)
    through_d = channel_window_sum(dy * x * d ** (-beta - 1), size // 2, (size - 1) // 2)
    dx = dy * d**-beta - 2 * x.dtype.type(op.p("alpha")) * beta / size * x * through_d
    return dx.astype(x_in.dtype, copy=False)


@register_impls
class NormGradFunctions(InterpreterFunctions):
    """The interpreter implementations of the normalization and softmax backward ops."""

    run_batch_norm_grad = impl(ge.BatchNormGradOp)(kernel_impl(batch_norm_grad))
    run_layer_norm_grad = impl(ge.LayerNormGradOp)(kernel_impl(layer_norm_grad))
    run_softmax_grad = impl(ge.SoftmaxGradOp)(kernel_impl(softmax_grad))
    run_lrn_grad = impl(ge.LrnGradOp)(kernel_impl(lrn_grad))
