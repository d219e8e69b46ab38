"""Kernels of the backward conv and pool ops (ge_dialects/ge/conv_grad.py).

They share the forward kernels' window helpers (interpreter/kernels/nn.py), so a gradient reads
and writes exactly the positions the forward op read: the same padding, ceil-mode overhang and
dilated, strided slices. Each loops over kernel positions only, every step a vectorized operation
on the whole output: the input gradients scatter-add one strided slice per position into a
padded buffer and crop the padding off. f16/bf16 compute in f32 and round once, as the forward
kernels do.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ge.ge_dialects import ge
from ge.ge_dialects.ge.nn import Window
from ge.interpreter.kernels.checked import kernel_impl
from ge.interpreter.kernels.nn import _compute, _im2col, _kernel_positions, _lowest, _pad, _slice_at, _window_counts


def _padded_zeros(
    shape: Sequence[int], window: Window, out: Sequence[int], dtype: np.dtype
) -> tuple[np.ndarray, tuple[slice, ...]]:
    """Zeros shaped like the forward kernel's padded input (`_pad`: explicit pads plus the
    ceil-mode overhang), and the index of the unpadded input inside it."""
    dims = list(shape[:2])
    region = [slice(None), slice(None)]
    for i, size in enumerate(shape[2:]):
        begin, end = window.padding(i, size)
        need = (out[i] - 1) * window.strides[i] + window.extent(i)
        dims.append(begin + size + max(end, need - size - begin))
        region.append(slice(begin, begin + size))
    return np.zeros(dims, dtype), tuple(region)


def conv_backprop_input(op, ins):
    """dx of ge.conv, the transposed convolution of dy with W."""
    dy, w = _compute(ins["dy"]), _compute(ins["W"])
    window = Window.of(op.p, w.shape[2:])
    return transposed_conv(dy, w, op.p("input_shape"), window, op.p("group")).astype(ins["dy"].dtype)


def transposed_conv(dy: np.ndarray, w: np.ndarray, shape: Sequence[int], window: Window, groups: int) -> np.ndarray:
    """The input (of `shape`) gradient of a conv with `window`, from dy (N, M, O...) and W
    (M, C/group, K...), in dy's type: per group, W^T @ dy gives every window's input-patch
    gradient (col2im's columns), which then adds into the input at each kernel position.
    ge.conv_backprop_input and ge.conv_transpose both compute this."""
    n, m = dy.shape[:2]
    out = list(dy.shape[2:])
    weights = w.reshape(groups, m // groups, -1).transpose(0, 2, 1)  # (G, Cg * K, Mg)
    cols = np.matmul(weights, dy.reshape(n, groups, m // groups, -1))  # (N, G, Cg * K, P)
    cols = cols.reshape(n, shape[1], *w.shape[2:], *out)  # (N, C, K..., O...)
    dxp, region = _padded_zeros(shape, window, out, cols.dtype)
    for offsets in _kernel_positions(window):
        view = _slice_at(dxp, window, offsets, out)
        view += cols[(slice(None), slice(None), *offsets)]
    return dxp[region]


def conv_backprop_filter(op, ins):
    """dW: per group, dy @ im2col(x)^T, with the batch folded into the contraction."""
    x, dy = _compute(ins["x"]), _compute(ins["dy"])
    shape, groups = op.p("filter_shape"), op.p("group")
    window = Window.of(op.p, shape[2:])
    xp, out, _ = _pad(x, window, 0)
    cols = _im2col(xp, window, out, groups)  # (N, G, Cg * K, P)
    n, m = dy.shape[:2]
    per_group = dy.reshape(n, groups, m // groups, -1).transpose(1, 2, 0, 3).reshape(groups, m // groups, -1)
    patches = cols.transpose(1, 0, 3, 2).reshape(groups, -1, cols.shape[2])  # (G, N * P, Cg * K)
    return np.matmul(per_group, patches).reshape(shape).astype(ins["x"].dtype)


def max_pool_grad(op, ins):
    """dx: each window's dy goes to its maximum, the first one on ties (a strict `>` over the
    kernel positions in row-major order, as ge.max_pool picks its Indices)."""
    x, dy = _compute(ins["x"]), _compute(ins["dy"])
    window = Window.of(op.p, op.p("kernel_shape"))
    xp, out, explicit = _pad(x, window, _lowest(x.dtype))
    positions = list(_kernel_positions(window))
    best = _slice_at(xp, window, positions[0], out).copy()
    winner = np.zeros(best.shape, np.intp)
    for k, offsets in enumerate(positions[1:], start=1):
        part = _slice_at(xp, window, offsets, out)
        better = part > best
        winner[better] = k
        np.maximum(best, part, out=best)
    dxp = np.zeros(xp.shape, dy.dtype)
    zero = dy.dtype.type(0)
    for k, offsets in enumerate(positions):
        view = _slice_at(dxp, window, offsets, out)
        view += np.where(winner == k, dy, zero)
    region = (slice(None), slice(None), *(slice(b, b + s) for (b, _), s in zip(explicit, x.shape[2:])))
    return dxp[region].astype(ins["x"].dtype)


def avg_pool_grad(op, ins):
    """dx: each window's dy over the forward's divisor, added to every position of the window."""
    dy = _compute(ins["dy"])
    shape = op.p("input_shape")
    window = Window.of(op.p, op.p("kernel_shape"))
    out = list(dy.shape[2:])
    dxp, region = _padded_zeros(shape, window, out, dy.dtype)
    explicit = [window.padding(i, size) for i, size in enumerate(shape[2:])]
    counts = _window_counts(dxp.shape[2:], shape[2:], window, out, explicit, op.p("count_include_pad"))
    share = dy / counts.astype(dy.dtype)
    for offsets in _kernel_positions(window):
        view = _slice_at(dxp, window, offsets, out)
        view += share
    return dxp[region].astype(ins["dy"].dtype)


@register_impls
class ConvGradFunctions(InterpreterFunctions):
    """The interpreter implementations of the backward conv and pool ops."""

    run_conv_backprop_input = impl(ge.ConvBackpropInputOp)(kernel_impl(conv_backprop_input))
    run_conv_backprop_filter = impl(ge.ConvBackpropFilterOp)(kernel_impl(conv_backprop_filter))
    run_max_pool_grad = impl(ge.MaxPoolGradOp)(kernel_impl(max_pool_grad))
    run_avg_pool_grad = impl(ge.AvgPoolGradOp)(kernel_impl(avg_pool_grad))
