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
the same way on every target, at no cost; so does a conversion between a projection's FRACTAL_NZ
and the heads of an attention kernel whose head dims are multiples of C0 (the Cube loads and stores
each head's NZ tiles as they lie: `join_fractal_heads`); a conversion beside a copy kernel is
done in that copy (`join_copy`); and one between NCHW and NC1HWC0 beside a Vector kernel is done in
its UB by the Vector's TransDataTo5HD (vnchwconv), for the element widths the target's instruction
takes (`[vector] transdata_5hd_bits`: f32 on the 910B, 16-bit types on the 910; `join_vector`).
The conversion is timed as part of the kernel (an on-the-move one as `moved_layout_elems` of its
work record: free on such a target, Vector work on another; one in a copy or a Vector kernel as
that kernel's Vector work); a kernel the pass forms around a lone op keeps the op's pattern class.
Each decision is a remark; a TransData that stays says why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, i1
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass

from ge.ge_dialects import fused, ge
from ge.ge_dialects.ge.base import GeOp
from ge.ge_dialects.ge.facts import CopiesElements, Engine, MovesData
from ge.ge_dialects.ge.layout import FRACTAL_NZ
from ge.ge_dialects.ge.target_attr import module_pass_target
from ge.ge_dialects.ge.types import shape_of
from ge.passes import remarks
from ge.passes.fusion.engine import restore_order
from ge.passes.pipeline import require_graph_level
from ge.passes.tensor_values import tensor_type
from ge.target import Target

NAME = "fuse-trans-data"
RULE = "trans-data-on-the-move"
HEAD_OPERANDS = ("q", "k", "v")
"""An attention's operands that are heads of projections, in order (the mask is none)."""
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
    """An AI Core kernel a conversion can join: a fused group or a lone Cube / Vector op, except one
    that reads constants as immediates (`IMMEDIATE_OPERANDS`: in a group they would be inputs)."""
    if isinstance(op, fused.GroupOp):
        return True
    return lone_pattern(op) is not None and not getattr(op, "IMMEDIATE_OPERANDS", ())


def join(
    kernel: Operation, before: Sequence[Operation], after: Sequence[Operation], lone_rule: str = LONE_OP_RULE
) -> fused.GroupOp:
    """One group of `before` (conversions of its inputs), `kernel`'s ops, `after` (conversions of its
    results), keeping `kernel`'s pattern and rule (`lone_rule` for a lone op's); its results are
    what the members' outside readers need."""
    location = kernel.location
    if isinstance(kernel, fused.GroupOp):
        pattern, rule = kernel.pattern.data, kernel.rule.data
        body = [op for op in fused.dissolve(kernel) if not fused.is_scalar_constant(op)]
    else:
        lone = lone_pattern(kernel)
        assert lone is not None  # is_kernel(kernel)
        pattern, rule, body = lone, lone_rule, [kernel]
    members = [*before, *body, *after]
    inside = set(members)
    keep = [r for op in members for r in op.results if any(u.operation not in inside for u in r.uses)]
    group = fused.outline(pattern, rule, members, keep)
    group.location = location
    return group


def fuse_block(block: Block, target: Target) -> None:
    """Each kernel a conversion joins stays where it was (a prologue's reader, an epilogue's
    producer), so the block stays in order; one check at the end, linear in the block."""
    on_the_move, bits_5hd = target.mte.nd_nz_on_the_move, target.vector.transdata_5hd_bits
    for op in list(block.ops):
        if not isinstance(op, ge.TransDataOp) or op.parent_block() is not block:
            continue
        conversion = f"{op.p('src_format')} -> {op.p('dst_format')}"
        if op.is_view() or (op.converts_nd_nz() and on_the_move):
            fuse_one(op, block)
        elif join_fractal_heads(op, block) or join_copy(op, block) or join_vector(op, block, bits_5hd):
            continue
        elif op.converts_nd_nz():
            why = (
                f"{conversion} stays a kernel: the MTE of {target.name} does not convert ND <-> FRACTAL_NZ on the move"
            )
            remarks.emit(NAME, "rejected", RULE, [op], why)
        else:
            why = (
                f"{conversion} stays a kernel: the MTE converts only between ND and FRACTAL_NZ on the move, "
                "no copy kernel (transpose, reshape, concat, slice ...) reads or writes it alone, and "
                + _no_vector_join(op, bits_5hd)
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
    Its readers if each is a copy (RexNet's two slices of one conv result: each converts what it
    copies, timed as the whole conversion's work), else its producer; whether it joined."""
    conversion = f"{td.p('src_format')} -> {td.p('dst_format')}"
    readers = list(dict.fromkeys(u.operation for u in td.dst.uses))
    producer = td.src.owner
    if len(readers) == 1 and is_copy(readers[0]):
        remarks.emit(NAME, "applied", RULE, readers, f"{conversion} of its input done in the same copy")
        td.detach()
        block.insert_op_before(td, readers[0])
        join(readers[0], [td], [])
        return True
    if len(readers) > 1 and all(is_copy(r) for r in readers):
        _prologue(td, readers, block, "done in the same copy")  # each converts what it copies
        return True
    if isinstance(producer, Operation) and is_copy(producer):
        remarks.emit(NAME, "applied", RULE, [producer], f"{conversion} of its result done in the same copy")
        td.detach()
        block.insert_op_after(td, producer)
        join(producer, [], [td])
        return True
    return False


def element_bits(td: ge.TransDataOp) -> int:
    element = tensor_type(td.src).element_type
    return 8 if element == i1 else getattr(element, "bitwidth", 64)


def is_vector_kernel(op: Operation) -> bool:
    """A kernel that computes on the Vector: a lone Vector op that is no copy (a copy's conversions
    are `join_copy`'s) and no conversion, or a fused group of Vector ops (no Cube member: the Cube
    loads NC1HWC0 as it is stored). Never one with a custom op: its kernel is the user's, which
    converts nothing it was not written to."""
    if isinstance(op, fused.GroupOp):
        members = [m for m in op.members if not fused.is_scalar_constant(m)]
        vector = all(isinstance(m, GeOp) and m.engine() is Engine.VECTOR for m in members)
        custom = any(isinstance(m, ge.CustomOp) for m in members)
        return vector and not custom and any(isinstance(m, GeOp) and not m.has_trait(MovesData) for m in members)
    moves = isinstance(op, GeOp) and (op.has_trait(MovesData) or isinstance(op, ge.CustomOp))
    return isinstance(op, GeOp) and not moves and lone_pattern(op) == "elementwise"


def join_vector(td: ge.TransDataOp, block: Block, bits_5hd: int) -> bool:
    """A conversion between NCHW and NC1HWC0 next to a Vector kernel becomes part of it where the
    target's TransDataTo5HD takes the element width (`[vector] transdata_5hd_bits`): the kernel
    converts the tile in the UB with the Vector's vnchwconv, as a TransData kernel does, and the
    tensor goes to and from memory once instead of twice. It joins its readers if each is a Vector
    kernel, else its producer if that is one (timed as the conversion's Vector work in the
    kernel); whether it joined."""
    if not td.converts_5hd() or element_bits(td) > bits_5hd:
        return False
    readers = list(dict.fromkeys(u.operation for u in td.dst.uses))
    if readers and all(is_vector_kernel(r) for r in readers):
        _prologue(td, readers, block, "converted in the UB (TransDataTo5HD)")
        return True
    producer = td.src.owner
    if isinstance(producer, Operation) and is_vector_kernel(producer):
        _epilogue(td, producer, block, "converted in the UB (TransDataTo5HD)")
        return True
    return False


def _no_vector_join(td: ge.TransDataOp, bits_5hd: int) -> str:
    """Why `join_vector` left `td` a kernel."""
    if not td.converts_5hd():
        return "it is not between NCHW and NC1HWC0 (what the Vector's TransDataTo5HD converts)"
    if element_bits(td) > bits_5hd:
        return f"the Vector's TransDataTo5HD takes elements of at most {bits_5hd} bits here, not {element_bits(td)}"
    return "neither its readers nor its producer are Vector kernels"


def _prologue(td: ge.TransDataOp, readers: list[Operation], block: Block, how: str) -> None:
    """`td` joins each of its readers (its own copy in each), as the conversion of an input."""
    by = "its reader" if len(readers) == 1 else f"each of its {len(readers)} readers"
    remarks.emit(
        NAME, "applied", RULE, readers, f"{td.p('src_format')} -> {td.p('dst_format')} of its input {how} by {by}"
    )
    join_readers(td, readers, block)


def join_readers(op: Operation, readers: list[Operation], block: Block, lone_rule: str = LONE_OP_RULE) -> None:
    """`op` (of one result) joins each of its readers, a copy of it in each, and is erased."""
    for reader in readers:
        own = op.clone()
        block.insert_op_before(own, op)
        for use in list(op.results[0].uses):
            if use.operation is reader:
                reader.operands[use.index] = own.results[0]
        join(reader, [own], [], lone_rule)
    op.detach()
    op.erase()


def _epilogue(td: ge.TransDataOp, producer: Operation, block: Block, how: str) -> None:
    """`td` joins the kernel that produces its source, as the conversion of a result."""
    remarks.emit(NAME, "applied", RULE, [producer], f"{td.p('src_format')} -> {td.p('dst_format')} of its result {how}")
    join_producer(td, producer, block)


def join_producer(op: Operation, producer: Operation, block: Block, lone_rule: str = LONE_OP_RULE) -> None:
    """`op` joins the kernel that produces its operand, after that kernel's ops."""
    op.detach()  # the kernel stays where its producer was (`op` sits before its first reader)
    block.insert_op_after(op, producer)
    join(producer, [], [op], lone_rule)


def _moves(op: Operation) -> bool:
    """A copy of one data operand (a reshape, transpose ...), not a conversion."""
    return (
        isinstance(op, GeOp)
        and op.has_trait(MovesData)
        and op.has_trait(CopiesElements)
        and not isinstance(op, ge.TransDataOp)
    )


def _into_heads(value: SSAValue, matrix: tuple[int | None, ...]) -> bool:
    """Every use of `value` (of an [..., S, H*D] projection) leads through copies of a data
    operand (the heads' reshape and transpose) to the q, k or v of an attention whose heads are
    whole NZ column blocks and are the heads of that matrix."""
    for use in value.uses:
        op = use.operation
        if isinstance(op, ge.AttentionOp):
            head = HEAD_OPERANDS[use.index] if use.index < len(HEAD_OPERANDS) else None
            if head is None or not op.fractal_heads() or op.projection(head) != matrix:
                return False
        elif not (_moves(op) and use.index == 0 and all(_into_heads(r, matrix) for r in op.results)):
            return False
    return bool(value.uses)


def _from_heads(value: SSAValue, matrix: tuple[int | None, ...]) -> bool:
    """`value` is the output of such an attention, its heads merged into `matrix` by copies."""
    op = value.owner
    if isinstance(op, ge.AttentionOp):
        return op.fractal_heads() and op.projection("output") == matrix
    return isinstance(op, Operation) and _moves(op) and _from_heads(op.operands[0], matrix)


def _inside(group: Operation, value: SSAValue) -> SSAValue | None:
    """The value `group` (a kernel) sees for its input `value`."""
    if isinstance(group, fused.GroupOp):
        index = list(group.inputs).index(value)
        return group.body.block.args[index]
    return value if isinstance(group, ge.AttentionOp) else None


def _yielded(group: Operation, value: SSAValue) -> SSAValue | None:
    """What `group` (a kernel) yields as its result `value`."""
    if isinstance(group, fused.GroupOp):
        terminator = group.body.block.last_op
        assert terminator is not None
        index = next(i for i, r in enumerate(group.results) if r is value)
        return terminator.operands[index]
    return value if isinstance(group, ge.AttentionOp) else None


def join_fractal_heads(td: ge.TransDataOp, block: Block) -> bool:
    """A conversion between a projection's FRACTAL_NZ and the ND heads of an attention kernel is
    no work where the heads are whole C0 column blocks: the kernel's Cube loads each head's NZ
    tiles (or stores them) as they lie, as GE's BatchMatMul reads NZ after ConfusionTransposeD. The
    conversion joins the attention kernels that read it, or the one that writes it; whether it did."""
    if not td.converts_nd_nz():
        return False
    readers = list(dict.fromkeys(u.operation for u in td.dst.uses))
    if td.p("src_format") == FRACTAL_NZ and readers and all(_heads_of(r, td) for r in readers):
        _prologue(td, readers, block, "loaded as whole-head fractals")
        return True
    producer = td.src.owner
    if td.p("dst_format") == FRACTAL_NZ and isinstance(producer, Operation):
        inner = _yielded(producer, td.src)
        if inner is not None and _from_heads(inner, _matrix(td)):
            _epilogue(td, producer, block, "stored as whole-head fractals")
            return True
    return False


def _heads_of(reader: Operation, td: ge.TransDataOp) -> bool:
    inner = _inside(reader, td.dst)
    return inner is not None and _into_heads(inner, _matrix(td))


def _matrix(td: ge.TransDataOp) -> tuple[int | None, ...]:
    """The matrix of the projection `td` converts (its last two dims)."""
    return tuple(shape_of(tensor_type(td.src))[-2:])


def fuse_one(td: ge.TransDataOp, block: Block) -> None:
    producer = td.src.owner
    if isinstance(producer, ge.ConstantOp):
        return  # fold-trans-data converts a weight once, at compile time
    readers = list(dict.fromkeys(u.operation for u in td.dst.uses))
    if readers and all(is_kernel(r) for r in readers):
        _prologue(td, readers, block, "converted on the load")
        return
    if isinstance(producer, Operation) and is_kernel(producer):
        _epilogue(td, producer, block, "converted on the store")
        return
    conversion = f"{td.p('src_format')} -> {td.p('dst_format')}"
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
                fuse_block(fn.body.block, target)
                restore_order(fn.body.block)  # a no-op check: the kernels stayed in place
