"""In-place state updates: which task results of a training step may be written over the variable
they replace, and the ordering that needs.

After `apply-optimizer` a step reads each parameter and optimizer slot with `ge.variable "key"` and
returns the new value as an output marked `{ge.state = "key"}` (GE's Assign). Given its own buffer,
every new value costs the device a second copy of the state. GE's ApplyX / Assign write the
variable's memory instead; so does `plan-memory` when a state output can *alias* its variable:

- it is a task result of the same type (so the same bytes and storage format) as the variables of
  its key, and no other state output takes that key or that value;
- no variable of the key is itself returned (that output must be the old value);
- every task reading a variable of the key comes before the writer in program order, or is the
  writer itself and elementwise (an update op, or an in-place elementwise pattern): it reads each
  element before it writes it.

The writer then carries `state_alias` (one key per result, "" for none) and its result lives in the
variable's storage: no buffer of its own. On streams, each reader of the old value must finish
before the writer starts: a *write-after-read* edge `reader -> writer` per reader, which
`lower-to-streams` orders with the data edges and `verify-streams` checks.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, StringAttr
from xdsl.ir import Operation, OpResult, SSAValue

from ge.ge_dialects import task
from ge.ge_dialects.ge.optimizer import VariableOp
from ge.ge_dialects.ge.sizes import device_bytes
from ge.ge_dialects.ge.types import tensor_type_of

STATE_ATTR = "ge.state"
"""The result attribute apply-optimizer marks a state output with (its variable's key)."""

UPDATE_PATTERNS = frozenset({"apply_gradient_descent", "apply_momentum", "apply_adam", "apply_adagrad"})
"""The update ops' tasks: elementwise over var and its slots, so they may overwrite what they read."""


@dataclass(frozen=True)
class StateAlias:
    """State output `key` written by result `result` of task `kernel` into its variable's storage."""

    key: str
    kernel: task.KernelOp
    result: int

    @property
    def value(self) -> OpResult:
        return self.kernel.results[self.result]

    @property
    def bytes(self) -> int:
        return device_bytes(self.value)


@dataclass(frozen=True)
class StateCopy:
    """A state output that keeps a buffer of its own, and why."""

    key: str
    reason: str


def state_outputs(fn: func.FuncOp) -> list[tuple[str, SSAValue]]:
    """(key, value) of each returned value marked `ge.state`, in output order."""
    ret = fn.body.block.last_op
    if not isinstance(ret, func.ReturnOp) or fn.res_attrs is None:
        return []
    marked = []
    for value, attrs in zip(ret.operands, fn.res_attrs.data):
        key = attrs.data.get(STATE_ATTR)
        if isinstance(key, StringAttr):
            marked.append((key.data, value))
    return marked


def variables(fn: func.FuncOp) -> dict[str, list[VariableOp]]:
    """key -> the `ge.variable` ops reading it (one storage on the device, however many reads)."""
    found: dict[str, list[VariableOp]] = {}
    for op in fn.body.block.ops:
        if isinstance(op, VariableOp):
            found.setdefault(op.state_key, []).append(op)
    return found


def state_bytes(fn: func.FuncOp) -> int:
    """Device bytes of the variables: one storage per key."""
    return sum(device_bytes(ops[0].output) for ops in variables(fn).values())


def find_state_aliases(
    fn: func.FuncOp, elementwise: Collection[str] = frozenset()
) -> tuple[list[StateAlias], list[StateCopy]]:
    """The state outputs of `fn` that may be written in place (module docstring), and the others
    with the reason. `elementwise`: task patterns, besides the update ops, that read each element
    once before writing it (plan-memory's in-place patterns)."""
    ret = fn.body.block.last_op
    assert isinstance(ret, func.ReturnOp), "a verified func.func ends in func.return"
    kernels = [k for k in fn.body.block.ops if isinstance(k, task.KernelOp)]
    index: dict[Operation, int] = {k: i for i, k in enumerate(kernels)}
    reads = variables(fn)
    returned = set(ret.operands)
    writers = UPDATE_PATTERNS | frozenset(elementwise)
    aliases: list[StateAlias] = []
    copies: list[StateCopy] = []
    taken_keys: set[str] = set()
    taken_values: set[SSAValue] = set()
    for key, value in state_outputs(fn):
        reason = _refusal(key, value, reads, returned, index, writers, taken_keys, taken_values)
        if reason is not None:
            copies.append(StateCopy(key, reason))
            continue
        assert isinstance(value, OpResult) and isinstance(value.op, task.KernelOp)  # _refusal checked
        aliases.append(StateAlias(key, value.op, value.index))
        taken_keys.add(key)
        taken_values.add(value)
    return aliases, copies


def _refusal(
    key: str,
    value: SSAValue,
    reads: dict[str, list[VariableOp]],
    returned: set[SSAValue],
    index: dict[Operation, int],
    writers: frozenset[str],
    taken_keys: set[str],
    taken_values: set[SSAValue],
) -> str | None:
    """Why state output `key` may not alias its variable (None: it may)."""
    if not isinstance(value, OpResult) or value.op not in index:
        return "not a task result"
    if key not in reads:
        return "no variable of the key is read"
    if key in taken_keys or value in taken_values:
        return "another state output takes the key or the value"
    if any(tensor_type_of(v.output) != tensor_type_of(value) for v in reads[key]):
        return "the variable's type (bytes, storage format) differs"
    if any(v.output in returned for v in reads[key]):
        return "the variable's old value is returned"
    writer = value.op
    assert isinstance(writer, task.KernelOp)
    for reader in readers(reads[key]):
        if reader is writer:
            if writer.pattern.data not in writers:
                return f"its writer '{writer.task_name.data}' reads the variable but is not elementwise"
        elif reader not in index or index[reader] > index[writer]:
            return f"'{_name(reader)}' reads the old value after the writer '{writer.task_name.data}'"
    return None


def readers(ops: Sequence[VariableOp]) -> list[Operation]:
    """The ops reading any of the variable ops, each once, in order of first use."""
    seen: dict[Operation, None] = {}
    for v in ops:
        for use in v.output.uses:
            seen.setdefault(use.operation, None)
    return list(seen)


def _name(op: Operation) -> str:
    return op.task_name.data if isinstance(op, task.KernelOp) else op.name


def write_aliases(kernels: Sequence[task.KernelOp], aliases: Sequence[StateAlias]) -> None:
    """`state_alias` on each writer: the key of each result ("" for a result with its own buffer)."""
    by_kernel: dict[task.KernelOp, dict[int, str]] = {}
    for a in aliases:
        by_kernel.setdefault(a.kernel, {})[a.result] = a.key
    for k in kernels:
        if k in by_kernel:
            keys = by_kernel[k]
            k.state_alias = ArrayAttr([StringAttr(keys.get(i, "")) for i in range(len(k.results))])
        else:
            k.state_alias = None


def aliased_writes(kernels: Sequence[task.KernelOp]) -> list[tuple[int, int, str]]:
    """(task index, result index, key) of every result written in place over a variable."""
    found = []
    for i, k in enumerate(kernels):
        if k.state_alias is not None:
            for r, key in enumerate(k.state_alias.data):
                if key.data:
                    found.append((i, r, key.data))
    return found


class StateError(ValueError):
    """A `state_alias` the IR cannot honour: a key with no variable of its type, or a reader of the
    old value after its writer in program order."""


@dataclass(frozen=True)
class WarEdge:
    """Task `src` reads the old value of variable `key`, which task `dst` overwrites in place."""

    src: int
    dst: int
    key: str


def war_edges(kernels: Sequence[task.KernelOp]) -> list[WarEdge]:
    """The write-after-read edges of the in-place state writes: every task reading a variable of
    the key (but the writer itself, elementwise) before its writer. Sorted by (dst, src). Raises
    StateError when an alias names no variable of its result's type, or a reader of the old value
    comes after the writer in program order (no forward edge can order it)."""
    if not kernels:
        return []
    block = kernels[0].parent_block()
    assert block is not None, "tasks sit in a function body"
    index: dict[Operation, int] = {k: i for i, k in enumerate(kernels)}
    reads: dict[str, list[VariableOp]] = {}
    for op in block.ops:
        if isinstance(op, VariableOp):
            reads.setdefault(op.state_key, []).append(op)
    edges = []
    for dst, r, key in aliased_writes(kernels):
        writer = kernels[dst]
        where = f"task '{writer.task_name.data}' result {r}"
        t = tensor_type_of(writer.results[r])
        if key not in reads:
            raise StateError(f"{where} is written in place over variable '{key}', which the function does not read")
        if any(tensor_type_of(v.output) != t for v in reads[key]):
            raise StateError(f"{where} is written in place over variable '{key}' of another type")
        for reader in readers(reads[key]):
            src = index.get(reader)
            if src is None:
                raise StateError(f"{where} overwrites variable '{key}', whose old value '{_name(reader)}' reads")
            if src > dst:
                raise StateError(
                    f"task '{_name(reader)}' reads variable '{key}' after '{writer.task_name.data}' overwrites it "
                    "in place"
                )
            if src != dst:
                edges.append(WarEdge(src, dst, key))
    return sorted(edges, key=lambda e: (e.dst, e.src))
