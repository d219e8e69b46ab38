"""The weights sidecar: large constants in a safetensors file beside the IR, referenced by key.

The module names its sidecar in the `ge.weights` attribute, as a file name relative to the IR
file's folder. A reference may not leave that folder (no absolute paths, no `..`, no symlink
out), so opening an IR file never reads a file the user did not put beside it.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path

import ml_dtypes
import numpy as np
from safetensors import safe_open
from safetensors.numpy import save_file
from xdsl.dialects.builtin import ModuleOp, StringAttr

from ge_dialects import ge
from ge_dialects.ge.layout import storage_shape
from ge_dialects.ge.types import numpy_dtype

SIDECAR_ATTR = "ge.weights"
_BF16_TAG = "ge.bf16"  # safetensors' numpy API has no bfloat16: stored as u16, tagged in metadata


class SidecarError(Exception):
    """A sidecar reference that cannot be honoured; the message names file and reason."""


def confined_path(folder: Path, reference: str, what: str) -> Path:
    """`folder/reference`, refusing references that point outside `folder`."""
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


def save(path: str | Path, weights: Mapping[str, np.ndarray]) -> None:
    tensors: dict[str, np.ndarray] = {}
    bf16_keys = []
    for key, array in weights.items():
        array = np.require(array, requirements="C")  # keeps 0-d arrays 0-d
        if array.dtype == ml_dtypes.bfloat16:
            bf16_keys.append(key)
            array = array.view(np.uint16)
        tensors[key] = array
    save_file(tensors, str(path), metadata={_BF16_TAG: json.dumps(bf16_keys)})


class WeightStore(Mapping[str, np.ndarray]):
    """Read-only, lazily loaded view of a sidecar file."""

    def __init__(self, path: Path):
        self.path = path
        try:
            self._file = safe_open(str(path), framework="np")
            self._keys = set(self._file.keys())
            meta = self._file.metadata() or {}
        except FileNotFoundError:
            raise SidecarError(f"weights sidecar {path} does not exist") from None
        except Exception as e:  # safetensors raises its own error types for corrupt headers
            raise SidecarError(f"weights sidecar {path} is not a valid safetensors file ({e})") from None
        self._bf16 = set(json.loads(meta.get(_BF16_TAG, "[]")))

    def __getitem__(self, key: str) -> np.ndarray:
        if key not in self._keys:
            raise KeyError(key)
        array = self._file.get_tensor(key)
        return array.view(ml_dtypes.bfloat16) if key in self._bf16 else array

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def spec(self, key: str) -> tuple[np.dtype, tuple[int, ...]]:
        sl = self._file.get_slice(key)
        dtype = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I64": np.int64, "I32": np.int32,
                 "I16": np.int16, "I8": np.int8, "U8": np.uint8, "BOOL": np.bool_, "U16": np.uint16,
                 "U32": np.uint32, "U64": np.uint64}[sl.get_dtype()]
        dtype = np.dtype(ml_dtypes.bfloat16) if key in self._bf16 else np.dtype(dtype)
        return dtype, tuple(sl.get_shape())


def sidecar_name(module: ModuleOp) -> str | None:
    attr = module.attributes.get(SIDECAR_ATTR)
    return attr.data if isinstance(attr, StringAttr) else None


def weight_constants(module: ModuleOp) -> Iterator[ge.ConstantOp]:
    for op in module.walk():
        if isinstance(op, ge.ConstantOp) and op.weight_key is not None:
            yield op


def open_weights(module: ModuleOp, ir_path: str | Path) -> Mapping[str, np.ndarray]:
    """The module's weights, checked against every `#ge.weight` reference before anything runs."""
    refs = list(weight_constants(module))
    name = sidecar_name(module)
    if name is None:
        if refs:
            raise SidecarError(f"constant '{refs[0].weight_key}' refers to a weight, "
                               f"but the module names no sidecar ({SIDECAR_ATTR} attribute)")
        return {}
    store = WeightStore(confined_path(Path(ir_path).parent, name, "weights sidecar"))
    for op in refs:
        key = op.weight_key
        if key not in store:
            raise SidecarError(f"weight '{key}' is not in the weights sidecar {store.path.name}")
        dtype, shape = store.spec(key)
        t = op.output.type
        if dtype != numpy_dtype(t.element_type) or shape != storage_shape(t):  # physical for stored formats
            raise SidecarError(f"weight '{key}' in {store.path.name} is {dtype}{list(shape)}, the IR says {t}")
    return store
