"""Numpy kernels for ge ops, registered as xDSL interpreter implementations.

A kernel is `fn(op, ins) -> array | tuple[array, ...]`: `op` is the ge op (read properties with
`op.p(name)`), `ins` maps each operand definition name to its value: an array, None for an
absent optional operand, a list for a variadic one. Kernels compute in the op's element type and
return exactly the op's result dtypes.

Each module of this package ends with an `InterpreterFunctions` class that maps op classes to its
kernels with `@impl(OpClass)` (through `checked.kernel_impl`); `ge.interpreter.ge.GeFunctions`
combines them into the ge dialect's functions, which ge-run and compile-time folding register on
an xDSL `Interpreter`. There is no other registry.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ge.ge_dialects.limits import DEFAULT_MAX_TENSOR_BYTES, max_tensor_bytes, tensor_byte_limit  # noqa: F401 (re-exported)
from ge.interpreter.kernels import parallel

Kernel = Callable[[Any, dict[str, Any]], Any]

# Arrays whose prepared forms may be kept: id -> a weak reference (so an id reused by a new array
# is told apart), and the forms made of them, dropped with the array.
_VOUCHED: dict[int, weakref.ref] = {}
_PREPARED: dict[int, dict[str, Any]] = {}


def vouch_for(array: np.ndarray) -> None:
    """Declares that `array` will not be written while it lives (a constant's value the interpreter
    read itself: an inline value, a sidecar store's tensor), so forms prepared from it can be kept."""
    ident = id(array)

    def forget(_, ident=ident):
        _VOUCHED.pop(ident, None)
        _PREPARED.pop(ident, None)

    _VOUCHED[ident] = weakref.ref(array, forget)


def prepared(array: np.ndarray, kind: str, make: Callable[[np.ndarray], Any]) -> Any:
    """`make(array)`, made once per vouched-for array and `kind` (a conv's weights in its GEMM's
    layout, say), and on every call for any other array: an array from an in-memory table may be
    written between runs."""
    ident = id(array)
    ref = _VOUCHED.get(ident)
    if ref is None or ref() is not array:
        return make(array)
    forms = _PREPARED.setdefault(ident, {})
    if kind not in forms:
        forms[kind] = make(array)
    return forms[kind]


def donated(op: Any, ins: dict[str, Any], name: str) -> Any:
    """Operand `name`'s array if the kernel may write its result into it, else None.

    Allowed when nothing else can see the array: the op is the value's only user, the value comes
    from another op (not a constant, whose array is cached, nor a block argument, which the caller
    owns), the array owns its memory (it is not a view of a value someone else reads) and it has
    the result's shape and dtype. Saves an allocation and a pass over fresh memory per op."""
    array = ins.get(name)
    if array is None or not getattr(array, "flags", None) or not array.flags.owndata or not array.flags.writeable:
        return None
    value = getattr(op, name)
    owner = value.owner
    if not hasattr(owner, "results") or owner.name == "ge.constant" or not value.has_one_use():
        return None
    result = op.results[0]
    from ge.ge_dialects.ge.layout import storage_shape
    from ge.ge_dialects.ge.types import numpy_dtype, shape_of

    # logical operands, or the stored ones of an op that runs on storage (checked.LAYOUT_FREE)
    if array.dtype != numpy_dtype(result.type.element_type):
        return None
    if array.shape != shape_of(result.type) and array.shape != tuple(storage_shape(result.type)):
        return None
    return array


class DataError(Exception):
    """The operands' values (not their types) make the op undefined, e.g. a Gather index out of
    range: the input's fault, reported as one line naming the op."""


class AllocationError(Exception):
    """A kernel was asked for a tensor with a negative dimension or more bytes than the limit."""


def format_bytes(count: int) -> str:
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= size:
            return f"{count / size:.3g} {unit}"
    return f"{count} bytes"


def check_alloc(shape: Iterable[Any], dtype: Any) -> None:
    """Refuses a result of `shape` and `dtype` before it is allocated: a negative dimension, or more
    bytes than the limit. Sizes are Python integers, so dims near 2**63 cannot overflow."""
    dims = [int(d) for d in shape]
    if any(d < 0 for d in dims):
        raise AllocationError(f"a tensor of shape {dims} has a negative dimension")
    size = math.prod(dims) * np.dtype(dtype).itemsize
    limit = max_tensor_bytes()
    if size > limit:
        raise AllocationError(
            f"a tensor of shape {dims} and dtype {np.dtype(dtype)} needs {format_bytes(size)}, "
            f"more than the limit of {format_bytes(limit)} (--max-tensor-bytes)"
        )


# -- GEMMs split over threads ----------------------------------------------------------------------

# Below this many multiply-adds a GEMM runs whole on the calling thread (splitting costs more).
_SPLIT_MACS = 1 << 22
# A split GEMM's blocks, whatever the thread count: two per thread on a 2-core machine. Each block
# is a BLAS call that packs its operands again, so at one thread more blocks cost more (8 blocks were
# about 10% slower than one on ResNet-50).
_SPLIT_BLOCKS = 4


def matmul_into(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """a @ b for 2-D a and b (into `out` when given), split into blocks of the larger output dim
    that the run's threads claim (`parallel.run_blocks`; the blocks depend on the shape only)."""
    m, n = a.shape[0], b.shape[1]
    if out is None:
        out = np.empty((m, n), np.result_type(a, b))
    if m * n * a.shape[1] < _SPLIT_MACS:
        return np.matmul(a, b, out=out)
    by_rows = m >= n
    blocks = parallel.spans(m if by_rows else n, _SPLIT_BLOCKS, align=16)

    def block(i: int) -> None:
        part = slice(*blocks[i])
        if by_rows:
            np.matmul(a[part], b, out=out[part])
        else:
            np.matmul(a, b[:, part], out=out[:, part])

    parallel.run_blocks(len(blocks), block)
    return out
