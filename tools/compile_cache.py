"""The compile, graph IR to a stream-level artifact, with a cache keyed by what determines the result.

`ge-compile` and the API's `GraphCompiler` both call `compile_graph`: it runs the one textual
pipeline of lowering/compile.py (`ge-opt -p '<pipeline>'` reproduces it) and packs the result as an
artifact (tools/artifact.py). With the cache on, the artifact is also kept in the cache folder under
its key, and an unchanged model compiled again with the same options is a verified load instead:

    key = sha256(format version, compiler version and build, options, the ge-level module's printed
                 text, every weight it refers to: key, dtype, shape, bytes)

The folder is `$GE_CACHE_DIR`, else `$XDG_CACHE_HOME/ge-compiler`, else `~/.cache/ge-compiler`; an
entry is `<key>.ge`, written to a temporary in the folder and renamed over the entry, so two
processes compiling the same model at once each leave a whole file and a reader never sees half of
one. An entry that fails any artifact check (damaged, truncated, of another version, or holding
another model's key) is a miss: the compile runs and the entry is replaced. A cache that cannot be
written (a read-only folder) costs the hit next time, never the compile (`Compiled.cache_note`).
"""

from __future__ import annotations

import hashlib
import importlib
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException

import ge
from ge.ge_dialects import stream
from ge.ge_dialects.ge.target_attr import resolve_target_name
from ge.ge_dialects.ge.weights import referenced_weights
from ge.ge_dialects.op_library import installed
from ge.interpreter.ge import TensorTooLarge
from ge.lowering.compile import compile_module, compile_pipeline
from ge.passes.ge_optimize import PRECISION_MODES
from ge.passes.ge_options import GE_OPTIONS
from ge.passes.pipeline import Observer, Progress
from ge.target import TargetError, check_target_name
from ge.tools.artifact import FORMAT_VERSION, Artifact, ArtifactError, build_artifact, canonical_json, read_artifact
from ge.tools.common import UserError, first_line, print_module

CACHE_ENV = "GE_CACHE_DIR"
DEFAULT_TARGET_ALIAS = "npu"
"""The target name meaning "the module's chip if it names one, else the default chip"."""


COMPILE_SWITCHES = {
    "ge.exec.disableReuseMemory": "reuse",
    "ge.enableSingleStream": "single_stream",
    "ge.hcomParallel": "hcom_parallel",
}
"""GE options that set a switch of the compile (a CompileOptions field) through their reader."""
OPTIMIZE_OPTIONS = tuple(
    name
    for name, (pass_name, field, _) in GE_OPTIONS.items()
    if pass_name == "ge-optimize" and field not in ("level", "precision_mode")
)
"""GE options for ge-optimize that a compile passes on (shape options, gears, adjust-hw-layout);
the level and the precision mode are the compile's own options."""


def cache_dir() -> Path:
    """Where compiled artifacts are cached (see the module docstring)."""
    given = os.environ.get(CACHE_ENV)
    if given:
        return Path(given)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "ge-compiler"


