"""inline-control-flow: a `ge.if` whose condition is a constant becomes the branch it selects.

A condition the importer could not fold may fold later: a test of a dim that a gear made static
(`specialize-gears`), a value constant folding computed. Then the op is the selected function's
body, cloned in its place with the function's arguments bound to the op's operands; a function
no op names any more is removed. Before:

    %c = ge.constant dense<true> : tensor<i1>
    %y = ge.if @pos, @neg (%c, %x) : (tensor<i1>, tensor<4xf32>) -> tensor<4xf32>

after: `%y = ge.relu %x` (the body of `@pos`). A branch that returns a type more precise than
the op's result where `func.return` reads it stays (the function's declared result must not
change), with a remark.

With `unroll_limit` (ge-optimize sets it at O3) a `ge.loop` whose trip count is a constant of at
most that many iterations, whose condition is constant true and stays so (the body returns it
unchanged, or a constant true), is unrolled: one copy of the body per iteration, each with its
iteration number a constant, the carried values threaded through, and each scan output the
iterations' elements stacked (unsqueezed and concatenated); the function's result types follow
(a scan's length is known now). Any other loop stays, with a remark saying which condition failed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, SymbolRefAttr
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from ge.ge_dialects import ge
from ge.ge_dialects.ge.base import describe, name_after
from ge.ge_dialects.ge.weights import constant_array
from ge.passes import remarks
from ge.passes.infer_shapes import update_signature

PASS = "inline-control-flow"


def _condition(op: ge.IfOp) -> bool | None:
    value = constant_array(op.cond) if isinstance(op.cond.owner, ge.ConstantOp) else None
    return None if value is None else bool(np.asarray(value).reshape(-1)[0])


def inline_if(op: ge.IfOp, taken: bool) -> bool:
    """Replaces `op` by a clone of the branch `taken` selects; whether it did."""
    branch = op.function("then_branch" if taken else "else_branch")
    body = branch.body.block
    ret = body.last_op
    assert isinstance(ret, func.ReturnOp)
    for result, returned in zip(op.results, ret.arguments):
        if result.type != returned.type and any(isinstance(u.operation, func.ReturnOp) for u in result.uses):
            why = f"its result {result.type} is returned, and the branch gives {returned.type}"
            remarks.emit(PASS, "rejected", "inline-if", [op], f"{describe(op)} kept: {why}")
            return False
    mapping: dict[SSAValue, SSAValue] = dict(zip(body.args, op.inputs))
    for inner in body.ops:
        if inner is ret:
            break
        clone = inner.clone(value_mapper=mapping)
        Rewriter.insert_op(clone, InsertPoint.before(op))
        mapping.update(zip(inner.results, clone.results))
    values = [mapping.get(v, v) for v in ret.arguments]
    which = "then" if taken else "else"
    remarks.emit(
        PASS, "applied", "inline-if", [op], f"{describe(op)}: its condition is {taken}, the {which} branch inlined"
    )
    for result, value in zip(op.results, values):
        result.replace_all_uses_with(value)
    op.detach()
    op.erase()
    return True


def named_functions(module: ModuleOp) -> set[str]:
    """The functions the module's ops name (control flow's branches, bodies and gears)."""
    names: set[str] = set()
    for op in module.walk():
        for attr in op.properties.values():
            refs = attr.data if isinstance(attr, ArrayAttr) else (attr,)
            names.update(r.root_reference.data for r in refs if isinstance(r, SymbolRefAttr))
    return names


def _constant_int(value: SSAValue) -> int | None:
    array = constant_array(value) if isinstance(value.owner, ge.ConstantOp) else None
    return None if array is None or np.asarray(array).size != 1 else int(np.asarray(array).reshape(-1)[0])


def unroll_loop(op: ge.LoopOp, limit: int) -> bool:
    """Replaces `op` by `trip` copies of its body when it qualifies (see the module docstring)."""
    trip = _constant_int(op.args[0])
    why = None
    if trip is None:
        why = "its trip count is not a constant"
    elif not 0 < trip <= limit:
        why = f"its trip count {trip} is not in 1..{limit} (unroll_limit)"
    elif _constant_int(op.args[1]) != 1:
        why = "its condition is not a constant true"
    if why is None:
        body = op.function("body").body.block
        ret = body.last_op
        assert isinstance(ret, func.ReturnOp)
        returned = ret.arguments[0]
        if returned is not body.args[1] and _constant_int(returned) != 1:
            why = "its body computes the next condition"
    if why is not None:
        remarks.emit(PASS, "rejected", "unroll-loop", [op], f"{describe(op)} kept: {why}")
        return False
    assert trip is not None
    body = op.function("body").body.block
    ret = body.last_op
    assert isinstance(ret, func.ReturnOp)
    n = op.carried_count
    carried, captures = list(op.initial), list(op.captures)
    scans: list[list[SSAValue]] = [[] for _ in op.results[n:]]
    for i in range(trip):
        index = ge.ConstantOp.inline(np.asarray(i, np.int64))
        name_after(index, op, f"iteration{i}")
        Rewriter.insert_op(index, InsertPoint.before(op))
        mapping: dict[SSAValue, SSAValue] = dict(zip(body.args, [index.output, op.args[1], *carried, *captures]))
        for inner in body.ops:
            if inner is ret:
                break
            clone = name_after(inner.clone(value_mapper=mapping), inner, f"iteration{i}")
            Rewriter.insert_op(clone, InsertPoint.before(op))
            mapping.update(zip(inner.results, clone.results))
        values = [mapping.get(v, v) for v in ret.arguments]
        carried = values[1 : 1 + n]
        for scan, element in zip(scans, values[1 + n :]):
            scan.append(element)
    stacked: list[SSAValue] = []
    axis = ge.ConstantOp.inline(np.asarray([0], np.int64))
    name_after(axis, op, "scan_axis")
    Rewriter.insert_op(axis, InsertPoint.before(op))
    for k, elements in enumerate(scans):
        rows = []
        for element in elements:
            row = name_after(ge.UnsqueezeOp.create({"data": element, "axes": axis.output}), op, f"scan{k}")
            Rewriter.insert_op(row, InsertPoint.before(op))
            rows.append(row.results[0])
        joined = name_after(ge.ConcatOp.create({"inputs": rows}, {"axis": 0}), op, f"scan{k}")
        Rewriter.insert_op(joined, InsertPoint.before(op))
        stacked.append(joined.results[0])
    for result, value in zip(op.results, [*carried, *stacked]):
        result.replace_all_uses_with(value)
    remarks.emit(PASS, "applied", "unroll-loop", [op], f"{describe(op)}: unrolled {trip} iterations")
    op.detach()
    op.erase()
    return True


@dataclass(frozen=True)
class InlineControlFlowPass(ModulePass):
    """Each `ge.if` with a constant condition inlined, each small constant `ge.loop` unrolled
    (`unroll_limit`); the functions left unnamed removed."""

    name = "inline-control-flow"

    unroll_limit: int = 0
    """Unroll a constant loop of at most this many iterations (0: never)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        named = named_functions(op)
        if not named:
            return
        changed = True
        while changed:  # an inlined branch may hold an If of its own
            changed = False
            for candidate in [o for o in op.walk() if isinstance(o, ge.IfOp)]:
                taken = _condition(candidate)
                if taken is not None and inline_if(candidate, taken):
                    changed = True
            if self.unroll_limit > 0:
                for loop in [o for o in op.walk() if isinstance(o, ge.LoopOp)]:
                    fn = loop.parent_op()
                    if unroll_loop(loop, self.unroll_limit):
                        changed = True
                        if isinstance(fn, func.FuncOp):
                            update_signature(fn)  # a scan's length is known now
        still = named_functions(op)
        for fn in [f for f in op.ops if isinstance(f, func.FuncOp)]:
            if fn.sym_name.data in named and fn.sym_name.data not in still:
                fn.detach()
                fn.erase()
