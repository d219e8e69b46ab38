"""The kernel of `ge.gather_grad` (ge_dialects/ge/tensor_grad.py), the scatter-add that is a
gather's (an embedding's) gradient.

Narrow floats add up in f32 (a frequent index sums many rows) and round once at the end, as the
reductions of interpreter/kernels/tensor.py do.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ge.ge_dialects import ge
from ge.ge_dialects.ge.tensor_ops import normalize_axes
from ge.interpreter.kernels import DataError, check_alloc
from ge.interpreter.kernels.checked import kernel_impl
from ge.interpreter.kernels.tensor import _accumulation_dtype


def gather_grad(op, ins):
    dy, indices = ins["dy"], np.asarray(ins["indices"]).astype(np.int64).reshape(-1)
    data_shape = tuple(int(d) for d in op.p("data_shape"))
    axis = normalize_axes([op.p("axis")], len(data_shape))[0]
    check_alloc(data_shape, dy.dtype)
    size = data_shape[axis]
    bad = indices[(indices < -size) | (indices >= size)]
    if bad.size:
        raise DataError(f"index {bad[0]} is out of range for axis {axis} of size {size}")
    rows = np.where(indices < 0, indices + size, indices)
    # With the data as (size, before, after) rows, dy is (len(indices), before, after): one add.at
    # adds every dy row into the row its index names (repeated rows accumulate).
    before, after = math.prod(data_shape[:axis]), math.prod(data_shape[axis + 1 :])
    wide = _accumulation_dtype(dy.dtype)
    total = np.zeros((before, size, after), wide)
    rows_of_dy = dy.astype(wide, copy=False).reshape(before, rows.size, after).transpose(1, 0, 2)
    np.add.at(total.transpose(1, 0, 2), rows, rows_of_dy)  # the transposed view writes into total
    return total.astype(dy.dtype).reshape(data_shape)


@register_impls
class TensorGradFunctions(InterpreterFunctions):
    """The interpreter implementation of the data-movement family's backward op."""

    run_gather_grad = impl(ge.GatherGradOp)(kernel_impl(gather_grad))
