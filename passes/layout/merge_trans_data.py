"""merge-trans-data: breadth fusion of TransData.

Several `ge.trans_data` of one source value with the same conversion (same formats, same result
type) become one: the others' users read the result of the first.
Before:

    %a = ge.trans_data %x {src_format = "ND", dst_format = "FRACTAL_NZ"}
        : (tensor<32x64xf32>) -> tensor<32x64xf32, #ge.fmt<ND, FRACTAL_NZ>>
    %b = ge.trans_data %x {src_format = "ND", dst_format = "FRACTAL_NZ"}
        : (tensor<32x64xf32>) -> tensor<32x64xf32, #ge.fmt<ND, FRACTAL_NZ>>

after: only `%a`, read by the users of both. The one kept is the first in program order; it must
dominate the other (same block, or an enclosing one): two in sibling regions (then / else) are not
merged (`rejected` remark).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from ge.ge_dialects.ge.base import describe
from ge.ge_dialects.ge.layout import TransDataOp
from ge.passes.rewrite import Match, Op, Reject, Rule, apply_rules

PASS = "merge-trans-data"


_order: dict[Operation, int] | None = None
"""While merge-trans-data runs: each op's index in a pre-order walk of the module, numbered once.
The pass only erases ops and redirects uses, so the indices of the ops that remain stay in program
order; an op missing from it (made since) renumbers. Without it (the rules applied alone), positions
are walked for each query, O(block size) each: quadratic on a deep model (9k-op GPT: 2 s of O3)."""


def _position(op: Operation) -> tuple[int, ...]:
    global _order
    if _order is None:
        return walk_position(op)
    if op not in _order:
        top = op
        while (holder := top.parent_op()) is not None:
            top = holder
        _order = {o: i for i, o in enumerate(top.walk())}
    return (_order[op],)


def dominates(first: Operation, op: Operation) -> bool:
    """Whether `first` (earlier in program order) is before `op` in `op`'s block or an enclosing one."""
    block = first.parent_block()
    ancestor = block.find_ancestor_op_in_block(op) if block is not None else None
    if ancestor is None:
        return False
    return ancestor is op or _position(first) < _position(ancestor)


def walk_position(op: Operation) -> tuple[int, ...]:
    """Where `op` comes in a pre-order walk, as (region, block, op) indices from the outermost op
    down: tuples compare in program order (an op's path is a prefix of what it holds)."""
    path: list[int] = []
    while (holder := op.parent_op()) is not None:
        block = op.parent_block()
        assert block is not None  # an op with a parent op sits in one of its blocks
        region = block.parent
        assert region is not None
        path[:0] = (_index(holder.regions, region), _index(region.blocks, block), _index(block.ops, op))
        op = holder
    return tuple(path)


def _index(items, item) -> int:
    return next(i for i, x in enumerate(items) if x is item)


def _earlier_twin(m: Match) -> SSAValue | None:
    """The result of the first TransData in program order converting the root's source alike."""
    op = m.root_as(TransDataOp)
    twins = [
        u.operation
        for u in op.src.uses
        if isinstance(u.operation, TransDataOp) and u.operation is not op and u.operation.dst.type == op.dst.type
    ]
    here = _position(op)
    earlier = [(position, t) for t in twins if (position := _position(t)) < here]
    return min(earlier, key=lambda e: e[0])[1].dst if earlier else None


def _sibling_regions(m: Match) -> str:
    return (
        f"{describe(m.op('first'))} and {describe(m.root)} convert one value alike, but in sibling "
        f"regions (neither dominates the other's users)"
    )


RULES: list[Rule] = [
    Rule(
        "merge",
        Op(TransDataOp, "x", name="second"),
        lambda m, b: m["first"],
        finds={"first": _earlier_twin},
        rejects=[Reject(_sibling_regions, lambda m: not dominates(m.op("first"), m.root))],
        says=lambda m: f"two {m.root.p('src_format')} -> {m.root.p('dst_format')} conversions of one value merged",
        shows=("first", "second"),
        doc="trans_data(x) twice, alike -> the first one (when it dominates the second)",
    ),
]


def merge_siblings(module: ModuleOp) -> None:
    global _order
    _order = {op: i for i, op in enumerate(module.walk())}
    try:
        apply_rules(module, RULES, PASS, walk="program-order")
    finally:
        _order = None


@dataclass(frozen=True)
class MergeTransDataPass(ModulePass):
    """Merges TransData of one source with the same conversion."""

    name = "merge-trans-data"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        merge_siblings(op)
