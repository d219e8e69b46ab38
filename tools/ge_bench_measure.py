"""ge-bench: what the compiler buys on the modeled device, the comparison GE users look for.

For each model and target: the imported graph at O0 with per-op launch (the host launches every
kernel) against O3 with whole-graph sink (one launch), both in the same precision mode: modeled
latency, Cube and Vector utilization, HBM bandwidth utilization, planned device memory, the
largest batch that fits in HBM, and compile time (ge IR in memory to the stream level). Then a
sweep over stream counts shows GE's trade-off: too few streams lose overlap, too many add events.

The headline speedup mixes two things: what the compiler does (fewer, fused kernels) and what the
launch mode does (one host launch instead of one per kernel). `split` separates them: O0 and O3,
each run per-op and graph-sunk; the speedup O0 per-op -> O3 graph is the product of the compiler's
share (O0 op -> O3 op, or O0 graph -> O3 graph) and the launch mode's share (O3 op -> O3 graph, or
O0 op -> O0 graph). `sensitivity` shows how much of it rests on the two assumed constants of the
target file, `[host] launch_s` and `[overheads] task_device_s`, at half, as given and double. The
compiled programs are the same in every row (built with the target as given); only the device's
timing of them changes.
Timing only: no numbers are computed and weights are never read.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import onnx
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException

from ge.device import simulate
from ge.frontend import models
from ge.frontend.onnx_importer import import_model
from ge.frontend.onnx_ops import OnnxImportError
from ge.ge_dialects import stream
from ge.ge_dialects.ge.weights import attach_weights
from ge.ge_dialects.limits import max_tensor_bytes, tensor_byte_limit
from ge.interpreter.stream_executor import memory_figures, sim_tasks, simulate_module
from ge.lowering.compile import compile_module
from ge.target import Target, load_target

Builder = Callable[[int], onnx.ModelProto]

MODELS: dict[str, tuple[Builder, int]] = {
    "resnet50 b1": (lambda batch: models.resnet50(batch=batch), 1),
    "resnet50 b32": (lambda batch: models.resnet50(batch=batch), 32),
    "mobilenet_v2": (lambda batch: models.mobilenet_v2(batch=batch), 1),
    "bert_base": (lambda batch: models.bert_base(batch=batch), 1),
}
TARGETS = ("ascend910", "ascend910b")


@dataclass
class Build:
    module: ModuleOp
    seconds: float


def build(model: onnx.ModelProto, level: int, precision: str, target: str, mode: str, streams: int = 0) -> Build:
    """The model lowered to streams; `seconds` counts ge-optimize and the lowering, not the import.
    At O3 the lowering includes relax-reuse (no extra memory): the compiler's whole pipeline."""
    module, weights = import_model(model, max_tensor_bytes=max_tensor_bytes())
    attach_weights(module, weights)
    start = time.perf_counter()
    compile_module(module, level=level, target=target, precision_mode=precision, streams=streams, mode=mode)
    return Build(module, time.perf_counter() - start)


def device_bytes(module: ModuleOp) -> int:
    """The device memory the compiled module needs: intermediates, weights, state, inputs and
    outputs, each once (`MemoryFigures.device_total`; a state written in place counts once)."""
    figures = memory_figures(module)
    assert figures is not None, "plan-memory writes task.memory"
    return figures.device_total


Compile = Callable[[int], ModuleOp]
"""The model at a batch size, compiled to streams (the largest-batch search probes with it)."""


def fits(compile_at: Compile, batch: int, hbm: int) -> int | None:
    """Device bytes the model needs at `batch`, or None when plan-memory refuses it. The probe is
    compile-only (no tensor is created), so a tensor may be as large as the device's memory: the
    host's tensor-size limit would otherwise stop the search below the device's edge."""
    try:
        with tensor_byte_limit(max(hbm, max_tensor_bytes())):
            return device_bytes(compile_at(batch))
    except (DiagnosticException, OnnxImportError):  # plan-memory's refusal; a tensor larger than the HBM
        return None


def inference_at(builder: Builder, level: int, precision: str, target: str) -> Compile:
    return lambda batch: build(builder(batch), level, precision, target, "graph").module


