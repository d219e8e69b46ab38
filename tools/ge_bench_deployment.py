"""ge-bench --deployment: the before/after table of a deployed model, metric by metric.

"Before" is the imported graph as the device would run it without this compiler's work: O0 (only
the precision mode, which ATC always applies) with the host launching every kernel. "After" is O3
with whole-graph sink. Both are compiled by the same pipeline (lowering/compile.py) in the same
precision mode and timed on the same modeled chip, so each ratio is the compiler's and the launch
mode's work together (the headline tables split the two). Memory is what the plan places on the
device: the weights plus the activations' pool (inputs and outputs apart). The largest batch is the
bench's search (each probe a compile; `--no-max-batch` skips it).
"""

from __future__ import annotations

import onnx

from ge.frontend import models
from ge.interpreter.stream_executor import memory_figures, simulate_module
from ge.target import load_target
from ge.tools.ge_bench_measure import Builder, build, inference_at, largest_batch

DEPLOYMENT_MODEL = "resnet50"
DEPLOYMENT_TARGET = "ascend910b"


def _ratio(before: float, after: float) -> str:
    return f"{before / after:.2f}x" if after > 0 else "-"


def resnet50(batch: int) -> onnx.ModelProto:
    return models.resnet50(batch=batch)


def deployment_rows(
    target: str, precision: str, with_max_batch: bool, builder: Builder = resnet50
) -> list[dict[str, str]]:
    """The model (`builder`) at batch 1 on `target`: one row per metric with before, after and
    before/after (above 1: after is smaller; for the utilizations and the batch, larger is better)."""
    model = builder(1)
    spec = load_target(target)
    before = build(model, 0, precision, target, "op").module
    after = build(model, 3, precision, target, "graph").module
    sim_b, sim_a = simulate_module(before, spec), simulate_module(after, spec)
    mem_b, mem_a = memory_figures(before), memory_figures(after)
    assert mem_b is not None and mem_a is not None, "the compile runs plan-memory, which writes the figures"

    def mib(figures) -> float:
        return (figures.weights + figures.pool) / 2**20

    def row(metric: str, b: float, a: float, shown: str, ratio: str) -> dict[str, str]:
        return {"metric": metric, "before": shown.format(b), "after": shown.format(a), "before/after": ratio}

    rows = [
        row("batch-1 latency (us)", sim_b.latency * 1e6, sim_a.latency * 1e6, "{:.0f}", ""),
        row("AI Core utilization", sim_b.aicore_util, sim_a.aicore_util, "{:.0%}", ""),
        row("HBM bandwidth utilization", sim_b.hbm_util, sim_a.hbm_util, "{:.0%}", ""),
        row("memory, weights + activations (MiB)", mib(mem_b), mib(mem_a), "{:.1f}", ""),
        row("kernels", len(sim_b.tasks), len(sim_a.tasks), "{:.0f}", ""),
        row("host launches", sim_b.launches, sim_a.launches, "{:.0f}", ""),
    ]
    values = [
        (sim_b.latency, sim_a.latency),
        (sim_b.aicore_util, sim_a.aicore_util),
        (sim_b.hbm_util, sim_a.hbm_util),
        (mib(mem_b), mib(mem_a)),
        (len(sim_b.tasks), len(sim_a.tasks)),
        (sim_b.launches, sim_a.launches),
    ]
    for r, (b, a) in zip(rows, values):
        r["before/after"] = _ratio(b, a)
    if with_max_batch:
        b = largest_batch(inference_at(builder, 0, precision, target), target)
        a = largest_batch(inference_at(builder, 3, precision, target), target)
        rows.append(row("largest batch that fits", b, a, "{:.0f}", _ratio(b, a)))
    return rows
