"""Kernels of the neural-network ops.

Low-precision floats (f16, bf16) are computed in float32 and rounded back once, the way the
hardware does it: the Cube unit (conv, gemm, matmul) multiplies f16/bf16 inputs and accumulates in
f32 (bias included) before one rounding to the output type; softmax, layer norm, batch norm and
pooling widen to f32 internally (as we assume Ascend's f16 kernels do, see
docs/mixed_precision.md), so they do not overflow where f32 would not (a softmax row's sum, a
variance). numpy has no f16 BLAS, so this is also the fast path. Convolution is im2col + GEMM (see
`conv`); GEMM-shaped kernels hand BLAS 2-D contiguous operands where they can; pooling loops over
kernel positions only, each step a vectorized operation on the whole output.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided
from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ge.ge_dialects import ge
from ge.ge_dialects.ge.nn import STASH_TYPES, Window
from ge.ge_dialects.ge.types import numpy_dtype
from ge.interpreter.kernels import check_alloc, donated, matmul_into, parallel, prepared
from ge.interpreter.kernels.checked import kernel_impl


def _compute(x: np.ndarray) -> np.ndarray:
    """`x` in the type to compute in: float32 for f16/bf16 (f32 accumulation), else unchanged."""
    low_float = x.dtype.itemsize < 4 and x.dtype.kind not in "iub"
    return x.astype(np.float32) if low_float else x


# -- sliding windows ---------------------------------------------------------------------------


def _pad(x: np.ndarray, window: Window, fill) -> tuple[np.ndarray, list[int], list[tuple[int, int]]]:
    """Pads the spatial dims of `x` (N, C, D...) so every output window fits, including the
    partial last windows of ceil mode. Returns the padded array, the output spatial sizes and
    the (begin, end) explicit padding per axis (without the ceil-mode extension)."""
    sizes = x.shape[2:]
    out = [size for size in window.out_sizes(sizes) if size is not None]
    assert len(out) == len(sizes)  # an array's sizes are known, so every output size is
    explicit = [window.padding(i, s) for i, s in enumerate(sizes)]
    widths = [(0, 0), (0, 0)]
    for i, (size, (begin, end)) in enumerate(zip(sizes, explicit)):
        need = (out[i] - 1) * window.strides[i] + window.extent(i)
        widths.append((begin, max(end, need - size - begin)))
    if any(w != (0, 0) for w in widths):
        x = _pad_constant(x, widths, fill)
    return x, out, explicit


def _pad_constant(x: np.ndarray, widths: list[tuple[int, int]], fill) -> np.ndarray:
    """np.pad's constant mode without its general-purpose overhead (a hot path of conv)."""
    padded = np.full([d + b + e for d, (b, e) in zip(x.shape, widths)], fill, dtype=x.dtype)
    padded[tuple(slice(b, b + d) for d, (b, _) in zip(x.shape, widths))] = x
    return padded


def _slice_at(xp: np.ndarray, window: Window, offsets, out: list[int]) -> np.ndarray:
    """The strided view of `xp` that kernel position `offsets` reads for every output position."""
    index = [slice(None), slice(None)]
    for i, k in enumerate(offsets):
        start = k * window.dilations[i]
        index.append(slice(start, start + (out[i] - 1) * window.strides[i] + 1, window.strides[i]))
    return xp[tuple(index)]


def _kernel_positions(window: Window) -> Iterator[tuple[int, ...]]:
    kernel = [k for k in window.kernel if k is not None]
    assert len(kernel) == len(window.kernel)  # a kernel's windows come from known attributes or weights
    return itertools.product(*(range(k) for k in kernel))


# -- convolution -------------------------------------------------------------------------------


