"""Kernels of the pools in ge_dialects/ge/pooling.py. LpPool walks the windows with the windowed
pools' helpers (interpreter/kernels/nn.py: the same padding, ceil-mode overhang and dilated,
strided slices), zeros filling the padding; f16/bf16 compute in f32 and round once."""

from __future__ import annotations

import math

import numpy as np
from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ge.ge_dialects import ge
from ge.ge_dialects.ge.nn import Window
from ge.ge_dialects.ge.pooling import unpool_shape_problem, unpool_sizes
from ge.interpreter.kernels import DataError, check_alloc
from ge.interpreter.kernels.checked import kernel_impl
from ge.interpreter.kernels.nn import _compute, _kernel_positions, _pad, _slice_at


def global_max_pool(op, ins):
    x = ins["X"]
    return x.max(axis=tuple(range(2, x.ndim)), keepdims=True)


def _powers(x: np.ndarray, p: int) -> np.ndarray:
    """|x|^p in the type to compute in."""
    wide = np.abs(_compute(x))
    return wide if p == 1 else wide * wide if p == 2 else wide**p


def _root(total: np.ndarray, p: int) -> np.ndarray:
    return total if p == 1 else np.sqrt(total) if p == 2 else total ** (1 / total.dtype.type(p))


def lp_pool(op, ins):
    p = op.p("p")
    window = Window.of(op.p, op.p("kernel_shape"))
    zp, out, _ = _pad(_powers(ins["X"], p), window, 0)
    total = None
    for offsets in _kernel_positions(window):
        part = _slice_at(zp, window, offsets, out)
        total = part.copy() if total is None else np.add(total, part, out=total)
    assert total is not None  # the verifier makes every kernel dimension positive
    return _root(total, p).astype(ins["X"].dtype, copy=False)


def global_lp_pool(op, ins):
    x, p = ins["X"], op.p("p")
    total = _powers(x, p).sum(axis=tuple(range(2, x.ndim)), keepdims=True)
    return _root(total, p).astype(x.dtype, copy=False)


def max_unpool(op, ins):
    """Zeros with X written at the flat offsets I; of repeated offsets the last write lands."""
    x, indices = ins["X"], ins["I"]
    default = (*x.shape[:2], *unpool_sizes(op.p, x.shape[2:]))
    shape = default if ins["output_shape"] is None else tuple(int(d) for d in ins["output_shape"])
    problem = None if ins["output_shape"] is None else unpool_shape_problem(shape, default)
    if problem is not None:
        raise DataError(problem)
    check_alloc(shape, x.dtype)
    total = math.prod(shape)
    flat = indices.reshape(-1)
    bad = flat[(flat < 0) | (flat >= total)]
    if bad.size:
        raise DataError(f"index {bad[0]} is out of range for an output of {total} elements {list(shape)}")
    # the last occurrence of each offset: the first in the reversed order
    offsets, first = np.unique(flat[::-1], return_index=True)
    y = np.zeros(total, x.dtype)
    y[offsets] = x.reshape(-1)[::-1][first]
    return y.reshape(shape)


@register_impls
class PoolingFunctions(InterpreterFunctions):
    """The interpreter implementations of the pools in pooling.py."""

    run_global_max_pool = impl(ge.GlobalMaxPoolOp)(kernel_impl(global_max_pool))
    run_lp_pool = impl(ge.LpPoolOp)(kernel_impl(lp_pool))
    run_global_lp_pool = impl(ge.GlobalLpPoolOp)(kernel_impl(global_lp_pool))
    run_max_unpool = impl(ge.MaxUnpoolOp)(kernel_impl(max_unpool))
