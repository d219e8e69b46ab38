"""The stream-and-event dialect: which hardware stream runs each task, and the events between them.

After `lower-to-streams`, the function body is the program order: each `task.kernel` carries its
`stream` (and `launch`), and synchronization is explicit, with events as SSA values:

    %0 = task.kernel "/a" (...) ... attributes {stream = 0 : i64, launch = 0 : i64, ...} {...}
    %ev0 = stream.record 0 on 0 after %0 : tensor<...>   // hardware event id 0, recorded on
                                                          // stream 0 once the task defining %0
                                                          // (its latest task so far) finished
    stream.wait %ev0 on 1                                 // stream 1 waits for %ev0 before its
    %1 = task.kernel "/b" (...) ... {stream = 1 : i64}    // next task in program order

So which task an event follows is in the IR (the record's `after` operand), and which record a
wait waits for is its SSA operand, not a matter of op positions. A stream runs its tasks in
program order; tasks on different streams overlap unless an event orders them. The function's
`stream.mode` attribute is the execution mode: `op` (the host launches every task), `graph`
(whole-graph sink: one launch) or `subgraph` (one launch per sunk subgraph, the host scheduling
between them); `stream.count` is the number of streams (every stream id is below it).

Control flow the device decides (GE's label tasks, for a graph whose shapes are all known) is a
*control program*: a function of several blocks, each a label (LabelSet), holding calls of
functions lowered to streams and ending in a label task or the return:

    %c = func.call @main_sub_0_know(%x) : (tensor<2x8xf32>) -> tensor<i1>
    stream.label_switch %c : tensor<i1> [^else, ^then]     // LabelSwitchByIndex: the device reads
  ^then:                                                   // the index and jumps to branch [index]
    %t = func.call @then(%x) : (tensor<2x8xf32>) -> tensor<2x8xf32>
    stream.label_goto ^join(%t : tensor<2x8xf32>)           // LabelGoto, passing the join's values
  ...

(passes/sink_control_flow.py makes them; interpreter/host_program.py runs them.)

Kernels, records and waits have memory and ordering effects (`DeviceEffects`), so generic passes
(cse, dce, motion) neither merge, drop nor reorder them. Whole-function properties (every
cross-stream dependency and every memory reuse covered by events, event ids safe to reuse) are
checked by `lowering/streams/verify.py` (pass `verify-streams`).
"""

from __future__ import annotations

from collections.abc import Set

from xdsl.dialects.builtin import I64, IntegerAttr, IntegerType, StringAttr, TensorType
from xdsl.ir import Block, Dialect, Operation, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    successor_def,
    traits_def,
    var_operand_def,
    var_successor_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import EffectInstance, IsTerminator, MemoryEffect, MemoryEffectKind
from xdsl.utils.exceptions import VerifyException

MODES = ("op", "graph", "subgraph", "dynamic")
"""How the host launches a function's tasks: `op` one launch each, `graph` one launch (whole-graph
sink), `subgraph` one per sunk subgraph, `dynamic` one each after inferring its shapes and tiling
on the host (GE's dynamic-shape execution: the graph's shapes are known only when it runs)."""
MODE_ATTR = "stream.mode"
COUNT_ATTR = "stream.count"
REUSE_EVENTS_ATTR = "stream.reuse_events"
"""Function attribute: how many events exist only because planned memory is reused."""
MAX_STREAMS = 1024
"""Streams one model may use (the Ascend runtime's per-device stream limit is of this order)."""

_DEVICE_EFFECTS = frozenset({EffectInstance(MemoryEffectKind.READ), EffectInstance(MemoryEffectKind.WRITE)})


class DeviceEffects(MemoryEffect):
    """Reads and writes device state (memory, stream queues, event flags): never Pure, so cse
    does not merge two such ops and dce does not drop one whose results are unused."""

    @classmethod
    def get_effects(cls, op: Operation) -> Set[EffectInstance]:
        return _DEVICE_EFFECTS


def stream_count_of(op: Operation) -> int | None:
    """The `stream.count` of the function holding `op`, or None when it has none."""
    fn = op.parent_op()
    attr = fn.attributes.get(COUNT_ATTR) if fn is not None else None
    return attr.value.data if isinstance(attr, IntegerAttr) else None


