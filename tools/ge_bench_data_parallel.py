"""ge-bench --data-parallel: the modeled data-parallel training step on 1 to 16 chips.

Each row is one replica's step, `add-loss, autodiff, data-parallel{devices=N ...},
apply-optimizer{kind=momentum}`, at ge-bench --training's per-chip batch (ResNet-50 256, BERT-Large
96, sequence 128), then ge-optimize O3 in the precision mode and the lowering to streams, sunk whole,
timed on one replica: the replicas run in lock step, so one replica's simulation plus the links is
the step (interpreter/device/cluster.py). The whole batch is N times the per-chip batch, imported
once per N at that size; only shapes are computed, weights are never read.

Figures: step time, samples/s over all chips, scaling efficiency (samples/s over N times one chip's),
the collectives' time and the share of it hidden behind computation. The bucket sweep repeats the
16-chip step for each bucket strategy (DDP-style sizes, one bucket, GE's default split), and the
sensitivity table re-times it at half and double each assumed constant of the target's `[cluster]`.
"""

from __future__ import annotations

import gc
import time
from dataclasses import dataclass, fields, replace

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException

from ge.frontend.onnx_importer import import_model
from ge.ge_dialects.ge.weights import attach_weights
from ge.interpreter.stream_executor import simulate_module
from ge.passes.pipeline import apply_all, parse_passes
from ge.target import Target, assumed_constants, load_target
from ge.target.spec import Cluster
from ge.tools.common import make_context
from ge.tools.ge_bench_training import OPTIMIZER, TRAINING_MODELS, lower_step

DP_MODELS = ("resnet50 b256", "bert_large b96")
DEVICES = (1, 2, 4, 8, 16)
BUCKETS = {
    "1 MiB": "bucket_mib=1",
    "4 MiB": "bucket_mib=4",
    "25 MiB": "bucket_mib=25",
    "100 MiB": "bucket_mib=100",
    "500 MiB": "bucket_mib=500",
    "one bucket": 'split="size:100"',
    "GE default (96.54%, 3.46%)": "",
}
SWEEP_DEVICES = 16
NO_IMPORT_LIMIT = 1 << 50
"""The whole batch is imported for its shapes only: no tensor is ever allocated."""


@dataclass(frozen=True)
class Step:
    module: ModuleOp
    batch: int
    devices: int
    seconds: float


def data_parallel_step(name: str, devices: int, target: str, precision: str, buckets: str = "") -> Step:
    """One replica's step of `devices`, lowered to streams (a DiagnosticException when it does not fit)."""
    builder, batch, loss = TRAINING_MODELS[name]
    module, weights = import_model(builder(batch * devices), max_tensor_bytes=NO_IMPORT_LIMIT, training=True)
    attach_weights(module, weights)
    start = time.perf_counter()
    split = f",data-parallel{{devices={devices} target={target} {buckets}}}" if devices > 1 else ""
    apply_all(make_context(), module, parse_passes(f"{loss},autodiff{split},{OPTIMIZER}"))
    lower_step(module, precision, target)
    return Step(module, batch, devices, time.perf_counter() - start)


def timed(step: Step, target: Target) -> dict[str, float]:
    result = simulate_module(step.module, target)
    gc.collect()  # a BERT-Large step's IR holds gigabytes in reference cycles: free the last one now
    return {
        "step": result.latency,
        "samples": step.batch * step.devices / result.latency,
        "comm": result.communication_s,
        "hidden": result.communication_hidden,
        "collectives": sum(1 for t in result.tasks if t.work.engine == "hccl"),
    }


def scaling_rows(name: str, target: str, precision: str) -> list[dict[str, str]]:
    """One row per chip count; efficiency against the one-chip row."""
    rows: list[dict[str, str]] = []
    one: float | None = None
    for devices in DEVICES:
        label = {"model": name, "target": target, "precision": precision, "chips": str(devices)}
        try:
            figures = timed(data_parallel_step(name, devices, target, precision), load_target(target))
        except DiagnosticException as e:
            rows.append({**label, "step (ms)": f"does not fit: {str(e).split(': ', 1)[-1]}"})
            continue
        one = figures["samples"] if devices == 1 else one
        rows.append(
            {
                **label,
                "step (ms)": f"{figures['step'] * 1e3:.4g}",
                "samples/s": f"{figures['samples']:.0f}",
                "scaling": f"{figures['samples'] / (devices * one):.3f}" if one else "-",
                "collectives": str(figures["collectives"]),
                "comm (ms)": f"{figures['comm'] * 1e3:.2f}",
                "hidden": f"{figures['hidden']:.0%}" if devices > 1 else "-",
            }
        )
    return rows


def bucket_rows(
    name: str, target: str, precision: str, one_chip: float | None
) -> tuple[list[dict[str, str]], Step | None]:
    """The sweep's rows, and the step with GE's default split (the sensitivity table re-times it)."""
    rows = []
    default = None
    for label, options in BUCKETS.items():
        step = None
        try:
            step = data_parallel_step(name, SWEEP_DEVICES, target, precision, options)
        except DiagnosticException as e:
            rows.append({"model": name, "target": target, "buckets": label, "step (ms)": f"does not fit: {e}"})
            continue
        default = step if not options else default
        f = timed(step, load_target(target))
        rows.append(
            {
                "model": name,
                "target": target,
                "buckets": label,
                "collectives": str(f["collectives"]),
                "step (ms)": f"{f['step'] * 1e3:.4g}",
                "scaling": f"{f['samples'] / (SWEEP_DEVICES * one_chip):.3f}" if one_chip else "-",
                "comm (ms)": f"{f['comm'] * 1e3:.2f}",
                "hidden": f"{f['hidden']:.0%}",
            }
        )
    return rows, default


def sensitivity_rows(name: str, target: str, step: Step) -> list[dict[str, str]]:
    """`step` (the 16-chip step) re-timed at half and double each assumed `[cluster]` constant."""
    spec = load_target(target)
    assumed = sorted({f.name for f in fields(Cluster)} & assumed_constants(target) - {"servers"})
    base = timed(step, spec)
    rows = []
    for key in assumed:
        out = {"model": name, "target": target, "constant": f"cluster.{key}"}
        for factor in (0.5, 2.0):
            varied = replace(spec, cluster=replace(spec.cluster, **{key: getattr(spec.cluster, key) * factor}))
            f = timed(step, varied)
            out[f"step x{factor:g} (ms)"] = f"{f['step'] * 1e3:.4g}"
            out[f"hidden x{factor:g}"] = f"{f['hidden']:.0%}"
        out["step as given (ms)"] = f"{base['step'] * 1e3:.4g}"
        rows.append(out)
    return rows
