"""Kernel of ge.resize.

Resize is separable: each resized axis is handled on its own. For an axis we compute, for every
output index, the source coordinate in the input (per coordinate_transformation_mode), then the
input indices ("taps") and weights that interpolate at that coordinate, and apply them as a
weighted gather along the axis, vectorized over all other axes.
"""

from __future__ import annotations

import numpy as np
from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ge.ge_dialects import ge
from ge.ge_dialects.ge.resize import resized_axes, scaled_length, sizes_with_policy
from ge.interpreter.kernels import check_alloc
from ge.interpreter.kernels.checked import kernel_impl


def resize(op, ins):
    x = ins["X"]
    axes = resized_axes(op.p("axes"), x.ndim)
    plans = _axis_plans(op, ins, x.shape, axes)
    resized = list(x.shape)
    for axis, (out_len, _, _) in zip(axes, plans):
        resized[axis] = out_len
    check_alloc(resized, x.dtype)  # sizes and scales are data: refuse a huge result before computing it
    starts, ends = _roi(ins["roi"], len(axes))
    mode = op.p("mode")
    work = x if mode == "nearest" else x.astype(_compute_dtype(x.dtype))
    outside = np.zeros((1,) * x.ndim, dtype=bool)
    for axis, (out_len, scale, out_width), start, end in zip(axes, plans, starts, ends):
        in_len = x.shape[axis]
        coords = _source_coordinates(
            op.p("coordinate_transformation_mode"), in_len, out_len, scale, out_width, start, end
        )
        if mode == "nearest":
            work = np.take(work, _nearest_indices(coords, op.p("nearest_mode"), in_len), axis=axis)
        else:
            taps, weights = _interpolation_taps(op, coords, in_len, scale)
            work = _weighted_gather(work, axis, taps, weights)
        if op.p("coordinate_transformation_mode") == "tf_crop_and_resize":
            outside = outside | _along(axis, x.ndim, (coords < 0) | (coords > in_len - 1))
    if outside.any():
        work = np.where(outside, np.asarray(op.p("extrapolation_value")).astype(work.dtype), work)
    return _to_dtype(work, x.dtype)


def _axis_plans(op, ins, shape, axes) -> list[tuple[int, float, float]]:
    """Per resized axis: the output length, the scale the coordinate transform divides by, and the
    (possibly fractional) output width `input length * scale` that half_pixel_symmetric uses."""
    scales, sizes = ins["scales"], ins["sizes"]
    in_sizes = [shape[d] for d in axes]
    if scales is not None and scales.size > 0:
        factors = [float(np.float32(s)) for s in scales.reshape(-1)]
        return [(scaled_length(n, f), f, n * f) for n, f in zip(in_sizes, factors)]
    out_sizes, shared = sizes_with_policy(
        in_sizes, [int(s) for s in sizes.reshape(-1)], op.p("keep_aspect_ratio_policy")
    )
    plans = []
    for n, m in zip(in_sizes, out_sizes):
        scale = shared if shared is not None else m / n
        plans.append((m, scale, float(m)))
    return plans


def _roi(roi, count: int) -> tuple[list[float], list[float]]:
    """Normalized crop start and end per resized axis (the whole axis when roi is absent)."""
    if roi is None or roi.size == 0:
        return [0.0] * count, [1.0] * count
    values = [float(v) for v in roi.reshape(-1)]
    return values[:count], values[count:]


def _source_coordinates(
    transform: str, in_len: int, out_len: int, scale: float, out_width: float, start: float, end: float
) -> np.ndarray:
    """x_original for every output index x_resized, by the spec's formula for `transform`.

    The spec's length_resized is `in_len * scale`, fractional when scales are given (so
    align_corners with scales divides by out_width - 1, not out_len - 1)."""
    x = np.arange(out_len, dtype=np.float64)
    if transform == "half_pixel":
        return (x + 0.5) / scale - 0.5
    if transform == "half_pixel_symmetric":
        adjustment = out_len / out_width
        offset = in_len / 2 * (1 - adjustment)
        return offset + (x + 0.5) / scale - 0.5
    if transform == "pytorch_half_pixel":
        return (x + 0.5) / scale - 0.5 if out_width > 1 else np.zeros_like(x)
    if transform == "align_corners":
        return x * (in_len - 1) / (out_width - 1) if out_width > 1 else np.zeros_like(x)
    if transform == "asymmetric":
        return x / scale
    if transform == "tf_crop_and_resize":
        if out_width > 1:
            return start * (in_len - 1) + x * (end - start) * (in_len - 1) / (out_width - 1)
        return np.full_like(x, 0.5 * (start + end) * (in_len - 1))
    raise ValueError(f"unknown coordinate_transformation_mode {transform}")