@dataclass(frozen=True)
class CompileOptions:
    """What the compile depends on besides the model; `target` is a chip name or "npu"."""

    level: int = 3
    target: str = DEFAULT_TARGET_ALIAS
    precision_mode: str = "must_keep_origin_dtype"
    streams: int = 0
    mode: str = "graph"
    reuse: bool = True
    single_stream: bool = False
    optimize: tuple[tuple[str, str], ...] = ()
    """More of ge-optimize's options, (field, text): GE's shape options (ge.inputShape, gears)."""
    hcom_parallel: bool = False
    """The readers of collectives on a stream of their own (GE's ge.hcomParallel)."""

    def with_ge_options(self, ge_options: Sequence[str]) -> CompileOptions:
        """These options with GE options (`NAME=VALUE`) applied, each read by the reader
        `ge-opt --ge-option` uses (passes/ge_options.py): the memory and stream switches, and
        ge-optimize's options besides the level, target and precision (which have options of their
        own here); an unknown name or a bad value is a one-line error."""
        switches: dict[str, Any] = {}
        optimize = dict(self.optimize)
        for option in ge_options:
            name, sep, value = option.partition("=")
            if not sep:
                raise UserError(f"GE option '{option}' is not NAME=VALUE")
            if name not in COMPILE_SWITCHES and name not in OPTIMIZE_OPTIONS:
                raise UserError(f"GE option {name!r} is not one of {', '.join([*COMPILE_SWITCHES, *OPTIMIZE_OPTIONS])}")
            try:
                read = GE_OPTIONS[name][2](value)
            except ValueError as e:
                raise UserError(f"GE option {name}: {e}") from None
            if name in COMPILE_SWITCHES:
                switches[COMPILE_SWITCHES[name]] = read
            else:
                optimize[GE_OPTIONS[name][1]] = "true" if read is True else "false" if read is False else value
        return replace(self, **switches, optimize=tuple(optimize.items()))

    def check(self) -> None:
        """Each option's one-line error, before any work."""
        if type(self.level) is not int or not 0 <= self.level <= 3:
            raise UserError(f"optimization level {self.level!r} is not one of 0, 1, 2, 3")
        if self.target != DEFAULT_TARGET_ALIAS:
            try:
                check_target_name(self.target)
            except TargetError as e:
                raise UserError(f"{e} or '{DEFAULT_TARGET_ALIAS}' for the default") from None
        if self.precision_mode not in PRECISION_MODES:
            raise UserError(f"precision mode '{self.precision_mode}' is not one of {', '.join(PRECISION_MODES)}")
        if type(self.streams) is not int or self.streams < 0:
            raise UserError(f"streams {self.streams!r} is not a count (0 lets the lowering choose)")
        if self.mode not in stream.MODES:
            raise UserError(f"mode '{self.mode}' is not one of {', '.join(stream.MODES)}")
        for flag in ("reuse", "single_stream", "hcom_parallel"):
            if type(getattr(self, flag)) is not bool:
                raise UserError(f"{flag} {getattr(self, flag)!r} is not True or False")

    def resolved(self, module: ModuleOp) -> dict[str, Any]:
        """The options as the manifest and the key record them, the chip resolved ("npu": the
        module's, else the default), so "npu" and the default chip's name share cache entries."""
        given = None if self.target == DEFAULT_TARGET_ALIAS else self.target
        try:
            chip, _ = resolve_target_name(module, given)
        except (TargetError, DiagnosticException) as e:
            raise UserError(str(e)) from None
        return {
            "optimization_level": self.level,
            "target": chip,
            "precision_mode": self.precision_mode,
            "streams": self.streams,
            "mode": self.mode,
            "reuse": self.reuse,
            "single_stream": self.single_stream,
            **({"hcom_parallel": True} if self.hcom_parallel else {}),
            **({"ge_optimize": dict(self.optimize)} if self.optimize else {}),
        }


_COMPILER_PACKAGES = ("ge", "ge.ge_dialects", "ge.target", "ge.interpreter", "ge.passes", "ge.lowering", "ge.tools")


@cache
def compiler_build() -> str:
    """A digest of the compiler's own sources (.py, .toml): a development edit to a pass changes the
    results without changing `ge.__version__`, so the cache key includes this too."""
    digest = hashlib.sha256()
    for name in _COMPILER_PACKAGES:
        folder = Path(importlib.import_module(name).__path__[0])
        files = folder.glob("*") if name == "ge" else folder.rglob("*")
        for path in sorted(p for p in files if p.suffix in (".py", ".toml") and "__pycache__" not in p.parts):
            digest.update(f"{name}/{path.relative_to(folder)}\0".encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def cache_key(module: ModuleOp, options: Mapping[str, Any]) -> str:
    """The key of `module` (ge level, weights attached) compiled with `options` (resolved)."""
    digest = hashlib.sha256(b"ge-compile-cache\n")
    header = {
        "format_version": FORMAT_VERSION,
        "compiler": ge.__version__,
        "build": compiler_build(),
        "op_libraries": [[library.name, library.digest] for library in installed()],
    }
    for part in (canonical_json(header), canonical_json(dict(options)), print_module(module).encode()):
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part)
    for key, array in referenced_weights(module).items():
        digest.update(canonical_json([key, array.dtype.name, list(array.shape)]))
        digest.update(array.nbytes.to_bytes(8, "little"))
        digest.update(np.ascontiguousarray(array).reshape(-1).view(np.uint8).data)
    return digest.hexdigest()


