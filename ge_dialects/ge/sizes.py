"""The bytes a value occupies in device memory.

A tensor is stored in its storage format (ge_dialects/ge/layout.py): NC1HWC0, FRACTAL_Z and
FRACTAL_NZ split dims into blocks and zero-pad them, so a value can take several times its logical
bytes (an NC1HWC0 image with 3 channels is padded to C0 = 8 or 16: 2.7x in f32, 5.3x in f16). Every
size that stands for device memory (the memory plan, the reuse ordering read back from it, the HBM
check, the arena executor's slots) is this one: the physical shape's elements x the element size,
rounded up to whole bytes for the sub-byte types (int4, fp4, int2 are packed), a bool one byte.
Dynamic dims count as 1 (a plan refuses them; elsewhere the size is a lower estimate).
"""

from __future__ import annotations

import math

from xdsl.dialects.builtin import TensorType, i1
from xdsl.ir import Attribute, SSAValue

from ge.ge_dialects.ge.layout import storage_shape
from ge.ge_dialects.ge.types import numpy_dtype


def element_bits(element_type: Attribute) -> int:
    """Bits one element takes in device memory (a bool takes a byte)."""
    if element_type == i1:
        return 8
    bits = getattr(element_type, "bitwidth", None)
    return bits if isinstance(bits, int) and bits > 0 else numpy_dtype(element_type).itemsize * 8


def storage_bytes(t: Attribute) -> int:
    """Bytes a value of type `t` is stored in (0 for a non-tensor)."""
    if not isinstance(t, TensorType):
        return 0
    elements = math.prod(1 if d is None else d for d in storage_shape(t))
    return -(-elements * element_bits(t.element_type) // 8)


def device_bytes(value: SSAValue) -> int:
    """Bytes `value` occupies in device memory (see the module docstring)."""
    return storage_bytes(value.type)