def check_stream_id(op: Operation, where: str, stream: int) -> None:
    """A stream id is >= 0 and below its function's `stream.count` (itself >= 1)."""
    if stream < 0:
        raise VerifyException(f"{where}: stream must not be negative, got {stream}")
    count = stream_count_of(op)
    if count is None:
        return
    if count < 1:
        raise VerifyException(f"{where}: the function's {COUNT_ATTR} must be at least 1, got {count}")
    if stream >= count:
        raise VerifyException(f"{where}: stream {stream} is not below the function's {COUNT_ATTR} = {count}")


@irdl_attr_definition
class EventType(ParametrizedAttribute, TypeAttribute):
    """`!stream.event`: one recording of a hardware event, produced by `stream.record`."""

    name = "stream.event"


@irdl_op_definition
class RecordOp(IRDLOperation):
    """`%ev = stream.record E on S after %v : T`: hardware event E fires when the task defining
    `%v` (on stream S, its latest task before this op) has finished."""

    name = "stream.record"

    after = operand_def()
    result = result_def(EventType)
    event = prop_def(IntegerAttr[I64])
    stream = prop_def(IntegerAttr[I64])

    traits = traits_def(DeviceEffects())

    def __init__(self, event: int, stream: int, after: SSAValue):
        super().__init__(
            operands=[after],
            result_types=[EventType()],
            properties={"event": IntegerAttr(event, 64), "stream": IntegerAttr(stream, 64)},
        )

    @property
    def event_id(self) -> int:
        return self.event.value.data

    @property
    def stream_id(self) -> int:
        return self.stream.value.data

    @property
    def task(self) -> Operation | None:
        """The task.kernel the event follows."""
        owner = self.after.owner
        return owner if isinstance(owner, Operation) and owner.name == "task.kernel" else None

    def verify_(self) -> None:
        where = f"stream.record {self.event_id} on {self.stream_id}"
        if self.event_id < 0:
            raise VerifyException(f"{where}: event id must not be negative")
        check_stream_id(self, where, self.stream_id)
        kernel = self.task
        if kernel is None:
            raise VerifyException(f"{where}: 'after' must be a result of a task.kernel")
        task_stream = kernel.properties.get("stream")
        if isinstance(task_stream, IntegerAttr) and task_stream.value.data != self.stream_id:
            name = kernel.properties["name"]
            assert isinstance(name, StringAttr), "task.kernel declares its name a StringAttr"
            raise VerifyException(
                f"{where}: follows task '{name.data}' on stream {task_stream.value.data}, not on the record's stream"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.event_id} on {self.stream_id} after ")
        printer.print_operand(self.after)
        printer.print_string(" : ")
        printer.print_attribute(self.after.type)

    @classmethod
    def parse(cls, parser: Parser) -> RecordOp:
        event = parser.parse_integer(allow_boolean=False, allow_negative=False)
        parser.parse_keyword("on")
        stream = parser.parse_integer(allow_boolean=False, allow_negative=False)
        parser.parse_keyword("after")
        unresolved = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        after = parser.resolve_operand(unresolved, parser.parse_type())
        return cls(event, stream, after)


@irdl_op_definition
class WaitOp(IRDLOperation):
    """`stream.wait %ev on S`: stream S does not start its next task before `%ev` fired."""

    name = "stream.wait"

    event = operand_def(EventType)
    stream = prop_def(IntegerAttr[I64])

    traits = traits_def(DeviceEffects())

    def __init__(self, event: SSAValue, stream: int):
        super().__init__(operands=[event], properties={"stream": IntegerAttr(stream, 64)})

    @property
    def stream_id(self) -> int:
        return self.stream.value.data

    @property
    def record(self) -> RecordOp | None:
        owner = self.event.owner
        return owner if isinstance(owner, RecordOp) else None

    @property
    def event_id(self) -> int:
        """The hardware event id of the record waited for."""
        record = self.record
        if record is None:
            raise VerifyException(f"stream.wait on {self.stream_id}: its event does not come from a stream.record")
        return record.event_id

    def verify_(self) -> None:
        where = f"stream.wait on {self.stream_id}"
        check_stream_id(self, where, self.stream_id)
        record = self.record
        if record is None:
            raise VerifyException(f"{where}: its event does not come from a stream.record")
        if record.stream_id == self.stream_id:
            raise VerifyException(f"{where}: waits for an event recorded on its own stream")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.event)
        printer.print_string(f" on {self.stream_id}")

    @classmethod
    def parse(cls, parser: Parser) -> WaitOp:
        unresolved = parser.parse_unresolved_operand()
        parser.parse_keyword("on")
        stream = parser.parse_integer(allow_boolean=False, allow_negative=False)
        return cls(parser.resolve_operand(unresolved, EventType()), stream)


