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
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr

from ge.ge_dialects import stream, task
from ge.lowering.memory.state import StateError, war_edges
from ge.lowering.streams.events import stream_edges
from ge.lowering.streams.graph import Reachability
from ge.lowering.streams.reuse import ReuseError, buffer_label, reuse_edges, task_name


class StreamError(ValueError):
    """The function's streams and events do not order what they must."""


@dataclass(frozen=True)
class StreamFacts:
    """What the IR says, in task indices (program order)."""

    kernels: list[task.KernelOp]
    streams: list[int]
    events: list[tuple[int, int]]
    """(record's task, first task of the waiting stream after the wait), one per wait."""
    reach: Reachability
    """Happens-before: reach.reaches(u, v) iff u finishes before v starts."""
    task_after_wait: dict[stream.WaitOp, int]
    """The first task of the wait's stream after the wait in program order."""

    def ordered(self, u: int, v: int) -> bool:
        return u == v or self.reach.reaches(u, v)


def _where(fn: func.FuncOp) -> str:
    return f"@{fn.sym_name.data}"


def stream_facts(fn: func.FuncOp) -> StreamFacts:
    """Reads tasks, streams and events, checking the local rules (ids, record and wait placement)."""
    where = _where(fn)
    walk = _StreamWalk(where, _stream_count(fn, where))
    for op in fn.body.block.ops:
        if isinstance(op, task.KernelOp):
            walk.kernel(op)
        elif isinstance(op, stream.RecordOp):
            walk.record(op)
        elif isinstance(op, stream.WaitOp):
            walk.wait(op)
    walk.check_waits()
    succ: list[list[int]] = [[] for _ in walk.kernels]
    for u, v in stream_edges(walk.streams) + walk.events:
        succ[u].append(v)
    return StreamFacts(
        walk.kernels,
        walk.streams,
        walk.events,
        Reachability(len(walk.kernels), succ, chains=walk.streams),
        walk.task_after_wait,
    )


def _stream_count(fn: func.FuncOp, where: str) -> int:
    count_attr = fn.attributes.get(stream.COUNT_ATTR)
    if not isinstance(count_attr, IntegerAttr):
        raise StreamError(f"{where}: no {stream.COUNT_ATTR} (run lower-to-streams)")
    count = count_attr.value.data
    if not 1 <= count <= stream.MAX_STREAMS:
        raise StreamError(f"{where}: {stream.COUNT_ATTR} must be in 1..{stream.MAX_STREAMS}, got {count}")
    return count


