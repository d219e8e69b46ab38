"""`checkpoint`: recomputing activations changes no gradient (bit-equal in f32 to policy=none), lowers
the planned peak, and says what it recomputes; its user errors."""

from __future__ import annotations

import numpy as np
import pytest
from training_models import cnn, deep_mlp, mlp
from xdsl.context import Context
from xdsl.utils.exceptions import DiagnosticException

from ge.frontend.onnx_importer import import_model
from ge.ge_dialects.ge.weights import attach_weights
from ge.interpreter.runner import main_function, run
from ge.interpreter.stream_executor import memory_figures
from ge.passes.autodiff import AutodiffPass
from ge.passes.checkpoint import RECOMPUTE_ATTR, CheckpointPass, layer_of
from ge.passes.pipeline import parse_passes


def _step(build, **kwargs):
    model, inputs = build(np.random.default_rng(5), **kwargs)
    module, weights = import_model(model, training=True)
    attach_weights(module, weights)
    AutodiffPass().apply(Context(), module)
    return module, inputs


def _op_count(module) -> int:
    return len(list(main_function(module).body.block.ops))


@pytest.mark.parametrize("policy", ["layer", "sqrt"])
@pytest.mark.parametrize("build", [mlp, cnn, deep_mlp])
def test_recompute_changes_no_gradient(build, policy):
    kwargs = {"dtype": np.float32} if build is not deep_mlp else {}
    module, inputs = _step(build, **kwargs)
    before = run(module, inputs)
    CheckpointPass(policy=policy).apply(Context(), module)
    module.verify()
    after = run(module, inputs)
    for name, want in before.items():
        np.testing.assert_array_equal(after[name], want, err_msg=name)


def test_sqrt_and_layer_recompute_and_none_does_not():
    module, _ = _step(deep_mlp)
    base = _op_count(module)
    CheckpointPass(policy="none").apply(Context(), module)
    assert _op_count(module) == base
    sqrt, _ = _step(deep_mlp)
    CheckpointPass(policy="sqrt").apply(Context(), sqrt)
    layer, _ = _step(deep_mlp)
    CheckpointPass(policy="layer").apply(Context(), layer)
    assert _op_count(sqrt) > base and _op_count(layer) > base


def _planned_peak(module) -> int:
    for p in parse_passes("ge-optimize{level=3},lower-to-tasks,plan-memory"):
        p.apply(Context(), module)
    figures = memory_figures(module)
    assert figures is not None
    return figures.pool


def _tall_mlp_step(policy: str | None):
    """16 layers of width 32 at batch 512: activations (64 KiB a layer) dwarf the weights (4 KiB)."""
    module, _ = _step(deep_mlp, depth=16, width=32, batch=512)
    if policy:
        CheckpointPass(policy=policy).apply(Context(), module)
    return module


def test_sqrt_checkpointing_lowers_the_planned_peak_through_o3():
    """Keeping every 5th of the stashed activations and recomputing the rest in the backward plans
    less than half the memory of keeping them all, after ge-optimize{level=3} (1.25 MB -> 0.52 MB)."""
    assert _planned_peak(_tall_mlp_step("sqrt")) < 0.5 * _planned_peak(_tall_mlp_step(None))


def test_without_the_recompute_mark_cse_undoes_the_checkpointing():
    """Mutation: strip ge.recompute from the copies; cse merges each with its original and the peak
    is back to no checkpointing's."""
    module = _tall_mlp_step("sqrt")
    for op in module.walk():
        op.attributes.pop(RECOMPUTE_ATTR, None)
    assert _planned_peak(module) == _planned_peak(_tall_mlp_step(None))


def test_nodes_keeps_the_named_outputs():
    module, inputs = _step(deep_mlp)
    before = run(module, inputs)
    CheckpointPass(policy="nodes", nodes="/layers.3/act/Tanh, Tanh").apply(Context(), module)
    after = run(module, inputs)
    np.testing.assert_array_equal(after["layers.0.fc.weight_grad"], before["layers.0.fc.weight_grad"])


@pytest.mark.parametrize(
    ("name", "layer"),
    [
        ("/layer1/layer1.0/conv1/Conv", "layer1/layer1.0"),
        ("/layer2/layer2.0/downsample/downsample.0/Conv", "layer2/layer2.0"),
        ("/encoder/layer.3/attention/self/query/MatMul", "encoder/layer.3"),
        ("/conv1/Conv", "conv1"),
        ("/Add", ""),
        (None, ""),
    ],
)
def test_layer_scopes(name, layer):
    assert layer_of(name) == layer


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"policy": "bogus"}, "unknown policy 'bogus'; expected one of none, layer, sqrt, nodes, budget"),
        ({"policy": "nodes"}, "nodes=... goes with policy=nodes, and policy=nodes needs nodes=..."),
        ({"policy": "sqrt", "nodes": "a"}, "nodes=... goes with policy=nodes, and policy=nodes needs nodes=..."),
        ({"policy": "nodes", "nodes": "/nope/Relu"}, "no forward node is named '/nope/Relu'"),
    ],
)
def test_bad_options_are_one_line_errors(options, message):
    module, _ = _step(deep_mlp)
    with pytest.raises(DiagnosticException, match=f"^checkpoint: {message}$"):
        CheckpointPass(**options).apply(Context(), module)


def test_a_graph_without_backward_is_refused():
    model, _ = deep_mlp(np.random.default_rng(0))
    module, _ = import_model(model, training=True)
    with pytest.raises(DiagnosticException, match="no backward part .* run checkpoint right after autodiff"):
        CheckpointPass(policy="sqrt").apply(Context(), module)
