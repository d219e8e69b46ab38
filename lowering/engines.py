"""Where each kernel runs, how many cores it asks for, and a summary of its tiling.

Rules as data: `CUBE_OPS` run on the Cube unit, fused groups by their pattern class, integer-only
ops (shape arithmetic on i64 and friends) on the AI CPU as GE places them, everything else on the
Vector unit. Block dim is the engine's core count capped by the kernel's output tiles (a 16x16
fractal for the Cube, a 16 KiB slab for the Vector), so small kernels do not claim idle cores.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from ge_dialects import fused
from ge_dialects.ge.types import is_float, shape_of
from interpreter.device.metrics import elements, macs, nbytes
from target import Target

NOT_TASKS = frozenset({"ge.constant", "func.return"})
"""Ops no engine runs: weights stay in device memory the loader fills, the return is the graph's end."""

CUBE_OPS = frozenset({"ge.conv", "ge.matmul", "ge.gemm"})
PATTERN_ENGINES = {"cube+elementwise": "cube+vector", "attention": "cube+vector",
                   "elementwise": "vector", "reduce+elementwise": "vector"}
AICPU_OPS = frozenset({"ge.shape", "ge.range", "ge.constant_of_shape"})
VECTOR_TILE_BYTES = 16384
FRACTAL = 16


def engine_of(op: Operation) -> str:
    if isinstance(op, fused.GroupOp):
        return group_engine(op.pattern.data, op.members)
    if op.name in CUBE_OPS:
        return "cube"
    if op.name == "ge.attention":
        return "cube+vector"
    if op.name in AICPU_OPS or not any(isinstance(r.type, TensorType) and is_float(r.type.element_type)
                                       for r in op.results):
        return "aicpu"
    return "vector"


def group_engine(pattern: str, members: Sequence[Operation]) -> str:
    """The engine of a fused group of pattern class `pattern` (also asked of fusion candidates)."""
    engine = PATTERN_ENGINES[pattern]
    return "cube" if engine == "cube+vector" and len(members) == 1 else engine


def cube_op(op: Operation) -> Operation | None:
    return cube_member(op.members if isinstance(op, fused.GroupOp) else [op])


def cube_member(members: Sequence[Operation]) -> Operation | None:
    return next((m for m in members if m.name in CUBE_OPS or m.name == "ge.attention"), None)


def launch_geometry(op: Operation, engine: str, target: Target) -> tuple[int, str]:
    """(block_dim, tiling summary) of a kernel on `target`."""
    members = op.members if isinstance(op, fused.GroupOp) else [op]
    return geometry(members, list(op.results), engine, target)


def geometry(members: Sequence[Operation], outputs: Sequence[SSAValue], engine: str,
             target: Target) -> tuple[int, str]:
    """(block_dim, tiling summary) of `members` run as one kernel writing `outputs` (also asked of
    fusion candidates, so that fusion times a group with the geometry lowering will give it)."""
    cores = target.cores
    out = outputs[0] if outputs else None
    if engine == "aicpu":
        return 1, f"elements={elements(out) if out else 0}"
    anchor = cube_member(members)
    if engine in ("cube", "cube+vector") and anchor is not None:
        shape = shape_of(anchor.results[0].type)
        n = shape[1] if anchor.name == "ge.conv" else shape[-1]
        m = max(1, elements(anchor.results[0]) // max(1, n or 1))
        k = macs(anchor) // max(1, elements(anchor.results[0]))
        fractals = math.ceil(m / FRACTAL) * math.ceil((n or 1) / FRACTAL)
        return max(1, min(cores.cube_core, fractals)), f"m={m} n={n} k={k} fractals={fractals}"
    total = sum(nbytes(r) for r in outputs)
    slabs = max(1, math.ceil(total / VECTOR_TILE_BYTES))
    return max(1, min(cores.vector_core, slabs)), f"bytes={total} slabs={slabs}"
