"""Rebuilding a graph's ops for a part of its batch: data-parallel's replicas and
accumulate-gradients' micro-batches each compute on `rows = batch / factor` rows.

The batch is the leading dim of the graph inputs that have it (the first input's leading dim). An
op whose operands shrink is rebuilt with its result types re-inferred. Shape operands folded into
constants at import (a Reshape's or Expand's `shape`: PyTorch exports compute them from the input's
shape) hold the batch as a number: their leading entry, when it is the result's leading dim, is
divided by the factor, since the batch is the leading dim ([B, S, H, D] and [B*S, H] alike). An op
that still does not fit is a one-line error naming it.
"""

from __future__ import annotations

from collections.abc import MutableMapping

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from ge.ge_dialects import ge
from ge.ge_dialects.ge.base import constant_value, describe, name_after
from ge.ge_dialects.ge.types import shape_of

SHAPE_OPERANDS = ("shape",)
"""Operands that give a result's shape (Reshape, Expand): their leading entry is the batch's."""


def batch_size(fn: func.FuncOp, owner: str) -> int:
    """The leading dim of the first input that has one: the batch the split divides."""
    for arg in fn.body.block.args:
        if isinstance(arg.type, TensorType) and arg.type.get_shape():
            batch = shape_of(arg.type)[0]
            if batch is None:
                raise DiagnosticException(
                    f"{owner}: the batch dimension of the first input is dynamic; splitting it needs a static one"
                )
            return batch
    raise DiagnosticException(f"{owner}: the graph has no input with a batch dimension")


def has_batch(value: SSAValue, batch: int) -> bool:
    t = value.type
    return isinstance(t, TensorType) and bool(t.get_shape()) and shape_of(t)[0] == batch


def rebuilt_for_rows(op: Operation, mapping: MutableMapping[SSAValue, SSAValue], factor: int, owner: str) -> ge.GeOp:
    """`op` rebuilt (not inserted; its shape constants, when they change, inserted before it) on the
    operands `mapping` gives, for 1/factor of the batch; its results are added to `mapping`."""
    if not isinstance(op, ge.GeOp):
        raise DiagnosticException(f"{owner}: {op.name} is not a ge op; the graph cannot be split along its batch")
    swap = dict(mapping)
    lead = _leading_dim(op)
    for name, _ in op.get_irdl_definition().operands:
        if name not in SHAPE_OPERANDS:
            continue
        value = getattr(op, name)
        known = constant_value(value) if isinstance(value, SSAValue) else None
        if known is None or known.ndim != 1 or not known.size or lead is None or known[0] != lead or lead % factor:
            continue
        smaller = np.array(known, copy=True)
        smaller[0] = lead // factor
        constant = name_after(ge.ConstantOp.inline(smaller), op, name)
        parent = op.parent
        assert parent is not None
        parent.insert_op_before(constant, op)
        swap[value] = constant.output
    try:
        new = op.rebuilt(swap)
    except VerifyException as e:
        raise DiagnosticException(f"{owner}: {describe(op)} does not fit 1/{factor} of the batch: {e}") from None
    mapping.update(zip(op.results, new.results))
    return new


def _leading_dim(op: Operation) -> int | None:
    if not op.results or not isinstance(t := op.results[0].type, TensorType) or not t.get_shape():
        return None
    return shape_of(t)[0]
