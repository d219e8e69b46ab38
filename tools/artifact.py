"""Compiled artifacts (`model.ge`): a stream-level module, its weights and a manifest in one file.

The file is a zip archive that any zip tool can list and extract (`unzip -l model.ge`), written by
this module byte for byte: three members, stored (never compressed), in this order, with fixed
headers (no timestamps, zip64 records always):

    manifest.json         what was compiled, how, for which chip, and the content hash (JSON)
    model.mlir            the stream-level IR, as `ge-opt` prints it
    weights.safetensors   every weight the IR refers to (frontend/sidecar.py's writer: bf16 and
                          float8 keep their types)

Because the container is canonical (the same three members give the same bytes), `read_artifact`
checks every byte of a file: the zip structure must be exactly what `write` produces from the
members the file holds, each member must match its CRC, the manifest must be the canonical JSON
of its own fields, and `content_hash` (sha256 over the manifest's other fields, the IR and the
weights) must match. Only then is the IR parsed and the weights header opened; nothing in the file
is executed or unpickled, and every member's and tensor's size is checked (against the file and
`--max-tensor-bytes`) before its data is read. Each refusal is one line naming the file and reason.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
import tempfile
import zipfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr

import ge
from ge.frontend.sidecar import SIDECAR_ATTR, SidecarError, open_regular_file, open_weights, read_exactly, save
from ge.ge_dialects import task
from ge.ge_dialects.ge.control_flow import lowering_leaves
from ge.ge_dialects.ge.custom import CustomOp
from ge.ge_dialects.ge.target_attr import module_target
from ge.ge_dialects.ge.types import numpy_dtype, shape_of
from ge.ge_dialects.ge.weights import attach_weights, referenced_weights
from ge.ge_dialects.limits import max_tensor_bytes
from ge.ge_dialects.messages import one_line
from ge.ge_dialects.op_library import installed
from ge.interpreter.kernels import format_bytes
from ge.interpreter.runner import InputError, input_names, input_signature, main_function, output_names, tensor_types
from ge.interpreter.stream_executor import is_lowered
from ge.tools.common import UserError, parse_module, print_module, write_atomic

FORMAT = "ge-artifact"
FORMAT_VERSION = 2
"""Raised when the container or the manifest's meaning changes; a reader refuses a newer one."""
SUFFIX = ".ge"
MANIFEST, IR, WEIGHTS = "manifest.json", "model.mlir", "weights.safetensors"
MEMBERS = (MANIFEST, IR, WEIGHTS)
MAX_MANIFEST_BYTES = 1 << 20
_MAX_SAFETENSORS_HEADER = 100 << 20  # safetensors' own limit, as frontend/sidecar.py

MANIFEST_FIELDS: dict[str, type | tuple[type, ...]] = {
    "format": str,
    "format_version": int,
    "compiler_version": str,
    "target": str,
    "options": dict,
    "pipeline": str,
    "inputs": list,
    "outputs": list,
    "num_operators": int,
    "cache_key": str,
    "op_libraries": list,
    "content_hash": str,
}
"""Every field a manifest has (no other), with its JSON type."""


class ArtifactError(UserError):
    """A file that is not a ge artifact this compiler can load: one line, file and reason."""

    def __init__(self, path: str | os.PathLike, reason: str):
        super().__init__(one_line(f"{path}: {reason}"))


class _OpenError(UserError):
    def __init__(self, message: str):
        super().__init__(message.strip())


def canonical_json(value: Any) -> bytes:
    return (json.dumps(value, sort_keys=True, indent=2, ensure_ascii=True) + "\n").encode()


def content_hash(manifest: Mapping[str, Any], ir: bytes, weights: bytes) -> str:
    """sha256 over the manifest's fields but the hash itself, the IR and the weights, each
    length-prefixed (so no bytes can move from one part to the next unnoticed)."""
    digest = hashlib.sha256(b"ge-artifact\n")
    fields = {k: v for k, v in manifest.items() if k != "content_hash"}
    for part in (canonical_json(fields), ir, weights):
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part)
    return "sha256:" + digest.hexdigest()


# -- the container -------------------------------------------------------------------------------
_DOS_DATE = (0 << 9) | (1 << 5) | 1  # 1980-01-01, the earliest date zip can hold: no timestamps
_ZIP_VERSION = 45  # zip64


