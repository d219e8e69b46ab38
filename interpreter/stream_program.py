"""The one reading of a function lowered to streams: its tasks in program order, each with its
stream, its planned result offsets, the events it waits on before it starts and the events recorded
when it ends, and where each record and wait stands.

The stream verifier (lowering/streams/verify.py) checks this record, the arena executor
(interpreter/arena_executor.py) runs it and the device simulator times it (`sim_tasks` in
interpreter/stream_executor.py), so the spelling of streams and events in the IR is known here
and nowhere else. Events are their SSA values: a wait names the one record it waits for.

Spelling (ge_dialects/stream.py): `%ev = stream.record E on S after %v` fires when the task
defining `%v` (the latest task of stream S before the record) ends; `stream.wait %ev on S` holds
the next task of stream S after it until that record has fired. So which record a wait waits for
is in the IR, not in op positions or hardware ids (E is the id the hardware would reuse).
A task's `state_alias` names, per result, the variable that result is written over in place.

`read_program` reads what is there and refuses only what has no reading (a record after no task of
its stream, a wait for no record of the function); the verifier judges the rest (stream count,
waits without a task after them, records waited other than once, races). `stream_program` also
requires the memory plan, which the arena executor runs over.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field

from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, ModuleOp
from xdsl.ir import Operation, SSAValue

from ge.ge_dialects import stream, task
from ge.ge_dialects.ge.sizes import device_bytes

MEMORY_ATTR = "task.memory"
"""Module attribute `plan-memory` writes: pool bytes, no-reuse total, lower bound, heuristic."""


class NotLowered(Exception):
    """The module has no tasks on streams (run lower-to-tasks and lower-to-streams first)."""


class StreamError(ValueError):
    """The function's streams and events do not say, or do not order, what they must."""


@dataclass(frozen=True)
class ProgramTask:
    index: int  # position in program order
    op: task.KernelOp  # its body is what the task computes
    stream: int
    launch: int
    inputs: tuple[SSAValue, ...]
    outputs: tuple[SSAValue, ...]
    offsets: tuple[int, ...] | None  # byte offset of each result in the pool; -1: not in the pool; None: unplanned
    sizes: tuple[int, ...]  # bytes plan-memory reserved for each result (in its storage format)
    waits: tuple[Hashable, ...] = ()  # events that must have been recorded before the task starts
    records: tuple[Hashable, ...] = ()  # events recorded when the task ends
    aliases: tuple[str, ...] = ()  # per result, the variable it is written over in place ("" none)

    @property
    def name(self) -> str:
        return self.op.task_name.data


@dataclass(frozen=True)
class StreamProgram:
    function: func.FuncOp
    tasks: tuple[ProgramTask, ...]
    pool: int  # bytes of the planned memory pool (0 when unplanned)
    setup: tuple[Operation, ...]  # ops outside tasks that compute values before any task (constants)
    stream_count: int | None = None  # the function's stream.count, if it has one
    sequence: tuple[stream.RecordOp | stream.WaitOp, ...] = ()  # the records and waits, in program order
    recorded_after: Mapping[stream.RecordOp, int] = field(default_factory=dict)  # the task each record follows
    next_task: Mapping[stream.WaitOp, int] = field(default_factory=dict)  # the task after each wait, if any

    def producer(self) -> dict[SSAValue, int]:
        """Task index that defines each task result."""
        return {v: t.index for t in self.tasks for v in t.outputs}

    def recorder(self, event: Hashable) -> int:
        """The task after which `event` (a record's SSA value) is recorded."""
        record = event.owner if isinstance(event, SSAValue) else None
        assert isinstance(record, stream.RecordOp), f"{event} is no record's event"
        return self.recorded_after[record]


def pool_bytes(module: ModuleOp | None) -> int | None:
    attr = module.attributes.get(MEMORY_ATTR) if module is not None else None
    pool = attr.data.get("pool") if isinstance(attr, DictionaryAttr) else None
    if not isinstance(pool, IntegerAttr):
        return None
    return pool.value.data


def read_program(fn: func.FuncOp) -> StreamProgram:
    """The tasks of `fn` (lowered to streams; the memory plan optional) with their events."""
    walk = _ProgramWalk(f"@{fn.sym_name.data}")
    for op in fn.body.block.ops:
        walk.visit(op)
    count = fn.attributes.get(stream.COUNT_ATTR)
    module = fn.parent_op()
    return StreamProgram(
        function=fn,
        tasks=walk.tasks(),
        pool=pool_bytes(module if isinstance(module, ModuleOp) else None) or 0,
        setup=tuple(walk.setup),
        stream_count=count.value.data if isinstance(count, IntegerAttr) else None,
        sequence=tuple(walk.sequence),
        recorded_after=walk.recorded_after,
        next_task=walk.next_task,
    )


