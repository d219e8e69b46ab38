"""The kernel of GridSample (ge_dialects/ge/grid_sample.py), vectorized over the output: each
output point's coordinates are unnormalized, brought inside by the padding mode, and its taps
(1, 2 or 4 per dim for nearest, linear, cubic) gathered and weighted. Computes in f64."""

from __future__ import annotations

import itertools

import numpy as np
from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ge.ge_dialects import ge
from ge.interpreter.kernels.checked import kernel_impl

CUBIC_ALPHA = -0.75
"""Keys' cubic convolution coefficient, as PyTorch's and onnxruntime's bicubic."""


def _reflect(x: np.ndarray, low: float, high: float) -> np.ndarray:
    """x reflected off the borders [low, high] until it lies within them."""
    span = high - low
    if span <= 0:
        return np.full_like(x, low)
    below, above = x < low, x > high
    distance = np.where(below, low - x, np.where(above, x - high, 0.0))
    flips = np.floor(distance / span)
    rest = distance - flips * span
    even = flips % 2 == 0
    from_low, from_high = low + rest, high - rest
    return np.where(below, np.where(even, from_low, from_high), np.where(above, np.where(even, from_high, from_low), x))


def _cubic_weights(t: np.ndarray) -> list[np.ndarray]:
    """Weights of the taps at -1, 0, 1, 2 for a fractional position t in [0, 1)."""
    a = CUBIC_ALPHA

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def grid_sample(op, ins):
    x, grid = ins["X"], ins["grid"]
    mode, padding, align = op.p("mode"), op.p("padding_mode"), bool(op.p("align_corners"))
    dims = x.shape[2:]
    coords = grid.astype(np.float64)[..., ::-1]  # grid's last axis is (x, y, ...): x indexes the last dim
    low = [0.0 if align else -0.5 for _ in dims]
    high = [d - 1.0 if align else d - 0.5 for d in dims]
    positions = []
    for i, d in enumerate(dims):
        c = coords[..., i]
        p = (c + 1) / 2 * (d - 1) if align else ((c + 1) * d - 1) / 2
        if mode == "nearest":
            p = np.rint(p)
        outside = (p < low[i]) | (p > high[i])
        if padding == "border" and mode != "cubic":  # cubic clamps each tap instead, as PyTorch does
            p = np.where(outside, np.clip(p, 0, d - 1), p)
        elif padding == "reflection":
            p = np.where(outside, _reflect(p, low[i], high[i]), p)
        positions.append(p)
    taps_per_dim = []
    for p in positions:
        if mode == "nearest":
            taps_per_dim.append([(p.astype(np.int64), np.ones_like(p))])
            continue
        base = np.floor(p)
        t = p - base
        offsets, weights = ([0, 1], [1 - t, t]) if mode == "linear" else ([-1, 0, 1, 2], _cubic_weights(t))
        taps_per_dim.append([(base.astype(np.int64) + o, w) for o, w in zip(offsets, weights)])
    batch = np.arange(x.shape[0]).reshape((-1,) + (1,) * (grid.ndim - 2))
    out = np.zeros((x.shape[0], *grid.shape[1:-1], x.shape[1]))
    for combination in itertools.product(*taps_per_dim):
        weight = np.ones(grid.shape[:-1])
        index, valid = [], np.ones(grid.shape[:-1], dtype=bool)
        for (i, w), d, lo, hi in zip(combination, dims, low, high):
            if padding == "zeros":
                valid &= (i >= 0) & (i < d)
            elif padding == "reflection":
                i = np.trunc(_reflect(i.astype(np.float64), lo, hi)).astype(np.int64)
            index.append(np.clip(i, 0, d - 1))
            weight = weight * w
        values = np.moveaxis(x, 1, -1)[(batch, *index)]  # [N, out..., C]
        out += np.where(valid, weight, 0.0)[..., None] * values
    return np.ascontiguousarray(np.moveaxis(out, -1, 1)).astype(x.dtype)


@register_impls
class GridSampleFunctions(InterpreterFunctions):
    run_grid_sample = impl(ge.GridSampleOp)(kernel_impl(grid_sample))