def _index_kind(t) -> int | None:
    """The number of branches an index of type `t` selects among: 2 for a bool, 0 (any) for an
    integer; None for a type that is no index (a scalar or one-element tensor of either)."""
    if not isinstance(t, TensorType) or any(d != 1 for d in t.get_shape()):
        return None
    element = t.element_type
    if not isinstance(element, IntegerType):
        return None
    return 2 if element.width.data == 1 else 0


@irdl_op_definition
class LabelSwitchOp(IRDLOperation):
    """`stream.label_switch %index : T [^b0, ^b1, ...]`: GE's LabelSwitchByIndex. The device reads
    `%index` (a bool, false 0 and true 1, or an integer; a scalar or a one-element tensor) and
    jumps to branch [index]; values reach the branches through the blocks dominating them."""

    name = "stream.label_switch"

    index = operand_def(TensorType)
    branches = var_successor_def()

    traits = traits_def(IsTerminator(), DeviceEffects())

    def __init__(self, index: SSAValue, branches: list[Block]):
        super().__init__(operands=[index], successors=[branches])

    def verify_(self) -> None:
        kind = _index_kind(self.index.type)
        if kind is None:
            raise VerifyException(
                f"stream.label_switch: the index must be a bool or integer scalar, got {self.index.type}"
            )
        if kind == 2 and len(self.branches) != 2:
            raise VerifyException(
                f"stream.label_switch: a bool index selects between 2 labels, {len(self.branches)} given"
            )
        if not self.branches:
            raise VerifyException("stream.label_switch: no label to switch to")
        for block in self.branches:
            if block.args:
                raise VerifyException(
                    "stream.label_switch: a label it switches to takes no values (they reach it by dominance)"
                )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.index)
        printer.print_string(" : ")
        printer.print_attribute(self.index.type)
        printer.print_string(" [")
        printer.print_list(self.branches, printer.print_block_name)
        printer.print_string("]")

    @classmethod
    def parse(cls, parser: Parser) -> LabelSwitchOp:
        unresolved = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        index = parser.resolve_operand(unresolved, parser.parse_type())
        branches = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_successor)
        return cls(index, branches)


@irdl_op_definition
class LabelGotoOp(IRDLOperation):
    """`stream.label_goto ^b(%v : T, ...)`: GE's LabelGoto, passing the values the label takes
    (the results of a branch at its join; the carried values at a loop's head)."""

    name = "stream.label_goto"

    values = var_operand_def()
    label = successor_def()

    traits = traits_def(IsTerminator(), DeviceEffects())

    def __init__(self, label: Block, values: list[SSAValue]):
        super().__init__(operands=[values], successors=[label])

    def verify_(self) -> None:
        takes = [a.type for a in self.label.args]
        given = [v.type for v in self.values]
        if takes != given:
            shown = ", ".join(map(str, takes)) or "no values"
            raise VerifyException(
                f"stream.label_goto: its label takes ({shown}), given ({', '.join(map(str, given)) or 'no values'})"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_block_name(self.label)
        if self.values:
            printer.print_string("(")
            printer.print_list(self.values, lambda v: self._print_value(printer, v))
            printer.print_string(")")

    @staticmethod
    def _print_value(printer: Printer, value: SSAValue) -> None:
        printer.print_operand(value)
        printer.print_string(" : ")
        printer.print_attribute(value.type)

    @classmethod
    def parse(cls, parser: Parser) -> LabelGotoOp:
        label = parser.parse_successor()

        def value() -> SSAValue:
            unresolved = parser.parse_unresolved_operand()
            parser.parse_punctuation(":")
            return parser.resolve_operand(unresolved, parser.parse_type())

        values = parser.parse_optional_comma_separated_list(parser.Delimiter.PAREN, value) or []
        return cls(label, values)


LABEL_OPS = (LabelSwitchOp, LabelGotoOp)


def is_control_program(fn: Operation) -> bool:
    """Whether `fn` holds control flow sunk to the device: a label task among its ops."""
    return any(isinstance(op, LABEL_OPS) for block in fn.regions[0].blocks for op in block.ops) if fn.regions else False


STREAM = Dialect("stream", [RecordOp, WaitOp, LabelSwitchOp, LabelGotoOp], [EventType])
