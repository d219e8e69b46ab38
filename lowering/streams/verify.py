"""The stream-level verifier: a function lowered to streams is free of races.

`verify_stream_function(fn)` proves, from the IR alone, that

- `stream.count` is at least 1 and every task, record and wait is on a stream below it;
- every record follows a task of its own stream, the latest one before it in program order, and
  every wait's event comes from a record and is followed by a task of the waiting stream;
- every cross-stream data dependency (a task reading another stream's result) and every reuse
  dependency (`lowering/streams/reuse.py`: the accesses of a buffer before the writer of a later
  buffer over its bytes) is implied by *happens-before*: the stream order (consecutive tasks of a
  stream) plus the events (the record's task -> the first task of the waiting stream after the
  wait);
- every in-place state write (`state_alias`, lowering/memory/state.py) starts after every task
  reading the variable's old value: each write-after-read edge is implied by happens-before;
- event ids are reused safely under both semantics a runtime may have. *Latest record* (a wait
  binds to the latest record of its id issued before it, CUDA's cudaStreamWaitEvent): no other
  record of the id is issued between a record and its wait. *Flag* (a record sets the id's flag,
  a wait blocks until it is set and clears it): every record is waited exactly once, and a new
  record of an id fires only after the previous wait of that id has completed, i.e. the task
  after that wait happens-before (or is) the new record's task.

A violation raises `StreamError` with one line naming the two tasks.

`verify_control_program(fn)` checks a control program (control flow sunk to the device): its
reading (interpreter/control_program.py: every label ends in a label task or the return, no loop
without a way out) and that every function it calls is lowered to streams or is a control program
itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import func

from ge.ge_dialects import stream, task
from ge.ge_dialects.stream import is_control_program
from ge.interpreter.control_program import ControlProgram, read_control_program
from ge.interpreter.stream_program import NotLowered, StreamError, StreamProgram, read_program
from ge.lowering.memory.state import StateError, war_edges
from ge.lowering.streams.events import stream_edges
from ge.lowering.streams.graph import Reachability
from ge.lowering.streams.reuse import ReuseError, buffer_label, reuse_edges

__all__ = ["StreamError", "StreamFacts", "stream_facts", "verify_control_program", "verify_stream_function"]


@dataclass(frozen=True)
class StreamFacts:
    """What the IR says (`read_program`), in task indices (program order)."""

    program: StreamProgram
    kernels: list[task.KernelOp]
    streams: list[int]
    events: list[tuple[int, int]]
    """(record's task, first task of the waiting stream after the wait), one per wait."""
    reach: Reachability
    """Happens-before: reach.reaches(u, v) iff u finishes before v starts."""

    def ordered(self, u: int, v: int) -> bool:
        return u == v or self.reach.reaches(u, v)


def _where(fn: func.FuncOp) -> str:
    return f"@{fn.sym_name.data}"


def stream_facts(fn: func.FuncOp) -> StreamFacts:
    """The program's tasks, streams and events, after the local rules (stream count and ids, a task
    after every wait, every record waited once)."""
    try:
        program = read_program(fn)
    except NotLowered as e:
        raise StreamError(str(e)) from None
    check_streams(fn, program)
    check_waits(fn, program)
    streams = [t.stream for t in program.tasks]
    events = [(program.recorded_after[w.record], v) for w, v in program.next_task.items() if w.record is not None]
    succ: list[list[int]] = [[] for _ in program.tasks]
    for u, v in stream_edges(streams) + events:
        succ[u].append(v)
    return StreamFacts(
        program,
        [t.op for t in program.tasks],
        streams,
        events,
        Reachability(len(program.tasks), succ, chains=streams),
    )


def check_streams(fn: func.FuncOp, program: StreamProgram) -> None:
    """`stream.count` in 1..MAX_STREAMS, and every task, record and wait on a stream below it."""
    where, count = _where(fn), program.stream_count
    if count is None:
        raise StreamError(f"{where}: no {stream.COUNT_ATTR} (run lower-to-streams)")
    if not 1 <= count <= stream.MAX_STREAMS:
        raise StreamError(f"{where}: {stream.COUNT_ATTR} must be in 1..{stream.MAX_STREAMS}, got {count}")
    for t in program.tasks:
        if not 0 <= t.stream < count:
            raise StreamError(
                f"{where}: task '{t.name}' is on stream {t.stream}, not below {stream.COUNT_ATTR} = {count}"
            )
    for op in program.sequence:
        if op.stream_id >= count:
            label = f"stream.record {op.event_id}" if isinstance(op, stream.RecordOp) else "stream.wait"
            raise StreamError(
                f"{where}: {label} on {op.stream_id} is on a stream not below {stream.COUNT_ATTR} = {count}"
            )


def check_waits(fn: func.FuncOp, program: StreamProgram) -> None:
    """Every wait is followed by a task of its stream, every record waited exactly once."""
    waits_of: dict[stream.RecordOp, int] = {r: 0 for r in program.recorded_after}
    for op in program.sequence:
        if isinstance(op, stream.WaitOp):
            record = _waited_record(op)
            waits_of[record] += 1
            if op not in program.next_task:
                raise StreamError(
                    f"{_where(fn)}: stream.wait on {op.stream_id} for the event after "
                    f"'{_task_name(program, record)}' has no task of stream {op.stream_id} after it"
                )
    for record, count in waits_of.items():
        if count != 1:
            raise StreamError(
                f"{_where(fn)}: stream.record {record.event_id} after '{_task_name(program, record)}' "
                f"is waited {count} times; a flag-like event must be waited exactly once"
            )


def _task_name(program: StreamProgram, record: stream.RecordOp) -> str:
    return program.tasks[program.recorded_after[record]].name


def _waited_record(op: stream.WaitOp) -> stream.RecordOp:
    """The record a wait waits for; read_program admits only waits that have one."""
    record = op.record
    assert record is not None, "read_program rejects a wait without a record"
    return record


def _task(facts: StreamFacts, i: int) -> str:
    return f"'{facts.kernels[i].task_name.data}' (stream {facts.streams[i]})"


def check_data_edges(fn: func.FuncOp, facts: StreamFacts) -> None:
    index = {k: i for i, k in enumerate(facts.kernels)}
    for v, k in enumerate(facts.kernels):
        for value in k.inputs:
            u = index.get(value.owner) if isinstance(value.owner, task.KernelOp) else None
            if u is not None and not facts.ordered(u, v):
                raise StreamError(
                    f"{_where(fn)}: task {_task(facts, v)} reads the result of {_task(facts, u)} "
                    f"with no stream order or event between them"
                )


def check_reuse_edges(fn: func.FuncOp, facts: StreamFacts) -> None:
    try:
        edges = reuse_edges(facts.kernels)
    except ReuseError as e:
        raise StreamError(f"{_where(fn)}: {e}") from None
    for edge in sorted(edges, key=lambda e: (e.dst, -e.src)):  # name the latest unordered access
        if not facts.ordered(edge.src, edge.dst):
            raise StreamError(
                f"{_where(fn)}: task {_task(facts, edge.dst)} overwrites {buffer_label(facts.kernels, edge.earlier)} "
                f"while task {_task(facts, edge.src)} may still access it: no stream order or event between them"
            )


def check_state_edges(fn: func.FuncOp, facts: StreamFacts) -> None:
    """Every reader of a variable's old value happens-before the task writing the variable in place."""
    try:
        edges = war_edges(facts.kernels)
    except StateError as e:
        raise StreamError(f"{_where(fn)}: {e}") from None
    for edge in edges:
        if not facts.ordered(edge.src, edge.dst):
            raise StreamError(
                f"{_where(fn)}: task {_task(facts, edge.dst)} overwrites variable '{edge.key}' in place while task "
                f"{_task(facts, edge.src)} may still read its old value: no stream order or event between them"
            )


def check_event_ids(fn: func.FuncOp, facts: StreamFacts) -> None:
    """Consecutive records of one id: the earlier one's wait is issued, and has completed, before the
    later one fires (see the module docstring)."""
    program = facts.program
    last: dict[int, tuple[stream.RecordOp, stream.WaitOp | None]] = {}
    for op in program.sequence:
        if isinstance(op, stream.RecordOp):
            previous = last.get(op.event_id)
            if previous is not None:
                earlier, wait = previous
                after = program.recorded_after[op]
                if wait is None:
                    raise StreamError(
                        f"{_where(fn)}: event id {op.event_id} is recorded after '{program.tasks[after].name}' "
                        f"before the wait of its previous record (after '{_task_name(program, earlier)}') is issued"
                    )
                next_task = program.next_task[wait]
                if not facts.ordered(next_task, after):
                    raise StreamError(
                        f"{_where(fn)}: event id {op.event_id} is recorded after task {_task(facts, after)}, which is "
                        f"not ordered after task {_task(facts, next_task)} that the previous wait on it precedes"
                    )
            last[op.event_id] = (op, None)
        else:
            record = _waited_record(op)
            current = last.get(record.event_id)
            if current is None or current[0] is not record:
                raise StreamError(
                    f"{_where(fn)}: stream.wait on {op.stream_id} waits for event id "
                    f"{record.event_id} after '{_task_name(program, record)}', but a later record of "
                    f"that id is issued before the wait"
                )
            last[record.event_id] = (record, op)


def verify_stream_function(fn: func.FuncOp) -> StreamFacts:
    """Raises StreamError (one line, naming the tasks) unless the function is race-free."""
    facts = stream_facts(fn)
    check_data_edges(fn, facts)
    check_reuse_edges(fn, facts)
    check_state_edges(fn, facts)
    check_event_ids(fn, facts)
    return facts


def verify_control_program(fn: func.FuncOp) -> ControlProgram:
    """Raises StreamError (one line, naming the label) unless the device can run the control program."""
    program = read_control_program(fn)
    for callee in (c for calls in program.calls for c in calls):
        if stream.MODE_ATTR not in callee.attributes and not is_control_program(callee):
            raise StreamError(
                f"{_where(fn)}: it calls @{callee.sym_name.data}, which is not lowered to streams "
                "(run lower-to-tasks, plan-memory and lower-to-streams)"
            )
    return program
