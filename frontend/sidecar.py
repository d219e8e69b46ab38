"""The weights sidecar: large constants in a safetensors file beside the IR, referenced by key.

The module names its sidecar in the `ge.weights` attribute, as a file name relative to the IR
file's folder. A reference may not leave that folder (no absolute paths, no `..`, no symlink
out), so opening an IR file never reads a file the user did not put beside it.

The file is read and written here rather than through safetensors' numpy API, which knows
neither bfloat16 nor the float8 types: BF16, F8_E4M3, F8_E5M2 and F8_E8M0 are stored under
their safetensors names (as torch writes them), ge's other narrow types as U8 named in the
`ge.dtypes` metadata entry. Only regular files are opened (a FIFO cannot block a reader), and
the whole header is checked on open, each problem one line naming the file and the reason.
"""

from __future__ import annotations

import json
import math
import os
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import ModuleOp, StringAttr

from ge.ge_dialects import ge
from ge.ge_dialects.ge.layout import storage_shape
from ge.ge_dialects.ge.types import numpy_dtype
from ge.ge_dialects.messages import one_line

SIDECAR_ATTR = "ge.weights"
_BF16_TAG = "ge.bf16"  # earlier versions stored bfloat16 as U16 and listed the keys here


class SidecarError(Exception):
    """A sidecar reference that cannot be honoured; the message names file and reason, on one
    line (control characters from keys and headers escaped)."""

    def __init__(self, message: str):
        super().__init__(one_line(message))


def confined_path(folder: Path, reference: str, what: str) -> Path:
    """`folder/reference`, refusing references that point outside `folder`."""
    if "\0" in reference:
        raise SidecarError(f"{what} {reference!r} contains a NUL character")
    ref = Path(reference)
    if ref.is_absolute() or ".." in ref.parts:
        raise SidecarError(f"{what} '{reference}' must be a path inside {folder} (no absolute path, no '..')")
    path = (folder / ref).resolve()
    if not path.is_relative_to(folder.resolve()):
        raise SidecarError(f"{what} '{reference}' resolves outside {folder}")
    return path


