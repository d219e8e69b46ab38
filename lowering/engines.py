"""Where each kernel runs, how many cores it asks for, and a summary of its tiling.

Rules as data: `CUBE_OPS` run on the Cube unit, fused groups by their pattern class, integer-only
ops (shape arithmetic on i64 and friends) on the AI CPU as GE places them, everything else on the
Vector unit. Block dim is the engine's core count capped by the kernel's output tiles (a 16x16
fractal for the Cube, a 16 KiB slab for the Vector), so small kernels do not claim idle cores.
"""

from __future__ import annotations

import math

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation

from ge_dialects import fused
from ge_dialects.ge.types import is_float, shape_of
from passes.fusion.cost import elements, macs, nbytes

CUBE_OPS = frozenset({"ge.conv", "ge.matmul", "ge.gemm"})
PATTERN_ENGINES = {"cube+elementwise": "cube+vector", "attention": "cube+vector",
                   "elementwise": "vector", "reduce+elementwise": "vector"}
AICPU_OPS = frozenset({"ge.shape", "ge.range", "ge.constant_of_shape"})
VECTOR_TILE_BYTES = 16384
FRACTAL = 16


def engine_of(op: Operation) -> str:
    if isinstance(op, fused.GroupOp):
        engine = PATTERN_ENGINES[op.pattern.data]
        if engine == "cube+vector" and len(op.members) == 1:
            return "cube"
        return engine
    if op.name in CUBE_OPS:
        return "cube"
    if op.name == "ge.attention":
        return "cube+vector"
    if op.name in AICPU_OPS or not any(isinstance(r.type, TensorType) and is_float(r.type.element_type)
                                       for r in op.results):
        return "aicpu"
    return "vector"


def cube_op(op: Operation) -> Operation | None:
    members = op.members if isinstance(op, fused.GroupOp) else [op]
    return next((m for m in members if m.name in CUBE_OPS or m.name == "ge.attention"), None)


def launch_geometry(op: Operation, engine: str, target: dict) -> tuple[int, str]:
    """(block_dim, tiling summary) of a kernel on `target`."""
    cores = target["cores"]
    out = op.results[0] if op.results else None
    if engine == "aicpu":
        return 1, f"elements={elements(out) if out else 0}"
    anchor = cube_op(op)
    if engine in ("cube", "cube+vector") and anchor is not None:
        shape = shape_of(anchor.results[0].type)
        n = shape[1] if anchor.name == "ge.conv" else shape[-1]
        m = max(1, elements(anchor.results[0]) // max(1, n or 1))
        k = macs(anchor) // max(1, elements(anchor.results[0]))
        fractals = math.ceil(m / FRACTAL) * math.ceil((n or 1) / FRACTAL)
        return max(1, min(cores["cube_core"], fractals)), f"m={m} n={n} k={k} fractals={fractals}"
    total = sum(nbytes(r) for r in op.results)
    slabs = max(1, math.ceil(total / VECTOR_TILE_BYTES))
    return max(1, min(cores["vector_core"], slabs)), f"bytes={total} slabs={slabs}"
