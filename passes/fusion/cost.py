"""A first-order time estimate of ops and fused groups, for fusion's benefit and critical-path checks.

Roofline per kernel: the larger of compute time (Cube MACs or Vector lane-cycles at the target's
rates) and HBM traffic time (bytes crossing the kernel boundary at the target's bandwidth), plus the
target's per-task overhead. Every number comes from the target file; nothing is per model.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from ge_dialects.ge.types import numpy_dtype, shape_of

CUBE_OPS = frozenset({"ge.conv", "ge.matmul", "ge.gemm", "ge.attention"})
TRANSCENDENTAL = frozenset({"ge.erf", "ge.tanh", "ge.sigmoid", "ge.sqrt", "ge.div", "ge.pow", "ge.gelu",
                            "ge.softmax", "ge.layer_norm", "ge.hard_swish"})
FREE_OPS = frozenset({"ge.constant", "ge.shape", "func.return", "fused.yield"})


def elements(value: SSAValue) -> int:
    t = value.type
    if not isinstance(t, TensorType):
        return 0
    return math.prod(1 if d is None else d for d in shape_of(t))


def nbytes(value: SSAValue) -> int:
    t = value.type
    return elements(value) * numpy_dtype(t.element_type).itemsize if isinstance(t, TensorType) else 0


def macs(op: Operation) -> int:
    """Multiply-accumulates of a Cube op (0 for other ops)."""
    if op.name == "ge.conv":
        w = shape_of(op.operands[1].type)
        return elements(op.results[0]) * math.prod(d or 1 for d in w[1:])
    if op.name in ("ge.matmul", "ge.gemm"):
        a = shape_of(op.operands[0].type)
        k = a[0] if op.name == "ge.gemm" and op.p("transA") else a[-1]
        return elements(op.results[0]) * (k or 1)
    if op.name == "ge.attention":
        q, v = shape_of(op.operands[0].type), shape_of(op.operands[2].type)
        sk = v[-2] or 1
        return elements(op.operands[0]) * sk + math.prod(d or 1 for d in q[:-1]) * sk * (v[-1] or 1)
    return 0


class CostModel:
    """Kernel time estimates on one target (a dict loaded from interpreter/targets/*.toml)."""

    def __init__(self, target: dict):
        self.target = target
        cores, cube, vector = target["cores"], target["cube"], target["vector"]
        self.clock = cores["clock_hz"]
        self.cube_macs_per_s = cores["cube_core"] * cube["m"] * cube["k"] * cube["n"] * self.clock
        self.fp32_ratio = cube["fp32_ratio"]
        self.vector_bytes_per_s = cores["vector_core"] * vector["fp16_lanes"] * 2 * self.clock
        self.transcendental = vector["transcendental_cost"]
        self.hbm = target["hbm"]["bandwidth"]
        self.overhead = target["overheads"]["task_device_s"]

    def compute_time(self, op: Operation) -> float:
        if op.name in FREE_OPS:
            return 0.0
        if op.name in CUBE_OPS:
            dtype = numpy_dtype(op.operands[0].type.element_type)
            rate = self.cube_macs_per_s * (self.fp32_ratio if dtype.itemsize >= 4 else 1.0)
            return macs(op) / rate
        work = sum(nbytes(r) for r in op.results)
        factor = self.transcendental if op.name in TRANSCENDENTAL else 1
        return work * factor / self.vector_bytes_per_s

    def kernel_time(self, ops: Iterable[Operation], boundary_bytes: int) -> float:
        """One kernel running `ops`, reading and writing `boundary_bytes` through HBM."""
        ops = list(ops)
        if all(op.name in FREE_OPS for op in ops):
            return 0.0
        compute = sum(self.compute_time(op) for op in ops)
        return max(compute, boundary_bytes / self.hbm) + self.overhead

    def op_time(self, op: Operation) -> float:
        if op.name in FREE_OPS:
            return 0.0
        traffic = sum(nbytes(v) for v in op.operands) + sum(nbytes(r) for r in op.results)
        return self.kernel_time([op], traffic)
