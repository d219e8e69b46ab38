"""Kernels of the data-movement and shape ops.

Result shapes come from the same shape rules the ops' shape functions use (`tensor_ops`), so a
kernel cannot disagree with the types the compiler inferred.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ge.ge_dialects import ge
from ge.ge_dialects.ge.tensor_ops import (
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
from ge.ge_dialects.ge.types import FLOAT8_TYPES, NARROW_INT_TYPES, NARROW_TYPES, f8E8M0FNU, numpy_dtype
from ge.interpreter.kernels import AllocationError, DataError, check_alloc
from ge.interpreter.kernels.checked import kernel_impl

_NARROW_DTYPES = {numpy_dtype(t) for t in NARROW_TYPES}
_NARROW_INT_DTYPES = {numpy_dtype(t) for t in NARROW_INT_TYPES}


def _ints(values: np.ndarray | None) -> list[int] | None:
    return None if values is None else [int(v) for v in np.asarray(values).reshape(-1)]


def _required_ints(values: np.ndarray | None) -> list[int]:
    """The integers of an operand the op's verifier makes mandatory (never None here)."""
    ints = _ints(values)
    assert ints is not None
    return ints


def _result_dtype(op) -> np.dtype:
    return numpy_dtype(op.results[0].type.element_type)


def transpose(op, ins):
    x = ins["data"]
    return np.transpose(x, ge.TransposeOp.permutation(op.p("perm"), x.ndim))


def reshape(op, ins):
    x = ins["data"]
    return x.reshape(reshape_dims(x.shape, _required_ints(ins["shape"]), bool(op.p("allowzero"))))


def flatten(op, ins):
    x = ins["input"]
    return x.reshape(flatten_dims(x.shape, op.p("axis")))


def concat(op, ins):
    return np.concatenate(ins["inputs"], axis=op.p("axis"))


def split(op, ins):
    x = ins["input"]
    axis = op.p("axis")
    sizes = split_sizes(x.shape[axis], _ints(ins["split"]), op.p("num_outputs"), len(op.results))
    known = [size for size in sizes if size is not None]
    assert len(known) == len(sizes)  # the dimension is an array's, so split_sizes gave every size
    return tuple(np.split(x, np.cumsum(known)[:-1], axis=axis))


def slice_(op, ins):
    x = ins["data"]
    bounds = slice_bounds(
        x.shape, _required_ints(ins["starts"]), _required_ints(ins["ends"]), _ints(ins["axes"]), _ints(ins["steps"])
    )
    index = [slice(None)] * x.ndim
    for axis, bound in bounds.items():
        assert bound is not None  # an array's axis sizes are known, so every axis has bounds
        start, end, step = bound
        # A negative-step end of -1 means "through element 0", which Python spells None.
        index[axis] = slice(start, end if end >= 0 else None, step)
    return x[tuple(index)]


def gather(op, ins):
    data, indices = ins["data"], ins["indices"]
    axis = normalize_axes([op.p("axis")], data.ndim)[0]
    check_alloc([*data.shape[:axis], *np.shape(indices), *data.shape[axis + 1 :]], data.dtype)
    n = data.shape[axis]
    flat = np.asarray(indices).ravel()
    bad = flat[(flat < -n) | (flat >= n)]
    if bad.size:
        raise DataError(f"index {bad[0]} is out of range for axis {axis} of size {n}")
    indices = np.where(indices < 0, indices + n, indices)
    return np.take(data, indices, axis=axis)


def unsqueeze(op, ins):
    x = ins["data"]
    return x.reshape(unsqueezed_dims(x.shape, _required_ints(ins["axes"])))


def squeeze(op, ins):
    x = ins["data"]
    return x.reshape(squeezed_dims(x.shape, _ints(ins["axes"])))


def _accumulation_dtype(dtype: np.dtype) -> np.dtype:
    """Narrow floats sum in f32; integers average in f64 and truncate toward zero like C."""
    if dtype.kind in "iub":
        return np.dtype(np.float64)
    return np.dtype(np.float32) if dtype.itemsize < 4 else dtype