def stream_program(fn: func.FuncOp) -> StreamProgram:
    """`read_program`, for running: the tasks of `fn` with lower-to-tasks, plan-memory and
    lower-to-streams applied (NotLowered otherwise)."""
    where = f"@{fn.sym_name.data}"
    module = fn.parent_op()
    if pool_bytes(module if isinstance(module, ModuleOp) else None) is None:
        raise NotLowered(f"{where}: the module has no {MEMORY_ATTR} pool (run plan-memory)")
    try:
        program = read_program(fn)
    except StreamError as e:
        raise NotLowered(str(e)) from None
    if not program.tasks:
        raise NotLowered(f"{where}: no tasks (run lower-to-tasks and lower-to-streams)")
    unplanned = next((t for t in program.tasks if t.offsets is None), None)
    if unplanned is not None:
        raise NotLowered(f"{where}: task '{unplanned.name}' has no offsets (run plan-memory)")
    return program


class _ProgramWalk:
    """Reads a lowered function's ops in program order: its kernels with their streams, offsets and
    events, where each record and wait stands, and the setup ops outside tasks."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.pending_waits: dict[int, list[stream.WaitOp]] = {}  # stream -> waits before its next task
        self.last_on_stream: dict[int, int] = {}
        self.records: dict[int, list[SSAValue]] = {}
        self.kernels: list[task.KernelOp] = []
        self.waits: list[tuple[SSAValue, ...]] = []
        self.setup: list[Operation] = []
        self.task_results: set[SSAValue] = set()
        self.task_index: dict[Operation, int] = {}
        self.streams: list[int] = []  # per kernel, checked present in `kernel`
        self.offsets: list[tuple[int, ...] | None] = []
        self.sequence: list[stream.RecordOp | stream.WaitOp] = []
        self.recorded_after: dict[stream.RecordOp, int] = {}
        self.next_task: dict[stream.WaitOp, int] = {}

    def visit(self, op: Operation) -> None:
        if isinstance(op, stream.RecordOp):
            self.record(op)
        elif isinstance(op, stream.WaitOp):
            self.wait(op)
        elif isinstance(op, task.KernelOp):
            self.kernel(op)
        elif isinstance(op, func.ReturnOp):
            return
        else:
            if any(v in self.task_results for v in op.operands):
                raise NotLowered(f"{self.where}: {op.name} outside a task reads a task's result")
            self.setup.append(op)

    def record(self, op: stream.RecordOp) -> None:
        """An event recorded when the latest task of its stream ends."""
        after = op.task
        latest = self.last_on_stream.get(op.stream_id)
        if after is None or latest is None or self.kernels[latest] is not after:
            follows = f"'{after.task_name.data}'" if isinstance(after, task.KernelOp) else "no task"
            latest_name = f"'{self.kernels[latest].task_name.data}'" if latest is not None else "none"
            raise StreamError(
                f"{self.where}: stream.record {op.event_id} on {op.stream_id} follows {follows}, but the "
                f"latest task of stream {op.stream_id} before it is {latest_name}"
            )
        self.records.setdefault(latest, []).append(op.result)
        self.recorded_after[op] = latest
        self.sequence.append(op)

    def wait(self, op: stream.WaitOp) -> None:
        """A wait for an earlier record of this function: it holds the next task of its stream."""
        record = op.record
        if record is None or record not in self.recorded_after:
            raise StreamError(
                f"{self.where}: stream.wait on {op.stream_id} waits for an event no earlier "
                f"stream.record of this function produces"
            )
        self.pending_waits.setdefault(op.stream_id, []).append(op)
        self.sequence.append(op)

    def kernel(self, op: task.KernelOp) -> None:
        """A task: it takes the waits pending on its stream and becomes the stream's latest task."""
        s = op.get("stream")
        if s is None:
            raise NotLowered(f"{self.where}: task '{op.task_name.data}' has no stream (run lower-to-streams)")
        i = len(self.kernels)
        waits = self.pending_waits.pop(s, [])
        for w in waits:
            self.next_task[w] = i
        self.streams.append(s)
        self.offsets.append(tuple(op.offsets.get_values()) if op.offsets is not None else None)
        self.waits.append(tuple(w.event for w in waits))
        self.last_on_stream[s] = self.task_index[op] = i
        self.kernels.append(op)
        self.task_results.update(op.outputs)

    def tasks(self) -> tuple[ProgramTask, ...]:
        return tuple(
            ProgramTask(
                index=i,
                op=k,
                stream=self.streams[i],
                launch=k.get("launch") or 0,
                inputs=tuple(k.inputs),
                outputs=tuple(k.outputs),
                offsets=self.offsets[i],
                sizes=tuple(device_bytes(r) for r in k.outputs),
                waits=self.waits[i],
                records=tuple(self.records.get(i, ())),
                aliases=tuple(a.data for a in k.state_alias.data) if k.state_alias is not None else (),
            )
            for i, k in enumerate(self.kernels)
        )
