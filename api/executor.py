"""`ge.GraphExecutor`: runs a graph (ge level) or a compiled program (stream level) on numpy inputs.

Both levels run on the reference interpreter (`ge.interpreter.runner.run`), the same code
`ge-run` runs: a ge-level graph is what `ge-run model.mlir` executes, a compiled program what
`ge-run streams.mlir` executes (its numbers; the modeled device's time is `ge.GraphProfiler`).

This module also holds `lower_graph`, the on-the-fly compile the profiler and `ge.Session` use:
`ge.GraphCompiler` (the compile `ge-compile` runs) with GE's option names read as ge-opt reads them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import InterpretationError

from ge.api.errors import GEError
from ge.api.graph import Graph
from ge.ge_dialects.context import make_context
from ge.ge_dialects.ge.control_flow import lowering_leaves
from ge.ge_dialects.ge.target_attr import module_target
from ge.interpreter.ge import KernelError
from ge.interpreter.runner import InputError, input_names, main_function, output_names, run
from ge.interpreter.stream_executor import is_lowered
from ge.lowering.run_time import run_dynamic
from ge.passes.pipeline import apply_all
from ge.target import TargetError, check_target_name
from ge.tools.common import UserError
from ge.tools.compile_cache import CompileOptions
from ge.tools.progress import PassProgress, wanted

if TYPE_CHECKING:
    from ge.api.compiler import CompiledGraph

DEFAULT_TARGET_NAMES = (None, "npu")
"""`target="npu"` (the issue's spelling) and None both mean: the module's ge.target, else the default chip."""


def chip_name(target: str | None, where: str) -> str | None:
    """A known chip name, or None for the default; anything else is the caller's one-line mistake
    (checked before it reaches pipeline text, so a target cannot add a pass)."""
    if target in DEFAULT_TARGET_NAMES:
        return None
    if not isinstance(target, str):
        raise GEError(f"{where}: target must be a chip name or 'npu', not {target!r}")
    try:
        return check_target_name(target)
    except TargetError as e:
        raise GEError(f"{where}: {e}") from None


def run_passes(module: ModuleOp, passes: Sequence[ModulePass], where: str) -> None:
    """`apply_all` on `module`, with the per-pass progress line ge-opt draws when stderr is a
    terminal (tools/progress.py; nothing in a pipe or a test)."""
    with PassProgress(where, wanted()) as progress:
        apply_all(make_context(), module, passes, progress=progress)


def check_graph(graph, where: str) -> Graph:
    """`graph` when it is a ge.Graph with a func.func @main, else the caller's one-line mistake."""
    if not isinstance(graph, Graph):
        raise GEError(f"{where}: expected a ge.Graph, got {type(graph).__name__}")
    try:
        main_function(graph.module)
    except InputError:
        raise GEError(f"{where}: graph '{graph.name}' has no func.func @main (nothing was built)") from None
    return graph


def lower_graph(
    graph: Graph,
    where: str,
    level: int = 3,
    target: str | None = None,
    precision_mode: str = "must_keep_origin_dtype",
    streams: int = 0,
    mode: str = "graph",
    ge_options: Sequence[str] = (),
) -> CompiledGraph:
    """`graph` compiled by `ge.GraphCompiler` (the pipeline `ge-compile` runs, through the compile
    cache), with GE options (`NAME=VALUE`, passes/ge_options.py: ge.exec.disableReuseMemory,
    ge.enableSingleStream) read by `ge-opt --ge-option`'s readers into the compile's own options;
    the graph itself is untouched."""
    check_graph(graph, where)
    chip = chip_name(target, where)
    try:
        switches = CompileOptions().with_ge_options(ge_options)
    except UserError as e:
        raise GEError(f"{where}: {e}") from None
    from ge.api.compiler import GraphCompiler

    try:
        return GraphCompiler().compile(
            graph,
            chip or "npu",
            level,
            precision_mode,
            streams,
            mode,
            reuse=switches.reuse,
            single_stream=switches.single_stream,
            hcom_parallel=switches.hcom_parallel,
            optimize=switches.optimize,
        )
    except GEError as e:
        raise GEError(f"{where}: {str(e).removeprefix('compile: ')}") from None


def pass_text(p) -> str:
    """`p` as `ge-opt -p` text with every option that has a value, defaults included (so the text
    says `ge-optimize{level=3 precision_mode=...}`, not a bare `ge-optimize`)."""
    spec = p.spec(include_default=True)
    return str(replace(spec, parameters={k: v for k, v in spec.parameters.items() if v}))


def pipeline_text(passes) -> str:
    return ",".join(pass_text(p) for p in passes)


def _as_inputs(names: list[str], data, where: str) -> dict[str, np.ndarray]:
    """One array (a single-input graph), arrays in input order, or a dict by input name."""
    if isinstance(data, Mapping):
        return {str(k): np.asarray(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        if len(data) != len(names):
            raise GEError(f"{where}: {len(data)} inputs given, the graph has {len(names)} ({', '.join(names)})")
        return {n: np.asarray(v) for n, v in zip(names, data)}
    if isinstance(data, (np.ndarray, np.generic, int, float)):  # a scalar feeds a rank-0 input
        if len(names) != 1:
            raise GEError(
                f"{where}: one array given, the graph has {len(names)} inputs ({', '.join(names)}); "
                "pass a list in input order or a dict by name"
            )
        return {names[0]: np.asarray(data)}
    raise GEError(
        f"{where}: inputs must be an array, a list of arrays or a dict by input name, not {type(data).__name__}"
    )


def run_module(module: ModuleOp, data, where: str):
    """Runs `module` on `data` (as `_as_inputs` reads it) with its attached weights; one array for
    a single-output graph, else a dict by output name. Input mistakes and kernel refusals are one
    line, as ge-run prints them."""
    try:
        fn = main_function(module)
    except InputError as e:
        raise GEError(f"{where}: {e}") from None
    inputs = _as_inputs(input_names(fn), data, where)
    try:
        results = run_dynamic(module, inputs)[0] if lowering_leaves(fn) else run(module, inputs)
    except InputError as e:
        raise GEError(f"{where}: {e}") from None
    except (KernelError, InterpretationError) as e:
        raise GEError(f"{where}: {str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__}") from None
    names = output_names(fn)
    return results[names[0]] if len(names) == 1 else results


@dataclass
class GraphExecutor:
    """Runs what `load_graph` was given on the reference interpreter (`ge-run PROGRAM --inputs in.npz`).

    `load_graph(graph)` takes a `ge.Graph` (ge level, run as `ge-run model.mlir` runs it) or a
    compiled object with a stream-level `.module` (`ge.CompiledGraph`, a loaded artifact, a
    `Session.compile` result: run as `ge-run streams.mlir` runs it). `run(inputs)` takes one
    array, arrays in input order, or a dict by input name; it returns one array for a
    single-output graph, else a dict by output name."""

    loaded: Any = field(default=None, init=False)
    module: ModuleOp | None = field(default=None, init=False)
    runs: int = field(default=0, init=False)

    def load_graph(self, program) -> GraphExecutor:
        """Holds `program` for `run`: a ge.Graph (what `ge-run model.mlir` runs) or an object whose
        `.module` is lowered to streams (what `ge-run streams.mlir` runs). Nothing is compiled here."""
        where = "GraphExecutor.load_graph"
        if isinstance(program, Graph):
            module = check_graph(program, where).module
            if is_lowered(module):
                raise GEError(f"{where}: the graph's module is lowered to tasks; load the compiled object instead")
        else:
            attr = getattr(program, "module", None)
            if not isinstance(attr, ModuleOp):
                raise GEError(
                    f"{where}: expected a ge.Graph or a compiled graph (an object with a stream-level .module), "
                    f"got {type(program).__name__}"
                )
            module = attr
            if not is_lowered(module):
                raise GEError(f"{where}: {type(program).__name__}.module is not lowered to streams (compile it first)")
        self.loaded, self.module, self.runs = program, module, 0
        return self

    @property
    def level(self) -> str | None:
        """'ge' (a graph, run op by op) or 'stream' (a compiled program), None before `load_graph`."""
        if self.module is None:
            return None
        return "stream" if is_lowered(self.module) else "ge"

    @property
    def inputs(self) -> list[str]:
        return input_names(main_function(self._module("GraphExecutor.inputs")))

    @property
    def outputs(self) -> list[str]:
        return output_names(main_function(self._module("GraphExecutor.outputs")))

    def _module(self, where: str) -> ModuleOp:
        if self.module is None:
            raise GEError(f"{where}: no graph loaded (call load_graph first)")
        return self.module

    def run(self, input_data):
        """The outputs of one run (see the class docstring for the input and output forms)."""
        module = self._module("GraphExecutor.run")
        out = run_module(module, input_data, "GraphExecutor.run")
        self.runs += 1
        return out

    def __repr__(self) -> str:
        if self.module is None:
            return "GraphExecutor(no graph loaded)"
        target = module_target(self.module)
        on = f", target={target}" if target and self.level == "stream" else ""
        return f"GraphExecutor({self.level} level{on}, inputs={self.inputs}, outputs={self.outputs}, runs={self.runs})"
