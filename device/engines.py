"""Where each kernel runs, how many cores it asks for, and a summary of its tiling.

An op's engine is a fact of the op (`GeOp.engine()`, from its `RunsOn` trait: Cube, Cube+Vector,
Vector, AI CPU, HCCL, or none for ops that stay outside tasks); a fused group runs where its
pattern class says. Block dim is the engine's core count capped by the kernel's output tiles (a
Cube fractal, `[cube] m x n`, for the Cube; a `[vector] tile_bytes` slab for the Vector), so small
kernels do not claim idle cores.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from ge.device.metrics import elements, nbytes
from ge.ge_dialects import fused
from ge.ge_dialects.ge.base import GeOp, has_float_result
from ge.ge_dialects.ge.facts import Engine
from ge.ge_dialects.ge.layout import TransDataOp
from ge.ge_dialects.ge.nn import ConvOp
from ge.ge_dialects.ge.types import shape_of, tensor_type_of
from ge.target import Target


def stays_outside_tasks(op: Operation) -> bool:
    """Ops no engine runs: weights stay in device memory the loader fills (`Engine.NONE`), the
    return is the graph's end."""
    return isinstance(op, func.ReturnOp) or (isinstance(op, GeOp) and op.engine_class() is Engine.NONE)


PATTERN_ENGINES = {
    "cube+elementwise": "cube+vector",
    "attention": "cube+vector",
    "elementwise": "vector",
    "reduce+elementwise": "vector",
}


def engine_of(op: Operation) -> str:
    if isinstance(op, fused.GroupOp):
        return group_engine(op.pattern.data, op.members)
    if isinstance(op, GeOp):
        return op.engine().value
    return Engine.VECTOR.value if has_float_result(op) else Engine.AICPU.value


def group_engine(pattern: str, members: Sequence[Operation]) -> str:
    """The engine of a fused group of pattern class `pattern` (also asked of fusion candidates): a
    Cube op whose only other members are conversions on the move is a Cube kernel."""
    engine = PATTERN_ENGINES[pattern]
    moved = boundary_conversions(members)
    computing = [m for m in members if m not in moved]
    return "cube" if engine == "cube+vector" and len(computing) == 1 else engine


def boundary_conversions(members: Sequence[Operation]) -> list[GeOp]:
    """The members at a kernel's boundary that its data movement does without work of their own:
    ND <-> FRACTAL_NZ TransData (ND2NZ as it loads an input, NZ2ND as it stores an output) and
    views (`is_view`: a TransData or a reshape whose result is the same bytes). Each reads a value
    from outside the kernel, or its result is read by no member; none when it is the kernel's only
    member."""
    if len(members) < 2:
        return []
    inside = set(members)
    found: list[GeOp] = []
    for m in members:
        if not isinstance(m, GeOp):
            continue
        if not (m.is_view() or (isinstance(m, TransDataOp) and m.converts_nd_nz())):
            continue
        loads = m.operands[0].owner not in inside
        stores = not any(u.operation in inside for u in m.results[0].uses)
        if loads or stores:
            found.append(m)
    return found


def cube_op(op: Operation) -> Operation | None:
    return cube_member(op.members if isinstance(op, fused.GroupOp) else [op])


def cube_member(members: Sequence[Operation]) -> GeOp | None:
    """The member that runs on the Cube (the anchor of a Cube kernel's geometry), if any."""
    return next((m for m in members if isinstance(m, GeOp) and m.engine_class().uses_cube), None)


def launch_geometry(op: Operation, engine: str, target: Target) -> tuple[int, str]:
    """(block_dim, tiling summary) of a kernel on `target`."""
    members = op.members if isinstance(op, fused.GroupOp) else [op]
    inputs = list(op.inputs) if isinstance(op, fused.GroupOp) else list(op.operands)
    return geometry(members, inputs, list(op.results), engine, target)


def geometry(
    members: Sequence[Operation],
    inputs: Sequence[SSAValue],
    outputs: Sequence[SSAValue],
    engine: str,
    target: Target,
) -> tuple[int, str]:
    """(block_dim, tiling summary) of `members` run as one kernel reading `inputs` and writing
    `outputs` (also asked of fusion candidates, so that fusion times a group with the geometry
    lowering will give it). A Vector kernel takes a block per slab of the larger of what it reads
    and what it writes: a reduction to a small result splits its input over the cores (GE's
    multi-core reductions, their partial sums added atomically into the result)."""
    cores = target.cores
    out = outputs[0] if outputs else None
    if engine == "aicpu":
        return 1, f"elements={elements(out) if out else 0}"
    if engine == "hccl":  # one collective on the links, whatever its size
        return 1, f"bytes={sum(nbytes(r) for r in outputs)}"
    anchor = cube_member(members)
    if engine in ("cube", "cube+vector") and anchor is not None:
        shape = shape_of(tensor_type_of(anchor.results[0]))
        n = shape[1] if isinstance(anchor, ConvOp) else shape[-1]
        # the rows of one step: a recurrent layer's steps wait for each other, its blocks share a step
        m = max(1, elements(anchor.results[0]) // max(1, n or 1) // anchor.serial_steps())
        k = anchor.macs() // max(1, elements(anchor.results[0]))
        fractals = math.ceil(m / target.cube.m) * math.ceil((n or 1) / target.cube.n)
        return max(1, min(cores.cube_core, fractals)), f"m={m} n={n} k={k} fractals={fractals}"
    total = max(sum(nbytes(r) for r in outputs), sum(nbytes(v) for v in inputs if isinstance(v.type, TensorType)))
    slabs = max(1, math.ceil(total / target.vector.tile_bytes))
    return max(1, min(cores.vector_core, slabs)), f"bytes={total} slabs={slabs}"