def open_regular_file(path: Path, what: str, error: type[Exception]) -> int:
    """A read-only descriptor of `path`, refusing anything but a regular file.

    Opened non-blocking so a FIFO cannot stall the open; checked with fstat on the descriptor,
    so what is read is what was checked."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as e:
        raise error(f"{what} {path}: cannot open: {e.strerror}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise error(f"{what} {path} is not a regular file")
    return fd


def read_exactly(fd: int, offset: int, length: int) -> bytes:
    """`length` bytes at `offset` (the caller has checked they are in the file)."""
    chunks, done = [], 0
    while done < length:
        chunk = os.pread(fd, min(length - done, 1 << 30), offset + done)
        if not chunk:
            break
        chunks.append(chunk)
        done += len(chunk)
    return b"".join(chunks)


#: safetensors dtype name -> numpy dtype, for every safetensors type ge has.
SAFETENSORS_DTYPES: dict[str, np.dtype] = {
    "F64": np.dtype(np.float64),
    "F32": np.dtype(np.float32),
    "F16": np.dtype(np.float16),
    "BF16": np.dtype(ml_dtypes.bfloat16),
    "I64": np.dtype(np.int64),
    "I32": np.dtype(np.int32),
    "I16": np.dtype(np.int16),
    "I8": np.dtype(np.int8),
    "U64": np.dtype(np.uint64),
    "U32": np.dtype(np.uint32),
    "U16": np.dtype(np.uint16),
    "U8": np.dtype(np.uint8),
    "BOOL": np.dtype(np.bool_),
    "F8_E4M3": np.dtype(ml_dtypes.float8_e4m3fn),
    "F8_E5M2": np.dtype(ml_dtypes.float8_e5m2),
    "F8_E8M0": np.dtype(ml_dtypes.float8_e8m0fnu),
}
_SAFETENSORS_NAME = {dtype: name for name, dtype in SAFETENSORS_DTYPES.items()}

#: ge types safetensors has no name for: stored one element per byte as U8, named in the
#: `ge.dtypes` metadata entry ({key: dtype name}).
TAGGED_DTYPES: dict[str, np.dtype] = {
    np.dtype(t).name: np.dtype(t)
    for t in (
        ml_dtypes.float8_e4m3fnuz,
        ml_dtypes.float8_e5m2fnuz,
        ml_dtypes.float4_e2m1fn,
        ml_dtypes.int4,
        ml_dtypes.uint4,
        ml_dtypes.int2,
        ml_dtypes.uint2,
    )
}
_DTYPES_TAG = "ge.dtypes"
_MAX_HEADER = 100 << 20  # safetensors' own limit on the JSON header


def save(path: str | Path, weights: Mapping[str, np.ndarray]) -> None:
    """Writes a safetensors file: the standard dtype names where safetensors has one (BF16 and
    the float8 types as torch writes them), U8 plus a `ge.dtypes` entry for the other narrow types."""
    arrays: dict[str, tuple[str, np.ndarray]] = {}
    tagged: dict[str, str] = {}
    for key, array in weights.items():
        array = np.require(array, requirements="C")  # keeps 0-d arrays 0-d
        name = _SAFETENSORS_NAME.get(array.dtype)
        if name is None:
            if array.dtype.name not in TAGGED_DTYPES:
                raise SidecarError(f"weight '{key}' has dtype {array.dtype}, which a sidecar cannot hold")
            tagged[key] = array.dtype.name
            name = "U8"
        arrays[key] = (name, array)
    header: dict[str, object] = {}
    offset = 0
    for key, (name, array) in arrays.items():
        header[key] = {"dtype": name, "shape": list(array.shape), "data_offsets": [offset, offset + array.nbytes]}
        offset += array.nbytes
    header["__metadata__"] = {_DTYPES_TAG: json.dumps(tagged)}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # data starts 8-aligned, as safetensors writes it
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little"))
        f.write(text)
        for _, array in arrays.values():
            f.write(array.reshape(-1).view(np.uint8).data)


@dataclass(frozen=True)
class _Entry:
    dtype: np.dtype
    shape: tuple[int, ...]
    offset: int  # in the file
    nbytes: int


class WeightStore(Mapping[str, np.ndarray]):
    """Read-only, lazily loaded view of a sidecar file (safetensors format).

    The header is checked whole when the file is opened (dtypes, shapes, byte ranges inside the
    file, metadata), so reading a tensor later cannot fail on the file's contents."""

    def __init__(self, path: Path, role: str = "weights sidecar"):
        """`role` names the file in errors (a weights sidecar, ge-run's inputs, a state file)."""
        self.path, self.role = path, role
        try:
            fd = open_regular_file(path, role, SidecarError)
        except SidecarError as e:
            if not path.exists():
                raise SidecarError(f"{role} {path} does not exist") from None
            raise e from None
        try:
            self._entries = self._read_header(fd)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd  # only a store whose header was read owns the descriptor `__del__` closes

    def __del__(self, _close=os.close):
        # os.close bound at definition: a store collected at interpreter exit may outlive `os`'s globals
        fd = getattr(self, "_fd", None)
        if fd is not None:
            _close(fd)
            del self._fd

    def _invalid(self, reason: str) -> SidecarError:
        return SidecarError(f"{self.role} {self.path} is not a valid safetensors file ({reason})")

    def _read_header(self, fd: int) -> dict[str, _Entry]:
        size = os.fstat(fd).st_size
        if size < 8:
            raise self._invalid("shorter than its 8-byte header length")
        header_len = int.from_bytes(read_exactly(fd, 0, 8), "little")
        if header_len > min(size - 8, _MAX_HEADER):
            raise self._invalid(f"header of {header_len} bytes in a file of {size}")
        try:
            header = json.loads(read_exactly(fd, 8, header_len), object_pairs_hook=_unique_keys)
        except (UnicodeDecodeError, json.JSONDecodeError, _DuplicateKey) as e:
            raise self._invalid(f"header is not JSON: {e}") from None
        if not isinstance(header, dict):
            raise self._invalid("header is not a JSON object")
        metadata = header.pop("__metadata__", None) or {}
        if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
            raise self._invalid("__metadata__ is not an object of strings")
        tagged = self._tagged_dtypes(metadata)
        data_start, data_size = 8 + header_len, size - 8 - header_len
        entries = {}
        for key, info in header.items():
            entries[key] = self._entry(key, info, tagged.get(key), data_start, data_size)
        for key in tagged:
            if key not in entries:
                raise self._invalid(f"metadata names tensor '{key}', which the file does not hold")
        return entries

    def _tagged_dtypes(self, metadata: dict[str, str]) -> dict[str, np.dtype]:
        """key -> ge dtype for tensors stored under another safetensors dtype (see TAGGED_DTYPES;
        files of earlier versions list bfloat16 tensors stored as U16 under `ge.bf16`)."""
        tagged: dict[str, np.dtype] = {}
        if _BF16_TAG in metadata:
            keys = _json_metadata(metadata[_BF16_TAG])
            if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
                raise self._invalid(f"metadata {_BF16_TAG} is not a JSON list of tensor names")
            tagged.update((k, np.dtype(ml_dtypes.bfloat16)) for k in keys)
        if _DTYPES_TAG in metadata:
            names = _json_metadata(metadata[_DTYPES_TAG])
            if not isinstance(names, dict) or not all(isinstance(v, str) for v in names.values()):
                raise self._invalid(f"metadata {_DTYPES_TAG} is not a JSON object of dtype names")
            for key, name in names.items():
                if name not in TAGGED_DTYPES:
                    raise self._invalid(
                        f"metadata {_DTYPES_TAG} gives tensor '{key}' dtype '{name}', "
                        f"not one of {', '.join(TAGGED_DTYPES)}"
                    )
                tagged[key] = TAGGED_DTYPES[name]
        return tagged

    def _entry(self, key: str, info, tagged: np.dtype | None, data_start: int, data_size: int) -> _Entry:
        if not isinstance(info, dict):
            raise self._invalid(f"tensor '{key}' is not described by an object")
        name, shape, offsets = info.get("dtype"), info.get("shape"), info.get("data_offsets")
        if name not in SAFETENSORS_DTYPES:
            raise SidecarError(
                f"{self.role} {self.path}: tensor '{key}' has dtype {name}, which ge "
                f"does not support (supported: {', '.join(SAFETENSORS_DTYPES)})"
            )
        if not isinstance(shape, list) or not all(type(d) is int and d >= 0 for d in shape):
            raise self._invalid(f"tensor '{key}' has shape {shape!r}, not a list of dims >= 0")
        if (
            not isinstance(offsets, list)
            or len(offsets) != 2
            or not all(type(o) is int for o in offsets)
            or not 0 <= offsets[0] <= offsets[1] <= data_size
        ):
            raise self._invalid(
                f"tensor '{key}' has data_offsets {offsets!r}, not a range inside the {data_size} bytes of data"
            )
        stored = SAFETENSORS_DTYPES[name]
        dtype = stored
        if tagged is not None:
            if stored.itemsize != tagged.itemsize or stored.kind != "u":
                raise self._invalid(f"tensor '{key}' is tagged {tagged} but stored as {name}")
            dtype = tagged
        nbytes = math.prod(shape) * dtype.itemsize
        if offsets[1] - offsets[0] != nbytes:
            raise self._invalid(
                f"tensor '{key}' of {name}{shape} needs {nbytes} bytes, data_offsets give {offsets[1] - offsets[0]}"
            )
        return _Entry(dtype, tuple(shape), data_start + offsets[0], nbytes)

    def __getitem__(self, key: str) -> np.ndarray:
        entry = self._entries[key]  # KeyError for an unknown key, as a Mapping should
        buffer = bytearray(read_exactly(self._fd, entry.offset, entry.nbytes))
        if len(buffer) != entry.nbytes:
            raise SidecarError(f"{self.role} {self.path} changed while being read (tensor '{key}')")
        return np.frombuffer(buffer, dtype=entry.dtype).reshape(entry.shape)

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def spec(self, key: str) -> tuple[np.dtype, tuple[int, ...]]:
        entry = self._entries[key]
        return entry.dtype, entry.shape


