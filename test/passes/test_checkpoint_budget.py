"""`checkpoint{policy=budget budget_mib=N}`: the MILP's choice is optimal for its model (brute force on
small graphs), its model matches the rewritten graph, the peak fits the budget, gradients are
bit-equal to policy=none's, it beats sqrt, times out into the heuristic with a remark; its errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from test_checkpoint import _op_count, _planned_peak, _step
from training_models import cnn, deep_mlp, mlp
from xdsl.context import Context
from xdsl.utils.exceptions import DiagnosticException

from ge.interpreter.runner import main_function, run
from ge.passes import remarks
from ge.passes.checkpoint import RECOMPUTE_ATTR, CheckpointPass, always_kept, split_at_seed, stashed_values
from ge.passes.checkpoint_budget import (
    MIB,
    Problem,
    _Program,
    build_problem,
    evaluate,
    op_work,
    solve_budget,
    solve_min_peak,
    value_bytes,
    vector_weight,
)
from ge.passes.pipeline import parse_passes
from ge.target import DEFAULT_TARGET, load_target


def _problem(module) -> Problem:
    fn = main_function(module)
    forward, backward = split_at_seed(fn)
    always = always_kept(fn, forward)
    stash = [v for v in stashed_values(forward, backward) if v not in always]
    return build_problem(forward, backward, always, stash, vector_weight(load_target(DEFAULT_TARGET)))


def _full_peak(p: Problem) -> float:
    return evaluate(p, [True] * len(p.stash)).peak_bytes


def _sqrt_plan(p: Problem):
    step = int(np.ceil(np.sqrt(len(p.stash))))
    return evaluate(p, [(i + 1) % step == 0 for i in range(len(p.stash))])


def _measured(module, problem: Problem, backward: set) -> tuple[float, float]:
    """(peak bytes, recomputed work) of the REWRITTEN graph: kept stashed values from the forward to their
    last backward reader, copies the backward reads from their definition to their last use, summed at each
    backward op (`backward`: the original backward ops); the work of every op marked ge.recompute.
    Independent of the model's simulation."""
    ops = list(main_function(module).body.block.ops)
    pos = {o: i for i, o in enumerate(ops)}
    is_copy = {o: RECOMPUTE_ATTR in o.attributes for o in ops}
    spans = []
    for v in problem.stash:
        readers = [pos[u.operation] for u in v.uses if u.operation in backward]
        if readers:
            spans.append((-1, max(readers), v))
    for o in ops:
        if is_copy[o]:
            for r in o.results:
                users = [u.operation for u in r.uses]
                if any(not is_copy[u] for u in users):
                    spans.append((pos[o], max(pos[u] for u in users), r))
    peak = 0.0
    for b in sorted(pos[o] for o in backward):
        peak = max(peak, sum(value_bytes(v) for s, e, v in spans if s < b <= e))
    work = sum(op_work(o, vector_weight(load_target(DEFAULT_TARGET))) for o in ops if is_copy[o])
    return peak, work


def _backward_set(module):
    return set(split_at_seed(main_function(module))[1])


@pytest.mark.parametrize(
    ("build", "kwargs"), [(deep_mlp, {"depth": 6}), (deep_mlp, {"depth": 8, "batch": 8}), (cnn, {}), (mlp, {})]
)
def test_milp_optimum_equals_brute_force(build, kwargs):
    """Every kept set of the stash enumerated; for each distinct peak as the budget, the MILP's work is the
    least work of any set that fits, and its own peak fits."""
    module, _ = _step(build, **kwargs)
    p = _problem(module)
    plans = [evaluate(p, keep) for keep in itertools.product([False, True], repeat=len(p.stash))]
    assert 2 <= len(p.stash) <= 10
    for budget in sorted({plan.peak_bytes for plan in plans}):
        best = min(plan.work for plan in plans if plan.peak_bytes <= budget)
        outcome = solve_budget(p, budget, time_limit=10)
        assert outcome.exact and outcome.plan is not None
        assert outcome.plan.peak_bytes <= budget
        assert outcome.plan.work == pytest.approx(best, rel=1e-9, abs=1e-6)
    smallest = min(plan.peak_bytes for plan in plans)
    assert solve_min_peak(p, _Program(p), 10) == (smallest, True)
    below = solve_budget(p, smallest - 1, time_limit=10)
    assert below.plan is None and below.smallest_peak_bytes == smallest and below.smallest_proven


