"""Kernels of the indexing ops (ge_dialects/ge/indexing.py): gathers and scatters by index tensors,
Tile, Trilu, OneHot and EyeLike.

Result shapes come from the ops' shared shape rules, so a kernel cannot disagree with the types the
compiler inferred. An index out of range is the input's fault: a DataError, which the interpreter
reports in one line naming the op. Scatters apply their updates in order (the last of two writes to
one position wins, as in onnxruntime); additions and products of narrow floats accumulate in f32
and round once, as the reductions do.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ge.ge_dialects import ge
from ge.ge_dialects.ge.indexing import (
    check_element_indices,
    check_same_shape,
    gather_nd_dims,
    one_hot_dims,
    scatter_nd_updates,
    tile_dims,
)
from ge.ge_dialects.ge.tensor_ops import normalize_axes
from ge.ge_dialects.ge.types import numpy_dtype
from ge.interpreter.kernels import DataError, check_alloc
from ge.interpreter.kernels.checked import kernel_impl

_COMBINE = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


def _wrapped(indices: np.ndarray, size: int, what: str) -> np.ndarray:
    """The indices as i64, negative ones counted from the end; one outside [-size, size) is refused."""
    flat = np.asarray(indices, dtype=np.int64)
    bad = flat[(flat < -size) | (flat >= size)]
    if bad.size:
        raise DataError(f"index {int(bad.reshape(-1)[0])} is out of range for {what} of size {size}")
    return np.where(flat < 0, flat + size, flat)


def _element_positions(data: np.ndarray, indices: np.ndarray, axis: int) -> tuple[np.ndarray, ...]:
    """GatherElements' and ScatterElements' positions in the data: the index along `axis`, the
    indices' own position along every other axis (broadcast index arrays, one per axis)."""
    check_element_indices(data.shape, indices.shape, axis)
    index = _wrapped(indices, data.shape[axis], f"axis {axis}")
    grid = np.ogrid[tuple(slice(0, n) for n in indices.shape)]
    return tuple(index if i == axis else g for i, g in enumerate(grid))


def _nd_positions(data: np.ndarray, indices: np.ndarray, batch: int) -> tuple[np.ndarray, ...]:
    """GatherND's and ScatterND's positions in the data flattened to (batches, *data.shape[batch:]):
    each index tuple with its batch's number in front, as (batches, tuples) index arrays."""
    count, k = math.prod(data.shape[:batch]), indices.shape[-1]
    tuples = np.asarray(indices).reshape(count, math.prod(indices.shape[batch:-1]), k)
    columns = [_wrapped(tuples[..., j], data.shape[batch + j], f"dimension {batch + j}") for j in range(k)]
    return (np.arange(count).reshape(count, 1), *columns)


def _wide(dtype: np.dtype) -> np.dtype:
    """Where narrow floats add and multiply: f32 (integers, bools and wider floats in their own type)."""
    return np.dtype(np.float32) if dtype.kind not in "iub" and dtype.itemsize < 4 else dtype


def _scatter(op, data: np.ndarray, positions: tuple[np.ndarray, ...], updates: np.ndarray) -> np.ndarray:
    """A copy of `data` with `updates` written or combined at `positions` (index arrays)."""
    reduction = op.p("reduction")
    if reduction == "none":
        out = data.copy()
        out[positions] = updates
        return out
    wide = _wide(data.dtype) if reduction in ("add", "mul") else data.dtype
    out = data.astype(wide, copy=True)
    _COMBINE[reduction].at(out, positions, updates.astype(wide, copy=False))
    return out.astype(data.dtype, copy=False)


def gather_elements(op, ins):
    data, indices = ins["data"], ins["indices"]
    axis = normalize_axes([op.p("axis")], data.ndim)[0]
    return data[_element_positions(data, indices, axis)]


