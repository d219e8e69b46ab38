"""Kernel time estimates for fusion's benefit and critical-path checks and for stream balancing: the
device model ge-run reports (device), asked through its IR bridge (ir_work.py).

A candidate group is timed as the task lower-to-tasks would make of it: the engine of its pattern
class and the block_dim of its geometry (device/engines.py), its boundary values as inputs and
outputs, then the device cost model's tiled pipeline, task overhead included (a cold L2, all of
HBM: the task alone). Every number comes from the target file; nothing is per model.

Kernels of the same structure (`kernel_structure`: member classes, types, properties and attributes,
the boundary's types) have the same time, so it is computed once per structure: a deep model's
alike ops and a chain's thousands of Relus cost a lookup (timing every kernel afresh is a third of
O3 on a 100k-op chain).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from xdsl.ir import Operation, SSAValue

from ge.device.cost import Hardware
from ge.device.engines import engine_of, geometry, group_engine, stays_outside_tasks
from ge.device.ir_work import boundary_inputs, kernel_work, ops_work, work_time
from ge.ge_dialects import fused, task
from ge.ge_dialects.ge.base import GeOp
from ge.target import Target


class CostModel:
    """Kernel time estimates on one target (target/*.toml, loaded)."""

    def __init__(self, target: Target):
        self.target = target
        self.hardware = Hardware.of(target)
        self._kernel_times: dict[Hashable, float] = {}

    @property
    def join_s(self) -> float:
        """A cross-stream join on the device: one event record and one wait."""
        return self.hardware.spec.events.record_s + self.hardware.spec.events.wait_s

    def kernel_time(
        self, members: Sequence[Operation], inputs: Sequence[SSAValue], outputs: Sequence[SSAValue], engine: str
    ) -> float:
        """One kernel running `members` on `engine`, reading `inputs` and writing `outputs`."""
        key = kernel_structure(members, inputs, outputs, engine)
        known = self._kernel_times.get(key) if key is not None else None
        if known is not None:
            return known
        block_dim, _ = geometry(members, inputs, outputs, engine, self.target)
        seconds = work_time(ops_work(members, inputs, outputs, engine, block_dim), self.hardware)
        if key is not None:
            self._kernel_times[key] = seconds
        return seconds

    def group_time(self, pattern: str, members: Sequence[Operation], outputs: Sequence[SSAValue]) -> float:
        """The kernel `members` would become as a `fused.group` of pattern class `pattern`."""
        return self.kernel_time(members, boundary_inputs(members), outputs, group_engine(pattern, members))

    def op_time(self, op: Operation) -> float:
        """The task lower-to-tasks would make of a top-level op or fused group (0 for constants)."""
        if stays_outside_tasks(op):
            return 0.0
        if isinstance(op, fused.GroupOp):
            return self.kernel_time(op.members, op.inputs, op.outputs, engine_of(op))
        return self.kernel_time([op], boundary_inputs([op]), op.results, engine_of(op))

    def task_time(self, kernel: task.KernelOp) -> float:
        """A lowered task as ge-run times it when it runs alone."""
        return work_time(kernel_work(kernel), self.hardware)


def kernel_structure(
    members: Sequence[Operation], inputs: Sequence[SSAValue], outputs: Sequence[SSAValue], engine: str
) -> Hashable | None:
    """What a kernel's time is computed from, without the identity of its ops and values: the engine,
    the boundary's types and which of its values are one value (a tensor read twice is read once),
    and each member's `GeOp.content_key` (class, types, inline constants, properties, attributes).
    How members feed each other does not matter: values passed inside stay on chip. None when a
    member has no content key (not a ge op, or an unhashable attribute): the kernel is then timed
    every time."""
    first: dict[SSAValue, int] = {}
    boundary = [*inputs, *outputs]
    for i, v in enumerate(boundary):
        first.setdefault(v, i)
    parts: list[Hashable] = [engine, len(inputs), *[(first[v], v.type) for v in boundary]]
    for op in members:
        content = op.content_key() if isinstance(op, GeOp) else None
        if content is None:
            return None
        parts.append(content)
    return tuple(parts)
