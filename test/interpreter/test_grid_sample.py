"""GridSample's kernel against onnxruntime: every mode, padding mode and corner alignment, with
grid points inside and well outside [-1, 1]."""

from __future__ import annotations

import numpy as np
import pytest
from onnx_oracle import compare_with_onnxruntime, node_model

from ge.interpreter.kernels import grid_sample

RNG = np.random.default_rng(5)


@pytest.mark.parametrize("mode", ["linear", "nearest", "cubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [0, 1])
def test_grid_sample_2d_equals_onnxruntime(mode, padding_mode, align_corners):
    x = RNG.standard_normal((2, 3, 5, 6)).astype(np.float32)
    grid = (RNG.uniform(-1.6, 1.6, (2, 4, 7, 2))).astype(np.float32)
    model = node_model(
        "GridSample", {"X": x, "grid": grid}, 1, mode=mode, padding_mode=padding_mode, align_corners=align_corners
    )
    compare_with_onnxruntime(model, {"X": x, "grid": grid}, 1e-5, 1e-5)


def test_opset_16_mode_names_are_read():
    x = RNG.standard_normal((1, 2, 4, 4)).astype(np.float32)
    grid = RNG.uniform(-1, 1, (1, 3, 3, 2)).astype(np.float32)
    model = node_model("GridSample", {"X": x, "grid": grid}, 1, mode="bicubic")
    model.opset_import[0].version = 16
    compare_with_onnxruntime(model, {"X": x, "grid": grid}, 1e-5, 1e-5)


# -- mutations -----------------------------------------------------------------------------------


def test_mutation_reflection_that_clamps_instead_is_caught(monkeypatch):
    monkeypatch.setattr(grid_sample, "_reflect", lambda x, low, high: np.clip(x, low, high))
    with pytest.raises(AssertionError):
        test_grid_sample_2d_equals_onnxruntime("linear", "reflection", 0)
