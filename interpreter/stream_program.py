"""What a function lowered to streams asks the device to do, read from the IR once: its tasks in
program order, each with its stream, its planned result offsets, the events it waits on before it
starts and the events recorded when it ends.

The arena executor (interpreter/arena_executor.py) and its tests work on this record only, so the
spelling of streams and events in the IR is known here and nowhere else. Events are opaque keys:
a wait names the key of the one record it waits for.

Spelling (ge_dialects/stream.py): `%ev = stream.record E on S after %v` fires when the task
defining `%v` (the latest task of stream S before the record) ends; `stream.wait %ev on S` holds
the next task of stream S after it until that record has fired. The key of an event is its SSA
value `%ev`, so which record a wait waits for is in the IR, not in op positions or hardware ids.
A task's `state_alias` names, per result, the variable that result is written over in place.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, ModuleOp
from xdsl.ir import Operation, SSAValue

from ge.ge_dialects import stream, task
from ge.ge_dialects.ge.sizes import device_bytes
from ge.interpreter.stream_executor import MEMORY_ATTR, NotLowered


@dataclass(frozen=True)
class ProgramTask:
    index: int  # position in program order
    op: task.KernelOp  # its body is what the task computes
    stream: int
    launch: int
    inputs: tuple[SSAValue, ...]
    outputs: tuple[SSAValue, ...]
    offsets: tuple[int, ...]  # byte offset of each result in the pool; -1: not in the pool (a graph output)
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
    pool: int  # bytes of the planned memory pool
    setup: tuple[Operation, ...]  # ops outside tasks that compute values before any task (constants)

    def producer(self) -> dict[SSAValue, int]:
        """Task index that defines each task result."""
        return {v: t.index for t in self.tasks for v in t.outputs}


def pool_bytes(module: ModuleOp | None) -> int | None:
    attr = module.attributes.get(MEMORY_ATTR) if module is not None else None
    pool = attr.data.get("pool") if isinstance(attr, DictionaryAttr) else None
    if not isinstance(pool, IntegerAttr):
        return None
    return pool.value.data


def stream_program(fn: func.FuncOp) -> StreamProgram:
    """The tasks of `fn` (lower-to-tasks, plan-memory and lower-to-streams applied) with their events."""
    where = f"@{fn.sym_name.data}"
    module = fn.parent_op()
    pool = pool_bytes(module if isinstance(module, ModuleOp) else None)
    if pool is None:
        raise NotLowered(f"{where}: the module has no {MEMORY_ATTR} pool (run plan-memory)")
    walk = _ProgramWalk(where)
    for op in fn.body.block.ops:
        walk.visit(op)
    if not walk.kernels:
        raise NotLowered(f"{where}: no tasks (run lower-to-tasks and lower-to-streams)")
    return StreamProgram(function=fn, tasks=walk.tasks(), pool=pool, setup=tuple(walk.setup))


class _ProgramWalk:
    """Reads a lowered function's ops in program order: its kernels with their streams, offsets and
    events, and the setup ops outside tasks."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.pending_waits: dict[int, list[SSAValue]] = {}  # stream -> events its next task waits for
        self.last_on_stream: dict[int, int] = {}
        self.records: dict[int, list[SSAValue]] = {}
        self.kernels: list[task.KernelOp] = []
        self.waits: list[tuple] = []
        self.setup: list[Operation] = []
        self.task_results: set[SSAValue] = set()
        self.task_index: dict[Operation, int] = {}
        self.streams: list[int] = []  # per kernel, checked present in `kernel`
        self.offsets: list[tuple[int, ...]] = []

    def visit(self, op: Operation) -> None:
        if isinstance(op, stream.RecordOp):
            self.record(op)
        elif isinstance(op, stream.WaitOp):
            self.pending_waits.setdefault(op.stream_id, []).append(op.event)
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
        recorded = op.task
        if recorded not in self.task_index or self.last_on_stream.get(op.stream_id) != self.task_index[recorded]:
            raise NotLowered(
                f"{self.where}: stream.record {op.event_id} on {op.stream_id} does not follow the "
                "latest task of its stream"
            )
        self.records.setdefault(self.task_index[recorded], []).append(op.result)

    def kernel(self, op: task.KernelOp) -> None:
        """A task: it takes the waits pending on its stream and becomes the stream's latest task."""
        s = op.get("stream")
        if s is None:
            raise NotLowered(f"{self.where}: task '{op.task_name.data}' has no stream (run lower-to-streams)")
        if op.offsets is None:
            raise NotLowered(f"{self.where}: task '{op.task_name.data}' has no offsets (run plan-memory)")
        self.streams.append(s)
        self.offsets.append(tuple(op.offsets.get_values()))
        self.waits.append(tuple(self.pending_waits.pop(s, [])))
        self.last_on_stream[s] = self.task_index[op] = len(self.kernels)
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
