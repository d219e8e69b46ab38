"""`accumulate-gradients`: K micro-batches in one launch give the full batch's gradients (a model
without batch statistics), the loss, and the per-sample outputs joined back; its user errors."""

from __future__ import annotations

import numpy as np
import pytest
from training_models import mlp
from xdsl.context import Context
from xdsl.utils.exceptions import DiagnosticException

from ge.frontend.onnx_importer import import_model
from ge.ge_dialects.ge.weights import attach_weights
from ge.interpreter.runner import run
from ge.passes.accumulate_gradients import AccumulateGradientsPass
from ge.passes.autodiff import AutodiffPass


def _forward(dtype=np.float64, batch=8):
    model, inputs = mlp(np.random.default_rng(3), dtype=dtype, batch=batch)
    module, weights = import_model(model, training=True)
    attach_weights(module, weights)
    return module, inputs


def _full_batch(dtype=np.float64):
    module, inputs = _forward(dtype)
    AutodiffPass().apply(Context(), module)
    return run(module, inputs)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_four_micro_batches_give_the_full_batch_gradient(dtype):
    full = _full_batch(dtype)
    module, inputs = _forward(dtype)
    AccumulateGradientsPass(micro_batches=4).apply(Context(), module)
    module.verify()
    accumulated = run(module, inputs)
    assert set(accumulated) == set(full)
    for name, want in full.items():
        err = np.linalg.norm(accumulated[name] - want) / max(np.linalg.norm(want), 1e-30)
        assert err < (1e-5 if dtype == np.float32 else 1e-12), name


def test_sum_reduction_adds_the_micro_batch_gradients():
    """With reduction=sum the gradients are added, not averaged: K times the mean's on a mean loss."""
    full = _full_batch()
    module, inputs = _forward()
    AccumulateGradientsPass(micro_batches=2, reduction="sum").apply(Context(), module)
    summed = run(module, inputs)
    np.testing.assert_allclose(summed["fc1.weight_grad"], 2 * full["fc1.weight_grad"], rtol=1e-12)


def test_frozen_leaves_a_parameter_without_its_accumulator():
    full = _full_batch()
    module, inputs = _forward()
    AccumulateGradientsPass(micro_batches=2, frozen="fc2.bias").apply(Context(), module)
    out = run(module, inputs)
    assert "fc2.bias_grad" not in out and {f"{k}_grad" for k in ("fc1.weight", "fc1.bias", "fc2.weight")} <= set(out)
    np.testing.assert_allclose(out["fc1.weight_grad"], full["fc1.weight_grad"], rtol=1e-12)


def test_the_micro_batches_are_unrolled_with_the_micro_batch_shape():
    module, _ = _forward()
    AccumulateGradientsPass(micro_batches=4).apply(Context(), module)
    text = str(module)
    assert text.count("ge.slice") == 2 * 4  # x and t, per micro-batch
    assert "tensor<2x5xf64>" in text and "tensor<8x5xf64>" in text


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"micro_batches": 3}, "the batch size 8 is not a multiple of micro_batches=3"),
        ({"micro_batches": 0}, "micro_batches must be at least 1, got 0"),
        ({"micro_batches": 2, "reduction": "max"}, "reduction must be one of mean, sum, got 'max'"),
    ],
)
def test_bad_options_are_one_line_errors(options, message):
    module, _ = _forward()
    with pytest.raises(DiagnosticException, match=f"^accumulate-gradients: {message}$"):
        AccumulateGradientsPass(**options).apply(Context(), module)


def test_a_graph_already_differentiated_is_refused():
    module, _ = _forward()
    AutodiffPass().apply(Context(), module)
    with pytest.raises(
        DiagnosticException, match="already has gradient outputs; accumulate-gradients runs instead of autodiff"
    ):
        AccumulateGradientsPass(micro_batches=2).apply(Context(), module)


def test_one_micro_batch_is_autodiff():
    full = _full_batch()
    module, inputs = _forward()
    AccumulateGradientsPass(micro_batches=1).apply(Context(), module)
    for name, value in run(module, inputs).items():
        np.testing.assert_allclose(value, full[name], rtol=1e-12, err_msg=name)