def largest_batch(compile_at: Compile, target: str) -> int:
    """Memory is nearly affine in the batch: extrapolate from batches 1 and 2, then find the edge
    by galloping and bisection around the guess (each probe is a compile)."""
    hbm = load_target(target).hbm.bytes
    one, two = fits(compile_at, 1, hbm), fits(compile_at, 2, hbm)
    if one is None:
        return 0
    per = max(1, (two or hbm) - one)
    guess = max(1, (hbm - (one - per)) // per)

    def ok(batch: int) -> bool:
        return batch <= 1 or fits(compile_at, batch, hbm) is not None

    step = 1
    if ok(guess):
        lo, hi = guess, guess + step
        while ok(hi):
            lo, step = hi, step * 2
            hi = lo + step
    else:
        hi, lo = guess, max(1, guess - step)
        while not ok(lo):
            hi, step = lo, step * 2
            lo = max(1, hi - step)
    while hi - lo > 1:  # ok(lo), not ok(hi)
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return lo


def row(name: str, target: str, precision: str, with_max_batch: bool) -> tuple[dict[str, str], Compiled]:
    """The headline row, and the compiled tasks for the split and sensitivity tables."""
    builder, batch = MODELS[name]
    model = builder(batch)
    spec = load_target(target)
    o0 = build(model, 0, precision, target, "op")
    o3 = build(model, 3, precision, target, "graph")
    compiled = Compiled(name, target, sim_tasks(main_function(o0.module)), sim_tasks(main_function(o3.module)))
    r0, r3 = simulate_module(o0.module, spec), simulate_module(o3.module, spec)
    m0, m3 = memory_figures(o0.module), memory_figures(o3.module)
    assert m0 is not None and m3 is not None, "build() runs plan-memory, which writes the memory figures"
    out = {
        "model": name,
        "target": target,
        "O0 per-op (us)": f"{r0.latency * 1e6:.0f}",
        "O3 sink (us)": f"{r3.latency * 1e6:.0f}",
        "speedup": f"{r0.latency / r3.latency:.2f}x",
        "kernels O0/O3": f"{len(r0.tasks)}/{len(r3.tasks)}",
        "launches O0/O3": f"{r0.launches}/{r3.launches}",
        "cube util O0/O3": f"{r0.cube_util:.0%}/{r3.cube_util:.0%}",
        "vector util O0/O3": f"{r0.vector_util:.0%}/{r3.vector_util:.0%}",
        "HBM util O0/O3": f"{r0.hbm_util:.0%}/{r3.hbm_util:.0%}",
        "O3 / bound": f"{r3.latency_over_bound:.2f}",
        "peak MiB O0/O3": f"{m0.pool / 2**20:.1f}/{m3.pool / 2**20:.1f}",
        "compile s O0/O3": f"{o0.seconds:.2f}/{o3.seconds:.2f}",
    }
    if with_max_batch:
        out["max batch O3"] = str(largest_batch(inference_at(builder, 3, precision, target), target))
    return out, compiled


def stream_sweep(name: str, target: str, precision: str, counts=(1, 2, 4, 8, 16)) -> list[dict[str, str]]:
    builder, batch = MODELS[name]
    model = builder(batch)
    spec = load_target(target)
    rows = []
    for count in counts:
        lowered = build(model, 3, precision, target, "graph", streams=count).module
        result = simulate_module(lowered, spec)
        fn = next(iter(lowered.ops))
        events = sum(1 for op in fn.body.block.ops if isinstance(op, stream.RecordOp))
        rows.append(
            {
                "model": name,
                "target": target,
                "streams asked": str(count),
                "streams used": str(fn.attributes[stream.COUNT_ATTR].value.data),
                "events": str(events),
                "latency (us)": f"{result.latency * 1e6:.1f}",
                "cube util": f"{result.cube_util:.0%}",
                "vector util": f"{result.vector_util:.0%}",
            }
        )
    return rows


def markdown(rows: list[dict[str, str]]) -> str:
    keys = list(dict.fromkeys(k for r in rows for k in r))  # a short row (a step that does not fit) leaves blanks
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    lines += ["| " + " | ".join(r.get(k, "") for k in keys) + " |" for r in rows]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------------
# The compiler's share against the launch mode's share


#: The two constants of a target file that no published figure gives (see docs/device_model.md):
#: (table name, key) of each.
ASSUMED = {"launch_s": ("host", "launch_s"), "task_device_s": ("overheads", "task_device_s")}
FACTORS = (0.5, 1.0, 2.0)
SENSITIVITY_MODELS = ("resnet50 b1", "resnet50 b32", "bert_base")


def with_constants(spec: Target, **factors: float) -> Target:
    """The target `spec` with each ASSUMED constant named in `factors` scaled by its factor (a new
    Target: the loaded one is frozen, cached and shared)."""
    out = spec
    for key, factor in factors.items():
        if key not in ASSUMED:
            raise ValueError(f"'{key}' is not one of the assumed constants ({', '.join(ASSUMED)})")
        table_name, name = ASSUMED[key]
        table = getattr(out, table_name)
        out = replace(out, **{table_name: replace(table, **{name: getattr(table, name) * factor})})
    return out


def main_function(module: ModuleOp) -> func.FuncOp:
    return next(f for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name.data == "main")


@dataclass
class Split:
    """Modeled latencies (seconds) of O0 and O3, each per-op and graph-sunk, and their kernel counts."""

    o0_op: float
    o0_graph: float
    o3_op: float
    o3_graph: float
    kernels_o0: int
    kernels_o3: int

    @property
    def total(self) -> float:
        return self.o0_op / self.o3_graph

    @property
    def compiler_graph(self) -> float:
        return self.o0_graph / self.o3_graph

    @property
    def compiler_op(self) -> float:
        return self.o0_op / self.o3_op

    @property
    def launch_o3(self) -> float:
        return self.o3_op / self.o3_graph

    @property
    def launch_o0(self) -> float:
        return self.o0_op / self.o0_graph


@dataclass
class Compiled:
    """One model compiled at O0 and O3 for one target (lowered once: the launch mode changes only
    how the host issues the same tasks)."""

    name: str
    target: str
    o0: list
    o3: list

    def split(self, spec: Target) -> Split:
        def latency(tasks, mode):
            return simulate(tasks, spec, mode).latency

        return Split(
            latency(self.o0, "op"),
            latency(self.o0, "graph"),
            latency(self.o3, "op"),
            latency(self.o3, "graph"),
            len(self.o0),
            len(self.o3),
        )


def compile_both(name: str, target: str, precision: str) -> Compiled:
    builder, batch = MODELS[name]
    model = builder(batch)
    tasks = [sim_tasks(main_function(build(model, level, precision, target, "graph").module)) for level in (0, 3)]
    return Compiled(name, target, *tasks)


def _x(value: float) -> str:
    return f"{value:.2f}x"


def split_row(c: Compiled) -> dict[str, str]:
    s = c.split(load_target(c.target))
    return {
        "model": c.name,
        "target": c.target,
        "kernels O0/O3": f"{s.kernels_o0}/{s.kernels_o3}",
        "O0 op (us)": f"{s.o0_op * 1e6:.0f}",
        "O0 graph (us)": f"{s.o0_graph * 1e6:.0f}",
        "O3 op (us)": f"{s.o3_op * 1e6:.0f}",
        "O3 graph (us)": f"{s.o3_graph * 1e6:.0f}",
        "total O0 op -> O3 graph": _x(s.total),
        "compiler, graph (O0 -> O3 graph)": _x(s.compiler_graph),
        "compiler, op (O0 -> O3 op)": _x(s.compiler_op),
        "launch mode, O3 (op -> graph)": _x(s.launch_o3),
        "launch mode, O0 (op -> graph)": _x(s.launch_o0),
    }


def sensitivity_rows(c: Compiled, factors=FACTORS) -> list[dict[str, str]]:
    spec = load_target(c.target)
    rows = []
    for launch in factors:
        for overhead in factors:
            varied = with_constants(spec, launch_s=launch, task_device_s=overhead)
            s = c.split(varied)
            rows.append(
                {
                    "model": c.name,
                    "target": c.target,
                    "launch_s (us)": f"{varied.host.launch_s * 1e6:g}" + (" (given)" if launch == 1 else ""),
                    "task_device_s (us)": f"{varied.overheads.task_device_s * 1e6:g}"
                    + (" (given)" if overhead == 1 else ""),
                    "O0 op (us)": f"{s.o0_op * 1e6:.0f}",
                    "O3 graph (us)": f"{s.o3_graph * 1e6:.0f}",
                    "total": _x(s.total),
                    "compiler, graph": _x(s.compiler_graph),
                    "compiler, op": _x(s.compiler_op),
                    "launch mode, O3": _x(s.launch_o3),
                }
            )
    return rows


CONSTANT_SOURCES = """\
- `[host] launch_s` = 20 us. Source: GE's documentation puts one host-device round trip at "tens of
  microseconds" (docs/hardware.md, Dispatch costs); 20 us is the low end. One measured eager op
  on Ascend spent 71 us in its op API (236 us end to end), which includes tiling and framework work
  and so bounds a bare launch from above. No official per-kernel launch figure exists.
- `[overheads] task_device_s` = 5 us. No published figure. Ascend C's best-practice guide ("Setting
  a Proper Number of Cores and Operator Kernel Type", hiascend.com) names the parts of a kernel's
  "header overhead" (core start-up, TLB misses, same-address conflicts, initialization), growing
  with the cores started, without numbers. Reasoning (an assumption, marked as such): dispatch from
  the stream's queue, block start and completion report are on-chip work with no host round trip,
  so a few microseconds, taken as a quarter of the host launch. Both constants are marked
  ASSUMPTION in target/*.toml; the compiled programs are the same in every row."""