def scatter_elements(op, ins):
    data, indices, updates = ins["data"], ins["indices"], ins["updates"]
    axis = normalize_axes([op.p("axis")], data.ndim)[0]
    check_same_shape(updates.shape, indices.shape)
    return _scatter(op, data, _element_positions(data, indices, axis), updates)


def gather_nd(op, ins):
    data, indices = ins["data"], ins["indices"]
    batch = op.p("batch_dims")
    dims = gather_nd_dims(data.shape, indices.shape, batch)
    check_alloc(dims, data.dtype)
    flat = data.reshape(math.prod(data.shape[:batch]), *data.shape[batch:])
    return flat[_nd_positions(data, indices, batch)].reshape(dims)


def scatter_nd(op, ins):
    data, indices, updates = ins["data"], ins["indices"], ins["updates"]
    check_same_shape(updates.shape, scatter_nd_updates(data.shape, indices.shape))
    rows = updates.reshape(1, math.prod(indices.shape[:-1]), *data.shape[indices.shape[-1] :])
    scattered = _scatter(op, data.reshape(1, *data.shape), _nd_positions(data, indices, 0), rows)
    return scattered.reshape(data.shape)


def tile(op, ins):
    x, repeats = ins["input"], [int(r) for r in np.asarray(ins["repeats"]).reshape(-1)]
    dims = tile_dims(x.shape, repeats)
    check_alloc(dims, x.dtype)
    return np.tile(x, repeats).reshape(dims)


def trilu(op, ins):
    x = ins["input"]
    k = 0 if ins["k"] is None else int(np.asarray(ins["k"]).reshape(-1)[0])
    rows, cols = x.shape[-2:]
    k = min(max(k, -rows - 1), cols + 1)  # beyond the matrix every k keeps all or nothing
    return np.triu(x, k) if op.p("upper") else np.tril(x, k)


def one_hot(op, ins):
    indices, values = ins["indices"], ins["values"]
    depth = np.asarray(ins["depth"]).reshape(-1)[0]
    if not np.isfinite(depth):
        raise DataError(f"depth {depth} is not finite")
    depth = int(depth)  # ONNX casts a float depth to i64
    if depth < 0:
        raise DataError(f"depth {depth} is negative")
    dims = one_hot_dims(indices.shape, depth, op.p("axis"))
    check_alloc(dims, values.dtype)
    axis = normalize_axes([op.p("axis")], indices.ndim + 1)[0]
    with np.errstate(invalid="ignore"):
        index = np.asarray(indices).astype(np.int64)  # ONNX casts float indices to i64 (truncating)
    index = np.where(index < 0, index + depth, index)
    hot = np.expand_dims(index, axis) == np.arange(depth).reshape([-1 if i == axis else 1 for i in range(len(dims))])
    off, on = np.asarray(values).reshape(-1)[:2]
    return np.where(hot, on, off).astype(values.dtype)


def eye_like(op, ins):
    rows, cols = ins["input"].shape
    dtype = numpy_dtype(op.results[0].type.element_type)
    k = min(max(op.p("k"), -rows), cols)  # beyond the matrix every k gives zeros
    return np.eye(rows, cols, k=k, dtype=dtype)


@register_impls
class IndexingFunctions(InterpreterFunctions):
    """The interpreter implementations of the indexing ops: each runs its kernel above."""

    run_gather_elements = impl(ge.GatherElementsOp)(kernel_impl(gather_elements))
    run_gather_nd = impl(ge.GatherNDOp)(kernel_impl(gather_nd))
    run_scatter_elements = impl(ge.ScatterElementsOp)(kernel_impl(scatter_elements))
    run_scatter_nd = impl(ge.ScatterNDOp)(kernel_impl(scatter_nd))
    run_tile = impl(ge.TileOp)(kernel_impl(tile))
    run_trilu = impl(ge.TriluOp)(kernel_impl(trilu))
    run_one_hot = impl(ge.OneHotOp)(kernel_impl(one_hot))
    run_eye_like = impl(ge.EyeLikeOp)(kernel_impl(eye_like))
