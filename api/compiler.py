"""`ge.GraphCompiler` and `ge.CompiledGraph`: a graph compiled to the stream level, as an artifact.

    compiled = ge.GraphCompiler().compile(graph, target="npu", optimization_level=3)
    compiled.save("model.ge"); loaded = ge.GraphCompiler.load("model.ge")

`compile` runs the same pipeline as `ge-compile` (tools/compile_cache.py over lowering/compile.py):

    ge-opt model.mlir -p 'ge-optimize{level=3 precision_mode=must_keep_origin_dtype target=ascend910b},
        lower-to-tasks,plan-memory,relax-reuse{streams=0},lower-to-streams{mode=graph streams=0}'

(`relax-reuse` at O3 only; `CompiledGraph.pipeline` is the exact text), through the compile cache
($GE_CACHE_DIR) unless `cache=False`. Artifacts are docs/artifacts.md's single file; `load`
verifies it whole (hash, versions, signature) before anything in it is used.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from xdsl.dialects.builtin import ModuleOp

from ge.api.errors import GEError, user_errors
from ge.api.graph import Graph
from ge.ge_dialects.ge.weights import clone_with_weights
from ge.interpreter.kernels import format_bytes
from ge.tools.artifact import Artifact, load_artifact
from ge.tools.compile_cache import DEFAULT_TARGET_ALIAS, Compiled, CompileOptions, compile_graph
from ge.tools.progress import PassProgress, wanted


class CompiledGraph:
    """A graph compiled to the stream level (tasks on streams, memory planned), with its artifact.

    `module` is the stream-level module with its weights attached (what `ge-run model.ge` runs);
    `binary_size` is the artifact's size in bytes, `num_operators` its kernel count,
    `compilation_time` the seconds this object took to make (compile, cache lookup or load)."""

    def __init__(self, compiled: Compiled, loaded_from: str | None = None):
        self._compiled = compiled
        self._loaded_from = loaded_from

    @property
    def _artifact(self) -> Artifact:
        return self._compiled.artifact

    @property
    def module(self) -> ModuleOp:
        with user_errors():
            return self._compiled.module

    @property
    def target(self) -> str:
        """The chip compiled for (a name of `ge.target.target_names()`)."""
        return self._artifact.manifest["target"]

    @property
    def options(self) -> dict[str, Any]:
        """optimization_level, target, precision_mode, streams, mode: as the manifest records them."""
        return dict(self._artifact.manifest["options"])

    @property
    def pipeline(self) -> str:
        """The `ge-opt -p` text this graph was compiled with."""
        return self._artifact.manifest["pipeline"]

    @property
    def inputs(self) -> list[dict[str, Any]]:
        """The inputs' names, shapes (None: unknown) and dtypes."""
        return [dict(entry) for entry in self._artifact.manifest["inputs"]]

    @property
    def outputs(self) -> list[dict[str, Any]]:
        return [dict(entry) for entry in self._artifact.manifest["outputs"]]

    @property
    def binary_size(self) -> int:
        return self._artifact.size

    @property
    def num_operators(self) -> int:
        return self._artifact.manifest["num_operators"]

    @property
    def compilation_time(self) -> float:
        return self._compiled.seconds

    @property
    def cache_hit(self) -> bool:
        return self._compiled.cache_hit

    @property
    def manifest(self) -> dict[str, Any]:
        return dict(self._artifact.manifest)

    def save(self, path: str | os.PathLike) -> None:
        """Writes the artifact (whole or not at all); `ge-run path` and `GraphCompiler.load` read it."""
        with user_errors("save"):
            self._artifact.save(path)

    def __repr__(self) -> str:
        o = self.options
        return (
            f"CompiledGraph(target={self.target}, O{o['optimization_level']}, {o['mode']} sink, "
            f"{self.num_operators} kernels, {format_bytes(self.binary_size)}, "
            + (
                f"loaded from {self._loaded_from}"
                if self._loaded_from is not None
                else "from the cache"
                if self.cache_hit
                else "compiled"
            )
            + f" in {self.compilation_time:.2f} s)"
        )


class GraphCompiler:
    """Compiles ge graphs to the stream level (see the module docstring for the pipeline).

    `cache` (default on) keeps each result in the compile cache, `cache_dir` overrides its folder
    (default $GE_CACHE_DIR, else ~/.cache/ge-compiler). `progress` draws a per-pass line while
    compiling, only when stderr is a terminal (tools/progress.py)."""

    def __init__(self, cache: bool = True, cache_dir: str | os.PathLike | None = None, progress: bool = True):
        self.cache = cache
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.progress = progress

    def compile(
        self,
        graph: Graph | ModuleOp,
        target: str = DEFAULT_TARGET_ALIAS,
        optimization_level: int = 3,
        precision_mode: str = "must_keep_origin_dtype",
        streams: int = 0,
        mode: str = "graph",
        cache: bool | None = None,
        reuse: bool = True,
        single_stream: bool = False,
        optimize: tuple[tuple[str, str], ...] = (),
        hcom_parallel: bool = False,
    ) -> CompiledGraph:
        """`graph` compiled by `ge-opt -p '<pipeline>'` where pipeline = `compile_pipeline(level,
        target, precision_mode, streams, mode, reuse, single_stream)` (lowering/compile.py):
        ge-optimize, lower-to-tasks, plan-memory, relax-reuse (O3), lower-to-streams. `target` is a
        chip name or "npu" (the graph's chip, else the default); the graph itself is not changed. `cache` overrides the
        compiler's setting for this call. `optimize` gives more of ge-optimize's options as (field,
        text), GE's shape options among them (input_shape, dynamic_dims)."""
        if isinstance(graph, Graph):
            module = graph.module
        elif isinstance(graph, ModuleOp):
            module = graph
        else:
            raise GEError(f"compile: expected a ge.Graph, not {type(graph).__name__}")
        options = CompileOptions(
            optimization_level, target, precision_mode, streams, mode, reuse, single_stream, optimize, hcom_parallel
        )
        use_cache = self.cache if cache is None else cache
        with user_errors("compile"), PassProgress("compiling", wanted(not self.progress)) as progress:
            compiled = compile_graph(clone_with_weights(module), options, use_cache, self.cache_dir, progress=progress)
        return CompiledGraph(compiled)

    @staticmethod
    def load(path: str | os.PathLike) -> CompiledGraph:
        """The artifact at `path` (from `CompiledGraph.save` or `ge-compile`), after every check of
        docs/artifacts.md: container, versions, content hash, and the manifest against the IR."""
        start = time.perf_counter()
        with user_errors("load"):
            module, artifact = load_artifact(path)
        source = os.fspath(path)
        seconds = time.perf_counter() - start
        return CompiledGraph(Compiled(artifact, seconds, cache_hit=False, source=source, _module=module), source)
