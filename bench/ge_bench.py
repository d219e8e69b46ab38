"""ge-bench: what the compiler buys on the modeled device, the comparison GE users look for.

For each model and target: the imported graph at O0 with per-op launch (the host launches every
kernel) against O3 with whole-graph sink (one launch), both in the same precision mode: modeled
latency, Cube and Vector utilization, HBM bandwidth utilization, planned device memory, the
largest batch that fits in HBM, and compile time (ge IR in memory to the stream level). Then a
sweep over stream counts shows GE's trade-off: too few streams lose overlap, too many add events.
Timing only: no numbers are computed and weights are never read.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import onnx
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException

from frontend import models
from frontend.onnx_importer import import_model
from ge_dialects import stream
from ge_dialects.ge.weights import attach_weights
from interpreter.stream_executor import memory_figures, simulate_module
from interpreter.targets import load_target
from passes.ge_optimize import GeOptimizePass
from passes.pipeline import apply_all, parse_passes
from tools.common import make_context

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
    """The model lowered to streams; `seconds` counts ge-optimize and the lowering, not the import."""
    module, weights = import_model(model)
    attach_weights(module, weights)
    start = time.perf_counter()
    GeOptimizePass(level=level, precision_mode=precision, target=target).apply(make_context(), module)
    apply_all(make_context(), module, parse_passes(
        f"lower-to-tasks{{target={target}}},plan-memory{{target={target}}},"
        f"lower-to-streams{{mode={mode} streams={streams} target={target}}}"))
    return Build(module, time.perf_counter() - start)


def device_bytes(module: ModuleOp) -> int:
    from xdsl.dialects.builtin import IntegerAttr

    d = module.attributes["task.memory"].data
    return sum(d[k].value.data for k in ("pool", "weights", "io") if isinstance(d[k], IntegerAttr))


def fits(builder: Builder, batch: int, level: int, precision: str, target: str) -> int | None:
    """Device bytes the model needs at `batch`, or None when plan-memory refuses it."""
    try:
        return device_bytes(build(builder(batch), level, precision, target, "graph").module)
    except DiagnosticException:
        return None


def largest_batch(builder: Builder, level: int, precision: str, target: str) -> int:
    """Memory is nearly affine in the batch: extrapolate from batches 1 and 2, then find the edge
    by galloping and bisection around the guess (each probe is a compile)."""
    one, two = fits(builder, 1, level, precision, target), fits(builder, 2, level, precision, target)
    if one is None:
        return 0
    hbm = load_target(target)["hbm"]["bytes"]
    per = max(1, (two or hbm) - one)
    guess = max(1, (hbm - (one - per)) // per)

    def ok(batch: int) -> bool:
        return batch <= 1 or fits(builder, batch, level, precision, target) is not None

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


def row(name: str, target: str, precision: str, with_max_batch: bool) -> dict[str, str]:
    builder, batch = MODELS[name]
    model = builder(batch)
    spec = load_target(target)
    o0 = build(model, 0, precision, target, "op")
    o3 = build(model, 3, precision, target, "graph")
    r0, r3 = simulate_module(o0.module, spec), simulate_module(o3.module, spec)
    m0, m3 = memory_figures(o0.module), memory_figures(o3.module)
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
        out["max batch O3"] = str(largest_batch(builder, 3, precision, target))
    return out


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
        rows.append({"model": name, "target": target, "streams asked": str(count),
                     "streams used": str(fn.attributes[stream.COUNT_ATTR].value.data),
                     "events": str(events), "latency (us)": f"{result.latency * 1e6:.1f}",
                     "cube util": f"{result.cube_util:.0%}", "vector util": f"{result.vector_util:.0%}"})
    return rows


def markdown(rows: list[dict[str, str]]) -> str:
    keys = list(rows[0])
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    lines += ["| " + " | ".join(r[k] for k in keys) + " |" for r in rows]
    return "\n".join(lines)
