"""merge-trans-data: breadth fusion of TransData.

Several `ge.trans_data` of one source value with the same conversion (same formats, same result
type) become one: the others' users read the result of the first.
Before:

    %a = ge.trans_data %x {src_format = "ND", dst_format = "FRACTAL_NZ"} : (tensor<32x64xf32>) -> tensor<32x64xf32, #ge.fmt<ND, FRACTAL_NZ>>
    %b = ge.trans_data %x {src_format = "ND", dst_format = "FRACTAL_NZ"} : (tensor<32x64xf32>) -> tensor<32x64xf32, #ge.fmt<ND, FRACTAL_NZ>>

after: only `%a`, read by the users of both. The one kept is the first in program order; it must
dominate the other (same block, or an enclosing one): two in sibling regions (then / else) are not
merged (`rejected` remark).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from ge.ge_dialects.ge.base import describe
from ge.ge_dialects.ge.layout import TransDataOp
from ge.passes import remarks

PASS = "merge-trans-data"


def dominates(first: Operation, op: Operation) -> bool:
    """Whether `first` (earlier in program order) is before `op` in `op`'s block or an enclosing one."""
    block = first.parent_block()
    ancestor = block.find_ancestor_op_in_block(op) if block is not None else None
    return ancestor is not None and (ancestor is op or first.is_before_in_block(ancestor))


def merge_siblings(module: ModuleOp) -> int:
    kept: dict[tuple, TransDataOp] = {}
    merged = 0
    for op in list(module.walk()):
        if not isinstance(op, TransDataOp):
            continue
        key = (op.src, op.dst.type)
        first = kept.get(key)
        if first is None:
            kept[key] = op
            continue
        if not dominates(first, op):
            remarks.emit(PASS, "rejected", "merge", [first, op],
                         f"{describe(first)} and {describe(op)} convert one value alike, but in sibling "
                         f"regions (neither dominates the other's users)")
            continue
        op.dst.replace_all_uses_with(first.dst)
        Rewriter.erase_op(op)
        merged += 1
        remarks.emit(PASS, "applied", "merge", [first, op],
                     f"two {op.p('src_format')} -> {op.p('dst_format')} conversions of one value merged")
    return merged


@dataclass(frozen=True)
class MergeTransDataPass(ModulePass):
    """Merges TransData of one source with the same conversion."""

    name = "merge-trans-data"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        merge_siblings(op)
