"""The matrix products of gradients, shared by the VJPs of `ge.matmul` and `ge.attention`.

For Y = A @ B with numpy's matmul semantics (a 1-D A is a row, a 1-D B a column, batch dims
broadcast), dA = dY @ B^T and dB = A^T @ dY, each summed back over the batch dims its operand was
broadcast along and reshaped to the operand's shape. The products are `ge.matmul`s (Cube work, as
GE's BatchMatMul backward is); the transposes are `ge.transpose`s of the last two dims.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from ge.ge_dialects.ge.grad import GradBuilder, static_shape


def matmul(g: GradBuilder, a: SSAValue, b: SSAValue) -> SSAValue:
    from ge.ge_dialects.ge.nn import MatMulOp

    return g.value(MatMulOp, {"A": a, "B": b})


def swap_last(g: GradBuilder, value: SSAValue) -> SSAValue:
    """`value` with its last two dims swapped (a batched matrix transpose)."""
    rank = len(static_shape(value))
    return g.transpose(value, [*range(rank - 2), rank - 1, rank - 2])


def matmul_grads(g: GradBuilder, a: SSAValue, b: SSAValue, dy: SSAValue) -> tuple[SSAValue, SSAValue]:
    """The cotangents of A and B of Y = matmul(A, B), given Y's cotangent `dy`."""
    a_shape, b_shape = static_shape(a), static_shape(b)
    a2 = g.reshape(a, (1, *a_shape)) if len(a_shape) == 1 else a
    b2 = g.reshape(b, (*b_shape, 1)) if len(b_shape) == 1 else b
    a2_shape, b2_shape = static_shape(a2), static_shape(b2)
    batch = np.broadcast_shapes(a2_shape[:-2], b2_shape[:-2])
    dy2 = g.reshape(dy, (*batch, a2_shape[-2], b2_shape[-1]))
    da = g.sum_to(matmul(g, dy2, swap_last(g, b2)), a2_shape)
    db = g.sum_to(matmul(g, swap_last(g, a2), dy2), b2_shape)
    return g.reshape(da, a_shape), g.reshape(db, b_shape)
