"""`autodiff` on whole models: the gradients it adds agree with central finite differences of the
loss over every weight element (float64 models, so the reference is exact to ~1e-9), on a small
MLP and a small CNN with BatchNormalization in training mode (batch statistics)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from training_models import cnn, lstm, mlp
from xdsl.context import Context

from ge.frontend.onnx_importer import import_model
from ge.ge_dialects import ge
from ge.ge_dialects.ge.weights import attach_weights
from ge.interpreter.runner import main_function, output_names, run
from ge.passes.autodiff import AutodiffPass


def differentiate(model: onnx.ModelProto, **options):
    module, weights = import_model(model, training=True)
    attach_weights(module, weights)
    AutodiffPass(**options).apply(Context(), module)
    module.verify()
    return module, dict(weights)


def finite_difference_gradient(module, inputs, weights, key: str, eps: float = 1e-6) -> np.ndarray:
    grad = np.zeros_like(weights[key])
    for index in np.ndindex(grad.shape):
        losses = []
        for sign in (1, -1):
            shifted = weights[key].copy()
            shifted[index] += sign * eps
            losses.append(float(run(module, inputs, {**weights, key: shifted})["loss"]))
        grad[index] = (losses[0] - losses[1]) / (2 * eps)
    return grad


def relative_error(got: np.ndarray, want: np.ndarray) -> float:
    return float(np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-6))  # a zero gradient (a bias before BN) too


@pytest.mark.parametrize("build", [mlp, cnn])
def test_whole_model_gradients_match_finite_differences(build):
    model, inputs = build(np.random.default_rng(0))
    module, weights = differentiate(model)
    out = run(module, inputs)
    trainable = sorted(k for k in weights if not k.startswith("bn.running"))
    assert sorted(n for n in out if n.endswith("_grad")) == [f"{k}_grad" for k in trainable]
    for key in trainable:
        want = finite_difference_gradient(module, inputs, weights, key)
        assert relative_error(out[f"{key}_grad"], want) < 1e-4, key


def test_a_whole_lstm_gets_the_gradients_of_its_unrolled_steps():
    """ge.lstm's gradient (one ge.lstm_grad) against autodiff through the same layer unrolled into
    plain ge ops, and against finite differences."""
    whole, inputs = lstm(np.random.default_rng(1))
    unrolled, _ = lstm(np.random.default_rng(1), activations=True)
    module, weights = differentiate(whole)
    assert [op.name for op in module.walk() if op.name.startswith("ge.lstm")] == ["ge.lstm", "ge.lstm_grad"]
    got = run(module, inputs)
    want = run(differentiate(unrolled)[0], inputs)
    for key in weights:
        assert relative_error(got[f"{key}_grad"], want[f"{key}_grad"]) < 1e-9, key
    fd = finite_difference_gradient(module, inputs, weights, "lstm.h0")
    assert relative_error(got["lstm.h0_grad"], fd) < 1e-6


def test_a_training_dropout_gets_its_mask_and_a_gradient():
    """The forward dropout had no mask result; autodiff asks for it (the gradient reads the mask the
    forward drew) and the gradients still match finite differences (the seeded mask is fixed)."""
    model, inputs = mlp(np.random.default_rng(2), dropout=0.5)
    module, weights = differentiate(model)
    assert "ge.dropout" in str(module) and "tensor<4x6xi1>" in str(module)
    out = run(module, inputs)
    want = finite_difference_gradient(module, inputs, weights, "fc1.weight")
    assert relative_error(out["fc1.weight_grad"], want) < 1e-4


def test_a_wrong_op_gradient_fails_the_whole_model_check(monkeypatch):
    """Mutation: Tanh's gradient drops its (1 - y^2) factor; the whole-model check catches it."""
    monkeypatch.setattr(ge.TanhOp, "vjp", lambda self, g, cts: [cts[0]])
    model, inputs = mlp(np.random.default_rng(0))
    module, weights = differentiate(model)
    out = run(module, inputs)
    want = finite_difference_gradient(module, inputs, weights, "fc1.weight")
    assert relative_error(out["fc1.weight_grad"], want) > 1e-2


def test_wrt_restricts_the_gradients_and_keeps_the_forward_outputs():
    model, inputs = mlp(np.random.default_rng(1))
    plain, _ = import_model(model, training=True)
    module, weights = differentiate(model, wrt="fc2.bias, fc1.weight")
    assert output_names(main_function(module)) == ["y", "loss", "fc2.bias_grad", "fc1.weight_grad"]
    attach_weights(plain, weights)
    before, after = run(plain, inputs), run(module, inputs)
    for name in ("y", "loss"):
        np.testing.assert_array_equal(before[name], after[name])


def test_backward_ops_carry_the_forward_names():
    model, _ = mlp(np.random.default_rng(0))
    module, _ = differentiate(model)
    names = {op.location.desc.data for op in main_function(module).walk() if hasattr(op.location, "desc")}
    assert any(n.endswith("/grad") for n in names)