def _local_header(name: bytes, size: int, crc: int) -> bytes:
    return (
        struct.pack(
            "<IHHHHHIIIHH", 0x04034B50, _ZIP_VERSION, 0, 0, 0, _DOS_DATE, crc, 0xFFFFFFFF, 0xFFFFFFFF, len(name), 20
        )
        + name
        + struct.pack("<HHQQ", 1, 16, size, size)
    )


def _layout(members: list[tuple[str, int, int]]) -> tuple[list[tuple[int, bytes]], int, bytes]:
    """For members (name, size, crc) in order: each local header with its offset, the offset of the
    tail, and the tail (central directory, zip64 end record and locator, end record)."""
    headers, central, offset = [], b"", 0
    for name, size, crc in members:
        raw = name.encode()
        header = _local_header(raw, size, crc)
        headers.append((offset, header))
        central += (
            struct.pack(
                "<IHHHHHHIIIHHHHHII",
                0x02014B50,
                _ZIP_VERSION,
                _ZIP_VERSION,
                0,
                0,
                0,
                _DOS_DATE,
                crc,
                0xFFFFFFFF,
                0xFFFFFFFF,
                len(raw),
                28,
                0,
                0,
                0,
                0,
                0xFFFFFFFF,
            )
            + raw
            + struct.pack("<HHQQQ", 1, 24, size, size, offset)
        )
        offset += len(header) + size
    n = len(members)
    end64 = offset + len(central)
    tail = (
        central
        + struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, _ZIP_VERSION, _ZIP_VERSION, 0, 0, n, n, len(central), offset)
        + struct.pack("<IIQI", 0x07064B50, 0, end64, 1)
        + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, n, n, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    )
    return headers, offset, tail


@dataclass(frozen=True)
class Artifact:
    """The three members of an artifact, in memory; `manifest` includes its `content_hash`."""

    manifest: dict[str, Any]
    ir: bytes
    weights: bytes

    def members(self) -> list[tuple[str, bytes]]:
        return [(MANIFEST, canonical_json(self.manifest)), (IR, self.ir), (WEIGHTS, self.weights)]

    @property
    def size(self) -> int:
        """Bytes of the artifact file."""
        members = self.members()
        _, tail_offset, tail = _layout([(name, len(data), 0) for name, data in members])
        return tail_offset + len(tail)

    def write_to(self, path: str | os.PathLike) -> None:
        """Writes the container at `path` (not atomically: `save` or an `Outputs` job renames it)."""
        members = self.members()
        headers, _, tail = _layout([(name, len(data), zlib.crc32(data)) for name, data in members])
        with open(path, "wb") as f:
            for (_, header), (_, data) in zip(headers, members):
                f.write(header)
                f.write(data)
            f.write(tail)

    def save(self, path: str | os.PathLike) -> None:
        """Writes the artifact whole or not at all (a temporary beside `path`, then a rename)."""
        write_atomic(path, self.write_to)

    @property
    def signature(self) -> dict[str, list[dict[str, Any]]]:
        return {"inputs": self.manifest["inputs"], "outputs": self.manifest["outputs"]}

    def load_module(self, source: str | os.PathLike) -> ModuleOp:
        """The stream-level module, weights attached, checked against the manifest (`source` names
        the artifact in errors)."""
        _check_op_libraries(self.manifest["op_libraries"], source)
        module = parse_module(self.ir.decode("utf-8"), f"{source}[{IR}]")
        if not runs_as_compiled(module):
            raise ArtifactError(source, f"{IR} is not lowered to streams (a ge artifact holds stream-level IR)")
        attach_weights(module, _open_weights(module, self.weights, source))
        _check_against_manifest(module, self.manifest, source)
        return module


def used_op_libraries(module: ModuleOp) -> list[dict[str, str]]:
    """The custom operator libraries the module's `ge.custom` ops name, each with its plugin's
    sha256 (the libraries are loaded: the module verified)."""
    names = sorted({op.library.data for op in module.walk() if isinstance(op, CustomOp)})
    digests = {library.name: library.digest for library in installed()}
    return [{"name": name, "sha256": digests[name]} for name in names]


