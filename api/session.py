"""`ge.Session`: GE's session options over the compile pipeline, then compile and run.

    sess = ge.Session(); sess.set_option("graph_sink", True); sess.set_option("stream_num", 4)
    sess.compile(graph); outputs = sess.run(graph, inputs)

`compile` is `ge.GraphCompiler().compile(...)`, i.e. `ge-opt -p '<compile_pipeline(...)>'`
(lowering/compile.py, the pipeline `ge-compile` and `ge-bench` run), with the options below; the
exact pipeline text is on the compiled result (`.pipeline`). `run` executes the compiled program
on the reference interpreter, as `ge-run streams.mlir` does.

Options (GE's names; values as Python values or GE's strings):
  graph_sink                      True: whole-graph sink, one launch (lower-to-streams{mode=graph});
                                  False: per-op launch (mode=op)
  stream_num, ge.streamNum        streams for lower-to-streams (0: as many as the DAG needs)
  ge.oo.level                     0..3 or O0..O3: the ge-optimize level
  precision_mode, ge.exec.precision_mode   GE's precision mode (ge-optimize's precision_mode)
  soc_version, ge.socVersion      the chip (a target name)
  ge.exec.disableReuseMemory      1: plan-memory without buffer reuse (plan-memory{reuse=false})
  ge.enableSingleStream           1: every task on stream 0 (lower-to-streams{single_stream=true})
  ge.hcomParallel                 1: the tasks reading a collective's results on a stream of their own
                                  (lower-to-streams{hcom_parallel=true}; a data-parallel step's updates)
  ge.inputShape                   per input, each dim a size, -1 or MIN~MAX: "x:1~8,128;mask:1~8,128"
                                  (ge-optimize{input_shape=...}: binds the sizes, bounds the ranges)
  ge.dynamicDims, ge.dynamicBatchSize, ge.dynamicImageSize, ge.compileHybridMode
                                  gears (ge-optimize's dynamic_dims, ...; hybrid: the dynamic graph
                                  for inputs that fit no gear)
  is_input_adjust_hw_layout, is_output_adjust_hw_layout
                                  1: the graph's image inputs / outputs given and taken in NC1HWC0
                                  (ge-optimize{adjust_input_hw_layout, adjust_output_hw_layout})
The GE names are read by passes/ge_options.py's readers, as `ge-opt --ge-option NAME=VALUE` reads them.
"""

from __future__ import annotations

import hashlib
from typing import Any

from ge.api.compiler import CompiledGraph
from ge.api.errors import GEError
from ge.api.executor import lower_graph, run_module
from ge.api.graph import Graph
from ge.passes.ge_optimize import PRECISION_MODES
from ge.passes.ge_options import GE_OPTIONS, level_value
from ge.tools.compile_cache import COMPILE_SWITCHES, OPTIMIZE_OPTIONS

#: Session option -> the compile argument it sets.
COMPILE_OPTIONS = {
    "graph_sink": "mode",
    "stream_num": "streams",
    "ge.streamNum": "streams",
    "ge.oo.level": "level",
    "precision_mode": "precision_mode",
    "ge.exec.precision_mode": "precision_mode",
    "soc_version": "target",
    "ge.socVersion": "target",
}
#: GE options read by `ge-opt --ge-option`'s readers into the compile's reuse / single_stream switches.
PASS_THROUGH = (*COMPILE_SWITCHES, *OPTIMIZE_OPTIONS)
OPTION_NAMES = (*COMPILE_OPTIONS, *PASS_THROUGH)


