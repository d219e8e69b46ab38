"""`autodiff` on whole models: the gradients it adds agree with central finite differences of the
loss over every weight element (float64 models, so the reference is exact to ~1e-9), on a small
MLP and a small CNN with BatchNormalization in training mode (batch statistics)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.context import Context

from ge.frontend.onnx_importer import import_model
from ge.ge_dialects import ge
from ge.ge_dialects.ge.weights import attach_weights
from ge.interpreter.runner import main_function, output_names, run
from ge.passes.autodiff import AutodiffPass

D = TensorProto.DOUBLE


def _model(nodes, inputs, outputs, weights: dict[str, np.ndarray]) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs],
        [numpy_helper.from_array(a, k) for k, a in weights.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _squared_error(y: str, t: str) -> list:
    return [
        helper.make_node("Sub", [y, t], ["diff"]),
        helper.make_node("Mul", ["diff", "diff"], ["sq"]),
        helper.make_node("ReduceMean", ["sq"], ["loss"], keepdims=0),
    ]


def mlp(rng) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    w = {
        "fc1.weight": rng.standard_normal((5, 6)),
        "fc1.bias": rng.standard_normal(6),
        "fc2.weight": rng.standard_normal((3, 6)),
        "fc2.bias": rng.standard_normal(3),
    }
    nodes = [
        helper.make_node("Gemm", ["x", "fc1.weight", "fc1.bias"], ["h"]),
        helper.make_node("Tanh", ["h"], ["a"]),
        helper.make_node("Gemm", ["a", "fc2.weight", "fc2.bias"], ["y"], transB=1, alpha=0.5),
        *_squared_error("y", "t"),
    ]
    inputs = {"x": rng.standard_normal((4, 5)), "t": rng.standard_normal((4, 3))}
    model = _model(nodes, [("x", D, [4, 5]), ("t", D, [4, 3])], [("y", D, [4, 3]), ("loss", D, [])], w)
    return model, inputs


def cnn(rng) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    w = {
        "conv.weight": rng.standard_normal((4, 2, 3, 3)) * 0.5,
        "conv.bias": rng.standard_normal(4),
        "bn.weight": rng.uniform(0.5, 1.5, 4),
        "bn.bias": rng.standard_normal(4),
        "bn.running_mean": np.zeros(4),
        "bn.running_var": np.ones(4),
        "fc.weight": rng.standard_normal((3, 4)),
        "fc.bias": rng.standard_normal(3),
    }
    nodes = [
        helper.make_node("Conv", ["x", "conv.weight", "conv.bias"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node(
            "BatchNormalization",
            ["c", "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var"],
            ["b", "new_mean", "new_var"],
            training_mode=1,
        ),
        helper.make_node("Relu", ["b"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["p"], ["gp"]),
        helper.make_node("Flatten", ["gp"], ["f"]),
        helper.make_node("Gemm", ["f", "fc.weight", "fc.bias"], ["y"], transB=1),
        *_squared_error("y", "t"),
    ]
    inputs = {"x": rng.standard_normal((3, 2, 8, 8)), "t": rng.standard_normal((3, 3))}
    outputs = [("y", D, [3, 3]), ("loss", D, [])]
    return _model(nodes, [("x", D, [3, 2, 8, 8]), ("t", D, [3, 3])], outputs, w), inputs


def differentiate(model: onnx.ModelProto, **options):
    module, weights = import_model(model)
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
    return float(np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-12))


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
    plain, _ = import_model(model)
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