def _check_op_libraries(recorded: list[dict[str, str]], source: str | os.PathLike) -> None:
    """Each library the artifact was compiled with is loaded, with the same plugin content."""
    loaded = {library.name: library for library in installed()}
    for entry in recorded:
        name, digest = entry["name"], entry["sha256"]
        library = loaded.get(name)
        if library is None:
            raise ArtifactError(
                source, f"it needs the custom operator library '{name}' (give --load-op-library {name}.py)"
            )
        if library.digest != digest:
            raise ArtifactError(
                source,
                f"custom operator library '{name}' ({library.plugin}) is not the plugin it was compiled with "
                f"(sha256 {library.digest[:16]}..., the artifact's {digest[:16]}...): recompile the model",
            )


def _open_weights(module: ModuleOp, data: bytes, source: str | os.PathLike) -> Mapping[str, np.ndarray]:
    """The weights member through the sidecar reader (which checks every reference, dtype and shape
    against the IR), from a private temporary file removed as soon as the reader has it open."""
    folder = tempfile.mkdtemp(prefix="ge-artifact-")
    try:
        fd = os.open(Path(folder, WEIGHTS), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        module.attributes[SIDECAR_ATTR] = StringAttr(WEIGHTS)
        return open_weights(module, Path(folder, IR))
    except SidecarError as e:  # named by the member, not by our temporary
        raise ArtifactError(source, f"{WEIGHTS}: {str(e).replace(str(Path(folder, WEIGHTS)), WEIGHTS)}") from None
    except OSError as e:
        raise ArtifactError(source, f"cannot unpack {WEIGHTS} into a temporary file: {e.strerror}") from None
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# -- building ------------------------------------------------------------------------------------
def signature(module: ModuleOp) -> dict[str, list[dict[str, Any]]]:
    """`main`'s inputs and outputs: name, logical shape (null for an unknown dim) and numpy dtype."""
    input_signature(module)  # checks every argument and result is a tensor
    fn = main_function(module)

    def side(names: list[str], types) -> list[dict[str, Any]]:
        return [
            {"name": name, "shape": list(shape_of(t)), "dtype": numpy_dtype(t.element_type).name}
            for name, t in zip(names, tensor_types(types))
        ]

    return {
        "inputs": side(input_names(fn), fn.function_type.inputs.data),
        "outputs": side(output_names(fn), fn.function_type.outputs.data),
    }


def kernel_count(module: ModuleOp) -> int:
    return sum(1 for op in module.walk() if isinstance(op, task.KernelOp))


def safetensors_bytes(arrays: Mapping[str, np.ndarray]) -> bytes:
    """`arrays` as a safetensors file (frontend/sidecar.py's writer), in memory."""
    folder = tempfile.mkdtemp(prefix="ge-artifact-")
    try:
        path = Path(folder, WEIGHTS)
        save(path, arrays)
        return path.read_bytes()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def runs_as_compiled(module: ModuleOp) -> bool:
    """Whether `module` is compiled: lowered to streams, or holding functions lowering leaves to
    the runner (host and control programs, functions bound when they run)."""
    return is_lowered(module) or any(isinstance(f, func.FuncOp) and lowering_leaves(f) for f in module.ops)


def build_artifact(module: ModuleOp, options: Mapping[str, Any], pipeline: str, cache_key: str) -> Artifact:
    """The artifact of `module`, compiled to streams by `pipeline` with `options`. The module's
    `ge.weights` attribute is set to the member name, so the IR names the weights it ships with."""
    if not runs_as_compiled(module):
        raise UserError("only a module lowered to streams can be saved as an artifact")
    module.attributes[SIDECAR_ATTR] = StringAttr(WEIGHTS)
    ir = print_module(module).encode()
    weights = safetensors_bytes(referenced_weights(module))
    target = module_target(module)
    manifest: dict[str, Any] = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "compiler_version": ge.__version__,
        "target": target,
        "options": dict(options),
        "pipeline": pipeline,
        **signature(module),
        "num_operators": kernel_count(module),
        "cache_key": cache_key,
        "op_libraries": used_op_libraries(module),
    }
    manifest["content_hash"] = content_hash(manifest, ir, weights)
    return Artifact(manifest, ir, weights)


# -- reading -------------------------------------------------------------------------------------
def read_artifact(path: str | os.PathLike) -> Artifact:
    """The members of the artifact at `path`, after every check of the module docstring but those
    that need the IR parsed (`Artifact.load_module`)."""
    fd = open_regular_file(Path(path), "", _OpenError)  # "<path>: cannot open: ...", "<path> is not a regular file"
    try:
        return _read(fd, path)
    finally:
        os.close(fd)


