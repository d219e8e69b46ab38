"""Rebuilding a graph's ops for a part of its batch: data-parallel's replicas and
accumulate-gradients' micro-batches each compute on `rows = batch / factor` rows.

The batch is the leading dim of the graph inputs that have it (the first input's leading dim). An
op whose operands shrink is rebuilt with its result types re-inferred. Shape operands folded into
constants at import (a Reshape's or Expand's `shape`: PyTorch exports compute them from the input's
shape) hold the batch as a number: their leading entry, when it is the result's leading dim, is
divided by the factor, since the batch is the leading dim ([B, S, H, D] and [B*S, H] alike).

Values computed from literal constants alone can hold the batch too: PyTorch exports fold a causal
mask expanded to [B, 1, S, S] into a constant, which the attention scores add along the batch. An
operand of a rebuilt broadcasting op (`Broadcasting`: elementwise, Where, Expand) that is aligned
with a batch-carrying operand (same rank as the result, the result's leading dim) but does not come
from the inputs is evaluated and replaced by its first rows, when all its rows are the same; one
that differs from row to row, or reads a parameter, is a one-line error, as is an op that still
does not fit.
"""

from __future__ import annotations

from collections.abc import MutableMapping

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType
from xdsl.interpreter import Interpreter
from xdsl.ir import Block, Operation, OpResult, SSAValue
from xdsl.traits import is_side_effect_free
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from ge.ge_dialects import ge
from ge.ge_dialects.ge.base import constant_value, describe, name_after
from ge.ge_dialects.ge.facts import Broadcasting
from ge.ge_dialects.ge.types import shape_of
from ge.ge_dialects.ge.weights import constant_array
from ge.interpreter.ge import KernelError, can_evaluate, folding_interpreter

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
    if lead is not None and lead % factor == 0 and op.has_trait(Broadcasting):
        rank = len(_shape(op.results[0]))
        aligned = [v for v in op.operands if len(_shape(v)) == rank and _shape(v)[:1] == (lead,)]
        if any(v in mapping for v in aligned):
            for value in aligned:
                if value not in mapping:
                    swap[value] = _first_rows(value, lead // factor, op, owner)
    try:
        new = op.rebuilt(swap)
    except VerifyException as e:
        raise DiagnosticException(f"{owner}: {describe(op)} does not fit 1/{factor} of the batch: {e}") from None
    mapping.update(zip(op.results, new.results))
    return new


def erase_unused_literal_values(block: Block) -> None:
    """Erases the pure ops computed from literal constants alone (and such constants) that nothing
    uses: what a split leaves of the values it replaced by their first rows."""
    literal: set[Operation] = set()
    for op in block.ops:
        parameter = isinstance(op, ge.ConstantOp) and op.parameter_key is not None
        pure = isinstance(op, ge.GeOp) and is_side_effect_free(op)
        if pure and not parameter and all(v.owner in literal for v in op.operands):
            literal.add(op)
    for op in reversed(list(block.ops)):
        if op in literal and not any(r.uses for r in op.results):
            op.detach()
            op.erase()


def _first_rows(value: SSAValue, rows: int, user: Operation, owner: str) -> SSAValue:
    """A constant of the first `rows` rows of `value`, which is computed from literal constants
    alone and the same in every row; inserted before `user`."""
    known = _evaluate(value, folding_interpreter(), {})
    source = value.owner
    named = describe(source) if isinstance(source, Operation) else f"input '{value.name_hint}'"
    what = f"{describe(user)} combines the batch with {named}"
    if known is None:
        raise DiagnosticException(
            f"{owner}: {what}, which has the batch's rows but is neither an input's nor a literal constant's"
        )
    if not (known == known[:1]).all():
        raise DiagnosticException(
            f"{owner}: {what}, a constant whose rows differ along the batch: "
            "a part of the batch cannot tell its own rows"
        )
    constant = name_after(ge.ConstantOp.inline(np.ascontiguousarray(known[:rows])), user, "rows")
    parent = user.parent
    assert parent is not None
    parent.insert_op_before(constant, user)
    return constant.output


def _evaluate(value: SSAValue, interpreter: Interpreter, known: dict[SSAValue, np.ndarray]) -> np.ndarray | None:
    """The value of `value` if literal constants alone compute it (no inputs, no parameters)."""
    if value in known:
        return known[value]
    op = value.owner
    if isinstance(op, ge.ConstantOp):
        result = None if op.parameter_key is not None else constant_array(op)
    elif isinstance(op, ge.GeOp) and is_side_effect_free(op) and can_evaluate(op):
        operands = [_evaluate(v, interpreter, known) for v in op.operands]
        if any(v is None for v in operands):
            return None
        try:
            results = interpreter.run_op(op, tuple(operands))
        except KernelError:
            return None
        assert isinstance(value, OpResult)
        result = np.asarray(results[value.index])
    else:
        return None
    if result is not None:
        known[value] = result
    return result


def _shape(value: SSAValue) -> tuple[int | None, ...]:
    t = value.type
    return tuple(shape_of(t)) if isinstance(t, TensorType) else ()


def _leading_dim(op: Operation) -> int | None:
    if not op.results or not isinstance(t := op.results[0].type, TensorType) or not t.get_shape():
        return None
    return shape_of(t)[0]
