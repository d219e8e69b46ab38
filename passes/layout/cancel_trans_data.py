"""cancel-trans-data: removes symmetric TransData pairs (A -> B -> A).

A `ge.trans_data` whose operand comes from another `ge.trans_data` and whose result has the type
that first one started from converts the value back: its users read the original value instead,
and the first TransData goes too when nothing else reads it. Before:

    %a = ge.trans_data %x {src_format = "NCHW", dst_format = "NC1HWC0"} : (tensor<1x8x4x4xf32, #ge.fmt<NCHW>>) -> tensor<1x8x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>
    %b = ge.trans_data %a {src_format = "NC1HWC0", dst_format = "NCHW"} : (tensor<1x8x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x8x4x4xf32, #ge.fmt<NCHW>>
    %r = ge.relu %b : ...

after: `%r = ge.relu %x : ...`. A pair that returns to the same layout under another type (an
unencoded tensor that comes back as `#ge.fmt<NCHW>`) is kept, with a `rejected` remark: its users'
types would change.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from ge.ge_dialects.ge.base import describe
from ge.ge_dialects.ge.layout import TransDataOp, is_stored_logically, storage_of
from ge.passes import remarks

PASS = "cancel-trans-data"


def same_layout(a: TensorType, b: TensorType) -> bool:
    """Whether values of types `a` and `b` (one logical shape) are stored alike."""
    return storage_of(a) == storage_of(b) or (is_stored_logically(a) and is_stored_logically(b))


def cancel_pairs(module: ModuleOp) -> int:
    cancelled = 0
    for second in list(module.walk()):
        if not isinstance(second, TransDataOp) or second.parent is None:
            continue
        first = second.src.owner
        if not isinstance(first, TransDataOp) or not same_layout(first.src.type, second.dst.type):
            continue
        source = first.src
        if source.type != second.dst.type:
            remarks.emit(PASS, "rejected", "cancel-pair", [first, second],
                         f"{describe(first)} and {describe(second)} return to the layout of {source.type} "
                         f"but as {second.dst.type}: their users would see another type")
            continue
        second.dst.replace_all_uses_with(source)
        Rewriter.erase_op(second)
        if not first.dst.uses:
            Rewriter.erase_op(first)
        cancelled += 1
        remarks.emit(PASS, "applied", "cancel-pair", [first, second],
                     f"{first.p('src_format')} -> {first.p('dst_format')} -> {second.p('dst_format')} cancelled")
    return cancelled


@dataclass(frozen=True)
class CancelTransDataPass(ModulePass):
    """Removes A -> B -> A TransData pairs."""

    name = "cancel-trans-data"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        cancel_pairs(op)
