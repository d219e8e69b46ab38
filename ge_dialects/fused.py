"""The fused dialect: `fused.group`, the ops of one fused kernel outlined into a region.

    %r = fused.group "cube+elementwise" "cube_epilogue" (%x, %w, %b) : (T0, T1, T2) -> T3 {
    ^bb0(%a : T0, %c : T1, %d : T2):
      %0 = ge.conv %a, %c, B = %d {...} : (...) -> T3 loc("/layer1/conv1/Conv")
      %1 = ge.relu %0 : (T3) -> T3 loc("/layer1/relu/Relu")
      fused.yield %1 : T3
    } loc("/layer1/conv1/Conv")

The first string is the pattern class (GE's UB-fusion op pattern classes: cube+elementwise,
elementwise, reduce+elementwise, attention), the second the rule that formed the group. The body
is isolated from above: everything the kernel reads crosses the boundary as an operand, so the
cost model counts memory traffic at the group's edge and the interpreter runs the body as is.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Attribute, Dialect, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import IsolatedFromAbove, RecursiveMemoryEffect, SingleBlockImplicitTerminator
from xdsl.utils.exceptions import VerifyException

from ge.ge_dialects.outlined import OutlinedYield, outline_into, parse_signature, print_signature, verify_body

#: The pattern classes a group may have, and what each kernel looks like.
PATTERN_CLASSES = {
    "cube+elementwise": "a Cube op (conv, matmul, gemm) with an elementwise epilogue",
    "elementwise": "a chain of elementwise ops run on the Vector unit",
    "reduce+elementwise": "a reduction (softmax, layer_norm, reduce_mean) with elementwise neighbours",
    "attention": "scaled dot-product attention with the layout ops around it",
}


@irdl_op_definition
class YieldOp(OutlinedYield):
    name = "fused.yield"


@irdl_op_definition
class GroupOp(IRDLOperation):
    name = "fused.group"

    inputs = var_operand_def()
    outputs = var_result_def()
    pattern = prop_def(StringAttr)
    rule = prop_def(StringAttr)
    body = region_def("single_block")

    traits = traits_def(IsolatedFromAbove(), RecursiveMemoryEffect(), SingleBlockImplicitTerminator(YieldOp))

    def __init__(
        self, pattern: str, rule: str, inputs: Sequence[SSAValue], result_types: Sequence[Attribute], body: Region
    ):
        super().__init__(
            operands=[inputs],
            result_types=[result_types],
            regions=[body],
            properties={"pattern": StringAttr(pattern), "rule": StringAttr(rule)},
        )

    @property
    def members(self) -> list[Operation]:
        """The ops of the kernel (the terminator excluded)."""
        return [op for op in self.body.block.ops if not isinstance(op, YieldOp)]

    def verify_(self) -> None:
        where = f"fused.group '{self.rule.data}'"
        if self.pattern.data not in PATTERN_CLASSES:
            raise VerifyException(
                f"{where}: unknown pattern class '{self.pattern.data}'; expected one of {', '.join(PATTERN_CLASSES)}"
            )
        verify_body(where, self, self.body, YieldOp)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.pattern.data)
        printer.print_string(" ")
        printer.print_string_literal(self.rule.data)
        print_signature(printer, self, self.body, dict(self.attributes))

    @classmethod
    def parse(cls, parser: Parser) -> GroupOp:
        pattern = parser.parse_str_literal("pattern class")
        rule = parser.parse_str_literal("rule name")
        inputs, result_types, extra, body = parse_signature(parser)
        op = cls(pattern, rule, inputs, result_types, body)
        op.attributes.update(extra)
        return op


FUSED = Dialect("fused", [GroupOp, YieldOp], [])


def outline(
    pattern: str,
    rule: str,
    members: Sequence[Operation],
    keep: Sequence[SSAValue],
    anchor: Operation | None = None,
) -> GroupOp:
    """Moves `members` (program order, one block) into a new `fused.group` whose results are `keep`,
    named after its `anchor` (default: the first member); scalar constants are cloned in (a kernel
    holds them as immediates). The caller restores dominance when outside users came before the
    last member."""
    return outline_into(
        members,
        keep,
        lambda ins, types, body: GroupOp(pattern, rule, ins, types, body),
        YieldOp,
        is_scalar_constant,
        anchor,
    )


def dissolve(group: GroupOp) -> list[Operation]:
    """The inverse of `outline`: moves the body's ops out in place of `group` (its block arguments
    become the group's operands, its results the yielded values) and erases the group; the moved
    ops, in order (the scalar constants cloned in among them)."""
    block = group.parent_block()
    assert block is not None  # a group sits in a block
    body = group.body.block
    for arg, value in zip(body.args, group.inputs, strict=True):
        arg.replace_all_uses_with(value)
    moved = []
    for op in list(body.ops):
        if isinstance(op, YieldOp):
            for result, value in zip(group.results, op.operands, strict=True):
                result.replace_all_uses_with(value)
            continue
        op.detach()
        block.insert_op_before(op, group)
        moved.append(op)
    group.detach()
    group.erase()
    return moved


def is_scalar_constant(op: Operation) -> bool:
    from ge.ge_dialects.ge.constant import ConstantOp

    if not isinstance(op, ConstantOp):
        return False
    value = op.inline_value()
    return value is not None and value.size == 1
