"""The converters of the remaining core ATen overloads (the scatter family, rounding division,
atan2, diagonal, 3-d pooling, the average poolings' backward, distances, embedding bags, ...) and
the core overloads ge refuses on purpose, each with its reason: random numbers, data-dependent
shapes, strides, complex tensors, and the overloads torch.export's core decompositions never leave
in a graph (the reflection and replication pads, the layer and group norms' backward, ...). A rule
table beside frontend/torch_converters.py, read through the same `converter_table()`."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from torch import nn

from ge.frontend.torch_converters import (
    _args,
    _dtype,
    _key,
    _pair,
    _rank,
    _val,
    call,
    onnx_value,
    reads_result,
)
from ge.frontend.torch_fx import Graph, TorchImportError, converts, onnx_type, refuses
from ge.frontend.torch_training_converters import _flat, _static_shape

aten = torch.ops.aten

DECOMPOSED = "decomposed by torch.export's core decompositions"

refuses(
    DECOMPOSED,
    "aten.reflection_pad1d.default",
    "aten.reflection_pad2d.default",
    "aten.reflection_pad3d.default",
    "aten.replication_pad2d.default",
    "aten.replication_pad3d.default",
    "aten.select_scatter.default",
    "aten.squeeze.dim",
    "aten.var.dim",
    "aten.fill.Scalar",
    "aten.col2im.default",
    "aten.embedding_dense_backward.default",
    "aten.native_layer_norm_backward.default",
    "aten.native_group_norm_backward.default",
)
refuses(
    "random numbers: ge's graphs are deterministic", "aten.rand.default", "aten.randn.default", "aten.randperm.default"
)
refuses("a data-dependent shape", "aten.nonzero.default")
refuses("a tensor's value read as a Python number: data-dependent", "aten._local_scalar_dense.default")
refuses(
    "strides and storage offsets: ge's tensors have neither",
    "aten.as_strided.default",
    "aten.sym_stride.int",
    "aten.sym_storage_offset.default",
)
refuses("complex tensors: ge has no complex type", "aten._fft_r2c.default", "aten._fft_c2r.default")
refuses("out= variant; functional graphs never hold it", "aten.atan2.out")
refuses(
    "functionalization writes it as _native_batch_norm_legit_functional (converted)",
    "aten._native_batch_norm_legit.default",
)
refuses("tracing writes it as a product of sym_size", "aten.sym_numel.default")


def _like(g: Graph, value: Any, dtype: np.dtype, shape: str) -> str:
    """`value` (a number or a tensor) broadcast to `shape` (a Shape result)."""
    return g.op("Expand", [g.tensor(value, dtype=dtype), shape])


def _operand(g: Graph, value: Any, arg: Any, dtype: Any) -> str:
    """An operand in the result's `dtype`: a tensor cast where it has another, a number a constant."""
    if not isinstance(value, str):
        return g.const(value, np.dtype(str(dtype).removeprefix("torch.")))
    if _val(arg).dtype == dtype:
        return value
    return g.op("Cast", [value], to=onnx_type(dtype, "type promotion"))


def _is_float(node: Any) -> bool:
    return bool(_val(node).dtype.is_floating_point)


# -- scatter -----------------------------------------------------------------------------------
SCATTER_INDEX = [[0, 1, 2, 0], [2, 0, 1, 1]]


def _index() -> torch.Tensor:
    return torch.tensor(SCATTER_INDEX)


def _updates(g: Graph, node: Any, src: Any, index: str, src_arg: Any) -> str:
    """Scatter's updates, of the index's shape: a number broadcast, a larger src cut to it (torch
    reads src only where the index has elements)."""
    index_shape = g.op("Shape", [index])
    if not isinstance(src, str):
        return _like(g, src, _dtype(node), index_shape)
    if tuple(_val(src_arg).shape) == tuple(_val(node.args[2]).shape):
        return src
    rank = _rank(node)
    return g.op("Slice", [src, g.ints([0] * rank), index_shape, g.ints(range(rank))])


@converts(
    "aten.scatter.src",
    "aten.scatter.value",
    "aten.scatter_add.default",
    cases=[
        call(lambda m, x: torch.scatter(x, 0, _index(), x[:2] * 2) + torch.scatter(x, 1, _index(), 1.5), (3, 4)),
        call(lambda m, x, s: torch.scatter_add(x, 0, torch.tensor([[0, 1, 0, 2], [0, 1, 2, 2]]), s), (3, 4), (2, 5)),
        call(
            lambda m, x: torch.scatter(x, 1, torch.tensor([[3, 1, 2, 0], [2, 0, 1, 3]]), x * 3), (2, 4), dtype="int64"
        ),
    ],
)
def scatter(g: Graph, node: Any) -> str:
    """ScatterElements; scatter_add's updates added to what they land on."""
    x, dim, index, src = _args(g, node, 4)
    reduction = "add" if _key(node) == "aten.scatter_add.default" else "none"
    updates = _updates(g, node, src, index, node.args[3])
    return g.op("ScatterElements", [x, index, updates], axis=int(dim), reduction=reduction)


