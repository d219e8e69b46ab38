"""Runs a module lowered to streams on the modeled device: numbers from the interpreter, time from
the discrete-event simulation of its tasks (device).

The numbers come from running the tasks in program order; streams and events do not change them
(they only order work the data dependencies already order), which is what the differential tests
check. Time comes from each task's work (Cube MACs, Vector element-ops, bytes at its boundary)
and the target's numbers, with the streams, events and launches the IR describes.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, ModuleOp, StringAttr
from xdsl.ir import SSAValue

from ge.device.ir_work import kernel_work
from ge.device.work import SimTask, TaskWork
from ge.ge_dialects import stream, task
from ge.interpreter.stream_program import MEMORY_ATTR, NotLowered, read_program
from ge.target import Target

__all__ = ["MEMORY_ATTR", "NotLowered", "sim_tasks", "simulate_module", "task_work"]


def task_work(kernel: task.KernelOp, names: dict[SSAValue, str]) -> TaskWork:
    """The task's work record (device/ir_work.py, shared with fuse-ops and lower-to-streams)."""
    return kernel_work(kernel, names)


def sim_tasks(fn: func.FuncOp) -> list[SimTask]:
    """The function's tasks in program order (`read_program`), with the waits before and records
    after each: hardware event ids, and for each wait the task its record follows (the IR's link)."""
    program = read_program(fn)
    if not program.tasks:
        raise NotLowered("the module has no tasks (run lower-to-tasks and lower-to-streams)")
    names: dict[SSAValue, str] = {arg: f"%arg{i}" for i, arg in enumerate(fn.body.block.args)}
    producer = program.producer()
    return [
        SimTask(
            work=task_work(t.op, names),
            stream=t.stream,
            launch=t.launch,
            waits=tuple(_event_id(e) for e in t.waits),
            records=tuple(_event_id(e) for e in t.records),
            inputs_from=tuple(sorted({producer[v] for v in t.inputs if v in producer})),
            wait_from=tuple(program.recorder(e) for e in t.waits),
        )
        for t in program.tasks
    ]


def _event_id(event) -> int:
    record = event.owner
    assert isinstance(record, stream.RecordOp), "read_program keeps only the events of records"
    return record.event_id


@dataclass
class MemoryFigures:
    pool: int
    no_reuse: int
    lower_bound: int
    heuristic: str
    weights: int = 0
    """Constants (the loader's)."""
    state: int = 0
    """Variables: one storage each (a training step's parameters and optimizer slots)."""
    io: int = 0
    """Inputs, and the outputs not written in place over a variable."""
    state_in_place: int = 0
    """State outputs written in place over their variable."""
    state_copies_avoided: int = 0
    """Bytes those outputs would take in buffers of their own."""

    @property
    def device_total(self) -> int:
        """Everything the device holds for the function: intermediates, weights, state and inputs
        and outputs, each kind once."""
        return self.pool + self.weights + self.state + self.io


def memory_figures(module: ModuleOp) -> MemoryFigures | None:
    attr = module.attributes.get(MEMORY_ATTR)
    if not isinstance(attr, DictionaryAttr):
        return None
    d = attr.data

    def num(key: str) -> int:
        v = d.get(key)
        return v.value.data if isinstance(v, IntegerAttr) else 0

    heuristic = d.get("heuristic")
    return MemoryFigures(
        num("pool"),
        num("no_reuse"),
        num("lower_bound"),
        heuristic.data if isinstance(heuristic, StringAttr) else "",
        num("weights"),
        num("state"),
        num("io"),
        num("state_in_place"),
        num("state_copies_avoided"),
    )


def is_lowered(module: ModuleOp) -> bool:
    return any(isinstance(op, task.KernelOp) for op in module.walk())


def stream_function(module: ModuleOp, fn_name: str = "main") -> func.FuncOp:
    """`@fn_name` of a module lowered to streams (NotLowered otherwise)."""
    fn = next((f for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name.data == fn_name), None)
    if fn is None:
        raise NotLowered(f"the module has no func.func @{fn_name}")
    if not isinstance(fn.attributes.get(stream.MODE_ATTR), StringAttr):
        raise NotLowered(f"@{fn_name} has no {stream.MODE_ATTR} (run lower-to-streams)")
    return fn


def simulate_module(module: ModuleOp, target: Target, fn_name: str = "main"):
    """The modeled run of `@fn_name` (its tasks, streams, events and launches) on `target`.

    The program must have passed the stream verifier (`lower-to-streams` ends with it, ge-run runs
    it on the file it reads): the simulation follows the events as written."""
    from ge.device import simulate

    fn = stream_function(module, fn_name)
    mode = fn.attributes[stream.MODE_ATTR]
    assert isinstance(mode, StringAttr)
    return simulate(sim_tasks(fn), target, mode.data)


def report(result, memory: MemoryFigures | None) -> str:
    """The run's figures, one per line."""
    b = result.bound
    lines = [
        f"target {result.target}, mode {result.mode}: {len(result.tasks)} tasks, {result.launches} host launches",
        f"latency {result.latency * 1e6:.1f} us; roofline bound {b.value * 1e6:.1f} us ({b.limiter}); "
        f"latency / bound {result.latency_over_bound:.2f}",
        f"utilization: cube {result.cube_util:.1%}, vector {result.vector_util:.1%}, "
        f"HBM bandwidth {result.hbm_util:.1%}",
    ]
    collectives = [t for t in result.tasks if t.work.engine == "hccl"]
    if collectives:
        lines.append(
            f"communication: {len(collectives)} collectives over {collectives[0].work.replicas} replicas, "
            f"{result.communication_s * 1e6:.1f} us, {result.communication_hidden:.0%} hidden behind computation"
        )
    if memory is not None:
        lines.append(
            f"memory: planned peak {memory.pool / 2**20:.2f} MiB (lower bound {memory.lower_bound / 2**20:.2f} "
            f"MiB, no reuse {memory.no_reuse / 2**20:.2f} MiB, {memory.heuristic}); device total "
            f"{memory.device_total / 2**20:.2f} MiB"
        )
        if memory.state_in_place:
            lines.append(
                f"state: {memory.state_in_place} outputs written in place over their variables "
                f"({memory.state_copies_avoided / 2**20:.2f} MiB not copied)"
            )
    return "\n".join(lines)
