"""Numpy kernels for ge ops, one registry for the interpreter and import-time constant folding.

A kernel is `fn(op, ins) -> array | tuple[array, ...]`: `op` is the ge op (read properties with
`op.p(name)`), `ins` maps each operand definition name to its value: an array, None for an
absent optional operand, a list for a variadic one. Kernels compute in the op's element type and
return exactly the op's result dtypes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


Kernel = Callable[[Any, dict[str, Any]], Any]

KERNELS: dict[type, Kernel] = {}


def kernel(*op_types: type) -> Callable[[Kernel], Kernel]:
    """Registers `fn` as the kernel of each of `op_types`."""

    def register(fn: Kernel) -> Kernel:
        for op_type in op_types:
            if op_type in KERNELS:
                raise ValueError(f"{op_type.name} has two kernels")
            KERNELS[op_type] = fn
        return fn

    return register


def load_all() -> dict[type, Kernel]:
    """Imports every kernel module (they register on import) and returns the registry."""
    from interpreter.kernels import attention, elementwise, layout, nn, resize, tensor  # noqa: F401

    return KERNELS
