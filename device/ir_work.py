"""The one bridge from ge IR to the device model: the work record (TaskWork) of a list of ge ops
run as one kernel, and its time on a target.

The same functions serve three callers, so that the compiler optimizes the model ge-run reports:
- ge-run (interpreter/stream_executor.py) times each `task.kernel` of a lowered module;
- fuse-ops (passes/fusion/cost.py) times a candidate group and the ops it would replace;
- lower-to-streams times each task to balance streams.
It imports only ge_dialects and the device model's records and cost functions (no passes, no
lowering), so every layer can import it.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from ge.device.cost import Hardware, task_time
from ge.device.engines import boundary_conversions
from ge.device.metrics import nbytes
from ge.device.work import TaskWork, Tensor
from ge.ge_dialects import fused, task
from ge.ge_dialects.ge.attention import AttentionOp
from ge.ge_dialects.ge.base import GeOp
from ge.ge_dialects.ge.facts import Engine
from ge.ge_dialects.ge.types import format_of, shape_of, type_name


def work_ops(members: Sequence[Operation]) -> list[GeOp]:
    """The members that are work of a kernel: ge ops that run on an engine (constants are data in
    memory or immediates; terminators are no work)."""
    return [m for m in members if isinstance(m, GeOp) and m.engine_class() is not Engine.NONE]


def tensor(value: SSAValue, names: dict[SSAValue, str]) -> Tensor:
    """The buffer record of `value`; `names` gives every distinct value its own name (L2 residency and
    the de-duplication of a tensor read twice go by name)."""
    t = value.type
    assert isinstance(t, TensorType)  # task and ge op operands and results are tensors
    name = names.setdefault(value, f"%{len(names)}")
    fmt = format_of(t)
    return Tensor(
        name=name,
        nbytes=nbytes(value),
        shape=tuple(d or 1 for d in shape_of(t)),
        dtype=type_name(t.element_type),
        fmt=fmt.storage.data if fmt else "ND",
    )


def ops_work(
    members: Sequence[Operation],
    inputs: Sequence[SSAValue],
    outputs: Sequence[SSAValue],
    engine: str,
    block_dim: int,
    name: str = "",
    op_type: str = "",
    names: dict[SSAValue, str] | None = None,
) -> TaskWork:
    """The work of `members` run as one kernel on `engine` with `block_dim` blocks, reading `inputs`
    and writing `outputs` (its boundary; values passed between members stay on chip)."""
    names = {} if names is None else names
    members = work_ops(members)
    moved = boundary_conversions(members)
    computing = [m for m in members if m not in moved]
    # an attention kernel whose heads are whole NZ column blocks loads and stores them as they lie
    heads_as_fractals = any(isinstance(m, AttentionOp) and m.fractal_heads() for m in members)
    cube = [m for m in members if m.engine_class().uses_cube]
    anchor = cube[0] if cube else (members[0] if members else None)
    dtype_value = None if anchor is None else (anchor.operands[0] if anchor.operands else anchor.results[0])
    dtype = (
        type_name(dtype_value.type.element_type)
        if dtype_value is not None and isinstance(dtype_value.type, TensorType)
        else "f32"
    )
    collective = engine == "hccl"
    return TaskWork(
        name=name,
        op_type=op_type,
        engine=engine,
        dtype=dtype,
        cube_macs=sum(m.macs() for m in cube),
        vector_elems=sum(m.vector_elements() for m in computing),
        transcendental_elems=sum(m.transcendental_elements() for m in computing),
        inputs=tuple(tensor(v, names) for v in inputs),
        outputs=tuple(tensor(v, names) for v in outputs),
        cube_to_vector_bytes=sum(nbytes(m.results[0]) for m in cube) if engine == "cube+vector" else 0,
        block_dim=block_dim,
        moved_layout_elems=sum(m.vector_elements() for m in moved if not (m.is_view() or heads_as_fractals)),
        replicas=max((m.p("rank_size") for m in computing), default=0) if collective else 0,
        reread_bytes=_reread_bytes(computing),
        serial_steps=max((m.serial_steps() for m in members), default=1),
    )


def _reread_bytes(members: Sequence[GeOp]) -> int:
    """What members needing several passes read again (`GeOp.input_passes`): their data operands,
    from memory, or, made inside the kernel, recomputed from as many bytes."""
    total = 0
    for m in members:
        extra = m.input_passes() - 1
        if extra > 0:
            data = m.DATA_OPERANDS or tuple(name for name, _ in m.get_irdl_definition().operands)
            read = {v for name in data if isinstance(v := getattr(m, name, None), SSAValue)}
            total += extra * sum(nbytes(v) for v in read)
    return total


def kernel_work(kernel: task.KernelOp, names: dict[SSAValue, str] | None = None) -> TaskWork:
    """The work of one `task.kernel` (its engine, block_dim, inputs and outputs as lowered)."""
    return ops_work(
        kernel.members,
        kernel.inputs,
        kernel.outputs,
        kernel.engine.data,
        kernel.block_dim.value.data,
        kernel.task_name.data,
        kernel.pattern.data,
        names,
    )


def work_time(work: TaskWork, target) -> float:
    """Seconds of `work` run alone on its `block_dim` cores with all of HBM and a cold L2: the task
    overhead plus its tiled pipeline, as the simulator times a task that runs alone."""
    hw = Hardware.of(target)
    return task_time(work, hw, work.block_dim).total_s


def boundary_inputs(members: Sequence[Operation]) -> list[SSAValue]:
    """Values `members` read from outside, in first-use order, as outlining makes them kernel inputs:
    scalar constants are cloned in as immediates, so they are not inputs."""
    inside = set(members)
    seen: list[SSAValue] = []
    for op in members:
        for v in op.operands:
            if v.owner in inside or v in seen:
                continue
            if isinstance(v.owner, Operation) and fused.is_scalar_constant(v.owner):
                continue
            seen.append(v)
    return seen