def _budget_step(build, fraction: float, **kwargs):
    module, inputs = _step(build, **kwargs)
    p = _problem(module)
    budget = fraction * _full_peak(p)
    return module, inputs, p, budget


@pytest.mark.parametrize(("build", "fraction"), [(deep_mlp, 0.5), (deep_mlp, 0.75), (cnn, 0.8)])
def test_budget_changes_no_gradient_and_its_model_matches_the_rewritten_graph(build, fraction):
    kwargs = {"dtype": np.float32} if build is cnn else {}
    module, inputs, p, budget = _budget_step(build, fraction, **kwargs)
    plan = solve_budget(p, budget, 10).plan
    assert plan is not None
    before = run(module, inputs)
    backward = _backward_set(module)
    CheckpointPass(policy="budget", budget_mib=budget / MIB).apply(Context(), module)
    module.verify()
    after = run(module, inputs)
    for name, want in before.items():
        np.testing.assert_array_equal(after[name], want, err_msg=name)
    peak, work = _measured(module, p, backward)
    assert peak == plan.peak_bytes <= budget
    assert work == pytest.approx(plan.work)
    assert _op_count(module) > len(p.ops)  # something was recomputed


def test_budget_recomputes_no_more_than_sqrt_at_no_higher_peak():
    module, _, p, _ = _budget_step(deep_mlp, 1.0, depth=16)
    sqrt = _sqrt_plan(p)
    plan = solve_budget(p, sqrt.peak_bytes, 10).plan
    assert plan is not None
    assert plan.peak_bytes <= sqrt.peak_bytes and plan.work <= sqrt.work
    sqrt_module, _ = _step(deep_mlp, depth=16)
    sqrt_problem, sqrt_backward, backward = _problem(sqrt_module), _backward_set(sqrt_module), _backward_set(module)
    CheckpointPass(policy="sqrt").apply(Context(), sqrt_module)
    CheckpointPass(policy="budget", budget_mib=sqrt.peak_bytes / MIB).apply(Context(), module)
    sqrt_peak, sqrt_work = _measured(sqrt_module, sqrt_problem, sqrt_backward)
    peak, work = _measured(module, p, backward)
    assert (sqrt_peak, sqrt_work) == (sqrt.peak_bytes, pytest.approx(sqrt.work))
    assert peak <= sqrt_peak and work <= sqrt_work


def _tall(policy: str, budget_mib: float | None = None):
    """16 layers of width 32 at batch 512 (as test_checkpoint's planned-peak test)."""
    module, _ = _step(deep_mlp, depth=16, width=32, batch=512)
    if policy != "none":
        CheckpointPass(policy=policy, budget_mib=budget_mib).apply(Context(), module)
    return module


def test_plan_memorys_peak_follows_the_budget_through_o3():
    """plan-memory's pool (the whole step after ge-optimize{level=3}: gradients and temporaries too) falls
    with the budget, and exceeds the model's stashed peak by no more than it does without checkpointing
    plus two activations (the copies of values the backward does not read, which the model leaves out).
    16 layers of width 32 at batch 512: 1.25 MB at none, 0.96 / 0.70 / 0.54 MB at 75 / 50 / 30 %."""
    module, _ = _step(deep_mlp, depth=16, width=32, batch=512)
    p = _problem(module)
    full = _full_peak(p)
    none_pool = _planned_peak(_tall("none"))
    pools = []
    for fraction in (0.75, 0.5, 0.3):
        plan = solve_budget(p, fraction * full, 10).plan
        assert plan is not None and plan.peak_bytes <= fraction * full
        pool = _planned_peak(_tall("budget", fraction * full / MIB))
        assert pool - plan.peak_bytes <= none_pool - full + 2 * p.nbytes.max()
        pools.append(pool)
    assert none_pool > pools[0] > pools[1] > pools[2]


