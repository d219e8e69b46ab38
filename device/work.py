"""Plain task records: what one kernel does (TaskWork) and where it runs (SimTask).

The device model reads only these records and a target file; it never sees the IR. The IR -> record
extraction lives with the lowering / ge-run glue.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Engines a task may name.
ENGINES = ("cube", "vector", "cube+vector", "aicpu", "dma", "hccl")

#: Bytes per element of the IR's element-type spellings (ge_dialects/ge/types.py) and common aliases.
DTYPE_BYTES: dict[str, float] = {
    "f64": 8,
    "f32": 4,
    "f16": 2,
    "bf16": 2,
    "hf32": 4,
    "i64": 8,
    "i32": 4,
    "i16": 2,
    "i8": 1,
    "i4": 0.5,
    "i2": 0.25,
    "i1": 1,
    "ui64": 8,
    "ui32": 4,
    "ui16": 2,
    "ui8": 1,
    "u8": 1,
    "ui4": 0.5,
    "ui2": 0.25,
    "f8E4M3FN": 1,
    "f8E4M3FNUZ": 1,
    "f8E5M2": 1,
    "f8E5M2FNUZ": 1,
    "f8E8M0FNU": 1,
    "f4E2M1FN": 0.5,
    "float64": 8,
    "float32": 4,
    "float16": 2,
    "bfloat16": 2,
    "int64": 8,
    "int32": 4,
    "int16": 2,
    "int8": 1,
    "uint8": 1,
    "bool": 1,
}


def dtype_bytes(dtype: str) -> float:
    """Bytes per element of `dtype` (ValueError if unknown)."""
    try:
        return DTYPE_BYTES[dtype]
    except KeyError:
        raise ValueError(f"unknown dtype '{dtype}'") from None


@dataclass(frozen=True)
class Tensor:
    """A buffer a task reads or writes. `name` identifies the buffer (L2 residency is tracked by name)."""

    name: str
    nbytes: int
    shape: tuple[int, ...]
    dtype: str
    fmt: str  # storage format, e.g. "NC1HWC0" (shown in the op summary)


@dataclass(frozen=True)
class TaskWork:
    """What one kernel does."""

    name: str  # task name (ONNX node name of its main op)
    op_type: str  # e.g. "Conv", "MatMul", "fused:cube_epilogue", "TransData"
    engine: str  # "cube", "vector", "cube+vector", "aicpu", "dma", "hccl"
    dtype: str  # compute dtype: "f16", "bf16", "f32", "i8", ...
    cube_macs: int  # multiply-accumulates on the Cube unit
    vector_elems: int  # simple vector element-operations (elements x ops)
    transcendental_elems: int  # exp/erf/tanh/sqrt/div/... element-operations
    inputs: tuple[Tensor, ...]  # boundary traffic (weights included)
    outputs: tuple[Tensor, ...]
    cube_to_vector_bytes: int = 0  # bytes a fused cube+vector kernel passes from Cube to Vector
    block_dim: int = 1  # cores (blocks) the kernel asks for
    moved_layout_elems: int = 0
    """Elements the kernel converts between ND and FRACTAL_NZ as it loads an input or stores an
    output (a TransData member at its boundary): free on a target whose MTE converts on the move
    (`mte.nd_nz_on_the_move`), Vector work elsewhere."""
    replicas: int = 0
    """The chips an `hccl` task's collective spans (its `rank_size`); 0 for every other engine."""
    reread_bytes: int = 0
    """Input bytes read once more: a member that reduces over data too large to stay on chip reads
    it again after the reduction (`GeOp.input_passes`)."""
    serial_steps: int = 1
    """Dependent steps the kernel runs one after another (a recurrent layer's time steps,
    `GeOp.serial_steps`): its stages overlap only within a step."""

    def check(self) -> None:
        """ValueError naming the task if the record is inconsistent."""
        where = f"task '{self.name}' ({self.op_type})"
        if self.engine not in ENGINES:
            raise ValueError(f"{where}: unknown engine '{self.engine}' (engines: {', '.join(ENGINES)})")
        if self.block_dim < 1:
            raise ValueError(f"{where}: block_dim {self.block_dim} < 1")
        if self.serial_steps < 1:
            raise ValueError(f"{where}: serial_steps {self.serial_steps} < 1")
        for field in (
            "cube_macs",
            "vector_elems",
            "transcendental_elems",
            "cube_to_vector_bytes",
            "moved_layout_elems",
            "reread_bytes",
        ):
            if getattr(self, field) < 0:
                raise ValueError(f"{where}: negative {field}")
        for t in self.inputs + self.outputs:
            if t.nbytes < 0:
                raise ValueError(f"{where}: tensor '{t.name}' has negative nbytes")
        if self.engine == "vector" and self.cube_macs:
            raise ValueError(f"{where}: a vector task has cube_macs (use engine cube or cube+vector)")
        if self.engine == "dma" and (self.cube_macs or self.vector_elems or self.transcendental_elems):
            raise ValueError(f"{where}: a dma task does no arithmetic")
        if (self.engine == "hccl") != (self.replicas > 1):
            raise ValueError(f"{where}: an hccl task, and only one, spans replicas > 1 (got {self.replicas})")
        if self.engine == "hccl" and (self.cube_macs or self.vector_elems or self.transcendental_elems):
            raise ValueError(f"{where}: an hccl task's arithmetic is its reduction, not core work")
        if self.cube_to_vector_bytes and self.engine != "cube+vector":
            raise ValueError(f"{where}: cube_to_vector_bytes only applies to engine cube+vector")
        dtype_bytes(self.dtype)


@dataclass(frozen=True)
class SimTask:
    """A task placed on a stream. Tasks with the same `launch` id are dispatched by one host launch
    (used in subgraph-sink mode). `waits` are event ids waited before the task starts, `records` event
    ids recorded after it ends. `wait_from` names, per wait, the earlier task whose record of that id
    it waits for (the IR's link, `sim_tasks`); without it a wait refers to the latest record of its id
    by an earlier task. `inputs_from` are the indices of the tasks whose results it reads (the
    simulator checks that they have ended when it starts)."""

    work: TaskWork
    stream: int
    launch: int
    waits: tuple[int, ...] = ()
    records: tuple[int, ...] = ()
    inputs_from: tuple[int, ...] = ()
    wait_from: tuple[int, ...] | None = None