SCATTER_REDUCTION = {"sum": "add", "mean": "add", "prod": "mul", "amax": "max", "amin": "min"}


def _identity(reduce: str, dtype: np.dtype) -> Any:
    """The value a reduction starts from (what an excluded self is replaced with)."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    low, high = (-np.inf, np.inf) if dtype.kind == "f" else (np.iinfo(dtype).min, np.iinfo(dtype).max)
    return low if reduce == "amax" else high


@converts(
    "aten.scatter_reduce.two",
    cases=[
        call(
            lambda m, x, s: _flat(
                *(
                    torch.scatter_reduce(x, 0, torch.tensor([[0, 1, 0, 2], [0, 1, 2, 2]]), s, r, include_self=k)
                    for r in ("sum", "prod", "mean", "amax", "amin")
                    for k in (True, False)
                )
            ),
            (3, 4),
            (2, 5),
        ),
        call(
            lambda m, x: torch.scatter_reduce(
                x, 1, torch.tensor([[0, 0, 2], [1, 0, 1]]), x, "mean", include_self=False
            ),
            (2, 3),
            dtype="int64",
        ),
    ],
)
def scatter_reduce(g: Graph, node: Any) -> str:
    """ScatterElements with the reduction; without include_self the indexed places start from the
    reduction's identity; a mean divides the sum by the count of values reduced at each place."""
    x, dim, index, src, reduce, include_self = _args(g, node, 6)
    dtype = _dtype(node)
    axis = int(dim)
    updates = _updates(g, node, src, index, node.args[3])
    index_shape = g.op("Shape", [index])
    base = x
    if not include_self:
        start = _like(g, _identity(reduce, dtype), dtype, index_shape)
        base = g.op("ScatterElements", [x, index, start], axis=axis, reduction="none")
    out = g.op("ScatterElements", [base, index, updates], axis=axis, reduction=SCATTER_REDUCTION[reduce])
    if reduce != "mean":
        return out
    ones = g.op("ConstantOfShape", [g.op("Shape", [x])], value=onnx_value(np.asarray(1, dtype)))
    if not include_self:
        ones = g.op("ScatterElements", [ones, index, _like(g, 0, dtype, index_shape)], axis=axis, reduction="none")
    count = g.op("ScatterElements", [ones, index, _like(g, 1, dtype, index_shape)], axis=axis, reduction="add")
    count = g.op("Max", [count, g.const(1, dtype)])
    return g.op("Div", [out, count]) if dtype.kind == "f" else _floor_div(g, out, count)


@converts(
    "aten.slice_scatter.default",
    cases=[
        call(lambda m, x: torch.slice_scatter(x, x[:, :2] * 2, 1, 1, 4, 2), (3, 5)),
        call(lambda m, x, s: torch.slice_scatter(x, s, 0, -3), (4, 2, 3), (3, 2, 3)),
    ],
)
def slice_scatter(g: Graph, node: Any) -> str:
    """ScatterElements of src along `dim` at start, start + step, ... (the index broadcast to src)."""
    x, src, dim, start, _end, step = _args(g, node, 6)
    rank = _rank(node)
    dim = int(dim) % rank
    start = 0 if start is None else start
    if not isinstance(start, str) and start < 0:
        start += _static_shape(node.args[0], "slice_scatter's input")[dim]
    count = g.op("Squeeze", [g.op("Shape", [src], start=dim, end=dim + 1), g.ints([0])])
    places = g.op("Range", [g.const(0, np.int64), count, g.const(1, np.int64)])
    places = g.op("Add", [g.op("Mul", [places, g.const(int(step), np.int64)]), g.ints([start])])
    places = g.op("Reshape", [places, g.ints([1] * dim + [-1] + [1] * (rank - dim - 1))])
    index = g.op("Expand", [places, g.op("Shape", [src])])
    return g.op("ScatterElements", [x, index, src], axis=dim, reduction="none")


