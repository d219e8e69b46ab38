"""`ge.GraphProfiler`: one run of an executor's program, with the modeled device's profile of it.

`profile(executor, inputs)` runs the executor (the numbers, as `GraphExecutor.run`) and simulates
the stream-level program on the modeled chip (device: `simulate_module`), which is
what `ge-run streams.mlir --inputs in.npz --trace t.json --op-summary ops.csv` does. An executor
holding a ge-level graph has it compiled on the fly first: `lowering/compile.py`'s pipeline at the
profiler's `optimization_level` (default 0: the graph as it stands, lowered in graph-sink mode).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ge.api.compiler import CompiledGraph
from ge.api.errors import GEError, user_errors
from ge.api.executor import GraphExecutor, chip_name, lower_graph
from ge.api.graph import Graph
from ge.device import chrome_trace, op_summary_csv
from ge.device.cost import Hardware
from ge.device.simulator import SimResult
from ge.ge_dialects.ge.target_attr import resolve_target_name
from ge.interpreter.stream_executor import MemoryFigures, memory_figures, simulate_module, stream_function
from ge.lowering.streams.verify import verify_stream_function
from ge.target import TargetError, load_target


class GraphProfiler:
    """Profiles runs on the modeled device. `target` (None or "npu": the program's ge.target, else
    the default chip) must agree with what the program was compiled for; `optimization_level`
    and `mode` apply only when a ge-level graph must be compiled on the fly."""

    def __init__(self, target: str | None = None, optimization_level: int = 0, mode: str = "graph"):
        self.target = chip_name(target, "GraphProfiler")
        self.optimization_level = optimization_level
        self.mode = mode
        self.result: SimResult | None = None
        self.memory: MemoryFigures | None = None
        self.outputs: Any = None
        self.pipeline: str | None = None
        """How the profiled program was compiled, when this profiler compiled it (else None)."""
        self._hw: Hardware | None = None

    def profile(self, executor: GraphExecutor, input_data) -> GraphProfiler:
        """Runs `executor` on `input_data` (outputs in `.outputs`) and simulates its program."""
        where = "GraphProfiler.profile"
        if not isinstance(executor, GraphExecutor):
            raise GEError(f"{where}: expected a ge.GraphExecutor, got {type(executor).__name__}")
        if executor.module is None:
            raise GEError(f"{where}: the executor has no graph loaded (call load_graph first)")
        self.result = self.memory = None  # a failed profile leaves no figures of an earlier one
        self.outputs = executor.run(input_data)
        module, self.pipeline = executor.module, None
        if executor.level == "ge":
            assert isinstance(executor.loaded, Graph)
            lowered: CompiledGraph = lower_graph(
                executor.loaded, where, level=self.optimization_level, target=self.target, mode=self.mode
            )
            module, self.pipeline = lowered.module, lowered.pipeline
        try:
            with user_errors(where):
                name, _ = resolve_target_name(module, self.target)
                spec = load_target(name)
        except TargetError as e:
            raise GEError(f"{where}: {e}") from None
        try:
            verify_stream_function(stream_function(module))
            self.result = simulate_module(module, spec)
        except ValueError as e:  # a race the stream verifier finds (StreamError), a bad task record
            raise GEError(f"{where}: {str(e).strip().splitlines()[0]}") from None
        self.memory = memory_figures(module)
        self._hw = Hardware.of(spec)
        return self

    def _sim(self) -> SimResult:
        if self.result is None:
            raise GEError("GraphProfiler: nothing profiled yet (call profile first)")
        return self.result

    @property
    def latency(self) -> float:
        """Modeled latency of one run, in seconds (the last task's end)."""
        return self._sim().latency

    @property
    def npu_utilization(self) -> float:
        """AI Core utilization as msprof and `ge-bench --deployment` report it (`SimResult.aicore_util`):
        the core-seconds task blocks held AI Cores, over the AI Cores x latency. Launch gaps and event
        waits lower it: per-op launch leaves the cores idle between tasks."""
        return self._sim().aicore_util

    @property
    def compute_utilization(self) -> float:
        """Busy unit-seconds of the Cube and Vector units over their capacity during the run:
        (cube_util x Cube units + vector_util x Vector units) / (Cube units + Vector units), where
        cube_util and vector_util are the simulation's (the work at peak rate over units x latency)."""
        sim, hw = self._sim(), self._hw
        assert hw is not None
        nc, nv = hw.cube_cores, hw.vector_cores
        return (sim.cube_util * nc + sim.vector_util * nv) / (nc + nv)

    @property
    def cube_utilization(self) -> float:
        return self._sim().cube_util

    @property
    def vector_utilization(self) -> float:
        return self._sim().vector_util

    @property
    def memory_bandwidth_utilization(self) -> float:
        """HBM bytes the tasks moved over (HBM bandwidth x latency): the simulation's hbm_util."""
        return self._sim().hbm_util

    @property
    def op_table(self) -> list[dict[str, Any]]:
        """One row per task in start order (msprof's op summary): name, type, engine, stream,
        start and duration (us), Cube / Vector / MTE ratios, HBM bytes read and written."""
        rows = []
        for t in sorted(self._sim().tasks, key=lambda x: (x.start, x.index)):
            rows.append(
                {
                    "name": t.name,
                    "op_type": t.work.op_type,
                    "engine": t.work.engine,
                    "task_type": t.task_type,
                    "stream": t.stream,
                    "start_us": t.start * 1e6,
                    "duration_us": t.duration * 1e6,
                    "wait_us": t.wait * 1e6,
                    "block_dim": t.work.block_dim,
                    "cube_ratio": t.cube_ratio,
                    "vector_ratio": t.vector_ratio,
                    "mte_ratio": t.mte_ratio,
                    "hbm_read_bytes": t.hbm_read_bytes,
                    "hbm_write_bytes": t.hbm_write_bytes,
                }
            )
        return rows

    def op_summary_csv(self) -> str:
        """The per-task CSV `ge-run --op-summary` writes."""
        return op_summary_csv(self._sim())

    @property
    def timeline(self) -> dict:
        """The Chrome / Perfetto trace `ge-run --trace` writes (load in ui.perfetto.dev)."""
        return chrome_trace(self._sim())

    def save_trace(self, path: str | Path) -> Path:
        """Writes `timeline` as JSON to `path`."""
        path = Path(path)
        try:
            path.write_text(json.dumps(self.timeline))
        except OSError as e:
            raise GEError(f"GraphProfiler.save_trace: {path}: {e.strerror}") from None
        return path

    def summary(self) -> str:
        sim = self._sim()
        lines = [
            f"{sim.target} mode {sim.mode}: {len(sim.tasks)} tasks, {sim.launches} launches, "
            f"latency {sim.latency * 1e6:.1f} us",
            f"npu {self.npu_utilization:.1%}, compute {self.compute_utilization:.1%} (cube {sim.cube_util:.1%}, "
            f"vector {sim.vector_util:.1%}), HBM bandwidth {self.memory_bandwidth_utilization:.1%}",
        ]
        if self.memory is not None:
            lines.append(f"memory: device total {self.memory.device_total / 2**20:.2f} MiB")
        return "\n".join(lines)

    def __repr__(self) -> str:
        if self.result is None:
            return "GraphProfiler(nothing profiled yet)"
        sim = self.result
        mem = f", memory {self.memory.device_total / 2**20:.2f} MiB" if self.memory is not None else ""
        return (
            f"GraphProfiler({sim.target}, {sim.mode} mode: latency {sim.latency * 1e6:.1f} us, "
            f"{len(sim.tasks)} tasks, npu {self.npu_utilization:.1%}, compute {self.compute_utilization:.1%}, "
            f"HBM bandwidth {self.memory_bandwidth_utilization:.1%}{mem})"
        )
