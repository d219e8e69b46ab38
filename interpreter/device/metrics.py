"""Work metrics of single ge ops: elements and bytes of a value, Cube MACs of an op, and which ops
run on the Cube or cost a transcendental per element.

A leaf module (it imports only xDSL and ge_dialects) so that the fusion pass, the lowering and the
device model's IR extraction (ir_work.py) all count work the same way without importing each other.
"""

from __future__ import annotations

import math

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from ge.ge_dialects.ge.types import numpy_dtype, shape_of

#: Ops whose main work is on the Cube unit (attention's two matmuls; its softmax is on the Vector).
CUBE_OPS = frozenset({"ge.conv", "ge.matmul", "ge.gemm", "ge.attention"})
#: Ops that cost `[vector] transcendental_cost` lane-cycles per element instead of one.
TRANSCENDENTAL = frozenset({"ge.erf", "ge.tanh", "ge.sigmoid", "ge.sqrt", "ge.div", "ge.pow", "ge.gelu",
                            "ge.softmax", "ge.layer_norm", "ge.hard_swish"})


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