@converts(
    "aten.masked_scatter.default",
    cases=[
        call(lambda m, x, s: torch.masked_scatter(x, x > 0, s), (3, 4), (4, 4)),
        call(lambda m, x, s: torch.masked_scatter(x, x[0] > 0, s), (3, 4), (12,)),
    ],
)
def masked_scatter(g: Graph, node: Any) -> str:
    """The source's elements, in order, at the mask's true places: the k-th true place takes the
    source's k-th element (k counted by a cumulative sum of the mask)."""
    x, mask, source = _args(g, node, 3)
    shape = g.op("Shape", [x])
    mask = g.op("Expand", [mask, shape])
    flat = g.op("Reshape", [g.op("Cast", [mask], to=onnx_type(torch.int64, "masked_scatter")), g.ints([-1])])
    place = g.op("Sub", [g.op("CumSum", [flat, g.const(0, np.int64)]), g.const(1, np.int64)])
    place = g.op("Max", [place, g.const(0, np.int64)])  # the places before the first true one read none
    picked = g.op("Gather", [g.op("Reshape", [source, g.ints([-1])]), place], axis=0)
    return g.op("Where", [mask, g.op("Reshape", [picked, shape]), x])


# -- elementwise -------------------------------------------------------------------------------
@converts(
    "aten.pow.Scalar",
    cases=[call(lambda m, x: torch.pow(2.5, x) + torch.pow(2, x), (2, 3))],
)
def pow_scalar(g: Graph, node: Any) -> str:
    base, exponent = _args(g, node, 2)
    dtype = _val(node).dtype
    return g.op("Pow", [_operand(g, base, None, dtype), _operand(g, exponent, node.args[1], dtype)])


def _floor_div(g: Graph, a: str, b: str, trunc: bool = False) -> str:
    """Integer division rounded down (or toward zero): a less its remainder is a multiple of b, so
    the quotient is exact whatever way Div rounds."""
    return g.op("Div", [g.op("Sub", [a, g.op("Mod", [a, b], fmod=int(trunc))]), b])


@converts(
    "aten.div.Tensor_mode",
    "aten.div.Scalar_mode",
    cases=[
        call(
            lambda m, x, y: _flat(
                torch.div(x * 4, y, rounding_mode="trunc"),
                torch.div(x * 4, y, rounding_mode="floor"),
                torch.div(x, 0.3, rounding_mode="floor"),
                aten.div.Scalar_mode(x, -0.3, rounding_mode="trunc"),
            ),
            (3, 4),
            (3, 4),
        ),
        call(
            lambda m, x, y: _flat(
                torch.div(x - 5, y + 1, rounding_mode="floor"),
                torch.div(x - 5, -y - 1, rounding_mode="trunc"),
                torch.div(x - 5, 3, rounding_mode="floor"),
                aten.div.Scalar_mode(x - 5, -3, rounding_mode="trunc"),
            ),
            (3, 4),
            (3, 4),
            dtype="int64",
        ),
        call(lambda m, x: torch.div(x, 4, rounding_mode=None).float(), (3, 4), dtype="int64"),
    ],
)
def div_mode(g: Graph, node: Any) -> str:
    """Division rounded toward zero ("trunc") or down ("floor"); without a mode, true division."""
    a, b, mode = _args(g, node, 3)
    dtype = _val(node).dtype
    a, b = (_operand(g, v, arg, dtype) for v, arg in zip((a, b), node.args))
    if mode is None:
        return g.op("Div", [a, b])
    if not _is_float(node):
        return _floor_div(g, a, b, trunc=mode == "trunc")
    q = g.op("Div", [a, b])
    if mode == "floor":
        return g.op("Floor", [q])
    return g.op("Where", [g.op("Less", [q, g.const(0, _dtype(node))]), g.op("Ceil", [q]), g.op("Floor", [q])])


BITWISE_SCALAR = {
    "aten.bitwise_and.Scalar": ("And", "BitwiseAnd"),
    "aten.bitwise_or.Scalar": ("Or", "BitwiseOr"),
    "aten.bitwise_xor.Scalar": ("Xor", "BitwiseXor"),
}


@converts(
    *BITWISE_SCALAR,
    cases=[
        call(lambda m, x: ((x & 6) | 9) ^ 5, (3, 4), dtype="int64"),
        call(lambda m, x: torch.where(((x > 0) & True) | ((x > 1) ^ True) | ((x < -1) | False), x, -x), (3, 4)),
    ],
)
def bitwise_scalar(g: Graph, node: Any) -> str:
    """And, Or, Xor on booleans; BitwiseAnd, BitwiseOr, BitwiseXor on integers."""
    x, other = _args(g, node, 2)
    logical, bitwise = BITWISE_SCALAR[_key(node)]
    is_bool = _val(node).dtype == torch.bool
    return g.op(logical if is_bool else bitwise, [x, g.const(other, _dtype(node))])


