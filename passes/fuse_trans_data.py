"""`fuse-trans-data`: a TransData next to a kernel becomes part of that kernel's data movement where
the hardware allows: between ND and FRACTAL_NZ where the target's MTE converts on the move
(`mte.nd_nz_on_the_move`), and a view everywhere.

On the 910B, Ascend C's DataCopy converts ND to NZ as it loads from global memory and NZ to ND as it
stores, so a Cube or Vector kernel reads or writes the other layout without a TransData kernel in
between (GE folds TransData into the MTE of the adjacent op). Runs after `fuse-ops`:

- **prologue**: a TransData whose every reader is an AI Core kernel (a `fused.group`, or a ge op
  run on the Cube or the Vector) joins each of them: each reader loads the source as it is and
  converts it on the way in;
- **epilogue**: otherwise, a TransData of an AI Core kernel's result joins that kernel, which then
  stores the converted result (and the original too, if something else reads it).

A TransData that is a view (`is_view`: both storage arrays hold the same bytes in the same order,
as NC1HWC0 of pooled [N, C, 1, 1] features and NCHW do when C is a multiple of C0) joins a neighbour
the same way on every target, at no cost. The conversion is timed as part of the kernel
(`moved_layout_elems` of its work record: free on such a target, Vector work on another); a kernel
the pass forms around a lone op keeps the op's pattern class. Each decision is a remark; a
TransData that stays says why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass

from ge.ge_dialects import fused, ge
from ge.ge_dialects.ge.base import GeOp
from ge.ge_dialects.ge.facts import Engine, MovesData
from ge.ge_dialects.ge.target_attr import module_pass_target
from ge.passes import remarks
from ge.passes.fusion.engine import restore_order
from ge.passes.pipeline import require_graph_level

NAME = "fuse-trans-data"
RULE = "trans-data-on-the-move"
LONE_OP_RULE = "with_trans_data"
"""The rule name of a kernel formed around a lone op and its conversions."""


def lone_pattern(op: Operation) -> str | None:
    """The pattern class of a kernel made of `op` and its conversions, or None when `op` does not
    run on an AI Core (AI CPU ops, weights, another TransData)."""
    if not isinstance(op, GeOp) or isinstance(op, ge.TransDataOp):
        return None
    engine = op.engine()
    if engine is Engine.CUBE:
        return "cube+elementwise"
    if engine is Engine.CUBE_VECTOR:
        return "attention" if isinstance(op, ge.AttentionOp) else None
    if engine is Engine.VECTOR:
        return "elementwise"
    return None


def is_kernel(op: Operation) -> bool:
    """An AI Core kernel a conversion can join: a fused group or a lone Cube / Vector op."""
    return isinstance(op, fused.GroupOp) or lone_pattern(op) is not None


def join(kernel: Operation, before: Sequence[Operation], after: Sequence[Operation]) -> fused.GroupOp:
    """One group of `before` (conversions of its inputs), `kernel`'s ops, `after` (conversions of its
    results), keeping `kernel`'s pattern and rule; its results are what the members' outside
    readers need."""
    location = kernel.location
    if isinstance(kernel, fused.GroupOp):
        pattern, rule = kernel.pattern.data, kernel.rule.data
        body = [op for op in fused.dissolve(kernel) if not fused.is_scalar_constant(op)]
    else:
        lone = lone_pattern(kernel)
        assert lone is not None  # is_kernel(kernel)
        pattern, rule, body = lone, LONE_OP_RULE, [kernel]
    members = [*before, *body, *after]
    inside = set(members)
    keep = [r for op in members for r in op.results if any(u.operation not in inside for u in r.uses)]
    group = fused.outline(pattern, rule, members, keep)
    group.location = location
    return group


def fuse_block(block: Block, on_the_move: bool, target: str) -> None:
    """Each kernel a conversion joins stays where it was (a prologue's reader, an epilogue's
    producer), so the block stays in order; one check at the end, linear in the block."""
    for op in list(block.ops):
        if not isinstance(op, ge.TransDataOp) or op.parent_block() is not block:
            continue
        conversion = f"{op.p('src_format')} -> {op.p('dst_format')}"
        if op.is_view() or (op.converts_nd_nz() and on_the_move):
            fuse_one(op, block)
        elif join_copy(op, block):
            continue
        elif op.converts_nd_nz():
            why = f"{conversion} stays a kernel: the MTE of {target} does not convert ND <-> FRACTAL_NZ on the move"
            remarks.emit(NAME, "rejected", RULE, [op], why)
        else:
            why = (
                f"{conversion} stays a kernel: the MTE converts only between ND and FRACTAL_NZ on the move, "
                "and no copy kernel (transpose, reshape, concat, slice ...) reads or writes it alone"
            )
            remarks.emit(NAME, "rejected", RULE, [op], why)


def is_copy(op: Operation) -> bool:
    """A data-movement kernel: a lone op with `MovesData` (a transpose, reshape, concat, split ...)
    other than a TransData, or a kernel this pass made of one and its conversions (a concat whose
    first operand joined it). It can read or write another layout in the same copy."""
    if isinstance(op, fused.GroupOp):
        members = [m for m in op.members if not fused.is_scalar_constant(m)]
        moving = [m for m in members if isinstance(m, GeOp) and m.has_trait(MovesData)]
        return (
            op.rule.data == LONE_OP_RULE
            and len(moving) == len(members)
            and any(not isinstance(m, ge.TransDataOp) for m in moving)
        )
    return isinstance(op, GeOp) and op.has_trait(MovesData) and not isinstance(op, ge.TransDataOp) and is_kernel(op)


def join_copy(td: ge.TransDataOp, block: Block) -> bool:
    """A conversion next to a copy kernel becomes part of that copy: one data movement for both
    index maps (GE's TransData writes NHWC from NC1HWC0 in one kernel), timed as the conversion's
    Vector work plus the copy's, with one read and one write of the tensor instead of two each.
    Its reader if that is its only one, else its producer; whether it joined."""
    conversion = f"{td.p('src_format')} -> {td.p('dst_format')}"
    readers = list(dict.fromkeys(u.operation for u in td.dst.uses))
    producer = td.src.owner
    if len(readers) == 1 and is_copy(readers[0]):
        remarks.emit(NAME, "applied", RULE, readers, f"{conversion} of its input done in the same copy")
        td.detach()
        block.insert_op_before(td, readers[0])
        join(readers[0], [td], [])
        return True
    if isinstance(producer, Operation) and is_copy(producer):
        remarks.emit(NAME, "applied", RULE, [producer], f"{conversion} of its result done in the same copy")
        td.detach()
        block.insert_op_after(td, producer)
        join(producer, [], [td])
        return True
    return False


def fuse_one(td: ge.TransDataOp, block: Block) -> None:
    conversion = f"{td.p('src_format')} -> {td.p('dst_format')}"
    producer = td.src.owner
    if isinstance(producer, ge.ConstantOp):
        return  # fold-trans-data converts a weight once, at compile time
    readers = list(dict.fromkeys(u.operation for u in td.dst.uses))
    if readers and all(is_kernel(r) for r in readers):
        by = "its reader" if len(readers) == 1 else f"each of its {len(readers)} readers"
        remarks.emit(NAME, "applied", RULE, readers, f"{conversion} of its input converted on the load by {by}")
        for reader in readers:
            own = td.clone()
            block.insert_op_before(own, td)
            for use in list(td.dst.uses):
                if use.operation is reader:
                    reader.operands[use.index] = own.dst
            join(reader, [own], [])
        td.detach()
        td.erase()
        return
    if isinstance(producer, Operation) and is_kernel(producer):
        remarks.emit(NAME, "applied", RULE, [producer], f"{conversion} of its result converted on the store")
        td.detach()  # the kernel stays where its producer was (a TransData sits before its first reader)
        block.insert_op_after(td, producer)
        join(producer, [], [td])
        return
    made_by = producer.name if isinstance(producer, Operation) else "a graph input"
    outside = sorted({r.name for r in readers if not is_kernel(r)})
    remarks.emit(
        NAME,
        "rejected",
        RULE,
        [td],
        f"{conversion} stays a kernel: its source comes from {made_by}, not an AI Core kernel, "
        f"and {', '.join(outside)} reads it",
    )


@dataclass(frozen=True)
class FuseTransDataPass(ModulePass):
    name = NAME

    target: str | None = None  # None: the module's ge.target, else the default

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_graph_level(self.name, op)
        target = module_pass_target(self.name, op, self.target)
        for fn in op.walk():
            if isinstance(fn, func.FuncOp) and fn.body.blocks:
                fuse_block(fn.body.block, target.mte.nd_nz_on_the_move, target.name)
                restore_order(fn.body.block)  # a no-op check: the kernels stayed in place
