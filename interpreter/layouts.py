"""GE's physical layouts as numpy: a logical array to its stored array and back.

`to_storage(array, origin, storage, dtype)` lays a logical array out the way the device stores it
(NC1HWC0, FRACTAL_Z, FRACTAL_NZ, NHWC; zero padding where a format splits a dim into blocks);
`from_storage(array, origin, storage, dtype, shape)` undoes it (the logical `shape` says how much of
the padding to drop). The definitions are the ones in `ge_dialects/ge/layout.py`; every conversion
is a pad, a reshape and a transpose, no Python loop over elements.

The interpreter holds a value whose type has a non-trivial storage format as the stored array, so a
layout bug gives wrong numbers. `to_physical(array, type)` / `to_logical(array, type)` convert by a
value's type and check the shapes.
"""

from __future__ import annotations

import weakref

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute

from ge.ge_dialects.ge.layout import (
    FRACTAL_NZ,
    FRACTAL_ROWS,
    FRACTAL_Z,
    NC1HWC0,
    NCHW,
    NHWC,
    LayoutError,
    c0_of,
    image_origin,
    is_stored_logically,
    is_trivial,
    origin_of,
    physical_shape,
    storage_of,
    storage_shape,
    unsupported,
)
from ge.ge_dialects.ge.types import Shape, element_type_of, shape_of

__all__ = [
    "LayoutError",
    "to_storage",
    "from_storage",
    "to_physical",
    "to_logical",
    "storage_shape",
    "c0",
]


def c0(dtype: Attribute | np.dtype | type) -> int:
    """C0 of a ge element type or numpy dtype: 32 bytes of it."""
    element_type = dtype if isinstance(dtype, Attribute) else element_type_of(dtype)
    value = c0_of(element_type)
    if value is None:
        raise LayoutError(f"element type {element_type} has no C0")
    return value


def _element_type(dtype: Attribute | np.dtype | type | None, array: np.ndarray) -> Attribute:
    if isinstance(dtype, Attribute):
        return dtype
    return element_type_of(array.dtype if dtype is None else dtype)


