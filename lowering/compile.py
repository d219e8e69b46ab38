"""The whole compile, graph IR to the stream level, as one textual pipeline.

`ge-compile`, the Python API's `GraphCompiler` and `ge-bench` build the same pipeline here, so the
three cannot drift, and every compile is a `ge-opt -p '<compile_pipeline(...)>'` a user can rerun.
relax-reuse runs at O3 only (it trades memory for time; the lower levels keep the plain plan).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException

from ge.ge_dialects import stream
from ge.ge_dialects.context import make_context
from ge.passes.pipeline import Observer, Progress, apply_all, parse_passes

FLAGS = ("true", "false")
"""How a flag of ge-optimize's is given in `optimize` (unquoted in the pipeline text)."""


def compile_pipeline(
    level: int = 3,
    target: str | None = None,
    precision_mode: str = "must_keep_origin_dtype",
    streams: int = 0,
    mode: str = "graph",
    reuse: bool = True,
    single_stream: bool = False,
    optimize: Sequence[tuple[str, str]] = (),
    hcom_parallel: bool = False,
) -> str:
    """`ge-opt -p` text of the compile: ge-optimize at `level`, partition-dynamic (a graph with
    control flow decided at run time becomes host programs around sunk subgraphs; in whole-graph
    sink, sink-control-flow hands the device what it can decide), then tasks, memory, (O3:
    relax-reuse) and streams in launch `mode`. `streams=0` lets the lowering choose the count. `reuse=False` plans
    every buffer apart (GE's ge.exec.disableReuseMemory; relax-reuse then has nothing to give up);
    `single_stream` puts every task on stream 0 (ge.enableSingleStream). `optimize` gives more of
    ge-optimize's options as (field, text): GE's shape options (input_shape, dynamic_dims, ...).
    `hcom_parallel` puts the readers of collectives on a stream of their own (ge.hcomParallel)."""
    on_target = f" target={target}" if target else ""
    more = "".join(f" {field}={text}" if text in FLAGS else f' {field}="{text}"' for field, text in optimize)
    steps = [
        f"ge-optimize{{level={level} precision_mode={precision_mode}{on_target}{more}}}",
        "partition-dynamic",  # control flow decided at run time: host programs around sunk subgraphs
    ]
    if mode == "graph":
        steps.append("sink-control-flow")  # whole-graph sink: the device decides what it can (label tasks)
    steps += ["lower-to-tasks", "plan-memory" if reuse else "plan-memory{reuse=false}"]
    if level >= 3 and reuse:
        steps.append(f"relax-reuse{{streams={streams}}}")
    single = (" single_stream=true" if single_stream else "") + (" hcom_parallel=true" if hcom_parallel else "")
    steps.append(f"lower-to-streams{{mode={mode} streams={streams}{single}}}")
    return ",".join(steps)


def compile_module(
    module: ModuleOp,
    level: int = 3,
    target: str | None = None,
    precision_mode: str = "must_keep_origin_dtype",
    streams: int = 0,
    mode: str = "graph",
    reuse: bool = True,
    single_stream: bool = False,
    observers: Sequence[Observer] = (),
    progress: Progress | None = None,
    optimize: Sequence[tuple[str, str]] = (),
    hcom_parallel: bool = False,
) -> str:
    """Compiles `module` in place to the stream level; returns the pipeline text it ran. Bad options
    (an unknown level, precision mode, target or launch mode) raise before any pass runs."""
    if mode not in stream.MODES:
        raise DiagnosticException(f"lower-to-streams: mode '{mode}' is not one of {', '.join(stream.MODES)}")
    if any('"' in text for _, text in optimize):
        raise DiagnosticException("ge-optimize: an option's value may not hold a double quote (\")")
    spec = compile_pipeline(level, target, precision_mode, streams, mode, reuse, single_stream, optimize, hcom_parallel)
    passes = parse_passes(spec)
    apply_all(make_context(), module, passes, observers, progress)
    return spec
