"""Sizes of values: elements and bytes of an SSA value's tensor.

What an op computes (Cube MACs, Vector element-ops, transcendental element-ops) and which engine
it runs on are facts of the op itself (`GeOp.macs()` and friends, ge_dialects/ge/facts.py); this
leaf module only measures values, so that the fusion pass, the lowering and the device model's IR
extraction (ir_work.py) count bytes the same way without importing each other.
"""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from ge.ge_dialects.ge.types import elements, numpy_dtype

__all__ = ["elements", "nbytes"]


def nbytes(value: SSAValue) -> int:
    t = value.type
    return elements(value) * numpy_dtype(t.element_type).itemsize if isinstance(t, TensorType) else 0
