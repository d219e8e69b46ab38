"""The kernel of ge.deform_conv (ge_dialects/ge/deform_conv.py): the input sampled at every tap's
offset position (bilinear, zero outside, f16/bf16 widened to f32), masked, then a grouped
contraction with the weights."""

from __future__ import annotations

import numpy as np
from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ge.ge_dialects import ge
from ge.interpreter.kernels.checked import kernel_impl
from ge.interpreter.kernels.nn import _compute


def sampled_columns(x: np.ndarray, y: np.ndarray, xs: np.ndarray) -> np.ndarray:
    """x (N, G, Cg, H, W) read at rows y and columns xs (N, G, ...) bilinearly, zero outside:
    (N, G, ..., Cg)."""
    n, g, _, height, width = x.shape
    y0, x0 = np.floor(y), np.floor(xs)
    fy, fx = y - y0, xs - x0
    out = np.zeros((*y.shape, x.shape[2]), np.result_type(x, y))
    index = (np.arange(n).reshape(-1, *[1] * (y.ndim - 1)), np.arange(g).reshape(1, -1, *[1] * (y.ndim - 2)))
    for dy, wy in ((0, 1 - fy), (1, fy)):
        for dx, wx in ((0, 1 - fx), (1, fx)):
            rows, cols = y0 + dy, x0 + dx
            inside = (rows >= 0) & (rows < height) & (cols >= 0) & (cols < width)
            r = np.clip(rows, 0, height - 1).astype(np.intp)
            c = np.clip(cols, 0, width - 1).astype(np.intp)
            values = np.moveaxis(x, 2, -1)[(*index, r, c)]  # (N, G, ..., Cg)
            out += values * (wy * wx * inside)[..., None]
    return out


def deform_conv(op, ins):
    x_in = ins["X"]
    x, w, offset = _compute(x_in), _compute(ins["W"]), _compute(ins["offset"])
    n, channels, _, _ = x.shape
    out_channels, per_group, kh, kw = w.shape
    group, offset_group = op.p("group"), op.p("offset_group")
    sh, sw = op.p("strides") or (1, 1)
    dh, dw = op.p("dilations") or (1, 1)
    top, left = (op.p("pads") or (0, 0, 0, 0))[:2]
    oh, ow = offset.shape[2:]
    offset = offset.reshape(n, offset_group, kh, kw, 2, oh, ow)
    rows = (np.arange(kh) * dh)[:, None, None, None] + (np.arange(oh) * sh - top)[None, None, :, None]
    cols = (np.arange(kw) * dw)[None, :, None, None] + (np.arange(ow) * sw - left)[None, None, None, :]
    grouped = x.reshape(n, offset_group, channels // offset_group, *x.shape[2:])
    sampled = sampled_columns(grouped, rows + offset[:, :, :, :, 0], cols + offset[:, :, :, :, 1])
    if ins.get("mask") is not None:
        sampled = sampled * _compute(ins["mask"]).reshape(n, offset_group, kh, kw, oh, ow)[..., None]
    columns = np.moveaxis(sampled, -1, 2).reshape(n, group, per_group, kh, kw, oh, ow)
    weights = w.reshape(group, out_channels // group, per_group, kh, kw)
    y = np.einsum("ngckhij,gockh->ngoij", columns, weights).reshape(n, out_channels, oh, ow)
    if ins.get("B") is not None:
        y = y + _compute(ins["B"]).reshape(1, -1, 1, 1)
    return y.astype(x_in.dtype)


@register_impls
class DeformConvFunctions(InterpreterFunctions):
    run_deform_conv = impl(ge.DeformConvOp)(kernel_impl(deform_conv))
