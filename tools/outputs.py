"""The one output writer of the tools: every file of a job is written whole, or none is.

A tool names its outputs up front (`reserve`, so a bad path fails before any work), gives their
contents when it has them (`add`), and calls `commit()` only after the whole job, inputs included,
succeeded. `commit()` writes each output to a temporary file beside its target (same folder, so
the rename cannot cross file systems) and only when all of them are written renames them over the
targets. If anything fails before the renames, the temporaries are removed and no target changes.
(A rename itself failing midway, e.g. the folder removed meanwhile, can leave the earlier targets
renamed: renames of several files cannot be made atomic together.)
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ge.tools.common import UserError

Contents = str | bytes | Callable[[str], None]
"""Text, bytes, or a callable that writes the file at the path it is given (e.g. a safetensors saver)."""


@dataclass
class _Output:
    path: Path
    role: str
    contents: Contents | None = None


def _identity(path: Path) -> str:
    """A key under which two spellings of one file (`a/../x`, `./x`, a symlink) compare equal."""
    return os.path.normcase(os.path.realpath(path))


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@dataclass
class Outputs:
    """The files a tool run will write, committed together at the end."""

    _outputs: dict[str, _Output] = field(default_factory=dict)
    _inputs: dict[str, str] = field(default_factory=dict)

    def protect(self, path: str | os.PathLike, role: str) -> None:
        """Marks an input of the job that no output may replace (e.g. ge-run's program and inputs)."""
        self._inputs[_identity(Path(path))] = role

    def reserve(self, path: str | os.PathLike, role: str) -> Path:
        """Checks that `path` can be a target and that no other output of the job is the same file."""
        target = Path(path)
        key = _identity(target)
        other = self._outputs.get(key)
        if other is not None:
            raise UserError(f"{target}: the {role} and the {other.role} would be the same file")
        if key in self._inputs:
            raise UserError(f"{target}: the {role} would overwrite the {self._inputs[key]}")
        if target.is_dir():
            raise UserError(f"{target}: is a directory (the {role} must name a file)")
        folder = target.parent
        if not folder.is_dir():
            raise UserError(f"{target}: folder {folder} does not exist")
        self._outputs[key] = _Output(target, role)
        return target

    def add(self, path: str | os.PathLike, contents: Contents, role: str = "output") -> None:
        """Gives the contents of an output (reserving it first if the tool did not)."""
        key = _identity(Path(path))
        if key not in self._outputs:
            self.reserve(path, role)
        self._outputs[key].contents = contents

    def commit(self) -> None:
        """Writes every output that has contents: all temporaries first, then all renames."""
        pending = [o for o in self._outputs.values() if o.contents is not None]
        written: list[tuple[str, Path]] = []
        try:
            for output in pending:
                written.append((_write_temporary(output), output.path))
            for tmp, target in written:
                try:
                    os.replace(tmp, target)
                except OSError as e:  # name the target, not our temporary
                    e.filename = str(target)
                    raise
        except OSError as e:
            _remove(tmp for tmp, _ in written)
            where = e.filename if isinstance(e.filename, str) else "output"
            raise UserError(f"{where}: cannot write: {e.strerror}") from None
        except BaseException:
            _remove(tmp for tmp, _ in written)
            raise
        self._outputs.clear()


def _write_temporary(output: _Output) -> str:
    """Writes `output` into a fresh file beside its target and returns that file's path."""
    fd, tmp = tempfile.mkstemp(prefix=f".{output.path.name}.", suffix=".tmp", dir=output.path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # what a plain open() would give, not mkstemp's 0600
        contents = output.contents
        assert contents is not None, "commit writes only the outputs that have contents"
        if callable(contents):
            os.close(fd)
            fd = -1
            contents(tmp)
        else:
            with os.fdopen(fd, "wb") as f:
                fd = -1
                f.write(contents.encode() if isinstance(contents, str) else contents)
    except OSError as e:
        if fd >= 0:
            os.close(fd)
        _remove([tmp])
        if not isinstance(e.filename, str) or e.filename == tmp:
            e.filename = str(output.path)  # name the target, not our temporary
        raise
    except BaseException:
        if fd >= 0:
            os.close(fd)
        _remove([tmp])
        raise
    return tmp


def _remove(paths) -> None:
    for tmp in paths:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


SIDECAR_SUFFIX = ".safetensors"


def reserve_ir_output(outputs: Outputs, output: str | os.PathLike) -> Path:
    """Reserves an IR file and its weights sidecar (ge-translate, ge-opt) and returns the sidecar's
    path. The IR may not itself be named like a sidecar: the two would be one file."""
    out = Path(output)
    if out.suffix == SIDECAR_SUFFIX:
        raise UserError(
            f"{output}: the IR output may not be named *{SIDECAR_SUFFIX}: its weights go to "
            f"a sidecar of that name beside it (use e.g. {out.with_suffix('.mlir').name})"
        )
    outputs.reserve(out, "IR output (-o)")
    sidecar = out.with_suffix(SIDECAR_SUFFIX)
    outputs.reserve(sidecar, "weights sidecar")
    return sidecar
