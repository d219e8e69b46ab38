"""The checkpointing trade-off: per model and policy, the training step's planned peak memory, the
work recomputed (as a fraction of one forward), and the modeled step time, in one run.

    python -m bench.checkpoint [--models resnet50,bert_base] [--policies none,layer,sqrt] [--target ascend910b]

The step is `add-loss, autodiff, checkpoint{policy=P}, apply-optimizer{kind=sgd}`, then
`ge-optimize{level=3}, lower-to-tasks, plan-memory, lower-to-streams{streams=2}`, simulated on the
target (timing only). ResNet-50 at batch 32 (BatchNorm in training mode, softmax cross-entropy on
the logits), BERT-base at batch 8, sequence 128 (mean-squared error on the last hidden state).
Recomputed work is counted as the device model counts it: Cube MACs, and Vector element-operations
(transcendental ones included), of the ops checkpoint adds, over those of the forward alone.
The peak is the whole step's plan (activations, gradients, optimizer temporaries; weights are
apart, as plan-memory reports them).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import onnx
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from ge.frontend import models
from ge.frontend.onnx_importer import import_model
from ge.ge_dialects import ge
from ge.ge_dialects.ge.weights import attach_weights
from ge.interpreter.stream_executor import memory_figures, simulate_module
from ge.passes.pipeline import parse_passes
from ge.target import load_target

MODELS: dict[str, tuple[Callable[[], onnx.ModelProto], str]] = {
    "resnet50_b32": (lambda: models.resnet50(batch=32, train=True), "add-loss"),
    "bert_base_b8": (lambda: models.bert_base(batch=8), "add-loss{kind=mse}"),
}
LOWER = "ge-optimize{level=3},lower-to-tasks,plan-memory,lower-to-streams{streams=2}"


def work(module: ModuleOp) -> tuple[int, int]:
    """(Cube MACs, Vector element-operations) of every ge op of the module."""
    macs = vector = 0
    for op in module.walk():
        if isinstance(op, ge.GeOp):
            macs += op.macs()
            vector += op.vector_elements() + op.transcendental_elements()
    return macs, vector


def apply(module: ModuleOp, pipeline: str) -> None:
    for p in parse_passes(pipeline):
        p.apply(Context(), module)


def measure(name: str, policy: str, target_name: str) -> dict[str, object]:
    build, loss = MODELS[name]
    module, weights = import_model(build(), training=True)
    attach_weights(module, weights)
    apply(module, loss)
    forward_macs, forward_vector = work(module)
    apply(module, "autodiff")
    before = work(module)
    apply(module, f"checkpoint{{policy={policy}}}")
    after = work(module)
    start = time.perf_counter()
    apply(module, f"apply-optimizer{{kind=sgd lr=0.01}},{LOWER}")
    compile_s = time.perf_counter() - start
    figures = memory_figures(module)
    assert figures is not None
    result = simulate_module(module, load_target(target_name))
    return {
        "model": name,
        "policy": policy,
        "peak MiB": f"{figures.pool / 2**20:.1f}",
        "lower bound MiB": f"{figures.lower_bound / 2**20:.1f}",
        "recompute MACs / fwd": f"{(after[0] - before[0]) / max(forward_macs, 1):.3f}",
        "recompute vector / fwd": f"{(after[1] - before[1]) / max(forward_vector, 1):.3f}",
        "step us": f"{result.latency * 1e6:.0f}",
        "lower+plan s": f"{compile_s:.1f}",
    }


def table(rows: list[dict[str, object]]) -> str:
    keys = list(rows[0])
    widths = {k: max(len(k), *(len(str(r[k])) for r in rows)) for k in keys}
    lines = [" | ".join(k.ljust(widths[k]) for k in keys), "-|-".join("-" * widths[k] for k in keys)]
    lines += [" | ".join(str(r[k]).ljust(widths[k]) for k in keys) for r in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.checkpoint", description=__doc__.split("\n")[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--policies", default="none,layer,sqrt")
    parser.add_argument("--target", default="ascend910b")
    args = parser.parse_args()
    rows = [measure(m, p, args.target) for m in args.models.split(",") for p in args.policies.split(",")]
    print(f"target {args.target}; numpy threads as the machine gives them (single process)")
    print(table(rows))


if __name__ == "__main__":
    main()
