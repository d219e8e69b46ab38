"""What region ops that hold a kernel's ops share (`fused.group`, `task.kernel`).

Such an op is isolated from above: its operands are everything the kernel reads, its body is one
block whose arguments stand for them, and a yield returns the results. The textual form is

    %r = <op> "<label>" ... (%a, %b) : (A, B) -> R [attributes {...}] {
    ^bb0(%x: A, %y: B):
      ...
      <yield> %v : R
    }
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import IRDLOperation, traits_def, var_operand_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import IsTerminator, Pure
from xdsl.utils.exceptions import VerifyException

OpT = TypeVar("OpT", bound=Operation)


def print_signature(printer: Printer, op: Operation, body: Region, extra: dict[str, Attribute]) -> None:
    """` (%a, %b) : (A, B) -> R [attributes {...}] { body }`"""
    printer.print_string(" (")
    printer.print_list(op.operands, printer.print_operand)
    printer.print_string(") : ")
    printer.print_function_type(op.operand_types, op.result_types)
    if extra:
        printer.print_string(" attributes ")
        printer.print_attr_dict(extra)
    printer.print_string(" ")
    printer.print_region(body, print_entry_block_args=True)


def parse_signature(parser: Parser) -> tuple[list[SSAValue], list[Attribute], dict[str, Attribute], Region]:
    """Reads what `print_signature` wrote: inputs, result types, extra attributes, body."""
    operands = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_unresolved_operand)
    parser.parse_punctuation(":")
    pos = parser.pos
    fn = parser.parse_function_type()
    inputs = list(parser.resolve_operands(operands, fn.inputs.data, pos))
    extra: dict[str, Attribute] = {}
    if parser.parse_optional_keyword("attributes"):
        extra = dict(parser.parse_optional_attr_dict())
    return inputs, list(fn.outputs.data), extra, parser.parse_region()


class OutlinedYield(IRDLOperation):
    """The terminator of an outlined body: `<yield> %a, %b : A, B` returns the op's results."""

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
    def parse(cls, parser: Parser):
        operands = (
            parser.parse_optional_undelimited_comma_separated_list(
                parser.parse_optional_unresolved_operand, parser.parse_unresolved_operand
            )
            or []
        )
        types: list[Attribute] = []
        if operands:
            parser.parse_punctuation(":")
            types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        return cls(parser.resolve_operands(operands, types, parser.pos))


def verify_body(where: str, op: Operation, body: Region, yield_type: type[Operation]) -> None:
    block = body.block
    if [a.type for a in block.args] != [v.type for v in op.operands]:
        raise VerifyException(f"{where}: block arguments must have the types of the inputs")
    last = block.last_op
    if not isinstance(last, yield_type):
        raise VerifyException(f"{where}: body must end in {yield_type.name}")
    if [v.type for v in last.operands] != [r.type for r in op.results]:
        raise VerifyException(f"{where}: {yield_type.name} types must match the result types")
    if last is block.first_op:
        raise VerifyException(f"{where}: the body holds no op")


def outline_into(
    members: Sequence[Operation],
    keep: Sequence[SSAValue],
    make: Callable[[list[SSAValue], list[Attribute], Region], OpT],
    make_yield: Callable[[Sequence[SSAValue]], Operation],
    is_immediate: Callable[[Operation], bool],
    anchor: Operation | None = None,
) -> OpT:
    """Moves `members` (program order, one block) into a new region op built by `make`, which takes
    the location (the node name) of `anchor` (default: the first member).

    Values read from outside become inputs, except ops `is_immediate` accepts (scalar constants),
    which are cloned into the body; `keep` (member results used outside) become the results. The
    op goes where the last member was; outside uses of `keep` are redirected to its results."""
    member_set = set(members)
    inputs: list[SSAValue] = []
    immediates: list[Operation] = []
    for op in members:
        for v in op.operands:
            if v.owner in member_set or v in inputs:
                continue
            if isinstance(v.owner, Operation) and is_immediate(v.owner):
                if v.owner not in immediates:
                    immediates.append(v.owner)
                continue
            inputs.append(v)
    block = Block(arg_types=[v.type for v in inputs])
    mapping: dict[SSAValue, SSAValue] = dict(zip(inputs, block.args))
    for c in immediates:
        clone = c.clone()
        block.add_op(clone)
        mapping.update(zip(c.results, clone.results))
    last = members[-1]
    new = make(inputs, [v.type for v in keep], Region(block))
    new.location = (members[0] if anchor is None else anchor).location
    parent = last.parent_block()
    assert parent is not None, "outline_into takes members that sit in one block"
    parent.insert_op_after(new, last)
    for op in members:
        op.detach()
        for i, v in enumerate(op.operands):
            if v in mapping:
                op.operands[i] = mapping[v]
        block.add_op(op)
    block.add_op(make_yield(keep))
    for old, result in zip(keep, new.results):
        old.replace_uses_with_if(result, lambda use: not _inside(use.operation, new))
    return new


def _inside(op: Operation, container: Operation) -> bool:
    parent = op.parent_op()
    while parent is not None:
        if parent is container:
            return True
        parent = parent.parent_op()
    return False