def _text(value: Any) -> str:
    """A Python option value in GE's spelling (True -> "true")."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _flag(key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if _text(value).lower() in ("1", "true"):
        return True
    if _text(value).lower() in ("0", "false"):
        return False
    raise GEError(f"Session.set_option: {key}: {value!r} is not True/False (or 1/0)")


class Session:
    """Options, then `compile(graph)` and `run(graph, inputs)`; compiled programs are kept per
    graph content and options, so running an unchanged graph again does not recompile."""

    def __init__(self, options: dict[str, Any] | None = None):
        self.options: dict[str, Any] = {}
        self._compiled: dict[tuple[str, tuple], CompiledGraph] = {}
        self.compiles = 0
        for key, value in (options or {}).items():
            self.set_option(key, value)

    def set_option(self, key: str, value: Any) -> Session:
        """Sets one of GE's options (the module docstring's table) for later compiles; the value is
        checked now, by the reader `ge-opt --ge-option` uses where the option is one of its own."""
        where = "Session.set_option"
        if key not in OPTION_NAMES:
            raise GEError(f"{where}: unknown option {key!r} (options: {', '.join(OPTION_NAMES)})")
        target = COMPILE_OPTIONS.get(key)
        if target == "mode":
            stored: Any = "graph" if _flag(key, value) else "op"
        elif target == "streams":
            if isinstance(value, bool) or not (isinstance(value, int) or _text(value).isdigit()) or int(value) < 0:
                raise GEError(f"{where}: {key}: {value!r} is not a non-negative integer")
            stored = int(value)
        elif target == "level":
            try:
                stored = level_value(_text(value))
            except Exception:
                raise GEError(f"{where}: {key}: {value!r} is not one of 0, 1, 2, 3 (or O0..O3)") from None
        elif target == "precision_mode":
            if value not in PRECISION_MODES:
                raise GEError(f"{where}: {key}: {value!r} is not one of {', '.join(PRECISION_MODES)}")
            stored = value
        elif target == "target":
            read = GE_OPTIONS["ge.socVersion"][2]
            try:
                stored = read(_text(value))
            except ValueError as e:
                raise GEError(f"{where}: {key}: {e}") from None
        else:  # a pass-through GE option: checked by its reader now, applied by apply_ge_options
            try:
                GE_OPTIONS[key][2](_text(value))
            except ValueError as e:
                raise GEError(f"{where}: {key}: {e}") from None
            stored = _text(value)
        self.options[target or key] = stored
        return self

    def _compile_args(self) -> dict[str, Any]:
        args = {k: v for k, v in self.options.items() if k not in PASS_THROUGH}
        args["ge_options"] = tuple(f"{k}={self.options[k]}" for k in PASS_THROUGH if k in self.options)
        return args

    def compile(self, graph: Graph) -> CompiledGraph:
        """The graph compiled to streams with the session's options (a copy; the graph is untouched).
        The result's `.pipeline` is the `ge-opt -p` text that does the same."""
        where = "Session.compile"
        if not isinstance(graph, Graph):
            raise GEError(f"{where}: expected a ge.Graph, got {type(graph).__name__}")
        args = self._compile_args()
        key = (_fingerprint(graph), tuple(sorted(args.items())))
        if key not in self._compiled:
            self._compiled[key] = lower_graph(graph, where, **args)
            self.compiles += 1
        return self._compiled[key]

    def run(self, graph: Graph, inputs):
        """Compiles `graph` (once per content and options) and runs it on `inputs`: one array, arrays
        in input order or a dict by name; one array back for a single output, else a dict by name."""
        if not isinstance(graph, Graph):
            raise GEError(f"Session.run: expected a ge.Graph, got {type(graph).__name__}")
        return run_module(self.compile(graph).module, inputs, "Session.run")

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v}" for k, v in self.options.items()) or "defaults"
        return f"Session({shown}; {self.compiles} compiled)"


def _fingerprint(graph: Graph) -> str:
    """The graph's content: its IR text and the bytes of the weights it refers to."""
    from ge.ge_dialects.ge.weights import referenced_weights

    h = hashlib.blake2b(str(graph.module).encode(), digest_size=16)
    for key, array in sorted(referenced_weights(graph.module).items()):
        h.update(key.encode())
        h.update(array.tobytes())
    return h.hexdigest()