@converts(
    "aten.atan2.default",
    cases=[
        call(lambda m, y, x: torch.atan2(y, x), (4, 5), (4, 5)),
        call(
            lambda m, y, x: torch.atan2(torch.where(y.abs() > 0.7, y, 0.0), torch.where(x.abs() > 0.7, x, 0.0)),
            (6, 6),
            (6, 6),
        ),
        call(lambda m, y, x: torch.atan2(y - 5, x - 5), (3, 4), (3, 4), dtype="int64"),
    ],
)
def atan2(g: Graph, node: Any) -> str:
    """Atan(y / x), moved by +-pi to the left half-plane's quadrants (x < 0), and +-pi/2 or 0 on the
    y axis (x = 0)."""
    y, x = _args(g, node, 2)
    out = _val(node).dtype
    dtype = _dtype(node)
    y, x = (_operand(g, v, arg, out) for v, arg in zip((y, x), node.args))
    zero = g.const(0, dtype)
    x_zero = g.op("Equal", [x, zero])
    base = g.op("Atan", [g.op("Div", [y, g.op("Where", [x_zero, g.const(1, dtype), x])])])
    y_up = g.op("GreaterOrEqual", [y, zero])
    left = g.op("Add", [base, g.op("Where", [y_up, g.const(math.pi, dtype), g.const(-math.pi, dtype)])])
    base = g.op("Where", [g.op("Less", [x, zero]), left, base])
    on_axis = g.op("Where", [g.op("Greater", [y, zero]), g.const(math.pi / 2, dtype), g.const(-math.pi / 2, dtype)])
    on_axis = g.op("Where", [g.op("Equal", [y, zero]), zero, on_axis])
    return g.op("Where", [x_zero, on_axis, base])


@converts(
    "aten.copy.default",
    cases=[
        call(lambda m, x, y: aten.copy(x, y * 2), (2, 3), (2, 3)),
        call(lambda m, x, y: aten.copy(x, y[0]), (2, 3), (4, 3), dtype="int64"),
    ],
)
def copy(g: Graph, node: Any) -> str:
    """src in self's dtype, broadcast to self's shape."""
    x, src = _args(g, node, 2)
    src = _operand(g, src, node.args[1], _val(node).dtype)
    return g.op("Expand", [src, g.op("Shape", [x])])


@converts(
    "aten.diagonal.default",
    cases=[
        call(lambda m, x: torch.diagonal(x, 1) * 2, (3, 4)),
        call(lambda m, x: torch.diagonal(x, -1, 2, 0), (3, 2, 4)),
        call(lambda m, x: torch.diagonal(x, 0, -2, -1), (2, 4, 4)),
    ],
)
def diagonal(g: Graph, node: Any) -> str:
    """The two dims moved last and flattened, the diagonal gathered from them (a new last dim)."""
    x, offset, dim1, dim2 = _args(g, node, 4)
    shape = list(_val(node.args[0]).shape)
    rank = len(shape)
    first, second = int(dim1) % rank, int(dim2) % rank
    rows, cols = shape[first], shape[second]
    if not isinstance(rows, int) or not isinstance(cols, int):
        raise TorchImportError("the diagonal of symbolic dims is not supported")
    rest = [d for d in range(rank) if d not in (first, second)]
    moved = g.op("Transpose", [x], perm=[*rest, first, second])
    flat = g.op("Reshape", [moved, g.ints([0] * len(rest) + [rows * cols])])
    row, col = max(-int(offset), 0), max(int(offset), 0)
    places = [(row + i) * cols + col + i for i in range(max(min(rows - row, cols - col), 0))]
    return g.op("Gather", [flat, g.const(places, np.int64)], axis=-1)


# -- pooling -----------------------------------------------------------------------------------
@converts(
    "aten.max_pool3d_with_indices.default",
    cases=[
        call(lambda m, x: nn.functional.max_pool3d(x, 3, 2, 1), (1, 2, 5, 6, 6)),
        call(lambda m, x: nn.functional.max_pool3d(x, 2, return_indices=True)[1].float(), (2, 2, 4, 4, 6)),
    ],
)
def max_pool3d(g: Graph, node: Any) -> tuple:
    """The pooled values, and the indices (each maximum's place in its volume, (d * H + h) * W + w)
    when the graph reads them."""
    x, kernel, stride, padding, dilation, ceil_mode = _args(g, node, 6)
    window: dict[str, Any] = dict(
        kernel_shape=_pair(kernel, 3),
        strides=_pair(stride or kernel, 3),
        pads=_pair(padding, 3) * 2,
        dilations=_pair(dilation, 3),
        ceil_mode=int(bool(ceil_mode)),
    )
    if not reads_result(node, 1):
        return (g.op("MaxPool", [x], **window), None)
    y, flat = g.op("MaxPool", [x], outputs=2, **window)  # ONNX's indices count across N and C too
    volume = g.op("ReduceProd", [g.op("Shape", [x], start=2)], keepdims=1)
    return (y, g.op("Mod", [flat, volume]))


