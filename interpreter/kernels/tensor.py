"""Kernels of the data-movement and shape ops.

Result shapes come from the same shape rules the ops' shape functions use (`tensor_ops`), so a
kernel cannot disagree with the types the compiler inferred.
"""

from __future__ import annotations

import numpy as np

from ge_dialects import ge
from ge_dialects.ge.tensor_ops import (
    flatten_dims,
    normalize_axes,
    pad_widths,
    reduced_dims,
    reshape_dims,
    shape_range,
    slice_bounds,
    split_sizes,
    squeezed_dims,
    unsqueezed_dims,
)
from ge_dialects.ge.types import numpy_dtype
from interpreter.kernels import kernel


def _ints(values: np.ndarray | None) -> list[int] | None:
    return None if values is None else [int(v) for v in np.asarray(values).reshape(-1)]


def _result_dtype(op) -> np.dtype:
    return numpy_dtype(op.results[0].type.element_type)


@kernel(ge.TransposeOp)
def transpose(op, ins):
    x = ins["data"]
    return np.transpose(x, ge.TransposeOp.permutation(op.p("perm"), x.ndim))


@kernel(ge.ReshapeOp)
def reshape(op, ins):
    x = ins["data"]
    return x.reshape(reshape_dims(x.shape, _ints(ins["shape"]), bool(op.p("allowzero"))))


@kernel(ge.FlattenOp)
def flatten(op, ins):
    x = ins["input"]
    return x.reshape(flatten_dims(x.shape, op.p("axis")))


@kernel(ge.ConcatOp)
def concat(op, ins):
    return np.concatenate(ins["inputs"], axis=op.p("axis"))


@kernel(ge.SplitOp)
def split(op, ins):
    x = ins["input"]
    axis = op.p("axis")
    sizes = split_sizes(x.shape[axis], _ints(ins["split"]), op.p("num_outputs"), len(op.results))
    return tuple(np.split(x, np.cumsum(sizes)[:-1], axis=axis))


@kernel(ge.SliceOp)
def slice_(op, ins):
    x = ins["data"]
    bounds = slice_bounds(
        x.shape, _ints(ins["starts"]), _ints(ins["ends"]), _ints(ins["axes"]), _ints(ins["steps"])
    )
    index = [slice(None)] * x.ndim
    for axis, (start, end, step) in bounds.items():
        # A negative-step end of -1 means "through element 0", which Python spells None.
        index[axis] = slice(start, end if end >= 0 else None, step)
    return x[tuple(index)]


@kernel(ge.GatherOp)
def gather(op, ins):
    data, indices = ins["data"], ins["indices"]
    axis = normalize_axes([op.p("axis")], data.ndim)[0]
    indices = np.where(indices < 0, indices + data.shape[axis], indices)
    return np.take(data, indices, axis=axis)


@kernel(ge.UnsqueezeOp)
def unsqueeze(op, ins):
    x = ins["data"]
    return x.reshape(unsqueezed_dims(x.shape, _ints(ins["axes"])))


@kernel(ge.SqueezeOp)
def squeeze(op, ins):
    x = ins["data"]
    return x.reshape(squeezed_dims(x.shape, _ints(ins["axes"])))


def _accumulation_dtype(dtype: np.dtype) -> np.dtype:
    """Narrow floats sum in f32; integers average in f64 and truncate toward zero like C."""
    if dtype.kind in "iub":
        return np.dtype(np.float64)
    return np.dtype(np.float32) if dtype.itemsize < 4 else dtype


@kernel(ge.ReduceMeanOp)
def reduce_mean(op, ins):
    x = ins["data"]
    axes = _ints(ins["axes"])
    if not axes and op.p("noop_with_empty_axes"):
        return x.copy()
    axes = tuple(normalize_axes(axes, x.ndim)) if axes else tuple(range(x.ndim))
    count = int(np.prod([x.shape[a] for a in axes]))
    total = np.sum(x, axis=axes, dtype=_accumulation_dtype(x.dtype))
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = total / total.dtype.type(count)  # an empty reduction gives NaN
    return np.asarray(mean, dtype=x.dtype).reshape(reduced_dims(x.shape, axes, bool(op.p("keepdims")), False))


@kernel(ge.CastOp)
def cast(op, ins):
    # numpy (and ml_dtypes for bf16) convert as C does: floats truncate toward zero, ints wrap.
    with np.errstate(invalid="ignore", over="ignore"):
        return ins["input"].astype(_result_dtype(op))


@kernel(ge.WhereOp)
def where(op, ins):
    return np.where(ins["condition"], ins["X"], ins["Y"])


@kernel(ge.ExpandOp)
def expand(op, ins):
    x = ins["input"]
    shape = np.broadcast_shapes(x.shape, tuple(_ints(ins["shape"])))
    return np.broadcast_to(x, shape).copy()


@kernel(ge.ShapeOp)
def shape(op, ins):
    dims = ins["data"].shape
    start, end = shape_range(len(dims), op.p("start"), op.p("end"))
    return np.array(dims[start:end], dtype=np.int64)


@kernel(ge.ConstantOfShapeOp)
def constant_of_shape(op, ins):
    return np.full(_ints(ins["input"]), op.fill_value(), dtype=_result_dtype(op))


@kernel(ge.PadOp)
def pad(op, ins):
    x = ins["data"]
    widths = pad_widths(x.ndim, _ints(ins["pads"]), _ints(ins["axes"]))
    # Negative pads crop first; what remains is padded by numpy in the op's mode.
    crop = tuple(slice(-min(lo, 0), size + min(hi, 0)) for size, (lo, hi) in zip(x.shape, widths))
    x = x[crop]
    grow = [(max(lo, 0), max(hi, 0)) for lo, hi in widths]
    mode = op.p("mode")
    if mode == "constant":
        fill = ins["constant_value"]
        value = x.dtype.type(0) if fill is None or np.size(fill) == 0 else np.asarray(fill).reshape(-1)[0]
        return np.pad(x, grow, mode="constant", constant_values=value)
    return np.pad(x, grow, mode=mode)  # reflect, edge and wrap mean what numpy means by them


@kernel(ge.RangeOp)
def range_(op, ins):
    start, limit, delta = (ins[n].item() for n in ("start", "limit", "delta"))
    dtype = ins["start"].dtype
    n = ge.range_length(start, limit, delta)
    return (start + np.arange(n, dtype=np.float64 if dtype.kind == "f" else np.int64) * delta).astype(dtype)
