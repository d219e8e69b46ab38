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
from ge.ge_dialects.ge.base import describe
from ge.ge_dialects.ge.weights import constant_array
from ge.passes import remarks

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


@dataclass(frozen=True)
class InlineControlFlowPass(ModulePass):
    """Each `ge.if` with a constant condition inlined; the functions left unnamed removed."""

    name = "inline-control-flow"

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
        still = named_functions(op)
        for fn in [f for f in op.ops if isinstance(f, func.FuncOp)]:
            if fn.sym_name.data in named and fn.sym_name.data not in still:
                fn.detach()
                fn.erase()