def _reduce(op, ins, mean: bool):
    x = ins["data"]
    axes = _ints(ins["axes"])
    if not axes and op.p("noop_with_empty_axes"):
        return x.copy()
    reduced = tuple(normalize_axes(axes, x.ndim)) if axes else tuple(range(x.ndim))
    total = np.sum(x, axis=reduced, dtype=_accumulation_dtype(x.dtype))
    if mean:
        count = int(np.prod([x.shape[a] for a in reduced]))
        with np.errstate(invalid="ignore", divide="ignore"):
            total = total / total.dtype.type(count)  # an empty reduction gives NaN
    return np.asarray(total, dtype=x.dtype).reshape(reduced_dims(x.shape, reduced, bool(op.p("keepdims")), False))


def reduce_mean(op, ins):
    return _reduce(op, ins, mean=True)


def reduce_sum(op, ins):
    return _reduce(op, ins, mean=False)


def cast(op, ins):
    # numpy (and ml_dtypes for bf16 and the narrow types) convert as C does: floats truncate toward
    # zero, ints wrap (keep the low bits), floats round to nearest even and overflow to inf, or to
    # NaN in formats without inf (f8E4M3FN, the FNUZ ones), or to the largest value (f4E2M1FN).
    x = ins["input"]
    target = op.results[0].type.element_type
    dtype = _result_dtype(op)
    if x.dtype == dtype:
        return x.copy()
    with np.errstate(invalid="ignore", over="ignore"):
        if x.dtype in _NARROW_DTYPES and dtype in _NARROW_DTYPES:
            # ml_dtypes has no direct conversion between most pairs; widening first is exact.
            x = x.astype(np.int64 if x.dtype in _NARROW_INT_DTYPES else np.float32)
        if target == f8E8M0FNU:
            return _to_e8m0(x, bool(op.p("saturate")), op.p("round_mode"))
        if target in FLOAT8_TYPES and op.p("saturate"):
            # Out-of-range values and infinities clamp to the largest finite value; NaN stays NaN.
            # float32 (float64 for float64 and integers) holds every input exactly, so clamping
            # there and then rounding once is the same as rounding the input itself.
            if x.dtype not in (np.float32, np.float64):
                x = x.astype(np.float64 if x.dtype.kind in "iub" else np.float32)
            limit = float(ml_dtypes.finfo(dtype).max)
            x = np.clip(x, -limit, limit)
        return x.astype(dtype)


def _to_e8m0(x: np.ndarray, saturate: bool, round_mode: str) -> np.ndarray:
    """Rounds to a power of two, ONNX's conversion to f8E8M0FNU (the exponent of the float32 input).

    The biased float32 exponent is the E8M0 code; the fraction decides whether it goes one up:
    `up` for any nonzero fraction, `nearest` when it is at least one half (beyond one half for
    float32 subnormals), `down` never. (So, as in the reference, `up` takes every float32 subnormal,
    2^-127 included, to 2^-126.) With `saturate` the largest code (2^127) does not go up into
    NaN. NaN and infinities become NaN; the sign is ignored (negative inputs are undefined in ONNX).
    The ONNX reference (`onnx.numpy_helper.to_float8e8m0`) is matched bit for bit.
    """
    bits = np.asarray(x.astype(np.float32)).view(np.uint32)
    exponent = (bits >> np.uint32(23)) & np.uint32(0xFF)
    fraction = bits & np.uint32(0x7FFFFF)
    if round_mode == "up":
        bump = fraction != 0
    elif round_mode == "nearest":
        at_least_half = (fraction & np.uint32(0x400000)) != 0
        bump = at_least_half & (((fraction & np.uint32(0x3FFFFF)) != 0) | (exponent != 0))
    else:
        bump = np.zeros(bits.shape, dtype=bool)
    if saturate:
        bump &= exponent != 0xFE
    code = np.where(exponent == 0xFF, 0xFF, exponent + bump.astype(np.uint32))
    return code.astype(np.uint8).view(ml_dtypes.float8_e8m0fnu)


def where(op, ins):
    return np.where(ins["condition"], ins["X"], ins["Y"])