def test_the_timeout_falls_back_to_the_heuristic_with_a_remark():
    module, inputs, p, budget = _budget_step(deep_mlp, 0.5, depth=16)
    before = run(module, inputs)
    backward = _backward_set(module)
    with remarks.collected() as seen:
        CheckpointPass(policy="budget", budget_mib=budget / MIB, time_limit_s=1e-9).apply(Context(), module)
    assert any("the MILP found no optimum" in r.reason and r.kind == "note" for r in seen), seen
    peak, _ = _measured(module, p, backward)
    assert peak <= budget
    after = run(module, inputs)
    for name, want in before.items():
        np.testing.assert_array_equal(after[name], want, err_msg=name)


def test_without_the_memory_rows_the_budget_is_exceeded():
    """Mutation: drop the memory constraints from the MILP; it keeps everything (no recompute) and the
    peak is over the budget."""
    _, _, p, budget = _budget_step(deep_mlp, 0.5)
    exact = solve_budget(p, budget, 10).plan
    mutant = solve_budget(p, budget, 10, drop_memory=True).plan
    assert exact is not None and mutant is not None
    assert exact.peak_bytes <= budget < mutant.peak_bytes


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"policy": "budget"}, "policy=budget needs budget_mib=N, a positive number of MiB"),
        ({"policy": "budget", "budget_mib": 0.0}, "policy=budget needs budget_mib=N, a positive number of MiB"),
        ({"policy": "budget", "budget_mib": -2.0}, "policy=budget needs budget_mib=N, a positive number of MiB"),
        ({"policy": "sqrt", "budget_mib": 1.0}, "budget_mib=... goes with policy=budget, not policy=sqrt"),
        ({"policy": "budget", "budget_mib": 1.0, "time_limit_s": 0.0}, "time_limit_s=0 must be positive"),
    ],
)
def test_bad_budget_options_are_one_line_errors(options, message):
    module, _ = _step(deep_mlp)
    with pytest.raises(DiagnosticException, match=f"^checkpoint: {message}$"):
        CheckpointPass(**options).apply(Context(), module)


def test_a_budget_below_the_smallest_peak_is_refused_and_nothing_changes():
    module, _ = _step(deep_mlp)
    p = _problem(module)
    smallest, proven = solve_min_peak(p, _Program(p), 10)
    assert proven
    count = _op_count(module)
    too_low = 0.9 * smallest / MIB
    expected = (
        rf"^checkpoint: budget_mib={too_low:g} is below the smallest peak any checkpointing reaches "
        rf"\({smallest / MIB:.3f} MiB\)$"
    )
    with pytest.raises(DiagnosticException, match=expected):
        CheckpointPass(policy="budget", budget_mib=too_low).apply(Context(), module)
    assert _op_count(module) == count
    CheckpointPass(policy="budget", budget_mib=smallest / MIB).apply(Context(), module)  # exactly at it: fits
    assert _op_count(module) > count


def test_an_unproven_smallest_peak_says_so():
    """With no time to prove infeasibility, the error names the least peak found, not the smallest."""
    module, _ = _step(deep_mlp, depth=16)
    tiny = 1e-6
    with pytest.raises(DiagnosticException, match=r"^checkpoint: budget_mib=1e-06: no kept set found under it in "):
        CheckpointPass(policy="budget", budget_mib=tiny, time_limit_s=1e-9).apply(Context(), module)


@pytest.mark.parametrize("text", ["budget_mib=2 time_limit_s=5", "budget_mib=0.03"])
def test_the_options_parse_from_pipeline_text(text):
    """Whole and fractional MiB both parse (xDSL's option parser types `2` as an int)."""
    (parsed,) = parse_passes(f"checkpoint{{policy=budget {text}}}")
    assert parsed.policy == "budget" and parsed.budget_mib == float(text.split()[0].split("=")[1])
    module, inputs = _step(deep_mlp)
    before = run(module, inputs)
    parsed.apply(Context(), module)
    np.testing.assert_array_equal(run(module, inputs)["layers.0.fc.weight_grad"], before["layers.0.fc.weight_grad"])
