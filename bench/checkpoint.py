"""The checkpointing trade-off: per model and policy, the training step's planned peak memory, the
work recomputed (as a fraction of one forward), and the modeled step time, in one run.

    python -m bench.checkpoint [--models resnet50_b32,bert_base_b8] [--policies none,sqrt,budgetsqrt,budget50,...]
                               [--target ascend910b] [--time-limit 10]

The step is `add-loss, autodiff, checkpoint{policy=P}, apply-optimizer{kind=sgd}`, then
`ge-optimize{level=3}, lower-to-tasks, plan-memory, lower-to-streams{streams=2}`, simulated on the
target (timing only). ResNet-50 at batch 32 (BatchNorm in training mode, softmax cross-entropy on
the logits), BERT-base at batch 8, sequence 128 (mean-squared error on the last hidden state).
Recomputed work is counted as the device model counts it: Cube MACs, and Vector element-operations
(transcendental ones included), of the ops checkpoint adds, over those of the forward alone.
The peak is the whole step's plan (activations, gradients, optimizer temporaries; weights are
apart, as plan-memory reports them). `budgetP` is policy=budget with budget_mib at P% of none's
stashed-activation peak (checkpoint_budget.py's model), `budgetsqrt` at sqrt's; "stash MiB" is that
model's peak for the kept set each policy chose, "solver" how the budget was chosen (milp: proven
optimal; heuristic: timed out).
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable

import onnx
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException

from ge.frontend import models
from ge.frontend.onnx_importer import import_model
from ge.ge_dialects import ge
from ge.ge_dialects.ge.target_attr import module_target
from ge.ge_dialects.ge.weights import attach_weights
from ge.interpreter.runner import main_function
from ge.interpreter.stream_executor import memory_figures, simulate_module
from ge.passes import remarks
from ge.passes.checkpoint import always_kept, split_at_seed, stashed_values
from ge.passes.checkpoint_budget import MIB, Problem, build_problem, evaluate, vector_weight
from ge.passes.pipeline import parse_passes
from ge.target import DEFAULT_TARGET, load_target

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


def stash_problem(module: ModuleOp) -> tuple[Problem, set]:
    """The checkpoint choice's problem (before the rewrite) and the backward ops."""
    fn = main_function(module)
    forward, backward = split_at_seed(fn)
    always = always_kept(fn, forward)
    stash = [v for v in stashed_values(forward, backward) if v not in always]
    target = load_target(module_target(module) or DEFAULT_TARGET)
    return build_problem(forward, backward, always, stash, vector_weight(target)), set(backward)


def checkpoint_options(policy: str, problem: Problem) -> str:
    """`budgetP`: budget_mib at P% of none's stashed peak; `budgetsqrt`: at sqrt's stashed peak."""
    if not policy.startswith("budget"):
        return f"policy={policy}"
    n = len(problem.stash)
    if policy == "budgetsqrt":
        step = math.ceil(math.sqrt(n))
        budget = evaluate(problem, [(i + 1) % step == 0 for i in range(n)]).peak_bytes
    else:
        budget = float(policy[len("budget") :]) / 100 * evaluate(problem, [True] * n).peak_bytes
    return f"policy=budget budget_mib={budget / MIB:.6f}"


def measure(name: str, policy: str, target_name: str, time_limit: float) -> dict[str, object]:
    build, loss = MODELS[name]
    module, weights = import_model(build(), training=True)
    attach_weights(module, weights)
    apply(module, loss)
    forward_macs, forward_vector = work(module)
    apply(module, "autodiff")
    before = work(module)
    problem, backward = stash_problem(module)
    start = time.perf_counter()
    try:
        with remarks.collected() as seen:
            apply(module, f"checkpoint{{{checkpoint_options(policy, problem)} time_limit_s={time_limit}}}")
    except DiagnosticException as e:
        return {"model": name, "policy": policy, "stash MiB": str(e)}
    choose_s = time.perf_counter() - start
    solver = "-" if not policy.startswith("budget") else "heuristic" if seen else "milp"
    kept = [any(u.operation in backward for u in v.uses) for v in problem.stash]
    stash_peak = evaluate(problem, kept).peak_bytes
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
        "stash MiB": f"{stash_peak / MIB:.1f}",
        "solver": solver,
        "checkpoint s": f"{choose_s:.1f}",
        "peak MiB": f"{figures.pool / 2**20:.1f}",
        "lower bound MiB": f"{figures.lower_bound / 2**20:.1f}",
        "recompute MACs / fwd": f"{(after[0] - before[0]) / max(forward_macs, 1):.3f}",
        "recompute vector / fwd": f"{(after[1] - before[1]) / max(forward_vector, 1):.3f}",
        "step us": f"{result.latency * 1e6:.0f}",
        "lower+plan s": f"{compile_s:.1f}",
    }


def table(rows: list[dict[str, object]]) -> str:
    keys = list(max(rows, key=len))
    widths = {k: max(len(k), *(len(str(r.get(k, ""))) for r in rows)) for k in keys}
    lines = [" | ".join(k.ljust(widths[k]) for k in keys), "-|-".join("-" * widths[k] for k in keys)]
    lines += [" | ".join(str(r.get(k, "")).ljust(widths[k]) for k in keys) for r in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.checkpoint", description=__doc__.split("\n")[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--policies", default="none,layer,sqrt,budgetsqrt,budget50,budget25")
    parser.add_argument("--target", default="ascend910b")
    parser.add_argument("--time-limit", type=float, default=10.0, help="policy=budget's MILP time limit (s)")
    args = parser.parse_args()
    rows = [
        measure(m, p, args.target, args.time_limit) for m in args.models.split(",") for p in args.policies.split(",")
    ]
    print(f"target {args.target}; numpy threads as the machine gives them (single process)")
    print(table(rows))


if __name__ == "__main__":
    main()
