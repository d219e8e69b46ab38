"""sink-control-flow keeps the numbers: the lowering test's module (an If, a Loop whose condition
the body computes, a `for` loop) run with its control flow decided on the device equals the ge
level for both branches and several trip counts, the condition failing before the trip count
among them. Mutation: a loop taken for a `for` loop when its condition varies runs past the
iteration where the condition failed, and the outputs differ."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ge.interpreter.differential import relative_error
from ge.interpreter.runner import run
from ge.passes import sink_control_flow
from ge.passes.pipeline import apply_all, parse_passes
from ge.tools.common import make_context, parse_module

SOURCE = Path(__file__).parent.parent / "lowering" / "sink_control_flow.mlir"
SUNK = "partition-dynamic,sink-control-flow,lower-to-tasks,plan-memory,lower-to-streams"


def _module(passes: str = ""):
    module = parse_module(SOURCE.read_text(), str(SOURCE))
    if passes:
        apply_all(make_context(), module, parse_passes(passes))
    return module


@pytest.fixture(scope="module")
def levels():
    return _module(), _module(SUNK)


# The gate is sum(x) > 0 (then: relu, else: neg); the loop runs tanh while the sum of its result
# is positive. Positive and negative inputs run the loop n times; the last fails its condition at
# the first iteration (neg gives [5, -1, -1, -1.5], whose tanh sums to -1.4).
INPUTS = {
    "positive": np.array([0.5, 1.0, 2.0, 0.1], np.float32),
    "negative": np.array([-0.5, -1.0, -2.0, -0.1], np.float32),
    "condition fails": np.array([-5.0, 1.0, 1.0, 1.5], np.float32),
}


def _output(module, feeds) -> np.ndarray:
    (value,) = run(module, feeds).values()
    return value


@pytest.mark.parametrize("n", [0, 1, 5])
@pytest.mark.parametrize("case", INPUTS)
def test_the_device_decides_as_the_host_does(levels, case, n):
    graph, sunk = levels
    feeds = {"x": INPUTS[case], "n": np.array(n, np.int64)}
    assert relative_error(_output(graph, feeds), _output(sunk, feeds)) <= 1e-6


def test_mutation_a_varying_condition_taken_for_always_true_is_caught(levels, monkeypatch):
    graph, _ = levels
    monkeypatch.setattr(sink_control_flow, "always_true", lambda loop: True)
    mutant = _module(SUNK)
    feeds = {"x": INPUTS["condition fails"], "n": np.array(5, np.int64)}
    assert relative_error(_output(graph, feeds), _output(mutant, feeds)) > 1e-3
