"""`fuse-views`: a reshape that moves no byte joins a neighbouring AI Core kernel as addressing,
instead of being a copy kernel of its own. GE deletes such reshapes from the built graph (their
output shares their input's memory); here the kernel next to one reads or writes through it.

A view is an op whose result is its data operand's stored array read as another type (`is_view`:
a reshape, flatten, squeeze or unsqueeze between arrays stored as their logical ones, whatever
their dims). Runs after `fuse-trans-data` (a reshape a conversion joined is a copy that converts):

- **prologue**: a view whose every reader is a kernel that computes joins each of them (each reads
  the source through it);
- **epilogue**: otherwise, a view that is the only reader of a computing kernel's result joins that
  kernel, which writes the same bytes under the view's type.

In a kernel with other work a view is no work of its own (device/engines.py `boundary_conversions`):
the kernel saves a launch, a read and a write of the tensor. Each decision is a remark; a view that
stays a kernel says why.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass

from ge.ge_dialects import fused
from ge.ge_dialects.ge.base import GeOp
from ge.passes import remarks
from ge.passes.fuse_trans_data import is_kernel, join_producer, join_readers
from ge.passes.fusion.engine import restore_order
from ge.passes.pipeline import require_graph_level

NAME = "fuse-views"
RULE = "view-as-addressing"
LONE_OP_RULE = "with_views"
"""The rule name of a kernel formed around a lone op and the views it reads or writes through."""


def is_view(op: Operation) -> bool:
    return isinstance(op, GeOp) and op.is_view()


def computes(op: Operation) -> bool:
    """An AI Core kernel with work of its own: not a view alone, nor a group of views."""
    if isinstance(op, fused.GroupOp):
        return any(not is_view(m) and not fused.is_scalar_constant(m) for m in op.members)
    return is_kernel(op) and not is_view(op)


def fuse_view(view: GeOp, block: Block) -> None:
    readers = list(dict.fromkeys(u.operation for u in view.results[0].uses))
    if readers and all(computes(r) for r in readers):
        by = "its reader" if len(readers) == 1 else f"each of its {len(readers)} readers"
        remarks.emit(NAME, "applied", RULE, readers, f"{view.name} of its input read through by {by}")
        join_readers(view, readers, block, LONE_OP_RULE)
        return
    producer = view.operands[0].owner
    if isinstance(producer, Operation) and computes(producer):
        source = view.operands[0]
        if {u.operation for u in source.uses} == {view}:
            remarks.emit(NAME, "applied", RULE, [producer], f"{view.name} of its result written through")
            join_producer(view, producer, block, LONE_OP_RULE)
            return
    made_by = producer.name if isinstance(producer, Operation) else "a graph input"
    outside = sorted({r.name for r in readers if not computes(r)})
    remarks.emit(
        NAME,
        "rejected",
        RULE,
        [view],
        f"{view.name} stays a kernel: {', '.join(outside) or 'nothing'} reads it, and its source comes from "
        f"{made_by}, which is no computing kernel or has other readers",
    )


def fuse_block(block: Block) -> None:
    for op in list(block.ops):
        if is_view(op) and op.parent_block() is block:
            assert isinstance(op, GeOp)  # is_view
            fuse_view(op, block)


@dataclass(frozen=True)
class FuseViewsPass(ModulePass):
    name = NAME

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_graph_level(self.name, op)
        for fn in op.walk():
            if isinstance(fn, func.FuncOp) and fn.body.blocks:
                fuse_block(fn.body.block)
                restore_order(fn.body.block)  # a no-op check: the kernels stayed in place
