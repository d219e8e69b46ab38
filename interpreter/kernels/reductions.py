"""Kernels of the reductions and selections (ge_dialects/ge/reductions.py).

Result shapes come from the shape rules the ops' shape functions use, so a kernel cannot disagree
with the types the compiler inferred. Ties resolve as ONNX says: the first extreme (the last with
select_last_index), TopK's equal values by index, lower first (stable sorts).
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ge.ge_dialects import ge
from ge.ge_dialects.ge.reductions import arg_reduced_dims, top_k_dims
from ge.ge_dialects.ge.tensor_ops import normalize_axes, reduced_dims
from ge.interpreter.kernels import DataError
from ge.interpreter.kernels.checked import kernel_impl


def _reduce(op, ins, reduce, empty):
    """`reduce(x, axes)` with `empty(dtype)` for empty reduced sets, shaped as the op's result."""
    x = ins["data"]
    axes = [] if ins["axes"] is None else [int(v) for v in np.asarray(ins["axes"]).reshape(-1)]
    if not axes and op.p("noop_with_empty_axes"):
        return x.copy()
    reduced = tuple(normalize_axes(axes, x.ndim)) if axes else tuple(range(x.ndim))
    out = reduced_dims(x.shape, reduced, bool(op.p("keepdims")), False)
    if any(x.shape[a] == 0 for a in reduced):
        return np.full(out, empty(x.dtype), x.dtype)
    return np.asarray(reduce(x, reduced), dtype=x.dtype).reshape(out)


def _lowest(dtype: np.dtype):
    if dtype.kind == "b":
        return False
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _highest(dtype: np.dtype):
    if dtype.kind == "b":
        return True
    return np.inf if dtype.kind == "f" else np.iinfo(dtype).max


def reduce_max(op, ins):
    return _reduce(op, ins, lambda x, axes: np.max(x, axis=axes), _lowest)


def reduce_min(op, ins):
    return _reduce(op, ins, lambda x, axes: np.min(x, axis=axes), _highest)


def reduce_prod(op, ins):
    def prod(x: np.ndarray, axes):
        # narrow floats multiply in f32; integers wrap in their own type, as C multiplies
        acc = np.float32 if x.dtype.kind == "f" and x.dtype.itemsize < 4 else x.dtype
        return np.prod(x, axis=axes, dtype=acc)

    return _reduce(op, ins, prod, lambda dtype: 1)


def _arg(op, ins, pick):
    x = ins["data"]
    axis = normalize_axes([op.p("axis")], x.ndim)[0] if x.ndim else 0
    if x.ndim and x.shape[axis] == 0:
        raise DataError(f"axis {axis} of shape {list(x.shape)} is empty: it has no extreme element")
    out = arg_reduced_dims(x.shape, axis, bool(op.p("keepdims")))
    if x.ndim == 0:
        return np.zeros(out, np.int64)
    return np.asarray(_extreme_index(x, axis, pick, bool(op.p("select_last_index"))), np.int64).reshape(out)


def _extreme_index(x: np.ndarray, axis: int, pick, last: bool) -> np.ndarray:
    """The first extreme's index along `axis` (numpy's argmax / argmin), or the last: the first of
    the reversed axis."""
    return x.shape[axis] - 1 - pick(np.flip(x, axis), axis=axis) if last else pick(x, axis=axis)


def arg_max(op, ins):
    return _arg(op, ins, np.argmax)


def arg_min(op, ins):
    return _arg(op, ins, np.argmin)


def top_k(op, ins):
    x = ins["X"]
    axis = normalize_axes([op.p("axis")], x.ndim)[0]
    k = int(np.asarray(ins["K"]).reshape(-1)[0])
    top_k_dims(x.shape, axis, k)  # refuses a K below 0 or beyond the axis
    indices = np.take(_order(x, axis, bool(op.p("largest"))), np.arange(k), axis=axis)
    return np.take_along_axis(x, indices, axis=axis), indices.astype(np.int64)


def _order(x: np.ndarray, axis: int, largest: bool) -> np.ndarray:
    """The positions along `axis` from the most extreme on, equal values by index (lower first)."""
    if not largest:
        return np.argsort(x, axis=axis, kind="stable")
    # a stable ascending sort of the reversed axis, read backwards: descending, equal values lower
    # index first, with no negation (which unsigned types and the minimum integer lack)
    order = np.argsort(np.flip(x, axis), axis=axis, kind="stable")
    return x.shape[axis] - 1 - np.flip(order, axis)


def _cumulative(op, ins, scan):
    x = ins["x"]
    axis_value = int(np.asarray(ins["axis"]).reshape(-1)[0])
    if not -x.ndim <= axis_value < x.ndim:
        raise DataError(f"axis {axis_value} is out of range for rank {x.ndim}")
    axis = axis_value % x.ndim
    if x.size == 0:
        return x.copy()
    # narrow floats accumulate in f32; integers wrap in their own type
    acc = np.float32 if x.dtype.kind == "f" and x.dtype.itemsize < 4 else x.dtype
    data = np.flip(x, axis) if op.p("reverse") else x
    running = scan(data, axis=axis, dtype=acc)
    if op.p("exclusive"):
        identity = np.ones if scan is np.cumprod else np.zeros
        first = identity([1 if i == axis else d for i, d in enumerate(x.shape)], acc)
        running = np.concatenate([first, np.take(running, np.arange(x.shape[axis] - 1), axis=axis)], axis=axis)
    if op.p("reverse"):
        running = np.flip(running, axis)
    return np.ascontiguousarray(running, dtype=x.dtype)


def cum_sum(op, ins):
    return _cumulative(op, ins, np.cumsum)


def cum_prod(op, ins):
    return _cumulative(op, ins, np.cumprod)


def hardmax(op, ins):
    x = ins["input"]
    axis = normalize_axes([op.p("axis")], x.ndim)[0]
    out = np.zeros_like(x)
    if x.shape[axis] == 0 or x.size == 0:
        return out
    np.put_along_axis(out, np.expand_dims(_extreme_index(x, axis, np.argmax, False), axis), 1, axis=axis)
    return out


def size(op, ins):
    return np.asarray(math.prod(np.shape(ins["data"])), np.int64)


@register_impls
class ReductionFunctions(InterpreterFunctions):
    """The interpreter implementations of the reductions and selections: each runs its kernel above."""

    run_reduce_max = impl(ge.ReduceMaxOp)(kernel_impl(reduce_max))
    run_reduce_min = impl(ge.ReduceMinOp)(kernel_impl(reduce_min))
    run_reduce_prod = impl(ge.ReduceProdOp)(kernel_impl(reduce_prod))
    run_arg_max = impl(ge.ArgMaxOp)(kernel_impl(arg_max))
    run_arg_min = impl(ge.ArgMinOp)(kernel_impl(arg_min))
    run_top_k = impl(ge.TopKOp)(kernel_impl(top_k))
    run_cum_sum = impl(ge.CumSumOp)(kernel_impl(cum_sum))
    run_cum_prod = impl(ge.CumProdOp)(kernel_impl(cum_prod))
    run_hardmax = impl(ge.HardmaxOp)(kernel_impl(hardmax))
    run_size = impl(ge.SizeOp)(kernel_impl(size))