def _adaptive_windows(size: int, out: int) -> np.ndarray:
    """The matrix [out, size] averaging adaptive pooling's windows: floor(o * size / out) to
    ceil((o + 1) * size / out)."""
    matrix = np.zeros((out, size), np.float32)
    for o in range(out):
        start, end = (o * size) // out, -((-(o + 1) * size) // out)
        matrix[o, start:end] = 1.0 / (end - start)
    return matrix


def _avg_windows(size: int, out: int, kernel: int, stride: int, pad: int, include_pad: bool) -> np.ndarray:
    """The matrix [out, size] of average pooling along one axis, each window divided by its extent
    (PyTorch's: clipped to the padded input, or to the input without `include_pad`)."""
    matrix = np.zeros((out, size), np.float32)
    for o in range(out):
        start = o * stride - pad
        end = min(start + kernel, size + pad)
        extent = end - start
        start, end = max(start, 0), min(end, size)
        matrix[o, start:end] = 1.0 / (extent if include_pad else max(end - start, 1))
    return matrix


def _along(g: Graph, x: str, matrix: np.ndarray, axis: int, rank: int, dtype: np.dtype) -> str:
    """`matrix` [out, in] applied along `axis` of x (a MatMul on the last two dims)."""
    if axis == rank - 1:
        return g.op("MatMul", [x, g.const(matrix.T.astype(dtype))])
    if axis == rank - 2:
        return g.op("MatMul", [g.const(matrix.astype(dtype)), x])
    perm = list(range(rank))
    perm[axis], perm[rank - 2] = rank - 2, axis
    moved = g.op("MatMul", [g.const(matrix.astype(dtype)), g.op("Transpose", [x], perm=perm)])
    return g.op("Transpose", [moved], perm=perm)


