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
from xdsl.ir import Attribute, Block, Dialect, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import IsolatedFromAbove, IsTerminator, Pure, SingleBlockImplicitTerminator
from xdsl.utils.exceptions import VerifyException

#: The pattern classes a group may have, and what each kernel looks like.
PATTERN_CLASSES = {
    "cube+elementwise": "a Cube op (conv, matmul, gemm) with an elementwise epilogue",
    "elementwise": "a chain of elementwise ops run on the Vector unit",
    "reduce+elementwise": "a reduction (softmax, layer_norm, reduce_mean) with elementwise neighbours",
    "attention": "scaled dot-product attention with the layout ops around it",
}


@irdl_op_definition
class YieldOp(IRDLOperation):
    name = "fused.yield"

    values = var_operand_def()
    traits = traits_def(IsTerminator(), Pure())

    def __init__(self, values: Sequence[SSAValue]):
        super().__init__(operands=[values])

    def print(self, printer: Printer) -> None:
        if self.values:
            printer.print_string(" ")
            printer.print_list(self.values, printer.print_operand)
            printer.print_string(" : ")
            printer.print_list((v.type for v in self.values), printer.print_attribute)

    @classmethod
    def parse(cls, parser: Parser) -> YieldOp:
        operands = parser.parse_optional_undelimited_comma_separated_list(
            parser.parse_optional_unresolved_operand, parser.parse_unresolved_operand) or []
        types: list[Attribute] = []
        if operands:
            parser.parse_punctuation(":")
            types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        return cls(parser.resolve_operands(operands, types, parser.pos))


@irdl_op_definition
class GroupOp(IRDLOperation):
    name = "fused.group"

    inputs = var_operand_def()
    outputs = var_result_def()
    pattern = prop_def(StringAttr)
    rule = prop_def(StringAttr)
    body = region_def("single_block")

    traits = traits_def(IsolatedFromAbove(), Pure(), SingleBlockImplicitTerminator(YieldOp))

    def __init__(self, pattern: str, rule: str, inputs: Sequence[SSAValue],
                 result_types: Sequence[Attribute], body: Region):
        super().__init__(operands=[inputs], result_types=[result_types], regions=[body],
                         properties={"pattern": StringAttr(pattern), "rule": StringAttr(rule)})

    @property
    def members(self) -> list[Operation]:
        """The ops of the kernel (the terminator excluded)."""
        return [op for op in self.body.block.ops if not isinstance(op, YieldOp)]

    def verify_(self) -> None:
        where = f"fused.group '{self.rule.data}'"
        if self.pattern.data not in PATTERN_CLASSES:
            raise VerifyException(f"{where}: unknown pattern class '{self.pattern.data}'; "
                                  f"expected one of {', '.join(PATTERN_CLASSES)}")
        block = self.body.block
        if [a.type for a in block.args] != [v.type for v in self.inputs]:
            raise VerifyException(f"{where}: block arguments must have the types of the group's inputs")
        last = block.last_op
        if not isinstance(last, YieldOp):
            raise VerifyException(f"{where}: body must end in fused.yield")
        if [v.type for v in last.values] != [r.type for r in self.outputs]:
            raise VerifyException(f"{where}: fused.yield types must match the group's result types")
        if not self.members:
            raise VerifyException(f"{where}: a group holds at least one op")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.pattern.data)
        printer.print_string(" ")
        printer.print_string_literal(self.rule.data)
        printer.print_string(" (")
        printer.print_list(self.inputs, printer.print_operand)
        printer.print_string(") : ")
        printer.print_function_type(self.inputs.types, self.outputs.types)
        if self.attributes:
            printer.print_string(" attributes ")
            printer.print_attr_dict(self.attributes)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=True)

    @classmethod
    def parse(cls, parser: Parser) -> GroupOp:
        pattern = parser.parse_str_literal("pattern class")
        rule = parser.parse_str_literal("rule name")
        operands: list[UnresolvedOperand] = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_unresolved_operand)
        parser.parse_punctuation(":")
        pos = parser.pos
        fn = parser.parse_function_type()
        inputs = parser.resolve_operands(operands, fn.inputs.data, pos)
        attributes = {}
        if parser.parse_optional_keyword("attributes"):
            attributes = parser.parse_optional_attr_dict()
        body = parser.parse_region()
        op = cls(pattern, rule, inputs, fn.outputs.data, body)
        op.attributes.update(attributes)
        return op


FUSED = Dialect("fused", [GroupOp, YieldOp], [])


def outline(pattern: str, rule: str, members: Sequence[Operation], keep: Sequence[SSAValue]) -> GroupOp:
    """Moves `members` (in program order, still in their block) into a new `fused.group`.

    Values the members read from outside become the group's inputs (constants with a single
    element are cloned into the body instead: a kernel holds scalars as immediates); `keep` are
    the member results used outside, which become the group's results. The group is inserted
    where the last member was; the caller restores dominance when outside users came earlier.
    """
    member_set = set(members)
    inputs: list[SSAValue] = []
    cloned_scalars: list[Operation] = []
    for op in members:
        for v in op.operands:
            if v.owner in member_set or v in inputs:
                continue
            owner = v.owner
            if _is_scalar_constant(owner):
                if owner not in cloned_scalars:
                    cloned_scalars.append(owner)
                continue
            inputs.append(v)
    block = Block(arg_types=[v.type for v in inputs])
    mapping: dict[SSAValue, SSAValue] = dict(zip(inputs, block.args))
    for c in cloned_scalars:
        clone = c.clone()
        block.add_op(clone)
        mapping[c.results[0]] = clone.results[0]
    last = members[-1]
    group = GroupOp(pattern, rule, inputs, [v.type for v in keep], Region(block))
    group.location = members[0].location
    last.parent_block().insert_op_after(group, last)
    for op in members:
        op.detach()
        for i, v in enumerate(op.operands):
            if v in mapping:
                op.operands[i] = mapping[v]
        block.add_op(op)
    block.add_op(YieldOp(keep))
    for old, new in zip(keep, group.outputs):
        old.replace_uses_with_if(new, lambda use: not _inside(use.operation, group))
    return group


def _inside(op: Operation, group: GroupOp) -> bool:
    parent = op.parent_op()
    while parent is not None:
        if parent is group:
            return True
        parent = parent.parent_op()
    return False


def _is_scalar_constant(op: Operation) -> bool:
    from ge_dialects.ge.constant import ConstantOp

    if not isinstance(op, ConstantOp) or op.inline_value() is None:
        return False
    return op.inline_value().size == 1