def _read(fd: int, path: str | os.PathLike) -> Artifact:
    size = os.fstat(fd).st_size
    if read_exactly(fd, 0, 4) != b"PK\x03\x04":
        raise ArtifactError(path, "not a ge artifact (ge-compile writes a zip archive starting with 'PK')")
    infos = _directory(fd, path)
    names = [info.filename for info in infos]
    for name in names:
        if name not in MEMBERS:
            raise ArtifactError(
                path, f"unexpected member {json.dumps(name)} (a ge artifact holds {', '.join(MEMBERS)})"
            )
    for name in MEMBERS:
        if name not in names:
            raise ArtifactError(path, f"member {name} is missing")
    if names != list(MEMBERS):
        raise ArtifactError(path, f"members {', '.join(names)} are not {', '.join(MEMBERS)}, each once, in this order")
    for info in infos:
        if info.compress_type != zipfile.ZIP_STORED or info.compress_size != info.file_size:
            raise ArtifactError(path, f"member {info.filename} is compressed (ge artifacts store members as they are)")
    members = [(info.filename, info.file_size, info.CRC) for info in infos]
    headers, tail_offset, tail = _layout(members)
    if tail_offset + len(tail) != size:
        raise ArtifactError(
            path,
            f"the zip layout is not the one ge-compile writes: its members take {tail_offset + len(tail)} bytes "
            f"in that layout, the file has {size} (truncated, padded or rewritten by another tool)",
        )
    for (offset, header), (name, _, _) in zip(headers, members):
        if read_exactly(fd, offset, len(header)) != header:
            raise ArtifactError(path, f"the zip header of {name} is not the one ge-compile writes (damaged)")
    if read_exactly(fd, tail_offset, len(tail)) != tail:
        raise ArtifactError(path, "the zip directory is not the one ge-compile writes (damaged)")
    spans = {name: (offset + len(header), length) for (offset, header), (name, length, _) in zip(headers, members)}
    manifest_bytes = _member(fd, path, spans, MANIFEST, infos[0].CRC, limit=MAX_MANIFEST_BYTES)
    manifest = _manifest(path, manifest_bytes)
    _check_tensor_sizes(fd, path, *spans[WEIGHTS])
    ir = _member(fd, path, spans, IR, infos[1].CRC)
    weights = _member(fd, path, spans, WEIGHTS, infos[2].CRC)
    if content_hash(manifest, ir, weights) != manifest["content_hash"]:
        raise ArtifactError(path, "content hash mismatch: the IR, the weights or the manifest changed after ge-compile")
    try:
        ir.decode("utf-8")
    except UnicodeDecodeError:
        raise ArtifactError(path, f"{IR} is not UTF-8 text") from None
    return Artifact(manifest, ir, weights)


def _directory(fd: int, path: str | os.PathLike) -> list[zipfile.ZipInfo]:
    """The zip's central directory (only the directory is read: zipfile opens lazily)."""
    with os.fdopen(os.dup(fd), "rb") as f:
        try:
            with zipfile.ZipFile(f) as archive:
                return archive.infolist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError, struct.error) as e:
            raise ArtifactError(path, f"truncated or damaged: no readable zip directory ({e})") from None


def _member(fd: int, path, spans, name: str, crc: int, limit: int | None = None) -> bytes:
    offset, length = spans[name]
    if limit is not None and length > limit:
        raise ArtifactError(path, f"member {name} has {format_bytes(length)}, more than {format_bytes(limit)}")
    data = read_exactly(fd, offset, length)
    if len(data) != length:
        raise ArtifactError(path, f"member {name} changed while being read")
    if zlib.crc32(data) != crc:
        raise ArtifactError(path, f"member {name} fails its CRC (the file is damaged)")
    return data


def _check_tensor_sizes(fd: int, path, offset: int, length: int) -> None:
    """Refuses a weight larger than `--max-tensor-bytes` from the safetensors header alone, before
    any weight is read (the sidecar reader checks the header's every other property later)."""
    if length < 8:
        return  # too short to be safetensors: the sidecar reader says so
    header_len = int.from_bytes(read_exactly(fd, offset, 8), "little")
    if header_len > min(length - 8, _MAX_SAFETENSORS_HEADER):
        return
    try:
        header = json.loads(read_exactly(fd, offset + 8, header_len))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return
    limit = max_tensor_bytes()
    for key, info in header.items() if isinstance(header, dict) else ():
        span = info.get("data_offsets") if isinstance(info, dict) else None
        if (
            isinstance(span, list)
            and len(span) == 2
            and all(type(o) is int for o in span)
            and span[1] - span[0] > limit
        ):
            raise ArtifactError(
                path,
                f"weight {json.dumps(key)} has {format_bytes(span[1] - span[0])}, more than the limit of "
                f"{format_bytes(limit)} (--max-tensor-bytes)",
            )