def _nearest_indices(coords: np.ndarray, nearest_mode: str, in_len: int) -> np.ndarray:
    """The input index nearest each coordinate, ties and direction as nearest_mode says."""
    if nearest_mode == "round_prefer_floor":
        idx = np.ceil(coords - 0.5)
    elif nearest_mode == "round_prefer_ceil":
        idx = np.floor(coords + 0.5)
    elif nearest_mode == "floor":
        idx = np.floor(coords)
    else:
        idx = np.ceil(coords)
    return np.clip(idx, 0, in_len - 1).astype(np.int64)


def _interpolation_taps(op, coords: np.ndarray, in_len: int, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """Input indices and weights, each (out_len, taps), that interpolate at `coords`.

    Linear uses the triangle filter (radius 1), cubic the Keys filter with coefficient
    cubic_coeff_a (radius 2). With antialias, downscaling stretches the filter by 1/scale so
    every input sample under an output pixel contributes. Taps outside the input either repeat
    the edge sample or, with exclude_outside, get weight 0 and the rest is renormalized."""
    cubic = op.p("mode") == "cubic"
    stretch = 1.0 / scale if op.p("antialias") and scale < 1 else 1.0
    radius = (2.0 if cubic else 1.0) * stretch
    reach = int(np.ceil(radius))
    base = np.floor(coords)[:, None]
    taps = base + np.arange(1 - reach, reach + 1)[None, :]
    distance = np.abs(taps - coords[:, None]) / stretch
    weights = _keys_cubic(distance, op.p("cubic_coeff_a")) if cubic else np.maximum(0.0, 1.0 - distance)
    if op.p("exclude_outside"):
        weights = np.where((taps < 0) | (taps > in_len - 1), 0.0, weights)
    weights = weights / weights.sum(axis=1, keepdims=True)
    return np.clip(taps, 0, in_len - 1).astype(np.int64), weights


def _keys_cubic(d: np.ndarray, a: float) -> np.ndarray:
    """Keys' cubic convolution kernel at distances d >= 0 (zero from distance 2 on)."""
    near = ((a + 2) * d - (a + 3)) * d * d + 1
    far = ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return np.where(d <= 1, near, np.where(d < 2, far, 0.0))


def _weighted_gather(values: np.ndarray, axis: int, taps: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """out[..., j, ...] = sum_k weights[j, k] * values[..., taps[j, k], ...] along `axis`."""
    gathered = np.take(values, taps, axis=axis)  # axis becomes (out_len, taps)
    trailing = values.ndim - axis - 1
    w = weights.astype(values.dtype).reshape(weights.shape + (1,) * trailing)
    return (gathered * w).sum(axis=axis + 1)


def _along(axis: int, rank: int, mask: np.ndarray) -> np.ndarray:
    """A 1-D per-index mask shaped to broadcast along `axis` of a rank-`rank` tensor."""
    shape = [1] * rank
    shape[axis] = mask.shape[0]
    return mask.reshape(shape)


def _compute_dtype(dtype: np.dtype) -> np.dtype:
    """Interpolation runs in f64 for f64 and 32/64-bit ints, else in f32 (f16/bf16 widened)."""
    if dtype == np.float64 or dtype in (np.int64, np.int32):
        return np.dtype(np.float64)
    return np.dtype(np.float32)


def _to_dtype(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Back to the input's element type; integers round to nearest and saturate."""
    if values.dtype == dtype:
        return values
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        values = np.clip(np.rint(values), info.min, info.max)
    return values.astype(dtype)


@register_impls
class ResizeFunctions(InterpreterFunctions):
    """The interpreter implementation of `ge.resize`: runs its kernel above."""

    run_resize = impl(ge.ResizeOp)(kernel_impl(resize))
