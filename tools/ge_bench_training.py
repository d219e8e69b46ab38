"""ge-bench --training: the modeled training step of the models GE users train, per target.

A step is `add-loss, autodiff, apply-optimizer{kind=momentum}` on the model imported for training
(BatchNorm with batch statistics), then ge-optimize at O3 with the precision mode (GE's
allow_mix_precision by default: Cube ops in f16, master weights and optimizer state f32) and the
lowering to streams sunk whole (graph mode), as in the inference table. Timing only: the modeled
step, samples per second, unit utilization, the planned peak of the step's intermediates and the
device total (intermediates, weights, optimizer state and inputs/outputs as the device holds them:
the new state written in place over its variables, lowering/memory/state.py); the largest batch is
the largest whose device total fits the target's HBM.
"""

from __future__ import annotations

import time

import onnx
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException

from ge.frontend import models
from ge.frontend.onnx_importer import import_model
from ge.ge_dialects.ge.weights import attach_weights
from ge.ge_dialects.limits import max_tensor_bytes
from ge.interpreter.stream_executor import memory_figures, simulate_module
from ge.lowering.plan_memory import PlanMemoryPass
from ge.lowering.relax_reuse import RelaxReusePass
from ge.lowering.to_streams import LowerToStreamsPass
from ge.lowering.to_tasks import LowerToTasksPass
from ge.passes.ge_optimize import GeOptimizePass
from ge.passes.pipeline import apply_all, parse_passes
from ge.target import load_target
from ge.tools.common import make_context
from ge.tools.ge_bench_measure import Build, Builder, Compile, largest_batch


def bert_large(batch: int) -> onnx.ModelProto:
    """BERT-Large (24 layers, hidden 1024, 16 heads, intermediate 4096), sequence 128."""
    return models.bert_base(batch=batch, layers=24, hidden=1024, heads=16, intermediate=4096)


TRAINING_MODELS: dict[str, tuple[Builder, int, str]] = {
    "resnet50 b32": (lambda batch: models.resnet50(batch=batch, train=True), 32, "add-loss"),
    "resnet50 b256": (lambda batch: models.resnet50(batch=batch, train=True), 256, "add-loss"),
    "bert_large b32": (bert_large, 32, "add-loss{kind=mse}"),
    "bert_large b96": (bert_large, 96, "add-loss{kind=mse}"),
}
OPTIMIZER = "apply-optimizer{kind=momentum lr=0.01}"
STEP = f"autodiff,{OPTIMIZER}"
DEFAULT_PRECISION = "allow_mix_precision"


def training_build(model: onnx.ModelProto, loss: str, precision: str, target: str) -> Build:
    """The training step lowered to streams; `seconds` counts everything after the import."""
    module, weights = import_model(model, max_tensor_bytes=max_tensor_bytes(), training=True)
    attach_weights(module, weights)
    start = time.perf_counter()
    apply_all(make_context(), module, parse_passes(f"{loss},{STEP}"))
    lower_step(module, precision, target)
    return Build(module, time.perf_counter() - start)


def lower_step(module: ModuleOp, precision: str, target: str) -> None:
    """A training step's graph at O3 in `precision`, lowered to streams and sunk whole."""
    GeOptimizePass(level=3, precision_mode=precision, target=target).apply(make_context(), module)
    lowering = [
        LowerToTasksPass(target=target),
        PlanMemoryPass(target=target),
        RelaxReusePass(target=target),
        LowerToStreamsPass(mode="graph", target=target),
    ]
    apply_all(make_context(), module, lowering)


def training_at(builder: Builder, loss: str, precision: str, target: str) -> Compile:
    return lambda batch: training_build(builder(batch), loss, precision, target).module


def step_row(name: str, module: ModuleOp, batch: int, target: str, seconds: float) -> dict[str, str]:
    result = simulate_module(module, load_target(target))
    memory = memory_figures(module)
    assert memory is not None, "plan-memory writes the memory figures"
    return {
        "model": name,
        "target": target,
        "step (us)": f"{result.latency * 1e6:.0f}",
        "samples/s": f"{batch / result.latency:.0f}",
        "cube util": f"{result.cube_util:.0%}",
        "vector util": f"{result.vector_util:.0%}",
        "HBM util": f"{result.hbm_util:.0%}",
        "peak MiB": f"{memory.pool / 2**20:.1f}",
        "peak / lower bound": f"{memory.pool / max(memory.lower_bound, 1):.3f}",
        "device MiB": f"{memory.device_total / 2**20:.1f}",
        "kernels": str(len(result.tasks)),
        "compile s": f"{seconds:.1f}",
    }


def training_row(name: str, target: str, precision: str, with_max_batch: bool) -> dict[str, str]:
    """The step's row; a step plan-memory refuses (more than the HBM) is a row saying so."""
    builder, batch, loss = TRAINING_MODELS[name]
    try:
        built = training_build(builder(batch), loss, precision, target)
    except DiagnosticException as e:
        return {"model": name, "target": target, "step (us)": f"does not fit: {str(e).split(': ', 1)[-1]}"}
    out = step_row(name, built.module, batch, target, built.seconds)
    if with_max_batch:
        out["max batch"] = str(largest_batch(training_at(builder, loss, precision, target), target))
    return out