def _patches(xp: np.ndarray, window: Window, out: list[int]) -> np.ndarray | None:
    """The strided view (N, C, K..., O...) of the padded input whose element [n, c, k..., o...] is
    the input under kernel position k at output position o; None for a 1x1 kernel at stride 1, which
    reads the input as it is."""
    kernel = [k for k in window.kernel if k is not None]
    assert len(kernel) == len(window.kernel)  # a conv's kernel sizes are its weights' dims
    if all(k == 1 for k in kernel) and all(s == 1 for s in window.strides) and list(xp.shape[2:]) == out:
        return None
    spatial = xp.strides[2:]
    return as_strided(
        xp,
        (*xp.shape[:2], *kernel, *out),
        (
            *xp.strides[:2],
            *(s * d for s, d in zip(spatial, window.dilations)),
            *(s * t for s, t in zip(spatial, window.strides)),
        ),
        writeable=False,
    )


def _im2col(xp: np.ndarray, window: Window, out: list[int], groups: int) -> np.ndarray:
    """The GEMM's right operand (N, G, Cg * K, P): every input patch, one column per output position
    (the patches copied once into the GEMM's layout; the input itself for a 1x1 kernel at stride 1)."""
    n, c = xp.shape[:2]
    view = _patches(xp, window, out)
    if view is None:
        return xp.reshape(n, groups, c // groups, math.prod(out))
    return view.reshape(n, groups, -1, math.prod(out))


def _conv_weights(w: np.ndarray, groups: int) -> np.ndarray:
    """The GEMM's left operand (G, Mg, Cg * K), contiguous, in the type to compute in."""
    return np.ascontiguousarray(_compute(w).reshape(groups, w.shape[0] // groups, -1))


# A band's patches (Cin * K x positions) are at most this many bytes: they are copied and multiplied
# by one thread while they are in its L2 cache (2 MiB per core here).
_BAND_BYTES = 1 << 20


def _conv_image(weights: np.ndarray, patches: np.ndarray | None, image: np.ndarray, y: np.ndarray, bias) -> None:
    """One image of a one-group conv into `y` (M, P): weights (M, C * K) times the image's patches
    (None: a 1x1 kernel at stride 1, whose patches are the image itself).

    The output is cut into bands of rows of its first spatial dim (a shape-only split): each band's
    patches are copied, multiplied and biased by the thread that claims it, so the im2col copy runs
    on the run's threads and its columns are read from cache. Patches that fit one band are one
    GEMM, split by `matmul_into`."""
    spatial = image.ndim - 1
    first = 1 if patches is None else patches.shape[-spatial]
    row_bytes = 0 if patches is None else math.prod(patches.shape) // first * patches.itemsize
    bands = parallel.spans(first, -(-first * row_bytes // _BAND_BYTES))
    if len(bands) <= 1:
        cols = image.reshape(image.shape[0], -1) if patches is None else patches.reshape(weights.shape[1], -1)
        matmul_into(weights, cols, out=y)
        if bias is not None:
            y += bias
        return
    assert patches is not None  # a 1x1 kernel's image is one band
    view, width = patches, y.shape[1] // first

    def band(i: int) -> None:
        lo, hi = bands[i]
        index: tuple[Any, ...] = (Ellipsis, slice(lo, hi), *[slice(None)] * (spatial - 1))
        part = y[:, lo * width : hi * width]
        np.matmul(weights, view[index].reshape(weights.shape[1], -1), out=part)
        if bias is not None:
            part += bias

    parallel.run_blocks(len(bands), band)


def conv(op, ins):
    """im2col + GEMM, the GEMMs written straight into the result: per image for one group
    (`_conv_image`: bands of the output claimed by the run's threads), else one batched matmul over
    (batch, group). The weights' GEMM layout is made once per constant (`prepared`); the bias is
    added in place."""
    x, w, b = _compute(ins["X"]), ins["W"], ins["B"]
    groups = op.p("group")
    window = Window.of(op.p, w.shape[2:])
    xp, out, _ = _pad(x, window, 0)
    weights = prepared(w, f"conv.g{groups}", lambda w: _conv_weights(w, groups))
    n, m = x.shape[0], w.shape[0]
    check_alloc((n, m, *out), weights.dtype)
    y = np.empty((n, groups, m // groups, math.prod(out)), weights.dtype)
    bias = None if b is None else _compute(b).reshape(groups, m // groups, 1)
    if groups == 1:
        patches = _patches(xp, window, out)
        for i in range(n):
            _conv_image(
                weights[0], None if patches is None else patches[i], xp[i], y[i, 0], None if bias is None else bias[0]
            )
    else:
        np.matmul(weights, _im2col(xp, window, out, groups), out=y)
        if bias is not None:
            y += bias
    return y.reshape(n, m, *out).astype(ins["X"].dtype, copy=False)


# -- pooling -----------------------------------------------------------------------------------


def _lowest(dtype: np.dtype):
    return np.iinfo(dtype).min if dtype.kind in "iu" else -np.inf


def max_pool(op, ins):
    x = _compute(ins["X"])
    window = Window.of(op.p, op.p("kernel_shape"))
    xp, out, explicit = _pad(x, window, _lowest(x.dtype))
    if len(op.results) == 1:
        y = None
        for offsets in _kernel_positions(window):
            part = _slice_at(xp, window, offsets, out)
            y = part.copy() if y is None else np.maximum(y, part, out=y)
        assert y is not None  # the verifier makes every kernel dimension positive
        return y.astype(ins["X"].dtype, copy=False)
    y, indices = _max_with_indices(xp, window, out, explicit, x.shape, op.p("storage_order"))
    return y.astype(ins["X"].dtype, copy=False), indices


def _max_with_indices(xp, window: Window, out, explicit, shape, storage_order: int):
    """Max pooling that also tracks where each maximum came from (first one on ties), as a
    flat index into the unpadded input (ONNX MaxPool's Indices)."""
    spatial = shape[2:]
    # Flat strides of the spatial dims: row-major, or column-major for storage_order=1.
    order = range(len(spatial)) if storage_order else reversed(range(len(spatial)))
    strides = [0] * len(spatial)
    step = 1
    for i in order:
        strides[i] = step
        step *= spatial[i]
    base = sum(
        ((np.arange(o) * window.strides[i] - explicit[i][0]) * strides[i]).reshape(
            [-1 if j == i else 1 for j in range(len(out))]
        )
        for i, o in enumerate(out)
    )
    y: np.ndarray | None = None
    indices: np.ndarray | None = None
    for offsets in _kernel_positions(window):
        part = _slice_at(xp, window, offsets, out)
        here = base + sum(k * window.dilations[i] * strides[i] for i, k in enumerate(offsets))
        if y is None:
            y, indices = part.copy(), np.broadcast_to(here, part.shape).copy()
            continue
        better = part > y
        y = np.where(better, part, y)
        assert indices is not None  # set with y
        indices = np.where(better, here, indices)
    assert y is not None and indices is not None  # the verifier makes every kernel dimension positive
    n, c = shape[:2]
    channel_base = (np.arange(n * c, dtype=np.int64) * int(np.prod(spatial))).reshape(n, c, *[1] * len(out))
    return y, (indices + channel_base).astype(np.int64)


def avg_pool(op, ins):
    x = _compute(ins["X"])
    window = Window.of(op.p, op.p("kernel_shape"))
    xp, out, explicit = _pad(x, window, 0)
    total = None
    for offsets in _kernel_positions(window):
        part = _slice_at(xp, window, offsets, out)
        total = part.copy() if total is None else np.add(total, part, out=total)
    counts = _window_counts(xp.shape[2:], x.shape[2:], window, out, explicit, op.p("count_include_pad"))
    return (total / counts).astype(ins["X"].dtype, copy=False)


def _window_counts(padded, sizes, window: Window, out, explicit, include_pad: int) -> np.ndarray:
    """How many positions each window averages: the ones inside the input, or with
    count_include_pad the ones inside the explicitly padded input (never the ceil-mode overhang)."""
    mask = np.zeros((1, 1, *padded), dtype=np.float32)
    region = [slice(None), slice(None)]
    for size, (begin, end) in zip(sizes, explicit):
        region.append(slice(0, begin + size + end) if include_pad else slice(begin, begin + size))
    mask[tuple(region)] = 1
    counts = None
    for offsets in _kernel_positions(window):
        part = _slice_at(mask, window, offsets, out)
        counts = part.copy() if counts is None else counts + part
    assert counts is not None  # the verifier makes every kernel dimension positive
    return counts


def global_avg_pool(op, ins):
    x = ins["X"]
    axes = tuple(range(2, x.ndim))
    return _compute(x).mean(axis=axes, keepdims=True).astype(x.dtype, copy=False)


# -- normalization -----------------------------------------------------------------------------


def batch_norm(op, ins):
    x = _compute(ins["X"])
    channel = (-1, *[1] * (x.ndim - 2))
    scale, bias = (_compute(ins[n]).reshape(channel) for n in ("scale", "B"))
    mean, var = _compute(ins["input_mean"]), _compute(ins["input_var"])
    eps = op.p("epsilon")
    if not op.p("training_mode"):
        out = donated(op, ins, "X") if x is ins["X"] else None
        return _normalize(x, mean.reshape(channel), var.reshape(channel), eps, scale, bias, out).astype(
            ins["X"].dtype, copy=False
        )
    axes = (0, *range(2, x.ndim))
    batch_mean, batch_var = x.mean(axis=axes), x.var(axis=axes)
    y = _normalize(x, batch_mean.reshape(channel), batch_var.reshape(channel), eps, scale, bias)
    momentum = op.p("momentum")
    stats_dtype = ins["input_mean"].dtype
    running_mean = (mean * momentum + batch_mean * (1 - momentum)).astype(stats_dtype)
    running_var = (var * momentum + batch_var * (1 - momentum)).astype(stats_dtype)
    return y.astype(ins["X"].dtype, copy=False), running_mean, running_var


def _normalize(x, mean, var, eps, scale, bias, out=None) -> np.ndarray:
    """(x - mean) / sqrt(var + eps) * scale + bias, folded per channel into one multiply-add
    (two passes over x instead of four, block by block on the run's threads), into `out` when given."""
    factor = scale / np.sqrt(var + np.asarray(eps, dtype=var.dtype))
    shift = (bias - mean * factor).astype(x.dtype, copy=False)
    return parallel.elementwise(
        _multiply_add, np.empty_like(x) if out is None else out, x, factor.astype(x.dtype, copy=False), shift, passes=2
    )


def _multiply_add(x, factor, shift, out):
    np.multiply(x, factor, out=out)
    out += shift


def layer_norm(op, ins):
    """Normalizes over the trailing dims from `axis`: X seen as rows, blocks of rows on the run's
    threads, each row's steps and roundings as ONNX's, on arrays the kernel owns written in place."""
    x = ins["X"]
    stash = numpy_dtype(STASH_TYPES[op.p("stash_type")])
    axis = op.p("axis") % x.ndim
    rows, width = math.prod(x.shape[:axis]), math.prod(x.shape[axis:])
    flat = np.ascontiguousarray(x).reshape(rows, width)
    # Scale and B broadcast to X (a view for the usual trailing shapes), seen as X's rows
    scale = np.broadcast_to(ins["Scale"], x.shape).reshape(rows, width)
    bias = None if ins["B"] is None else np.broadcast_to(ins["B"], x.shape).reshape(rows, width)
    y_shaped = np.empty(x.shape, x.dtype)  # owns its memory: the next op may take it over
    y = y_shaped.reshape(rows, width)
    mean = np.empty((rows, 1), stash)
    inv_std = np.empty((rows, 1), stash)
    epsilon = stash.type(op.p("epsilon"))

    def block(lo: int, hi: int) -> None:
        wide = flat[lo:hi].astype(stash)  # a copy the block owns
        np.mean(wide, axis=1, keepdims=True, out=mean[lo:hi])
        wide -= mean[lo:hi]
        np.mean(np.square(wide), axis=1, keepdims=True, out=inv_std[lo:hi])
        inv_std[lo:hi] += epsilon
        np.sqrt(inv_std[lo:hi], out=inv_std[lo:hi])
        np.divide(1, inv_std[lo:hi], out=inv_std[lo:hi])
        wide *= inv_std[lo:hi]
        # Scale and bias are applied before the one rounding to X's type, as onnxruntime's CPU kernel
        # does (ONNX's function body rounds the normalized value first).
        normalized = _in_place(np.multiply, _compute(wide), _compute(scale[lo:hi]), owned=wide)
        if bias is not None:
            normalized = _in_place(np.add, normalized, _compute(bias[lo:hi]), owned=wide)
        y[lo:hi] = normalized

    parallel.for_rows(rows, width, block, passes=10)  # copy, mean, subtract, square, mean, scale, bias, ...
    kept = (*x.shape[:axis], *[1] * (x.ndim - axis))
    return y_shaped, mean.reshape(kept), inv_std.reshape(kept)


def _in_place(ufunc, a: np.ndarray, b: np.ndarray, owned: np.ndarray) -> np.ndarray:
    """ufunc(a, b), written over `a` when `a` is the kernel's own array `owned` and the result has
    its dtype and shape (else a new array, as the plain expression gives)."""
    if a is owned and np.result_type(a, b) == a.dtype and np.broadcast_shapes(a.shape, b.shape) == a.shape:
        return ufunc(a, b, out=a)
    return ufunc(a, b)


def dropout(op, ins):
    """Identity outside training. In training, the mask draws uniform [0, 1) samples from
    `numpy.random.RandomState(seed)` and keeps those >= ratio: the generator the ONNX test
    data was made with, so seeded results reproduce them."""
    x = ins["data"]
    ratio = 0.5 if ins["ratio"] is None else float(np.asarray(ins["ratio"]).reshape(-1)[0])
    training = ins["training_mode"] is not None and bool(np.asarray(ins["training_mode"]).reshape(-1)[0])
    if not training or ratio == 0:
        return x.copy(), np.ones(x.shape, dtype=np.bool_)
    mask = np.random.RandomState(op.p("seed")).uniform(0, 1, x.shape) >= ratio
    y = _compute(x) * mask / np.float32(1 - ratio)
    return y.astype(x.dtype, copy=False), mask


# -- elementwise-like --------------------------------------------------------------------------


def clip(op, ins):
    y = ins["input"]
    if ins["min"] is not None:
        y = np.maximum(y, ins["min"].reshape(()))
    if ins["max"] is not None:
        y = np.minimum(y, ins["max"].reshape(()))
    return y.copy() if y is ins["input"] else y


def channel_window_sum(a: np.ndarray, before: int, after: int) -> np.ndarray:
    """out[:, c] = sum of a[:, c - before : c + after + 1] over the channels that exist."""
    padded = np.pad(a, [(0, 0), (before, after)] + [(0, 0)] * (a.ndim - 2))
    return np.sum([padded[:, k : k + a.shape[1]] for k in range(before + after + 1)], axis=0)


def lrn_denominator(op, wide: np.ndarray) -> np.ndarray:
    """bias + alpha / size * the sum of x^2 over [c - (size-1)//2, c + size//2]."""
    size = op.p("size")
    window = channel_window_sum(wide * wide, (size - 1) // 2, size // 2)
    return wide.dtype.type(op.p("bias")) + wide.dtype.type(op.p("alpha")) / size * window


def lrn(op, ins):
    """x / (bias + alpha / size * window sum of x^2 over channels) ** beta, in f32 for narrow floats."""
    x = ins["X"]
    wide = _compute(x)
    return (wide / lrn_denominator(op, wide) ** wide.dtype.type(op.p("beta"))).astype(x.dtype)


def softmax(op, ins):
    """exp(x - max) / sum over `axis`, in f32 for narrow floats; over the last axis, blocks of rows on
    the run's threads."""
    x = ins["input"]
    axis = op.p("axis") % max(1, x.ndim)
    if x.ndim == 0 or axis != x.ndim - 1:
        return _softmax_rows(_compute(x).copy(), axis).astype(x.dtype, copy=False)
    rows = np.ascontiguousarray(x).reshape(-1, x.shape[-1])
    y_shaped = np.empty(x.shape, x.dtype)  # owns its memory: the next op may take it over
    y = y_shaped.reshape(rows.shape)

    def block(lo: int, hi: int) -> None:
        y[lo:hi] = _softmax_rows(_compute(rows[lo:hi]).copy(), -1)

    parallel.for_rows(rows.shape[0], rows.shape[1], block, passes=6)  # copy, max, subtract, exp, sum, divide
    return y_shaped


def _softmax_rows(e: np.ndarray, axis: int) -> np.ndarray:
    """Softmax of `e` over `axis`, written over `e` (the caller's own array)."""
    e -= e.max(axis=axis, keepdims=True)
    np.exp(e, out=e)
    e /= e.sum(axis=axis, keepdims=True)
    return e


# -- matrix products ---------------------------------------------------------------------------


def _operand(x: np.ndarray) -> np.ndarray:
    """A product's operand in its compute type and in row-major order: BLAS rounds a product of a
    transposed view otherwise than of the same values stored in order, and a value is a view or not
    by how the kernel before produced it (the arena executor stores every value in order)."""
    return np.ascontiguousarray(_compute(x))


def gemm(op, ins):
    a, b, c = _operand(ins["A"]), _operand(ins["B"]), ins["C"]
    a = a.T if op.p("transA") else a
    b = b.T if op.p("transB") else b
    y = matmul_into(a, b)
    alpha, beta = op.p("alpha"), op.p("beta")
    if alpha != 1:
        y = y * alpha
    if c is not None and beta != 0:
        y = y + (_compute(c) if beta == 1 else _compute(c) * beta)
    return np.asarray(y).astype(ins["A"].dtype, copy=False)


def matmul(op, ins):
    """A stack of matrices times one matrix is one GEMM over the stacked rows (one 2-D BLAS call
    instead of one per matrix)."""
    a, b = _operand(ins["A"]), _operand(ins["B"])
    if a.ndim >= 2 and b.ndim == 2:
        # the result owns its memory (written through a 2-D view), so the next op may take it over
        y = np.empty((*a.shape[:-1], b.shape[-1]), np.result_type(a, b))
        matmul_into(a.reshape(-1, a.shape[-1]), b, out=y.reshape(-1, b.shape[-1]))
    else:
        y = np.matmul(a, b)
    return np.asarray(y).astype(ins["A"].dtype, copy=False)


@register_impls
class NnFunctions(InterpreterFunctions):
    """The interpreter implementations of the neural-network ops: each runs its kernel above."""

    run_conv = impl(ge.ConvOp)(kernel_impl(conv))
    run_max_pool = impl(ge.MaxPoolOp)(kernel_impl(max_pool))
    run_avg_pool = impl(ge.AvgPoolOp)(kernel_impl(avg_pool))
    run_global_avg_pool = impl(ge.GlobalAvgPoolOp)(kernel_impl(global_avg_pool))
    run_batch_norm = impl(ge.BatchNormOp)(kernel_impl(batch_norm))
    run_layer_norm = impl(ge.LayerNormOp)(kernel_impl(layer_norm))
    run_dropout = impl(ge.DropoutOp)(kernel_impl(dropout))
    run_clip = impl(ge.ClipOp)(kernel_impl(clip))
    run_softmax = impl(ge.SoftmaxOp)(kernel_impl(softmax))
    run_lrn = impl(ge.LrnOp)(kernel_impl(lrn))
    run_gemm = impl(ge.GemmOp)(kernel_impl(gemm))
    run_matmul = impl(ge.MatMulOp)(kernel_impl(matmul))
