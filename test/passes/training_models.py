"""Small training models built in code (ONNX), for the training passes' tests: an MLP and a CNN with
BatchNormalization in training mode, each with a mean-squared-error `loss` output, in float64 by
default so finite differences are exact to ~1e-9."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

Model = tuple[onnx.ModelProto, dict[str, np.ndarray]]


def _model(nodes, inputs: dict[str, np.ndarray], outputs: dict[str, list[int]], weights, dtype) -> Model:
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info(n, elem, a.shape) for n, a in inputs.items()],
        [helper.make_tensor_value_info(n, elem, s) for n, s in outputs.items()],
        [numpy_helper.from_array(np.asarray(a, dtype), k) for k, a in weights.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return model, {k: np.asarray(a, dtype) for k, a in inputs.items()}


def _dropout(x: str, y: str, ratio: float) -> list:
    """A seeded training-mode Dropout: the same mask on every run, so finite differences see one function."""
    return [
        helper.make_node("Constant", [], ["ratio"], value=numpy_helper.from_array(np.array(ratio, np.float32))),
        helper.make_node("Constant", [], ["training"], value=numpy_helper.from_array(np.array(True))),
        helper.make_node("Dropout", [x, "ratio", "training"], [y], seed=7),
    ]


def _squared_error(y: str, t: str) -> list:
    return [
        helper.make_node("Sub", [y, t], ["diff"]),
        helper.make_node("Mul", ["diff", "diff"], ["sq"]),
        helper.make_node("ReduceMean", ["sq"], ["loss"], keepdims=0),
    ]


def mlp(rng, dtype=np.float64, batch: int = 4, dropout: float = 0.0) -> Model:
    """x -> Gemm -> Tanh (-> Dropout in training mode, seeded) -> Gemm(transB, alpha) -> y; MSE loss."""
    w = {
        "fc1.weight": rng.standard_normal((5, 6)),
        "fc1.bias": rng.standard_normal(6),
        "fc2.weight": rng.standard_normal((3, 6)),
        "fc2.bias": rng.standard_normal(3),
    }
    nodes = [
        helper.make_node("Gemm", ["x", "fc1.weight", "fc1.bias"], ["h"]),
        helper.make_node("Tanh", ["h"], ["a" if not dropout else "t0"]),
        *(_dropout("t0", "a", dropout) if dropout else []),
        helper.make_node("Gemm", ["a", "fc2.weight", "fc2.bias"], ["y"], transB=1, alpha=0.5),
        *_squared_error("y", "t"),
    ]
    inputs = {"x": rng.standard_normal((batch, 5)), "t": rng.standard_normal((batch, 3))}
    return _model(nodes, inputs, {"y": [batch, 3], "loss": []}, w, dtype)


def cnn(rng, dtype=np.float64, batch: int = 3, mse: bool = True) -> Model:
    """Conv -> BatchNorm (training mode) -> Relu -> MaxPool -> GlobalAveragePool -> Flatten -> Gemm -> y;
    with `mse`, a squared-error `loss` against input `t`, else the logits `y` alone (for add-loss)."""
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
    ]
    inputs = {"x": rng.standard_normal((batch, 2, 8, 8))}
    if not mse:
        return _model(nodes, inputs, {"y": [batch, 3]}, w, dtype)
    inputs["t"] = rng.standard_normal((batch, 3))
    return _model(nodes + _squared_error("y", "t"), inputs, {"y": [batch, 3], "loss": []}, w, dtype)


def deep_mlp(rng, depth: int = 8, width: int = 32, batch: int = 16, dtype=np.float32) -> Model:
    """`depth` Gemm+Tanh layers named as a PyTorch nn.ModuleList exports them (`/layers.3/fc/Gemm`),
    so the layer scopes are visible to checkpoint{policy=layer}."""
    w: dict[str, np.ndarray] = {}
    nodes = []
    x = "x"
    for i in range(depth):
        w[f"layers.{i}.fc.weight"] = rng.standard_normal((width, width)) / np.sqrt(width)
        w[f"layers.{i}.fc.bias"] = rng.standard_normal(width) * 0.1
        nodes.append(
            helper.make_node(
                "Gemm",
                [x, f"layers.{i}.fc.weight", f"layers.{i}.fc.bias"],
                [f"h{i}"],
                transB=1,
                name=f"/layers.{i}/fc/Gemm",
            )
        )
        nodes.append(helper.make_node("Tanh", [f"h{i}"], [f"a{i}"], name=f"/layers.{i}/act/Tanh"))
        x = f"a{i}"
    nodes += _squared_error(x, "t")
    inputs = {"x": rng.standard_normal((batch, width)), "t": rng.standard_normal((batch, width))}
    return _model(nodes, inputs, {"loss": []}, w, dtype)


def lstm(rng, dtype=np.float64, activations: bool = False) -> Model:
    """x -> bidirectional LSTM (bias, initial states) -> Y_h; MSE loss on the last states. With
    `activations` the node names its (default) activations, so the importer unrolls it instead of
    keeping it whole as ge.lstm."""
    seq, batch, inputs, hidden = 4, 2, 3, 5
    w = {
        "lstm.W": rng.standard_normal((2, 4 * hidden, inputs)) * 0.5,
        "lstm.R": rng.standard_normal((2, 4 * hidden, hidden)) * 0.5,
        "lstm.B": rng.standard_normal((2, 8 * hidden)),
        "lstm.h0": rng.standard_normal((2, batch, hidden)),
    }
    attrs = {"activations": ["Sigmoid", "Tanh", "Tanh"] * 2} if activations else {}
    nodes = [
        helper.make_node(
            "LSTM",
            ["x", "lstm.W", "lstm.R", "lstm.B", "", "lstm.h0"],
            ["seq", "y"],
            hidden_size=hidden,
            direction="bidirectional",
            **attrs,
        ),
        *_squared_error("y", "t"),
    ]
    data = {"x": rng.standard_normal((seq, batch, inputs)), "t": rng.standard_normal((2, batch, hidden))}
    return _model(nodes, data, {"y": [2, batch, hidden], "loss": []}, w, dtype)
