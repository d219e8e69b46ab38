"""`plan-memory`: byte offsets for every intermediate tensor of the task sequence, with reuse.

Liveness runs over the task order: a task's result is live from the task that writes it to the
last task that reads it. The planner (lowering/memory) tries several heuristics and keeps the
smallest pool, as GE's HybridMemAssigner does; an elementwise Vector task may write over an input
that dies at it (in place). Graph inputs, outputs and weights are not in the pool (they live in
memory the user or the loader owns). The result:

    %1 = task.kernel "/relu" (%0) : ... attributes {..., offsets = array<i64: 0>} {...}
    builtin.module attributes {task.memory = {pool = 1605632 : i64, no_reuse = 9633792 : i64,
                               lower_bound = 1605632 : i64, heuristic = "greedy_by_size", ...}}

A module of several lowered functions (the known subgraphs, branches and loop bodies of a
partitioned graph, passes/partition_dynamic.py) is planned function by function: they run one at
a time, the host between them, and their inputs and outputs live outside the pool, so they share
one pool, and the module's figures are those of the function with the largest plan. A host
program is not planned.

Sizes are the bytes a value occupies on the device, in its storage format (NC1HWC0, FRACTAL_Z and
FRACTAL_NZ pad dims to blocks; ge_dialects/ge/sizes.py), not its logical element count.

A graph that does not fit the target's HBM is refused with one line giving the sizes, and so is a
function with ops outside tasks (run lower-to-tasks first), one already on streams (lifetimes
from program order are only sound before `lower-to-streams` adds the reuse ordering), and one
with a result of unknown size (a dynamic dimension: a static plan would be wrong).
`plan-memory{reuse=false}` is GE's `ge.exec.disableReuseMemory`.

A training step's new state (outputs marked `ge.state`) is written in place over its variable
where that is sound (lowering/memory/state.py): the writer task gets `state_alias = ["key", ...]`
and the output no buffer of its own, as GE's ApplyX and Assign write the variable's memory.
`plan-memory{state_in_place=false}` gives every new state value its own buffer instead. The figures
count each kind of device memory once: `weights` (constants), `state` (one storage per variable),
`io` (inputs, and outputs not written in place), `state_in_place` (outputs written in place) and
`state_copies_avoided` (the bytes those outputs would have taken).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, DictionaryAttr, IntegerAttr, ModuleOp, StringAttr, TensorType, i64
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ge.device.engines import stays_outside_tasks
from ge.ge_dialects import ge, stream, task
from ge.ge_dialects.ge.constant import ConstantOp
from ge.ge_dialects.ge.control_flow import lowering_leaves
from ge.ge_dialects.ge.facts import Elementwise
from ge.ge_dialects.ge.layout import storage_of, storage_shape
from ge.ge_dialects.ge.sizes import device_bytes
from ge.ge_dialects.ge.target_attr import module_pass_target
from ge.ge_dialects.ge.types import shape_of, tensor_type_of
from ge.interpreter.runner import signature_problem
from ge.interpreter.stream_executor import MEMORY_ATTR
from ge.lowering.memory.liveness import Buffer
from ge.lowering.memory.plan import MemoryPlan, plan_memory, verify_plan
from ge.lowering.memory.state import find_state_aliases, state_bytes, write_aliases
from ge.target import Target

INPLACE_PATTERNS = frozenset(
    {"elementwise_chain"} | {op.name.removeprefix("ge.") for op in ge.ALL_OPS if op.has_trait(Elementwise)}
)
"""Tasks that read each element once and write it once, so they may write over a dying input: the
kernels of single Elementwise ops (their task pattern is the op's name) and elementwise chains."""


def same_storage(a: SSAValue, b: SSAValue) -> bool:
    """Whether element i of `b` is stored where element i of `a` is: same bytes, same physical shape
    and format (so an elementwise task may write `b` over `a` as it reads it)."""
    return (
        device_bytes(a) == device_bytes(b)
        and storage_shape(tensor_type_of(a)) == storage_shape(tensor_type_of(b))
        and storage_of(tensor_type_of(a)) == storage_of(tensor_type_of(b))
    )


def gib(n: int) -> str:
    return f"{n / 2**30:.2f} GiB"


@dataclass(frozen=True)
class PlanMemoryPass(ModulePass):
    name = "plan-memory"

    reuse: bool = True
    target: str | None = None  # None: the module's ge.target, else the default
    alignment: int | None = None
    """Bytes every buffer is aligned to (None: the target's `[hbm] alignment`, GE's 512)."""
    state_in_place: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = module_pass_target(self.name, op, self.target)
        figures = [
            self.plan_function(fn, target)
            for fn in op.ops
            if isinstance(fn, func.FuncOp) and fn.body.blocks and not lowering_leaves(fn)
        ]
        if figures:  # sunk subgraphs run one at a time (the host between them): they share one pool
            op.attributes[MEMORY_ATTR] = max(figures, key=_pool_of)

    def plan_function(self, fn: func.FuncOp, target: Target) -> DictionaryAttr:
        """Plans `fn`'s buffers (writing each task's offsets) and returns its figures."""
        alignment = self.alignment if self.alignment is not None else target.hbm.alignment
        pool = task_sequence_pool(self.name, fn, _check_static_sizes, alignment)
        plan = plan_memory(pool.buffers, alignment=alignment, reuse=self.reuse)
        verify_plan(plan, pool.buffers)
        pool.write_offsets(plan)
        aliases = find_state_aliases(fn, INPLACE_PATTERNS)[0] if self.state_in_place else []
        write_aliases(pool.kernels, aliases)
        in_place = {a.value for a in aliases}
        returned = _returned_values(fn)
        weights = sum(device_bytes(c.results[0]) for c in fn.body.block.ops if isinstance(c, ConstantOp))
        state = state_bytes(fn)
        io = sum(device_bytes(a) for a in fn.body.block.args) + sum(
            device_bytes(v) for v in returned if v not in in_place
        )
        check_hbm("plan-memory", fn, plan.peak, weights + state, io, target)
        return DictionaryAttr(
            {
                "pool": IntegerAttr(plan.peak, 64),
                "no_reuse": IntegerAttr(plan.no_reuse_total, 64),
                "lower_bound": IntegerAttr(plan.lower_bound, 64),
                "heuristic": StringAttr(plan.heuristic),
                "inplace": IntegerAttr(len(plan.inplace), 64),
                "weights": IntegerAttr(weights, 64),
                "io": IntegerAttr(io, 64),
                "alignment": IntegerAttr(plan.alignment, 64),
                "state": IntegerAttr(state, 64),
                "state_in_place": IntegerAttr(len(aliases), 64),
                "state_copies_avoided": IntegerAttr(sum(a.bytes for a in aliases), 64),
            }
        )


def _pool_of(figures: DictionaryAttr) -> int:
    pool = figures.data["pool"]
    assert isinstance(pool, IntegerAttr)
    return pool.value.data


def _check_static_sizes(where: str, kernel: task.KernelOp) -> None:
    for r in kernel.results:
        if isinstance(r.type, TensorType) and None in shape_of(r.type):
            raise DiagnosticException(
                f"{where}: task '{kernel.task_name.data}' result {r.index} has an unknown size ({r.type}); "
                f"a static memory plan needs static shapes"
            )


def task_sequence_pool(
    pass_name: str, fn: func.FuncOp, check_kernel: Callable[[str, task.KernelOp], None], alignment: int
) -> PoolBuffers:
    """The pool buffers of `fn`, after refusing in one line a function that is not a task sequence
    planned in program order: one whose signature is not tensors, one with ops outside tasks (run
    lower-to-tasks first) or one already on streams (its reuse ordering is fixed). `check_kernel(where,
    kernel)` adds the caller's own check of each task, in program order with the others so the first
    fault found is the one reported."""
    problem = signature_problem(fn)
    if problem is not None:  # its arguments and results would count 0 bytes of device memory
        raise DiagnosticException(f"{pass_name}: {problem}")
    where = f"{pass_name}: @{fn.sym_name.data}"
    for inner in fn.body.block.ops:
        if isinstance(inner, (stream.RecordOp, stream.WaitOp)) or (
            isinstance(inner, task.KernelOp) and inner.stream is not None
        ):
            raise DiagnosticException(f"{where} is already on streams (run {pass_name} before lower-to-streams)")
        if isinstance(inner, task.KernelOp):
            check_kernel(where, inner)
        elif not stays_outside_tasks(inner):
            raise DiagnosticException(f"{where} has '{inner.name}' outside a task.kernel (run lower-to-tasks first)")
    return pool_buffers(fn, alignment)


def check_hbm(pass_name: str, fn: func.FuncOp, pool: int, weights: int, io: int, target: Target) -> None:
    """Refuses, in one line, a function whose pool, weights (and state) and inputs/outputs exceed the
    target's HBM."""
    need = pool + weights + io
    hbm = target.hbm.bytes
    if need > hbm:
        raise DiagnosticException(
            f"{pass_name}: @{fn.sym_name.data} needs {gib(need)} of device memory (activations {gib(pool)}, "
            f"weights {gib(weights)}, inputs/outputs {gib(io)}) but {target.name} has {gib(hbm)} HBM"
        )


@dataclass(frozen=True)
class PoolBuffers:
    """The pool buffers of a function's task sequence: every task result but the returned ones,
    live from its task to its last reader in program order. The gradients of one collective's bucket
    are one buffer, and its results another written over it (`bucket_buffers`)."""

    kernels: list[task.KernelOp]
    names: dict[SSAValue, str]
    """result -> its buffer's name, `task:result index` (a bucket's members: the bucket's)"""
    buffers: list[Buffer]
    within: dict[SSAValue, int] = field(default_factory=dict)
    """A bucket member's offset in its bucket's buffer."""

    def write_offsets(self, plan: MemoryPlan) -> None:
        """Each kernel's `offsets` from `plan` (-1: not in the pool)."""
        for k in self.kernels:
            k.offsets = DenseArrayBase.from_list(i64, [self._offset(plan, r) for r in k.outputs])

    def _offset(self, plan: MemoryPlan, result: SSAValue) -> int:
        base = plan.offsets.get(self.names.get(result, ""), -1)
        return base + self.within.get(result, 0) if base >= 0 else -1


def _returned_values(fn: func.FuncOp) -> set[SSAValue]:
    """What the function's `func.return` returns (func.func's verifier requires that terminator)."""
    terminator = fn.body.block.last_op
    assert terminator is not None, "a verified func.func ends in its func.return"
    return set(terminator.operands)


def pool_buffers(fn: func.FuncOp, alignment: int) -> PoolBuffers:
    kernels = [k for k in fn.body.block.ops if isinstance(k, task.KernelOp)]
    index = {k: i for i, k in enumerate(kernels)}
    returned = _returned_values(fn)
    names: dict[SSAValue, str] = {}
    buffers: list[Buffer] = []
    for i, k in enumerate(kernels):
        for r in k.outputs:
            if r in returned:
                continue
            names[r] = f"{k.task_name.data}:{r.index}"
            last = max((index[u.operation] for u in r.uses if u.operation in index), default=i)
            inplace: tuple[str, ...] = ()
            if k.pattern.data in INPLACE_PATTERNS:
                inplace = tuple(names[v] for v in k.inputs if v in names and same_storage(v, r))
            elif k.engine.data == "hccl" and len(k.inputs) == len(k.outputs):  # HCCL reduces in place
                given = k.inputs[r.index]
                inplace = (names[given],) if given in names and same_storage(given, r) else ()
            buffers.append(Buffer(names[r], device_bytes(r), i, last, inplace_of=inplace))
    within: dict[SSAValue, int] = {}
    for i, k in enumerate(kernels):
        if k.engine.data == "hccl":
            buffers = bucket_buffers(k, i, names, buffers, within, alignment)
    return PoolBuffers(kernels, names, buffers, within)


def bucket_buffers(
    kernel: task.KernelOp,
    index: int,
    names: dict[SSAValue, str],
    buffers: list[Buffer],
    within: dict[SSAValue, int],
    alignment: int,
) -> list[Buffer]:
    """The buffers with a collective's operands made one contiguous buffer, live from the first of
    them to the collective, and its results one buffer written over it: the gradients are written
    straight into their bucket, which HCCL reduces in place, with no pack copy (GE plans a
    collective's inputs as continuous memory). Left as they are unless every operand is a pool
    buffer that only the collective reads, one per result."""
    by_name = {b.name: b for b in buffers}
    given = [names.get(v) for v in kernel.inputs]
    made = [names.get(r) for r in kernel.outputs]
    if len(given) < 2 or len(given) != len(made) or None in given or None in made or len(set(given)) != len(given):
        return buffers
    ins = [by_name[n] for n in given if n is not None]
    outs = [by_name[n] for n in made if n is not None]
    if any(b.end != index or b.pinned for b in ins):
        return buffers
    place, at = [], 0
    for b in ins:
        place.append(at)
        at += -(-b.size // alignment) * alignment
    name = kernel.task_name.data
    bucket = Buffer(f"{name}:bucket", at, min(b.start for b in ins), index)
    reduced = Buffer(f"{name}:reduced", at, index, max(b.end for b in outs), inplace_of=(bucket.name,))
    for v, r, offset in zip(kernel.inputs, kernel.outputs, place):
        names[v], names[r] = bucket.name, reduced.name
        within[v] = within[r] = offset
    merged = {*given, *made}
    return [b for b in buffers if b.name not in merged] + [bucket, reduced]
