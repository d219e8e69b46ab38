"""Runs a function lowered to streams the way the device would, so that a missing event or a bad
memory plan shows in its outputs.

- Every intermediate (a task result with a planned offset) lives in ONE byte arena the size of the
  planned pool, at its offset, as the bytes the device stores it in (its storage format's physical
  array; sub-byte types packed); a task reads its inputs from the arena and writes its results there.
  Two buffers the plan overlaps while both are live overwrite each other. The arena starts filled
  with 0xFF bytes (NaN in every float type), so a read of bytes nothing wrote shows.
- Tasks run one at a time, whole, in an order drawn at random (seeded) among the orders streams
  and events allow: a stream runs its tasks in program order; a task starts only once every event
  it waits on is recorded, and a record happens when its task ends. Program order is one of these
  orders (no seed: what `runner.run` does with a stream-level module); others expose what the
  events fail to order.
- A task whose input's producer has not run yet is a ScheduleError naming both tasks.
- Each variable (`ge.variable "key"`, a training step's state) has ONE storage, as on the device,
  filled from the weights before the first task: every `ge.variable` of the key reads it, and a
  result the plan writes in place over it (`state_alias`) overwrites it. A reader of the old value
  that the events let run after the update reads the new one.

A third of the seeds pick a random runnable stream at each step; a third give the streams fixed
random priorities, so that the lowest runs as late as the events allow; a third demote the leading
stream at a few random steps (the PCT strategy of Burckhardt et al., 2010). The last two let one
stream run far ahead of another, where a missing event or a reuse race hides.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter
from xdsl.ir import SSAValue

from ge.device.simulator import ScheduleError
from ge.ge_dialects.ge.optimizer import VariableOp
from ge.ge_dialects.ge.sizes import element_bits
from ge.ge_dialects.ge.types import element_type_of
from ge.ge_dialects.ge.weights import weights_of
from ge.interpreter.layouts import to_logical, to_physical
from ge.interpreter.runner import (
    check_inputs,
    main_function,
    module_interpreter,
    output_names,
    run_threads,
    tensor_types,
)
from ge.interpreter.stream_program import StreamProgram, stream_program

POISON = 0xFF
"""Initial byte of the arena: 0xFF.. is NaN in f16/bf16/f32/f64 and -1 in signed integers."""

STRATEGIES = ("uniform", "priority", "pct")
"""How a seed picks the next stream among the runnable ones: at random; by fixed random priorities
(the lowest stream runs only when no other can: as late as the events let it); by priorities the
leading stream loses at a few random steps (PCT)."""

PCT_DEMOTIONS = 3
"""Priority changes per PCT schedule."""


class ArenaError(Exception):
    """The memory plan does not hold a task's result (an offset or size outside the pool, or a
    result stored in more bytes than planned): a compiler bug."""


def _blocked(program: StreamProgram, queues: dict[int, list[int]], recorded: set) -> str:
    parts = []
    for s, queue in sorted(queues.items()):
        if queue:
            t = program.tasks[queue[-1]]  # queues hold the next task last
            missing = [k for k in t.waits if k not in recorded]
            parts.append(f"stream {s} at '{t.name}' waits {', '.join(map(str, missing))}")
    return "; ".join(parts)


def random_order(program: StreamProgram, seed: int) -> list[int]:
    """Task indices in an order the streams and events allow, drawn from `seed`."""
    rng = np.random.default_rng(seed)
    queues: dict[int, list[int]] = {}
    for t in program.tasks:
        queues.setdefault(t.stream, []).append(t.index)
    for q in queues.values():
        q.reverse()  # pop() takes the next task
    streams = sorted(queues)
    strategy = STRATEGIES[rng.integers(len(STRATEGIES))]
    priority = {s: p for s, p in zip(streams, rng.permutation(len(streams)))}
    demotions = PCT_DEMOTIONS if strategy == "pct" else 0
    demote_at = set(rng.integers(0, len(program.tasks), demotions).tolist())
    recorded: set = set()
    order: list[int] = []
    while len(order) < len(program.tasks):
        runnable = [s for s in streams if queues[s] and all(k in recorded for k in program.tasks[queues[s][-1]].waits)]
        if not runnable:
            raise ScheduleError(f"deadlock after {len(order)} tasks: {_blocked(program, queues, recorded)}")
        if strategy != "uniform":
            s = max(runnable, key=lambda s: priority[s])
            if len(order) in demote_at:
                priority[s] = min(priority.values()) - 1
        else:
            s = runnable[rng.integers(len(runnable))]
        j = queues[s].pop()
        order.append(j)
        recorded.update(program.tasks[j].records)
    return order


def _bits(dtype: np.dtype) -> int:
    """Bits an element of `dtype` takes on the device (ge_dialects/ge/sizes.py)."""
    return element_bits(element_type_of(dtype))


def to_device_bytes(array: np.ndarray) -> np.ndarray:
    """The bytes the device stores `array` in: its raw bytes, sub-byte types (int4, fp4, int2; numpy
    holds them one per byte, in the low bits) packed, the first element in the lowest bits."""
    bits = _bits(array.dtype)
    raw = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
    if bits >= 8:
        return raw
    planes = np.unpackbits(raw[:, None], axis=1, bitorder="little")[:, :bits]
    return np.packbits(planes.reshape(-1), bitorder="little")


def from_device_bytes(raw: np.ndarray, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    """The array of `dtype` and `shape` stored in `raw` (a view when no unpacking is needed)."""
    bits = _bits(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    if bits >= 8:
        return raw[: n * dtype.itemsize].view(dtype).reshape(shape)
    planes = np.unpackbits(raw[: -(-n * bits // 8)], bitorder="little")[: n * bits].reshape(n, bits)
    return np.packbits(planes, axis=1, bitorder="little").reshape(-1).view(dtype).reshape(shape)


class _Arena:
    """The pool as bytes, and the (offset, dtype, shape) of each value stored in it; the variables'
    storages, and which values live in them."""

    def __init__(self, program: StreamProgram, values: Mapping[SSAValue, np.ndarray] | None = None):
        """`values`: what the setup ops computed (the variables' values fill their storages)."""
        self.program = program
        self.bytes = np.full(program.pool, POISON, dtype=np.uint8)
        self.placed: dict[SSAValue, tuple[int, int]] = {}  # value -> (offset, planned size)
        self.layout: dict[SSAValue, tuple[np.dtype, tuple[int, ...]]] = {}
        self.state: dict[str, tuple[np.ndarray, np.dtype, tuple[int, ...]]] = {}  # key -> (bytes, dtype, shape)
        self.state_of: dict[SSAValue, str] = {}  # variable reads and in-place results -> key
        for op in program.setup:
            if isinstance(op, VariableOp) and values is not None:
                array = values[op.output]
                self.state.setdefault(op.state_key, (to_device_bytes(array).copy(), array.dtype, array.shape))
                self.state_of[op.output] = op.state_key
        for t in program.tasks:
            for i, key in enumerate(t.aliases):
                if key and key not in self.state:
                    raise ArenaError(f"task '{t.name}' result #{i} is written over variable '{key}', which has none")
                if key:
                    self.state_of[t.outputs[i]] = key
            if t.offsets is None:
                raise ArenaError(f"task '{t.name}' has no planned offsets (run plan-memory)")
            for i, (v, off, size) in enumerate(zip(t.outputs, t.offsets, t.sizes)):
                if off < 0 or v in self.state_of:
                    continue
                if off + size > program.pool:
                    raise ArenaError(
                        f"task '{t.name}' result #{i}: {size} bytes at offset {off} end past the "
                        f"{program.pool}-byte pool"
                    )
                self.placed[v] = (off, size)

    def holds(self, value: SSAValue) -> bool:
        return value in self.placed or value in self.state_of

    def write(self, value: SSAValue, array: np.ndarray, where: str) -> None:
        """Stores the (physical) array's device bytes at the value's offset, or over its variable."""
        if value in self.state_of:
            key = self.state_of[value]
            storage, dtype, shape = self.state[key]
            if (array.dtype, array.shape) != (dtype, shape):
                raise ArenaError(
                    f"{where} ({array.dtype}{list(array.shape)}) is written over variable '{key}' "
                    f"({dtype}{list(shape)})"
                )
            storage[:] = to_device_bytes(array)  # numpy copies first if `array` views the storage
            return
        off, size = self.placed[value]
        stored = to_device_bytes(array)
        if stored.size > size:
            raise ArenaError(
                f"{where} is stored in {stored.size} bytes but plan-memory reserved {size} at offset {off}"
            )
        self.layout[value] = (array.dtype, array.shape)
        self.bytes[off : off + stored.size] = stored  # numpy copies first if `array` overlaps

    def read(self, value: SSAValue) -> np.ndarray:
        if value in self.state_of:
            storage, dtype, shape = self.state[self.state_of[value]]
            return from_device_bytes(storage, dtype, shape)
        off, _ = self.placed[value]
        return from_device_bytes(self.bytes[off:], *self.layout[value])


def run_program(program: StreamProgram, interpreter: Interpreter, args: tuple, seed: int | None) -> list[np.ndarray]:
    """The function's results (physical arrays) from running its tasks over the arena in the order
    drawn from `seed` (program order if None)."""
    fn = program.function
    values: dict[SSAValue, np.ndarray] = dict(zip(fn.body.block.args, args))
    for op in program.setup:
        values.update(zip(op.results, interpreter.run_op(op, tuple(values[v] for v in op.operands))))
    arena = _Arena(program, values)
    producer = program.producer()
    done: set[int] = set()

    def read(value: SSAValue, reader: str) -> np.ndarray:
        p = producer.get(value)
        if p is not None and p not in done:
            raise ScheduleError(f"task '{reader}' ran before its producer '{program.tasks[p].name}'")
        return arena.read(value) if arena.holds(value) else values[value]

    order = range(len(program.tasks)) if seed is None else random_order(program, seed)
    for j in order:
        t = program.tasks[j]
        results = interpreter.run_op(t.op, tuple(read(v, t.name) for v in t.inputs))
        for i, (v, r) in enumerate(zip(t.outputs, results)):
            r = np.asarray(r)
            if arena.holds(v):
                arena.write(v, r, f"task '{t.name}' result #{i}")
            else:  # a copy: the kernel may have returned a view of an input in the arena
                values[v] = np.array(r, copy=True)
        done.add(j)
    last = fn.body.block.last_op
    assert last is not None  # a verified func.func ends in func.return
    returned = last.operands
    return [np.array(read(v, "func.return"), copy=True) for v in returned]


def run_in_arena(
    module: ModuleOp,
    inputs: Mapping[str, np.ndarray],
    weights: Mapping[str, np.ndarray] | None = None,
    seed: int | None = 0,
    program: StreamProgram | None = None,
    threads: int | None = None,
) -> dict[str, np.ndarray]:
    """Like interpreter.runner.run (the same constant cache and thread policy), for a module lowered
    to streams with planned memory: `main`'s outputs by name, its tasks run over one arena in the
    random order of `seed`. `program` replaces what `main` says (tests pass a mutated one)."""
    fn = main_function(module)
    program = program or stream_program(fn)
    args = tuple(
        to_physical(a, t) for a, t in zip(check_inputs(module, inputs), tensor_types(fn.function_type.inputs.data))
    )
    interpreter = module_interpreter(module, weights_of(module) if weights is None else weights)
    with run_threads(threads):
        results = run_program(program, interpreter, args, seed)
    outputs = (to_logical(r, t) for r, t in zip(results, tensor_types(fn.function_type.outputs.data)))
    return dict(zip(output_names(fn), outputs))