def _manifest(path, data: bytes) -> dict[str, Any]:
    try:
        manifest = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        raise ArtifactError(path, f"{MANIFEST} is not JSON ({e})") from None
    if not isinstance(manifest, dict):
        raise ArtifactError(path, f"{MANIFEST} is not a JSON object")
    if manifest.get("format") != FORMAT:
        raise ArtifactError(path, f"{MANIFEST} does not name the format {FORMAT}")
    version = manifest.get("format_version")
    if type(version) is not int or version < 1:
        raise ArtifactError(path, f"format version {json.dumps(version)} is not one ge-compiler writes")
    if version > FORMAT_VERSION:
        raise ArtifactError(
            path,
            f"format version {version} is newer than this ge-compiler {ge.__version__} reads "
            f"({FORMAT_VERSION}): load it with the ge-compiler that wrote it, or recompile",
        )
    compiler = manifest.get("compiler_version")
    if compiler != ge.__version__:
        raise ArtifactError(
            path,
            f"compiled by ge-compiler {json.dumps(compiler)}, this is {ge.__version__}: recompile the model "
            "(the IR of another version may not mean the same)",
        )
    for name, kind in MANIFEST_FIELDS.items():
        if name not in manifest:
            raise ArtifactError(path, f"{MANIFEST} has no field {name}")
        if not isinstance(manifest[name], kind) or isinstance(manifest[name], bool):
            raise ArtifactError(path, f"{MANIFEST} field {name} is not a JSON {kind.__name__}")  # type: ignore[union-attr]
    for entry in manifest["op_libraries"]:
        if not (
            isinstance(entry, dict)
            and set(entry) == {"name", "sha256"}
            and all(isinstance(v, str) for v in entry.values())
        ):
            raise ArtifactError(
                path, f"{MANIFEST} field op_libraries holds {json.dumps(entry)[:80]}, not a name and a sha256"
            )
    extra = sorted(set(manifest) - set(MANIFEST_FIELDS))
    if extra:
        raise ArtifactError(path, f"{MANIFEST} has an unknown field {json.dumps(extra[0])}")
    if canonical_json(manifest) != data:
        raise ArtifactError(path, f"{MANIFEST} is not in the form ge-compile writes (it was edited)")
    return manifest


def _is_str(value: Any) -> bool:
    return isinstance(value, str)


def _check_against_manifest(module: ModuleOp, manifest: Mapping[str, Any], source) -> None:
    """The manifest tells the truth about the IR: its signature, chip and kernel count."""
    try:
        actual = signature(module)
    except InputError as e:
        raise ArtifactError(source, f"{IR}: {e}") from None
    for side in ("inputs", "outputs"):
        said, found = manifest[side], actual[side]
        if said != found:
            where = next((i for i, (a, b) in enumerate(zip(said, found)) if a != b), min(len(said), len(found)))
            raise ArtifactError(
                source,
                f"the manifest's {side} disagree with the IR's @main at position {where}: "
                f"manifest {_describe(said, where)}, IR {_describe(found, where)}",
            )
    if module_target(module) != manifest["target"]:
        raise ArtifactError(
            source, f"the manifest's target {manifest['target']} is not the IR's {module_target(module)}"
        )
    if kernel_count(module) != manifest["num_operators"]:
        raise ArtifactError(
            source, f"the manifest counts {manifest['num_operators']} kernels, the IR has {kernel_count(module)}"
        )


def _describe(entries: list, index: int) -> str:
    if index >= len(entries):
        return "(none)"
    entry = entries[index]
    if not isinstance(entry, dict):
        return json.dumps(entry)
    shape = "x".join("?" if d is None else str(d) for d in entry.get("shape") or [])
    return f"{json.dumps(entry.get('name'))}: {entry.get('dtype')}[{shape}]"


def load_artifact(path: str | os.PathLike) -> tuple[ModuleOp, Artifact]:
    """The module of the artifact at `path` (weights attached) and the artifact, every check done."""
    artifact = read_artifact(path)
    return artifact.load_module(path), artifact
