"""A training step (add-loss, autodiff, apply-optimizer{sgd}) on a small CNN with BatchNorm in training
mode: the loss falls over 20 steps at the ge level, and the step lowered to streams after
ge-optimize at every level, on 1, 2 and 4 streams, gives the same losses and parameters."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.context import Context

from ge.frontend.onnx_importer import import_model
from ge.ge_dialects.ge.weights import attach_weights, weights_of
from ge.interpreter.arena_executor import run_in_arena
from ge.interpreter.runner import run
from ge.passes.pipeline import parse_passes
from ge.tools.training_state import run_steps, state_outputs

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "passes"))
from training_models import cnn, deep_mlp

STEP = "add-loss{output=y},autodiff,apply-optimizer{kind=sgd lr=0.1}"
LABELS = np.array([0, 2, 1, 2], np.int64)


def _step(pipeline: str):
    model, inputs = cnn(np.random.default_rng(0), dtype=np.float32, batch=4, mse=False)
    module, weights = import_model(model, training=True)
    attach_weights(module, weights)
    for p in parse_passes(pipeline):
        p.apply(Context(), module)
    return module, {**inputs, "labels": LABELS}


def _train(module, inputs, steps: int, runner=run):
    losses: list[float] = []
    outputs, _ = run_steps(
        lambda w: runner(module, inputs, w),
        weights_of(module),
        state_outputs(module),
        steps,
        lambda _, out: losses.append(float(out["loss"])),
    )
    return losses, outputs


def test_the_loss_falls_over_20_steps():
    module, inputs = _step(STEP)
    losses, _ = _train(module, inputs, 20)
    assert all(b < a for a, b in zip(losses, losses[1:])), losses
    assert losses[-1] < 0.5 * losses[0]


@pytest.fixture(scope="module")
def reference():
    module, inputs = _step(STEP)
    return _train(module, inputs, 3)


@pytest.mark.parametrize("streams", [1, 2, 4])
@pytest.mark.parametrize("level", [0, 1, 2, 3])
def test_the_stream_level_step_trains_like_the_ge_level(reference, level, streams):
    lowered = f"{STEP},ge-optimize{{level={level}}},lower-to-tasks,plan-memory,lower-to-streams{{streams={streams}}}"
    module, inputs = _step(lowered)
    losses, outputs = _train(module, inputs, 3)
    want_losses, want = reference
    np.testing.assert_allclose(losses, want_losses, rtol=1e-5)
    for name, value in want.items():
        np.testing.assert_allclose(outputs[name], value, rtol=1e-5, atol=1e-6, err_msg=name)


def test_the_step_runs_in_the_planned_arena_with_a_random_schedule(reference):
    """Every intermediate at its planned offset, tasks in a random order the events allow: the
    state written by one step and read by the next survives the plan."""
    module, inputs = _step(f"{STEP},ge-optimize{{level=3}},lower-to-tasks,plan-memory,lower-to-streams{{streams=2}}")
    losses, outputs = _train(module, inputs, 3, lambda m, i, w: run_in_arena(m, i, w, 7))
    want_losses, want = reference
    np.testing.assert_allclose(losses, want_losses, rtol=1e-5)
    for name, value in want.items():
        np.testing.assert_allclose(outputs[name], value, rtol=1e-5, atol=1e-6, err_msg=name)


@st.composite
def training_configs(draw):
    return {
        "depth": draw(st.integers(1, 4)),
        "width": draw(st.sampled_from([4, 8, 16])),
        "batch": draw(st.sampled_from([2, 4, 8])),
        "policy": draw(st.sampled_from(["none", "sqrt"])),
        "level": draw(st.integers(0, 3)),
        "streams": draw(st.integers(1, 3)),
        "seed": draw(st.integers(0, 2**16)),
    }


@settings(max_examples=8, deadline=None)
@given(config=training_configs())
def test_planned_training_steps_keep_their_buffers_apart(config):
    """Random MLP training steps (with or without recompute) lowered and planned: run with every
    intermediate at its planned offset and the tasks in a random allowed order, two steps give the
    ge-level losses and parameters, so no two buffers alive together overlap."""
    pipeline = f"autodiff,checkpoint{{policy={config['policy']}}},apply-optimizer{{kind=momentum lr=0.05}}"
    lowered = (
        f"{pipeline},ge-optimize{{level={config['level']}}},lower-to-tasks,plan-memory,"
        f"lower-to-streams{{streams={config['streams']}}}"
    )

    def step(p):
        model, inputs = deep_mlp(
            np.random.default_rng(config["seed"]), depth=config["depth"], width=config["width"], batch=config["batch"]
        )
        module, weights = import_model(model, training=True)
        attach_weights(module, weights)
        for each in parse_passes(p):
            each.apply(Context(), module)
        return module, inputs

    module, inputs = step(pipeline)
    want_losses, want = _train(module, inputs, 2)
    module, inputs = step(lowered)
    losses, got = _train(module, inputs, 2, lambda m, i, w: run_in_arena(m, i, w, config["seed"]))
    np.testing.assert_allclose(losses, want_losses, rtol=1e-5)
    for name, value in want.items():
        np.testing.assert_allclose(got[name], value, rtol=1e-5, atol=1e-6, err_msg=name)


@pytest.mark.parametrize("kind", ["static", "dynamic"])
def test_loss_scaling_layouts_and_fusion_together_keep_the_step(reference, kind):
    """Loss scaling by a power of two is exact in f32, so the step with it, through O3 (backward
    layouts, variable formats, backward fusion) and two streams, equals the plain ge-level step:
    the branches that built these passes each tested alone, this is their meeting point."""
    scaled = STEP + f",loss-scale{{kind={kind} scale=1024}}"
    module, inputs = _step(f"{scaled},ge-optimize{{level=3}},lower-to-tasks,plan-memory,lower-to-streams{{streams=2}}")
    losses, outputs = _train(module, inputs, 3)
    want_losses, want = reference
    np.testing.assert_allclose(losses, want_losses, rtol=1e-5)
    for name, value in want.items():
        np.testing.assert_allclose(outputs[name], value, rtol=1e-5, atol=1e-6, err_msg=name)