def expand(op, ins):
    x = ins["input"]
    wanted = _required_ints(ins["shape"])
    check_alloc([max(d, 0) for d in wanted], x.dtype)  # broadcast_shapes itself would allocate nothing
    shape = np.broadcast_shapes(x.shape, tuple(wanted))
    check_alloc(shape, x.dtype)
    return np.broadcast_to(x, shape).copy()


def shape(op, ins):
    dims = ins["data"].shape
    start, end = shape_range(len(dims), op.p("start"), op.p("end"))
    return np.array(dims[start:end], dtype=np.int64)


def constant_of_shape(op, ins):
    shape = _required_ints(ins["input"])
    check_alloc(shape, _result_dtype(op))  # the shape is data: a negative or huge one is refused here
    return np.full(shape, op.fill_value(), dtype=_result_dtype(op))


def pad(op, ins):
    x = ins["data"]
    widths = pad_widths(x.ndim, _required_ints(ins["pads"]), _ints(ins["axes"]))
    # Negative pads crop first; what remains is padded by numpy in the op's mode.
    crop = tuple(slice(-min(lo, 0), size + min(hi, 0)) for size, (lo, hi) in zip(x.shape, widths))
    x = x[crop]
    grow = [(max(lo, 0), max(hi, 0)) for lo, hi in widths]
    check_alloc([d + lo + hi for d, (lo, hi) in zip(x.shape, grow)], x.dtype)
    mode = op.p("mode")
    if mode == "constant":
        fill = ins["constant_value"]
        value = x.dtype.type(0) if fill is None or np.size(fill) == 0 else np.asarray(fill).reshape(-1)[0]
        return np.pad(x, grow, mode="constant", constant_values=value)
    return np.pad(x, grow, mode=mode)  # reflect, edge and wrap mean what numpy means by them


def range_(op, ins):
    start, limit, delta = (ins[n].item() for n in ("start", "limit", "delta"))
    dtype = ins["start"].dtype
    if delta == 0 or not all(np.isfinite(float(v)) for v in (start, limit, delta)):
        if delta == 0 and start == limit:
            n = 0
        else:
            raise AllocationError(f"range({start}, {limit}, {delta}) has no finite length")
    else:
        n = ge.range_length(start, limit, delta)
    check_alloc([n], np.float64 if dtype.kind == "f" else np.int64)
    return (start + np.arange(n, dtype=np.float64 if dtype.kind == "f" else np.int64) * delta).astype(dtype)


@register_impls
class TensorFunctions(InterpreterFunctions):
    """The interpreter implementations of the data-movement and shape ops: each runs its kernel above."""

    run_transpose = impl(ge.TransposeOp)(kernel_impl(transpose))
    run_reshape = impl(ge.ReshapeOp)(kernel_impl(reshape))
    run_flatten = impl(ge.FlattenOp)(kernel_impl(flatten))
    run_concat = impl(ge.ConcatOp)(kernel_impl(concat))
    run_split = impl(ge.SplitOp)(kernel_impl(split))
    run_slice = impl(ge.SliceOp)(kernel_impl(slice_))
    run_gather = impl(ge.GatherOp)(kernel_impl(gather))
    run_unsqueeze = impl(ge.UnsqueezeOp)(kernel_impl(unsqueeze))
    run_squeeze = impl(ge.SqueezeOp)(kernel_impl(squeeze))
    run_reduce_mean = impl(ge.ReduceMeanOp)(kernel_impl(reduce_mean))
    run_reduce_sum = impl(ge.ReduceSumOp)(kernel_impl(reduce_sum))
    run_cast = impl(ge.CastOp)(kernel_impl(cast))
    run_where = impl(ge.WhereOp)(kernel_impl(where))
    run_expand = impl(ge.ExpandOp)(kernel_impl(expand))
    run_shape = impl(ge.ShapeOp)(kernel_impl(shape))
    run_constant_of_shape = impl(ge.ConstantOfShapeOp)(kernel_impl(constant_of_shape))
    run_pad = impl(ge.PadOp)(kernel_impl(pad))
    run_range = impl(ge.RangeOp)(kernel_impl(range_))