class _StreamWalk:
    """One pass over a function's body in program order: tasks, the record after each, the waits before each."""

    def __init__(self, where: str, count: int) -> None:
        self.where = where
        self.count = count
        self.kernels: list[task.KernelOp] = []
        self.streams: list[int] = []
        self.events: list[tuple[int, int]] = []
        self.task_after_wait: dict[stream.WaitOp, int] = {}
        self.last_on_stream: dict[int, int] = {}
        self.pending: dict[int, list[stream.WaitOp]] = defaultdict(list)  # waits not yet followed by a task
        self.record_task: dict[stream.RecordOp, int] = {}
        self.waits_of: dict[stream.RecordOp, int] = defaultdict(int)

    def kernel(self, op: task.KernelOp) -> None:
        """A task: on a stream below the count; it is the task after the pending waits of its stream."""
        where, count = self.where, self.count
        s = op.get("stream")
        if s is None:
            raise StreamError(f"{where}: task '{op.task_name.data}' has no stream")
        if not 0 <= s < count:
            raise StreamError(
                f"{where}: task '{op.task_name.data}' is on stream {s}, not below {stream.COUNT_ATTR} = {count}"
            )
        i = len(self.kernels)
        for w in self.pending.pop(s, []):
            self.events.append((self.record_task[_waited_record(w)], i))
            self.task_after_wait[w] = i
        self.last_on_stream[s] = i
        self.kernels.append(op)
        self.streams.append(s)

    def record(self, op: stream.RecordOp) -> None:
        """A record: on a stream below the count, right after the latest task of its stream."""
        where, count = self.where, self.count
        label = f"stream.record {op.event_id} on {op.stream_id}"
        if op.stream_id >= count:
            raise StreamError(f"{where}: {label} is on a stream not below {stream.COUNT_ATTR} = {count}")
        after = op.task
        latest = self.last_on_stream.get(op.stream_id)
        if after is None or latest is None or self.kernels[latest] is not after:
            follows = f"'{task_name(after)}'" if after is not None else "no task"
            latest_name = f"'{self.kernels[latest].task_name.data}'" if latest is not None else "none"
            raise StreamError(
                f"{where}: {label} follows {follows}, but the latest task of stream "
                f"{op.stream_id} before it is {latest_name}"
            )
        self.record_task[op] = latest

    def wait(self, op: stream.WaitOp) -> None:
        """A wait: for an earlier record of this function, on a stream below the count."""
        where, count = self.where, self.count
        record = op.record
        if record is None or record not in self.record_task:
            raise StreamError(
                f"{where}: stream.wait on {op.stream_id} waits for an event no earlier "
                f"stream.record of this function produces"
            )
        if op.stream_id >= count:
            raise StreamError(
                f"{where}: stream.wait on {op.stream_id} is on a stream not below {stream.COUNT_ATTR} = {count}"
            )
        self.waits_of[record] += 1
        self.pending[op.stream_id].append(op)

    def check_waits(self) -> None:
        """After the body: every wait is followed by a task of its stream, every record waited exactly once."""
        for s, waits in self.pending.items():
            if waits:
                r = _waited_record(waits[0])
                raise StreamError(
                    f"{self.where}: stream.wait on {s} for the event after "
                    f"'{self.kernels[self.record_task[r]].task_name.data}' "
                    f"has no task of stream {s} after it"
                )
        for r, i in self.record_task.items():
            if self.waits_of[r] != 1:
                raise StreamError(
                    f"{self.where}: stream.record {r.event_id} after '{self.kernels[i].task_name.data}' "
                    f"is waited {self.waits_of[r]} times; a flag-like event must be waited exactly once"
                )


def _waited_record(op: stream.WaitOp) -> stream.RecordOp:
    """The record a wait waits for; StreamFacts.wait admits only waits that have one."""
    record = op.record
    assert record is not None, "StreamFacts.wait rejects a wait without a record"
    return record


def _recorded_task(op: stream.RecordOp) -> task.KernelOp:
    """The task a record follows; StreamFacts.record admits only records right after a task."""
    kernel = op.task
    assert isinstance(kernel, task.KernelOp), "StreamFacts.record rejects a record after no task"
    return kernel


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
    index = {k: i for i, k in enumerate(facts.kernels)}
    last: dict[int, tuple[stream.RecordOp, stream.WaitOp | None]] = {}
    for op in fn.body.block.ops:
        if isinstance(op, stream.RecordOp):
            previous = last.get(op.event_id)
            if previous is not None:
                earlier, wait = previous
                after = index[_recorded_task(op)]
                if wait is None:
                    this_task, earlier_task = task_name(_recorded_task(op)), task_name(_recorded_task(earlier))
                    raise StreamError(
                        f"{_where(fn)}: event id {op.event_id} is recorded after '{this_task}' before the "
                        f"wait of its previous record (after '{earlier_task}') is issued"
                    )
                next_task = facts.task_after_wait[wait]
                if not facts.ordered(next_task, after):
                    raise StreamError(
                        f"{_where(fn)}: event id {op.event_id} is recorded after task {_task(facts, after)}, which is "
                        f"not ordered after task {_task(facts, next_task)} that the previous wait on it precedes"
                    )
            last[op.event_id] = (op, None)
        elif isinstance(op, stream.WaitOp):
            record = _waited_record(op)
            current = last.get(record.event_id)
            if current is None or current[0] is not record:
                raise StreamError(
                    f"{_where(fn)}: stream.wait on {op.stream_id} waits for event id "
                    f"{record.event_id} after '{task_name(_recorded_task(record))}', but a later record of "
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
