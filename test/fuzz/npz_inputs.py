"""Hostile `ge-run --inputs` files: wrong keys, shapes, dtypes or values, lying .npy headers,
foreign zip members, a plain .npy, object arrays, damaged or empty files."""

from __future__ import annotations

import io
import random
import struct
import zipfile

import numpy as np

from .byte_mutations import mutate_bytes


def _zip(members: dict[str, bytes]) -> bytes:
    """A zip of these members with a fixed timestamp, so that a case's bytes depend on its seed only."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        for name, data in members.items():
            z.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data)
    return buffer.getvalue()


def _npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=True)
    return buffer.getvalue()


def _npz(arrays: dict[str, np.ndarray]) -> bytes:
    """What np.savez writes (one .npy member per array), without its wall-clock timestamps."""
    return _zip({f"{name}.npy": _npy(array) for name, array in arrays.items()})


def hostile_inputs(valid: dict[str, np.ndarray] | None, rng: random.Random) -> tuple[bytes, str]:
    """An --inputs file: the valid one, or one with wrong keys, shapes, dtypes, values or bytes."""
    arrays = {k: v.copy() for k, v in (valid or {}).items()}
    if rng.random() < 0.4 and arrays:
        return _npz(arrays), "npz:valid"
    kind = rng.choice(["keys", "shape", "dtype", "values", "header", "bytes", "zip", "npy", "object", "empty"])
    name = rng.choice(sorted(arrays)) if arrays else "x"
    if kind == "keys":
        action = rng.choice(["drop", "extra", "rename"])
        if action == "drop" and arrays:
            del arrays[name]
        elif action == "extra":
            arrays[rng.choice(["extra", "名", "a/b", "x" * 200])] = np.zeros(2, np.float32)
        elif arrays:
            arrays["renamed_" + name] = arrays.pop(name)
        return _npz(arrays), f"npz:keys-{action}"
    if kind == "shape":
        value = arrays.get(name, np.zeros(2, np.float32))
        arrays[name] = rng.choice(
            [
                value[None],
                value.reshape(-1),
                np.zeros((0,) + value.shape[1:], value.dtype),
                np.array(0, value.dtype),
                np.zeros(value.shape + (2,), value.dtype),
                value.T,
            ]
        )
        return _npz(arrays), "npz:shape"
    if kind == "dtype":
        value = arrays.get(name, np.zeros(2, np.float32))
        dtype = rng.choice(
            [np.float64, np.float16, np.int32, np.int64, np.uint8, np.bool_, np.complex64, "<U3", "V4", [("a", "<f4")]]
        )
        try:
            arrays[name] = value.astype(dtype)
        except (TypeError, ValueError):
            arrays[name] = np.zeros(value.shape, dtype)
        return _npz(arrays), f"npz:dtype={dtype}"
    if kind == "values":
        value = arrays.get(name, np.zeros(2, np.float32))
        if value.dtype.kind in "iu":
            value[...] = rng.choice([10**9, -100, np.iinfo(value.dtype).max, np.iinfo(value.dtype).min])
        else:
            value[...] = rng.choice([np.nan, np.inf, -np.inf, 1e38])
        arrays[name] = value
        return _npz(arrays), "npz:values"
    if kind == "header":  # a .npy member whose header lies about its shape or dtype
        shape = rng.choice(["(1099511627776,)", "(-1,)", "(2, 4)", "()", "(2,", "'x'"])
        descr = rng.choice(["'<f4'", "'<i8'", "'O'", "'|V0'", "'>f4'", "'nonsense'"])
        header = f"{{'descr': {descr}, 'fortran_order': {rng.choice(['False', 'True'])}, 'shape': {shape}, }}"
        header = header.ljust(118) + "\n"
        member = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + b"\x00" * 32
        return _zip({f"{name}.npy": member}), f"npz:header shape={shape} descr={descr}"
    if kind == "bytes":
        return mutate_bytes(_npz(arrays), rng)[0], "npz:bytes"
    if kind == "zip":
        return _zip({rng.choice(["x.txt", f"{name}.npy", "../evil.npy", "dir/"]): b"not an array"}), "npz:zip-member"
    if kind == "npy":
        return _npy(arrays.get(name, np.zeros(2, np.float32))), "npz:plain-npy"
    if kind == "object":
        arrays[name] = np.array([{"a": 1}, None], dtype=object)
        return _npz(arrays), "npz:object"
    return b"", "npz:empty"