class _DuplicateKey(ValueError):
    pass


def _unique_keys(pairs):
    result = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateKey(f"key '{key}' appears twice")
        result[key] = value
    return result


def _json_metadata(text: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None  # reported by the caller as not the expected JSON


def sidecar_name(module: ModuleOp) -> str | None:
    attr = module.attributes.get(SIDECAR_ATTR)
    return attr.data if isinstance(attr, StringAttr) else None


def weight_constants(module: ModuleOp) -> Iterator[tuple[str, ge.ConstantOp]]:
    """(weight key, constant) of every constant that refers to a sidecar weight."""
    for op in module.walk():
        if isinstance(op, ge.ConstantOp) and op.weight_key is not None:
            yield op.weight_key, op


def open_weights(module: ModuleOp, ir_path: str | Path) -> Mapping[str, np.ndarray]:
    """The module's weights, checked against every `#ge.weight` reference before anything runs."""
    refs = list(weight_constants(module))
    name = sidecar_name(module)
    if name is None:
        if refs:
            raise SidecarError(
                f"constant '{refs[0][0]}' refers to a weight, "
                f"but the module names no sidecar ({SIDECAR_ATTR} attribute)"
            )
        return {}
    store = WeightStore(confined_path(Path(ir_path).parent, name, "weights sidecar"))
    for key, op in refs:
        if key not in store:
            raise SidecarError(f"weight '{key}' is not in the weights sidecar {store.path.name}")
        dtype, shape = store.spec(key)
        t = op.output.type
        if dtype != numpy_dtype(t.element_type) or shape != storage_shape(t):  # physical for stored formats
            raise SidecarError(f"weight '{key}' in {store.path.name} is {dtype}{list(shape)}, the IR says {t}")
    return store
