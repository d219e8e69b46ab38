"""The stream-and-event dialect: which hardware stream runs each task, and the events between them.

After `lower-to-streams`, the function body is the program order: each `task.kernel` carries its
`stream` (and `launch`), and synchronization is explicit:

    %0 = task.kernel "/a" (...) ... attributes {stream = 0 : i64, launch = 0 : i64, ...} {...}
    stream.record 0 on 0          // stream 0 records event 0 once the tasks before it finished
    stream.wait 0 on 1            // stream 1 waits for event 0 before its next task
    %1 = task.kernel "/b" (...) ... attributes {stream = 1 : i64, ...} {...}

A stream runs its tasks in program order; tasks on different streams overlap unless an event
orders them. The function's `stream.mode` attribute is the execution mode: `op` (the host
launches every task), `graph` (whole-graph sink: one launch) or `subgraph` (one launch per
sunk subgraph, the host scheduling between them); `stream.count` is the number of streams.
"""

from __future__ import annotations

from xdsl.dialects.builtin import I64, IntegerAttr
from xdsl.ir import Dialect
from xdsl.irdl import IRDLOperation, irdl_op_definition, prop_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

MODES = ("op", "graph", "subgraph")
MODE_ATTR = "stream.mode"
COUNT_ATTR = "stream.count"


class _EventOp(IRDLOperation):
    event = prop_def(IntegerAttr[I64])
    stream = prop_def(IntegerAttr[I64])

    def __init__(self, event: int, stream: int):
        super().__init__(properties={"event": IntegerAttr(event, 64), "stream": IntegerAttr(stream, 64)})

    @property
    def event_id(self) -> int:
        return self.event.value.data

    @property
    def stream_id(self) -> int:
        return self.stream.value.data

    def verify_(self) -> None:
        if self.event_id < 0 or self.stream_id < 0:
            raise VerifyException(f"{self.name}: event and stream ids must not be negative")

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.event_id} on {self.stream_id}")

    @classmethod
    def parse(cls, parser: Parser):
        event = parser.parse_integer(allow_boolean=False, allow_negative=False)
        parser.parse_keyword("on")
        stream = parser.parse_integer(allow_boolean=False, allow_negative=False)
        return cls(event, stream)


@irdl_op_definition
class RecordOp(_EventOp):
    """`stream.record E on S`: event E fires when stream S reaches this point."""

    name = "stream.record"


@irdl_op_definition
class WaitOp(_EventOp):
    """`stream.wait E on S`: stream S does not go past this point before event E fired."""

    name = "stream.wait"


STREAM = Dialect("stream", [RecordOp, WaitOp], [])
