"""ge.col2im (ONNX Col2Im) against onnxruntime on the backend cases' configurations with constant
image and block shapes (the cases give them as graph inputs, so the result has no static dims
there), and its refusals."""

from __future__ import annotations

import numpy as np
import pytest
from onnx_oracle import compare_with_onnxruntime, node_model

from ge.frontend.onnx_importer import import_model
from ge.frontend.onnx_ops import OnnxImportError

RNG = np.random.default_rng(5)


def col2im_model(x, image, block, **attrs):
    inputs = {"x": x, "image": np.asarray(image, np.int64), "block": np.asarray(block, np.int64)}
    model = node_model("Col2Im", inputs, 1, constants=("image", "block"), **attrs)
    model.opset_import[0].version = 18
    return model


@pytest.mark.parametrize(
    "shape, image, block, attrs",
    [
        ((1, 5, 5), [5, 5], [1, 5], {}),
        ((2, 18, 4), [5, 5], [3, 3], {"strides": [2, 2]}),  # two channels
        ((1, 5, 15), [5, 5], [1, 5], {"pads": [0, 1, 0, 1]}),
        ((1, 4, 5), [6, 6], [2, 2], {"dilations": [1, 5]}),
        ((1, 10, 12), [3, 4, 5], [1, 1, 5], {}),  # 3 spatial dims
        ((1, 12, 6), [4, 5], [2, 3], {"strides": [2, 1], "pads": [1, 0, 1, 0], "dilations": [2, 1]}),
    ],
)
def test_col2im_equals_onnxruntime(shape, image, block, attrs):
    x = RNG.standard_normal(shape).astype(np.float32)
    compare_with_onnxruntime(col2im_model(x, image, block, **attrs), {"x": x}, 1e-6, 1e-6)


@pytest.mark.mutation
def test_mutation_a_grid_without_the_pads_is_caught(monkeypatch):
    """Block positions counted without the padding: the input's L no longer fits, refused."""
    from ge.ge_dialects.ge import col2im

    real = col2im.block_grid
    monkeypatch.setattr(col2im, "block_grid", lambda image, block, s, p, d: real(image, block, s, [0] * len(p), d))
    with pytest.raises(OnnxImportError, match="must be the 5 block positions"):
        test_col2im_equals_onnxruntime((1, 5, 15), [5, 5], [1, 5], {"pads": [0, 1, 0, 1]})


@pytest.mark.parametrize(
    "shape, image, block, message",
    [
        ((1, 5, 6), [5, 5], [1, 5], r"input dim 2 \(6\) must be the 5 block positions \[5, 1\]"),
        ((1, 4, 5), [5, 5], [1, 5], r"input dim 1 \(4\) is not a multiple of the block's 5 elements"),
        ((1, 5, 5), [5, 5], [1, 5, 1], r"must name the same dims"),
        ((1, 9, 1), [2, 2], [3, 3], r"block_shape \[3, 3\] does not fit image_shape \[2, 2\]"),
    ],
)
def test_bad_shapes_are_refused_in_one_line(shape, image, block, message):
    with pytest.raises(OnnxImportError, match=message):
        import_model(col2im_model(np.zeros(shape, np.float32), image, block))


def test_shapes_known_only_at_run_time_are_refused():
    x = np.zeros((1, 5, 5), np.float32)
    model = node_model("Col2Im", {"x": x, "image": np.array([5, 5]), "block": np.array([1, 5])}, 1)
    model.opset_import[0].version = 18
    with pytest.raises(OnnxImportError, match="image_shape and block_shape must be constants"):
        import_model(model)


def _lowered_outputs(model, x):
    from ge.ge_dialects.ge.weights import attach_weights
    from ge.interpreter.runner import run
    from ge.passes.pipeline import apply_all, parse_passes
    from ge.tools.common import make_context

    module, weights = import_model(model)
    attach_weights(module, weights)
    want = run(module, {"x": x})
    apply_all(make_context(), module, parse_passes("lower-to-tasks,plan-memory,lower-to-streams"))
    return run(module, {"x": x}), want


def test_lowered_to_streams_keeps_its_outputs():
    """Its shapes are immediates of its task (IMMEDIATE_OPERANDS): the stream level runs it."""
    x = RNG.standard_normal((2, 18, 4)).astype(np.float32)
    got, want = _lowered_outputs(col2im_model(x, [5, 5], [3, 3], strides=[2, 2]), x)
    np.testing.assert_array_equal(got["out0"], want["out0"])


@pytest.mark.mutation
def test_mutation_shapes_left_outside_the_task_are_caught(monkeypatch):
    from ge.ge_dialects import ge

    monkeypatch.setattr(ge.Col2ImOp, "IMMEDIATE_OPERANDS", ())
    x = RNG.standard_normal((2, 18, 4)).astype(np.float32)
    with pytest.raises(Exception, match="must be constants"):
        _lowered_outputs(col2im_model(x, [5, 5], [3, 3], strides=[2, 2]), x)