@dataclass
class Compiled:
    """A compile's result: the artifact, and the stream-level module (weights attached), which a
    cache hit parses from the artifact only when it is asked for (`ge-compile` never asks)."""

    artifact: Artifact
    seconds: float
    cache_hit: bool
    cache_note: str | None = None
    """Why the cache could not be written, when it could not (the compile itself succeeded)."""
    source: str = "<compiled>"
    """The artifact's file, named in errors of the deferred parse."""
    _module: ModuleOp | None = None

    @property
    def module(self) -> ModuleOp:
        if self._module is None:
            self._module = self.artifact.load_module(self.source)
        return self._module


def compile_graph(
    module: ModuleOp,
    options: CompileOptions,
    use_cache: bool = True,
    directory: Path | None = None,
    observers: Sequence[Observer] = (),
    progress: Progress | None = None,
) -> Compiled:
    """Compiles the ge-level `module` (weights attached; rewritten in place on a miss) to the
    stream level by `compile_pipeline`, through the cache unless `use_cache` is False; `progress`
    is told of each pass (tools/progress.py draws it on a terminal; a hit runs no pass)."""
    start = time.perf_counter()
    options.check()
    resolved = options.resolved(module)
    key = cache_key(module, resolved)
    entry = (directory or cache_dir()) / f"{key}.ge"
    if use_cache:
        hit = _lookup(entry, key)
        if hit is not None:
            return Compiled(hit, time.perf_counter() - start, cache_hit=True, source=str(entry))
    pipeline = compile_pipeline(
        options.level,
        resolved["target"],
        options.precision_mode,
        options.streams,
        options.mode,
        options.reuse,
        options.single_stream,
        options.optimize,
        options.hcom_parallel,
    )
    try:
        compile_module(
            module,
            level=options.level,
            target=resolved["target"],
            precision_mode=options.precision_mode,
            streams=options.streams,
            mode=options.mode,
            reuse=options.reuse,
            single_stream=options.single_stream,
            optimize=options.optimize,
            hcom_parallel=options.hcom_parallel,
            observers=observers,
            progress=progress,
        )
    except TensorTooLarge as e:  # constant folding would make a tensor over --max-tensor-bytes
        raise UserError(first_line(e)) from None
    artifact = build_artifact(module, resolved, pipeline, key)
    note = _store(entry, artifact) if use_cache else None
    return Compiled(artifact, time.perf_counter() - start, cache_hit=False, cache_note=note, _module=module)


def _lookup(entry: Path, key: str) -> Artifact | None:
    """The entry's artifact, or None: missing, failing any check of `read_artifact`, or holding
    another key (a miss, not an error: the compile rewrites the entry)."""
    if not entry.is_file():
        return None
    try:
        artifact = read_artifact(entry)
    except (UserError, OSError):
        return None
    if artifact.manifest["cache_key"] != key:
        return None
    return artifact


def _store(entry: Path, artifact: Artifact) -> str | None:
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        artifact.save(entry)
    except OSError as e:
        return f"compile cache {entry.parent}: cannot write: {e.strerror}"
    except UserError as e:
        return f"compile cache: {e}"
    return None


__all__ = ["CACHE_ENV", "ArtifactError", "CompileOptions", "Compiled", "cache_dir", "cache_key", "compile_graph"]