def _pad_to(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """`x` zero-padded at the end of each dim to `shape` (no copy when nothing is padded)."""
    if x.shape == shape:
        return x
    out = np.zeros(shape, dtype=x.dtype)
    out[tuple(slice(0, d) for d in x.shape)] = x
    return out


def _check_supported(origin: str, storage: str, shape: Shape, element_type: Attribute) -> None:
    reason = unsupported(origin, storage, shape, element_type)
    if reason is not None:
        raise LayoutError(reason)


# -- logical -> stored -----------------------------------------------------------------------------


def _c0(element_type: Attribute) -> int:
    """C0 of a type _check_supported accepted for a blocked format (which needs one)."""
    c0 = c0_of(element_type)
    assert c0 is not None
    return c0


def to_storage(
    array: np.ndarray, origin: str, storage: str, dtype: Attribute | np.dtype | type | None = None
) -> np.ndarray:
    """The array a logical `array` (in `origin` order) is stored as in `storage` (C-contiguous)."""
    x = np.asarray(array)
    element_type = _element_type(dtype, x)
    _check_supported(origin, storage, x.shape, element_type)
    rank = x.ndim
    if is_trivial(origin, storage, rank):
        return x
    if storage == FRACTAL_NZ:
        return _nd_to_nz(x, _c0(element_type))
    nchw = x if image_origin(origin, rank) == NCHW else x.transpose(0, 3, 1, 2)
    if storage == NCHW:
        out = nchw
    elif storage == NHWC:
        out = nchw.transpose(0, 2, 3, 1)
    elif storage == NC1HWC0:
        out = _nchw_to_nc1hwc0(nchw, _c0(element_type))
    else:
        out = _nchw_to_fractal_z(nchw, _c0(element_type))
    return np.ascontiguousarray(out)


def _nchw_to_nc1hwc0(x: np.ndarray, c0: int) -> np.ndarray:
    n, c, h, w = x.shape
    c1 = -(-c // c0)
    x = _pad_to(x, (n, c1 * c0, h, w))
    return x.reshape(n, c1, c0, h, w).transpose(0, 1, 3, 4, 2)


def _nchw_to_fractal_z(x: np.ndarray, c0: int) -> np.ndarray:
    n, c, h, w = x.shape
    c1, n1 = -(-c // c0), -(-n // FRACTAL_ROWS)
    x = _pad_to(x, (n1 * FRACTAL_ROWS, c1 * c0, h, w))
    # [N1, 16, C1, C0, H, W] -> [C1, H, W, N1, 16, C0]
    x = x.reshape(n1, FRACTAL_ROWS, c1, c0, h, w).transpose(2, 4, 5, 0, 1, 3)
    return x.reshape(c1 * h * w, n1, FRACTAL_ROWS, c0)


def _nd_to_nz(x: np.ndarray, c0: int) -> np.ndarray:
    *batch, h, w = x.shape
    h1, w1 = -(-h // FRACTAL_ROWS), -(-w // c0)
    x = _pad_to(x, (*batch, h1 * FRACTAL_ROWS, w1 * c0))
    b = len(batch)
    # [..., H1, 16, W1, C0] -> [..., W1, H1, 16, C0]
    x = x.reshape(*batch, h1, FRACTAL_ROWS, w1, c0)
    return np.ascontiguousarray(x.transpose(*range(b), b + 2, b, b + 1, b + 3))


# -- stored -> logical -----------------------------------------------------------------------------


def from_storage(
    array: np.ndarray, origin: str, storage: str, dtype: Attribute | np.dtype | type | None, shape: Shape
) -> np.ndarray:
    """The logical array (of `shape`, in `origin` order) that `array` stores in `storage`.

    Unknown (None) dims of `shape` are taken from the stored array where a format keeps them whole;
    a dim a format splits into blocks must be known."""
    x = np.asarray(array)
    element_type = _element_type(dtype, x)
    shape = _resolve(x, origin, storage, element_type, shape)
    expected = physical_shape(shape, origin, storage, element_type)
    if tuple(x.shape) != tuple(expected):
        raise LayoutError(
            f"a {storage} array of logical shape {list(shape)} ({origin}) has shape "
            f"{list(expected)}, got {list(x.shape)}"
        )
    rank = len(shape)
    if is_trivial(origin, storage, rank):
        return x
    if storage == FRACTAL_NZ:
        out = _nz_to_nd(x, shape)
    else:
        nchw_shape = shape if image_origin(origin, rank) == NCHW else (shape[0], shape[3], shape[1], shape[2])
        if storage == NCHW:
            nchw = x
        elif storage == NHWC:
            nchw = x.transpose(0, 3, 1, 2)
        elif storage == NC1HWC0:
            nchw = _nc1hwc0_to_nchw(x, nchw_shape)
        else:
            nchw = _fractal_z_to_nchw(x, nchw_shape)
        out = nchw if image_origin(origin, rank) == NCHW else nchw.transpose(0, 2, 3, 1)
    return np.ascontiguousarray(out)


def _resolve(x: np.ndarray, origin: str, storage: str, element_type: Attribute, shape: Shape) -> tuple[int, ...]:
    """`shape` with its unknown dims read off the stored array."""
    known = [d for d in shape if d is not None]
    if len(known) == len(shape):
        return tuple(known)
    probe = [0 if d is None else d for d in shape]
    _check_supported(origin, storage, tuple(shape), element_type)
    rank = len(shape)
    if is_trivial(origin, storage, rank):
        return tuple(x.shape) if x.ndim == rank else tuple(probe)
    # where does logical dim i land in the stored array? (only dims kept whole are unknown here)
    if storage == FRACTAL_NZ:
        where = {i: i for i in range(rank - 2)}
    else:
        nchw = image_origin(origin, rank) == NCHW
        logical = {"N": 0, "C": 1, "H": 2, "W": 3} if nchw else {"N": 0, "H": 1, "W": 2, "C": 3}
        stored = {NCHW: "NCHW", NHWC: "NHWC", NC1HWC0: "N-HW", FRACTAL_Z: "----"}[storage]
        where = {logical[k]: stored.index(k) for k in "NCHW" if k in stored}
    resolved = list(probe)  # every unknown dim is overwritten below
    for i, d in enumerate(shape):
        if d is None:
            if i not in where or where[i] >= x.ndim:
                raise LayoutError(f"dim {i} of a {storage} tensor must be static")
            resolved[i] = x.shape[where[i]]
    return tuple(resolved)


def _nc1hwc0_to_nchw(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    n, c, h, w = shape
    c1, c0 = x.shape[1], x.shape[4]
    return x.transpose(0, 1, 4, 2, 3).reshape(n, c1 * c0, h, w)[:, :c]


def _fractal_z_to_nchw(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    n, c, h, w = shape
    n1, c0 = x.shape[1], x.shape[3]
    c1 = x.shape[0] // (h * w)
    # [C1, H, W, N1, 16, C0] -> [N1, 16, C1, C0, H, W]
    y = x.reshape(c1, h, w, n1, FRACTAL_ROWS, c0).transpose(3, 4, 0, 5, 1, 2)
    return y.reshape(n1 * FRACTAL_ROWS, c1 * c0, h, w)[:n, :c]


def _nz_to_nd(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    *batch, h, w = shape
    b = len(batch)
    w1, h1, _, c0 = x.shape[b:]
    # [..., W1, H1, 16, C0] -> [..., H1, 16, W1, C0]
    y = x.transpose(*range(b), b + 1, b + 2, b, b + 3).reshape(*batch, h1 * FRACTAL_ROWS, w1 * c0)
    return y[..., :h, :w]


# -- by type ---------------------------------------------------------------------------------------


def to_physical(array: np.ndarray, t: TensorType) -> np.ndarray:
    """A logical value of type `t` as the interpreter holds it (stored, when `t` says so)."""
    if is_stored_logically(t):
        return array
    return to_storage(array, origin_of(t), storage_of(t), t.element_type)


def to_logical(array: np.ndarray, t: TensorType) -> np.ndarray:
    """The logical value of a held value of type `t`."""
    if is_stored_logically(t):
        return array
    return from_storage(array, origin_of(t), storage_of(t), t.element_type, shape_of(t))


_CONSTANTS: dict[int, tuple[weakref.ref, TensorType, np.ndarray]] = {}


def constant_to_logical(array: np.ndarray, t: TensorType) -> np.ndarray:
    """`to_logical` for a value that never changes (a weight): converted once per array object,
    the (read-only) result kept while the array lives."""
    if is_stored_logically(t):
        return array
    key = id(array)
    hit = _CONSTANTS.get(key)
    if hit is not None and hit[0]() is array and hit[1] == t:
        return hit[2]
    logical = to_logical(array, t)
    logical.flags.writeable = False

    def forget(_: object, key: int = key) -> None:
        _CONSTANTS.pop(key, None)

    _CONSTANTS[key] = (weakref.ref(array, forget), t, logical)
    return logical


def matches_storage(array: np.ndarray, t: TensorType) -> bool:
    """Whether a held array has the physical shape a value of type `t` has."""
    want = storage_shape(t)
    return len(want) == array.ndim and all(w is None or w == d for w, d in zip(want, array.shape))
