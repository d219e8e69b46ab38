"""Every value is defined before it is used: the check xDSL's verifier leaves out.

xDSL's parser resolves a use of `%3` written above `%3 = ...` as a forward reference and its verifier
does not check dominance, so a module with two lines swapped (or `%0 = op(%0)`) would be accepted and
fail later inside the interpreter or the scheduler. Here a value may be used

- after its defining operation in the same block, or inside a region of an operation that comes after
  it (a result of an enclosing block's earlier operation);
- anywhere inside the block whose argument it is, including nested regions.

A use in another block of the same multi-block region (a control-flow graph) needs a dominator tree;
the project's dialects have no such regions, so those uses are left alone rather than guessed at.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue


@dataclass(frozen=True)
class BadUse:
    """`user` uses `value`, which is not defined at that point."""

    user: Operation
    value: SSAValue
    reason: str  # "before its definition" or "outside the region that defines it"


def first_bad_use(root: Operation) -> BadUse | None:
    """The first use (in program order) of a value where it is not yet, or not, defined."""
    position = _positions_in_block(root)
    for user in root.walk():
        for value in user.operands:
            reason = _why_not_visible(value, user, position)
            if reason is not None:
                return BadUse(user, value, reason)
    return None


def _positions_in_block(root: Operation) -> dict[Operation, int]:
    position: dict[Operation, int] = {}
    for op in root.walk():
        for region in op.regions:
            for block in region.blocks:
                for index, child in enumerate(block.ops):
                    position[child] = index
    return position


def _why_not_visible(value: SSAValue, user: Operation, position: dict[Operation, int]) -> str | None:
    if isinstance(value, OpResult):
        defining_block = value.op.parent_block()
    elif isinstance(value, BlockArgument):
        defining_block = value.block
    else:  # not a value of the IR (never produced by parsing)
        return None
    ancestor = _ancestor_in(defining_block, user)
    if ancestor is None:
        if _in_enclosing_region(defining_block, user):
            return None  # another block of a control-flow graph region: not checked (see above)
        return "outside the region that defines it"
    if isinstance(value, OpResult) and not position[value.op] < position[ancestor]:
        return "before its definition"
    return None


def _ancestor_in(block: Block | None, op: Operation) -> Operation | None:
    """`op` or the operation enclosing it that sits directly in `block`."""
    node: Operation | None = op
    while node is not None:
        parent = node.parent_block()
        if parent is block:
            return node
        node = parent.parent_op() if parent is not None else None
    return None


def _in_enclosing_region(block: Block | None, op: Operation) -> bool:
    region = block.parent if block is not None else None
    node: Operation | None = op
    while node is not None:
        parent = node.parent_block()
        if parent is None:
            return False
        if parent.parent is region:
            return True
        node = parent.parent_op()
    return False
