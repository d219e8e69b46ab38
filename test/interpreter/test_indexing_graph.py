"""A graph of all eight indexing ops (MatMul -> Trilu -> Tile -> GatherElements, GatherND ->
ScatterElements -> ScatterND, OneHot, EyeLike) through the whole pipeline: imported against
onnxruntime, at O3 and over the arena on two streams in random orders against the ge level, and
trained: autodiff's gradient of the weight against finite differences of the loss."""

from __future__ import annotations

import functools

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from ge.frontend.onnx_importer import import_model
from ge.ge_dialects import ge
from ge.ge_dialects.ge.weights import attach_weights, clone_with_weights
from ge.interpreter.arena_executor import run_in_arena
from ge.interpreter.runner import run
from ge.passes.ge_optimize import GeOptimizePass
from ge.passes.pipeline import apply_all, parse_passes
from ge.tools.common import make_context

ort = pytest.importorskip("onnxruntime")

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 6)).astype(np.float32)
LABELS = np.array([0, 1, 2, 3, 4, 5, 0, 1], np.int64)


@functools.cache
def model() -> onnx.ModelProto:
    rng = np.random.default_rng(1)
    constants = {
        "w": rng.standard_normal((6, 6)).astype(np.float32),
        "k": np.array(1, np.int64),
        "reps": np.array([2, 1], np.int64),
        "ie": rng.integers(-6, 6, (8, 3)),
        "ind": np.array([[3], [-1], [0], [5], [3]]),
        "ise": np.array([[0, 1, 2, 3, 4, 5], [7, 6, 5, 4, 3, 2]]),
        "s0": np.array([0]),
        "s2": np.array([2]),
        "s4": np.array([4]),
        "isnd": np.array([[1], [3]]),
        "oh_i": np.array([0, 1, 2, 3, 4, 5, -1, 9]),
        "depth": np.array(6),
        "vals": np.array([0.5, 2.0], np.float32),
    }
    node = helper.make_node
    nodes = [
        node("MatMul", ["x", "w"], ["y1"]),
        node("Trilu", ["y1", "k"], ["t"]),
        node("Tile", ["t", "reps"], ["tt"]),
        node("GatherElements", ["tt", "ie"], ["picked"], axis=1),
        node("GatherND", ["tt", "ind"], ["rows"]),
        node("Slice", ["rows", "s0", "s2"], ["u1"]),
        node("ScatterElements", ["tt", "ise", "u1"], ["se"], axis=0),
        node("Slice", ["rows", "s2", "s4"], ["u2"]),
        node("Relu", ["u2"], ["u2r"]),
        node("ScatterND", ["se", "isnd", "u2r"], ["snd"], reduction="add"),
        node("OneHot", ["oh_i", "depth", "vals"], ["oh"]),
        node("Mul", ["snd", "oh"], ["m"]),
        node("EyeLike", ["snd"], ["eye"], k=-1),
        node("Add", ["m", "eye"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "indexing",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 6])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in (("y", [8, 6]), ("picked", [8, 3]))],
        initializer=[numpy_helper.from_array(np.asarray(v), n) for n, v in constants.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


@functools.cache
def imported():
    module, weights = import_model(model())
    attach_weights(module, weights)
    return module, weights


def test_the_graph_matches_onnxruntime_at_every_level():
    module, _ = imported()
    want = dict(zip(("y", "picked"), ort.InferenceSession(model().SerializeToString()).run(None, {"x": X})))
    reference = run(module, {"x": X})
    for name, value in want.items():
        np.testing.assert_allclose(reference[name], value, rtol=1e-5, atol=1e-6, err_msg=name)
    optimized = clone_with_weights(module)
    GeOptimizePass(level=3).apply(make_context(), optimized)
    apply_all(make_context(), optimized, parse_passes("lower-to-tasks,plan-memory,lower-to-streams{streams=2}"))
    for seed in range(4):
        got = run_in_arena(optimized, {"x": X}, seed=seed)
        for name in want:
            np.testing.assert_allclose(got[name], reference[name], rtol=1e-5, atol=1e-6, err_msg=f"{name} seed {seed}")


def test_the_weights_gradient_matches_finite_differences():
    """Every indexing op but OneHot lies between w and the loss (OneHot's values are a parameter of
    their own); each element of w's gradient against central differences of the loss."""
    module, weights = imported()
    loss = clone_with_weights(module)
    apply_all(make_context(), loss, parse_passes("add-loss{output=y}"))
    step = clone_with_weights(loss)
    apply_all(make_context(), step, parse_passes("autodiff"))
    inputs = {"x": X, "labels": LABELS}
    grad = run(step, inputs)["w_grad"]
    eps = 1e-2

    def objective(w: np.ndarray) -> float:
        return float(run(loss, inputs, {**weights, "w": w})["loss"].reshape(()))

    numeric = np.zeros_like(grad)
    for i in np.ndindex(grad.shape):
        step_i = np.zeros_like(grad)
        step_i[i] = eps
        numeric[i] = (objective(weights["w"] + step_i) - objective(weights["w"] - step_i)) / (2 * eps)
    np.testing.assert_allclose(grad, numeric, rtol=1e-3, atol=2e-4)
    assert np.all(grad[:, 0] == 0)  # Trilu (k = 1) masks all of column 0: no gradient reaches it


def test_a_trilu_gradient_without_its_mask_is_caught(monkeypatch):
    """Mutation: Trilu passes dy through unmasked; the masked column then gets a gradient."""
    monkeypatch.setattr(ge.TriluOp, "vjp", lambda self, g, cotangents: [cotangents[0], None])
    with pytest.raises(AssertionError):
        test_the_weights_gradient_matches_finite_differences()