@converts(
    "aten._adaptive_avg_pool3d.default",
    cases=[
        call(lambda m, x: nn.functional.adaptive_avg_pool3d(x, (2, 1, 3)), (1, 2, 4, 4, 6)),
        call(lambda m, x: nn.functional.adaptive_avg_pool3d(x, (2, 3, 4)), (2, 1, 5, 7, 6)),
    ],
)
def adaptive_avg_pool3d(g: Graph, node: Any) -> str:
    """AveragePool where the windows are whole; else the windows' averages as a MatMul per axis."""
    x, size = _args(g, node, 2)
    spatial = _static_shape(node.args[0], "adaptive average pooling's input")[2:]
    size = [int(s) for s in size]
    if all(d % o == 0 for d, o in zip(spatial, size)):
        kernel = [d // o for d, o in zip(spatial, size)]
        return g.op("AveragePool", [x], kernel_shape=kernel, strides=kernel)
    for axis, (d, o) in enumerate(zip(spatial, size)):
        x = _along(g, x, _adaptive_windows(d, o), axis + 2, 5, _dtype(node))
    return x


@converts(
    "aten.avg_pool2d_backward.default",
    cases=[
        call(
            lambda m, dy, x: aten.avg_pool2d_backward(dy, x, [2, 2], [2, 2], [0, 0], False, True, None),
            (1, 2, 3, 3),
            (1, 2, 6, 7),
        ),
        call(
            lambda m, dy, x: _flat(
                aten.avg_pool2d_backward(dy, x, [3, 3], [2, 2], [1, 1], False, False, None),
                aten.avg_pool2d_backward(dy, x, [3, 3], [2, 2], [1, 1], False, True, None),
                aten.avg_pool2d_backward(dy, x, [3, 3], [2, 2], [1, 1], False, True, 4),
            ),
            (2, 1, 3, 4),
            (2, 1, 5, 7),
        ),
        call(
            lambda m, dy, x: aten.avg_pool2d_backward(dy, x, [2, 3], [2, 2], [0, 1], True, True, None),
            (1, 1, 3, 4),
            (1, 1, 5, 6),
        ),
    ],
)
def avg_pool2d_backward(g: Graph, node: Any) -> str:
    """dx = P_h^T dy P_w: average pooling is separable (each window's divisor a product of its
    extents along H and along W), P the pooling matrix of an axis."""
    dy, _x, kernel, stride, padding, _ceil_mode, include_pad, divisor = _args(g, node, 8)
    sizes = _static_shape(node.args[1], "avg_pool2d_backward's input")[2:]
    outs = _static_shape(node.args[0], "avg_pool2d_backward's gradient")[2:]
    kernel, stride, padding = _pair(kernel), _pair(stride or kernel), _pair(padding)
    dtype = _dtype(node)
    by_extent = divisor is None
    rows, cols = (
        _avg_windows(sizes[i], outs[i], kernel[i], stride[i], padding[i], bool(include_pad)) for i in range(2)
    )
    if not by_extent:
        rows, cols = ((m > 0).astype(np.float32) for m in (rows, cols))
    dx = g.op("MatMul", [g.op("MatMul", [g.const(rows.T.astype(dtype)), dy]), g.const(cols.astype(dtype))])
    return dx if by_extent else g.op("Div", [dx, g.const(float(divisor), dtype)])


@converts(
    "aten._adaptive_avg_pool2d_backward.default",
    cases=[
        call(lambda m, dy, x: aten._adaptive_avg_pool2d_backward(dy, x), (1, 2, 2, 3), (1, 2, 4, 6)),
        call(lambda m, dy, x: aten._adaptive_avg_pool2d_backward(dy, x), (2, 1, 3, 4), (2, 1, 5, 7)),
    ],
)
def adaptive_avg_pool2d_backward(g: Graph, node: Any) -> str:
    """dx = P_h^T dy P_w, P the matrix of the adaptive windows' averages along an axis."""
    dy, _x = _args(g, node, 2)
    sizes = _static_shape(node.args[1], "adaptive average pooling's input")[2:]
    outs = _static_shape(node.args[0], "adaptive average pooling's gradient")[2:]
    dtype = _dtype(node)
    rows, cols = (_adaptive_windows(sizes[i], outs[i]) for i in range(2))
    return g.op("MatMul", [g.op("MatMul", [g.const(rows.T.astype(dtype)), dy]), g.const(cols.astype(dtype))])


# -- normalization and dropout -------------------------------------------------------------------
@converts(
    "aten._native_batch_norm_legit.no_stats",
    cases=[
        call(
            lambda m, x, w, b: _flat(*aten._native_batch_norm_legit.no_stats(x, w, b, True, 0.1, 1e-5)),
            (3, 4, 2, 5),
            (4,),
            (4,),
        ),
        call(lambda m, x: aten._native_batch_norm_legit.no_stats(x, None, None, True, 0.1, 1e-3)[0], (4, 3, 5)),
    ],
)
def batch_norm_no_stats(g: Graph, node: Any) -> tuple:
    """BatchNorm on the batch's statistics (no running statistics to move): the normalized x, the
    batch mean and 1/std per channel."""
    x, weight, bias, training, _momentum, eps = _args(g, node, 6)
    if not training:
        raise TorchImportError("_native_batch_norm_legit.no_stats with training=False has no statistics to use")
    rank = _rank(node.args[0])
    dtype = _dtype(node.args[0])
    axes = g.ints([0, *range(2, rank)])
    per_channel = g.ints([1, -1] + [1] * (rank - 2))
    mean = g.op("ReduceMean", [x, axes], keepdims=1)
    centred = g.op("Sub", [x, mean])
    var = g.op("ReduceMean", [g.op("Mul", [centred, centred]), axes], keepdims=1)
    rstd = g.op("Reciprocal", [g.op("Sqrt", [g.op("Add", [var, g.const(float(eps), dtype)])])])
    y = g.op("Mul", [centred, rstd])
    if weight is not None:
        y = g.op("Mul", [y, g.op("Reshape", [weight, per_channel])])
    if bias is not None:
        y = g.op("Add", [y, g.op("Reshape", [bias, per_channel])])
    channels = g.ints([-1])
    return (y, g.op("Reshape", [mean, channels]), g.op("Reshape", [rstd, channels]))


@converts(
    "aten.native_dropout.default",
    cases=[
        call(lambda m, x: _flat(*(t.float() for t in aten.native_dropout(x, 0.5, False))), (2, 3)),
        call(lambda m, x: _flat(*(t.float() for t in aten.native_dropout(x, 0.0, True))), (2, 3)),
        call(lambda m, x: _flat(*(t.float() for t in aten.native_dropout(x, 1.0, True))), (2, 3)),
    ],
)
def native_dropout(g: Graph, node: Any) -> tuple:
    """Dropout that keeps everything (not training, or p = 0: x and an all-true mask) or nothing
    (p = 1: zeros and an all-false mask); random dropping is refused (ge's graphs are deterministic)."""
    x, p, train = _args(g, node, 3)
    shape = g.op("Shape", [x])
    p = float(p)
    if train is False or p == 0.0:
        return (g.op("Identity", [x]), g.op("ConstantOfShape", [shape], value=onnx_value(np.asarray(True))))
    if p == 1.0:
        zeros = g.op("ConstantOfShape", [shape], value=onnx_value(np.asarray(0, _dtype(node.args[0]))))
        return (zeros, g.op("ConstantOfShape", [shape], value=onnx_value(np.asarray(False))))
    raise TorchImportError(f"dropout with p={p} in training: random numbers, and ge's graphs are deterministic")


# -- creation ----------------------------------------------------------------------------------
@converts(
    "aten.empty.memory_format",
    "aten.empty_strided.default",
    cases=[
        call(
            lambda m, x: x + torch.empty(3, 4).zero_() + aten.empty.memory_format([4], dtype=torch.int64).zero_(),
            (3, 4),
        ),
        call(lambda m, x: x + aten.empty_strided([3, 4], [1, 3]).fill_(2.0), (3, 4)),
    ],
)
def empty(g: Graph, node: Any) -> str:
    """A tensor of the shape and dtype whose values are not read: zeros (ConstantOfShape)."""
    (size,) = _args(g, node, 1)
    return g.op("ConstantOfShape", [g.ints(size)], value=onnx_value(np.asarray(0, _dtype(node))))


@converts(
    "aten.grid_sampler_2d.default",
    cases=[
        call(
            lambda m, x, grid: _flat(
                *(
                    nn.functional.grid_sample(x, torch.tanh(grid) * 1.2, mode, padding, align_corners=align)
                    for mode in ("bilinear", "nearest", "bicubic")
                    for padding in ("zeros", "border", "reflection")
                    for align in (False, True)
                )
            ),
            (2, 3, 4, 5),
            (2, 3, 6, 2),
        ),
    ],
)
def grid_sampler_2d(g: Graph, node: Any) -> str:
    x, grid, mode, padding, align_corners = _args(g, node, 5)
    return g.op(
        "GridSample",
        [x, grid],
        mode=("linear", "nearest", "cubic")[int(mode)],
        padding_mode=("zeros", "border", "reflection")[int(padding)],
        align_corners=int(bool(align_corners)),
    )


# -- distances ---------------------------------------------------------------------------------
def _norm(g: Graph, diff: str, p: float, dtype: np.dtype) -> str:
    """The p-norm over the last axis of the differences `diff`."""
    axes = g.ints([-1])
    if p == 0:
        nonzero = g.op("Cast", [g.op("Not", [g.op("Equal", [diff, g.const(0, dtype)])])], to=onnx_type(dtype, "cdist"))
        return g.op("ReduceSum", [nonzero, axes], keepdims=0)
    size = g.op("Abs", [diff])
    if p == 1:
        return g.op("ReduceSum", [size, axes], keepdims=0)
    if p == 2:
        return g.op("Sqrt", [g.op("ReduceSum", [g.op("Mul", [diff, diff]), axes], keepdims=0)])
    if math.isinf(p):
        return g.op("ReduceMax", [size, axes], keepdims=0)
    powered = g.op("ReduceSum", [g.op("Pow", [size, g.const(p, dtype)]), axes], keepdims=0)
    return g.op("Pow", [powered, g.const(1.0 / p, dtype)])


@converts(
    "aten._cdist_forward.default",
    cases=[
        call(
            lambda m, a, b: _flat(*(torch.cdist(a, b, p) for p in (0.0, 1.0, 2.0, 3.0, math.inf))),
            (2, 4, 3),
            (2, 5, 3),
        ),
        call(
            lambda m, a, b: _flat(aten._cdist_forward(a, b, 2.0, None), aten._cdist_forward(a, b, 2.0, 2)),
            (30, 4),
            (6, 4),
        ),
    ],
)
def cdist(g: Graph, node: Any) -> str:
    """The p-norms of all row differences; for p = 2 where PyTorch computes it by a matmul
    (more than 25 rows, or compute_mode 1), sqrt(|a|^2 + |b|^2 - 2 a b^T) clamped at 0 as PyTorch."""
    a, b, p, mode = _args(g, node, 4)
    dtype = _dtype(node)
    rows, others = _val(node.args[0]).shape[-2], _val(node.args[1]).shape[-2]
    by_matmul = p == 2 and (mode == 1 or ((mode is None or mode == 0) and (rows > 25 or others > 25)))
    if not by_matmul:
        diff = g.op("Sub", [g.op("Unsqueeze", [a, g.ints([-2])]), g.op("Unsqueeze", [b, g.ints([-3])])])
        return _norm(g, diff, float(p), dtype)
    rank = _rank(node)
    swap = [*range(rank - 2), rank - 1, rank - 2]
    a2 = g.op("ReduceSum", [g.op("Mul", [a, a]), g.ints([-1])], keepdims=1)
    b2 = g.op("Transpose", [g.op("ReduceSum", [g.op("Mul", [b, b]), g.ints([-1])], keepdims=1)], perm=swap)
    ab = g.op("MatMul", [a, g.op("Transpose", [b], perm=swap)])
    squared = g.op("Sub", [g.op("Add", [a2, b2]), g.op("Mul", [ab, g.const(2, dtype)])])
    return g.op("Sqrt", [g.op("Max", [squared, g.const(0, dtype)])])


@converts(
    "aten._pdist_forward.default",
    cases=[call(lambda m, x: _flat(*(nn.functional.pdist(x, p) for p in (1.0, 2.0, 0.5, math.inf))), (5, 3))],
)
def pdist(g: Graph, node: Any) -> str:
    """The p-norms of the differences of each pair of rows i < j, in row-major order."""
    x, p = _args(g, node, 2)
    (rows, _cols) = _static_shape(node.args[0], "pdist's input")
    diff = g.op("Sub", [g.op("Unsqueeze", [x, g.ints([1])]), g.op("Unsqueeze", [x, g.ints([0])])])
    pairs = g.op("Reshape", [_norm(g, diff, float(p), _dtype(node)), g.ints([-1])])
    upper = [i * rows + j for i in range(rows) for j in range(i + 1, rows)]
    return g.op("Gather", [pairs, g.const(upper, np.int64)], axis=0)


@converts(
    "aten._embedding_bag.default",
    "aten._embedding_bag_forward_only.default",
    cases=[
        call(
            lambda m, w: _flat(
                *(
                    aten._embedding_bag(w, torch.tensor([1, 2, 0, 4, 4, 3]), torch.tensor([0, 2, 2]), False, mode)[0]
                    for mode in (0, 1, 2)
                ),
                aten._embedding_bag(
                    w, torch.tensor([1, 2, 0, 4]), torch.tensor([0, 1, 4]), False, 0, False, w[:4, 0], True
                )[0],
                aten._embedding_bag(w, torch.tensor([1, 2, 0, 4]), torch.tensor([0, 3]), False, 1, padding_idx=2)[0],
            ),
            (5, 3),
        ),
        call(
            lambda m, w: nn.functional.embedding_bag(torch.tensor([[1, 2, 0], [4, 4, 3]]), w, mode="max"),
            (5, 3),
        ),
    ],
)
def embedding_bag(g: Graph, node: Any) -> tuple:
    """The bags' sums, means or maxima (an empty bag's are zeros): the gathered rows reduced under
    a [bags, indices] membership mask (offsets[b] <= i < offsets[b + 1], the padding index left out).
    The bookkeeping results (offset2bag, bag sizes, max indices) are not given."""
    weight, indices, offsets, _scale, mode, _sparse, per_sample, include_last, padding_idx = _args(g, node, 9)
    count = _static_shape(node.args[1], "embedding_bag's indices")
    if len(count) != 1:
        raise TorchImportError("embedding_bag with indices of rank 2 and no offsets is not supported")
    (n,) = count
    bags = _static_shape(node.args[2], "embedding_bag's offsets")[0] - int(bool(include_last))
    dtype = _dtype(node.args[0])
    int64 = onnx_type(torch.int64, "embedding_bag")
    offsets = g.op("Cast", [offsets], to=int64)
    starts = g.op("Slice", [offsets, g.ints([0]), g.ints([bags])])
    ends = (
        g.op("Slice", [offsets, g.ints([1]), g.ints([bags + 1])])
        if include_last
        else g.op("Concat", [g.op("Slice", [offsets, g.ints([1]), g.ints([bags])]), g.ints([n])], axis=0)
    )
    place = g.const(np.arange(n, dtype=np.int64)[None, :])
    column = g.ints([1])
    member = g.op(
        "And",
        [
            g.op("LessOrEqual", [g.op("Unsqueeze", [starts, column]), place]),
            g.op("Less", [place, g.op("Unsqueeze", [ends, column])]),
        ],
    )
    if padding_idx is not None and int(padding_idx) >= 0:
        kept = g.op("Not", [g.op("Equal", [g.op("Cast", [indices], to=int64), g.const(int(padding_idx), np.int64)])])
        member = g.op("And", [member, g.op("Unsqueeze", [kept, g.ints([0])])])
    rows = g.op("Gather", [weight, indices], axis=0)
    if per_sample is not None:
        rows = g.op("Mul", [rows, g.op("Unsqueeze", [per_sample, column])])
    as_float = g.op("Cast", [member], to=onnx_type(_val(node.args[0]).dtype, "embedding_bag"))
    sizes = g.op("ReduceSum", [as_float, column], keepdims=1)
    if int(mode) == 2:
        spread = g.op(
            "Where",
            [g.op("Unsqueeze", [member, g.ints([2])]), g.op("Unsqueeze", [rows, g.ints([0])]), g.const(-np.inf, dtype)],
        )
        largest = g.op("ReduceMax", [spread, column], keepdims=0)
        out = g.op("Where", [g.op("Greater", [sizes, g.const(0, dtype)]), largest, g.const(0, dtype)])
    else:
        out = g.op("MatMul", [as_float, rows])
        if int(mode) == 1:
            out = g.op("Div", [out, g.op("Max", [sizes, g.const(1, dtype)])])
    return (out, None, None, None)
