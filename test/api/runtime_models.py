"""Small graphs for the API's optimizing / running tests: a CNN and a BERT layer from frontend/models.py's
builder, and a float64 MLP for gradients, each imported from ONNX and wrapped as a `ge.Graph`."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ge.api.graph import Graph
from ge.frontend import models
from ge.frontend.models import GraphBuilder
from ge.frontend.onnx_importer import import_model
from ge.ge_dialects.ge.weights import attach_weights


def graph_of(model: onnx.ModelProto, training: bool = False) -> Graph:
    module, weights = import_model(model, training=training)
    attach_weights(module, weights)
    return Graph.from_module(module, model.graph.name)


def small_cnn(batch: int = 2, train: bool = False) -> onnx.ModelProto:
    """conv-bn-relu, max pool, conv-bn-relu, global pool, flatten, linear: ResNet's pieces, small
    (`train`: exported in train mode, BatchNormalization with batch statistics, which no conv folds)."""
    b = GraphBuilder(seed=0, train=train)
    x = b.input("x", TensorProto.FLOAT, [batch, 3, 16, 16])
    with b.scope("conv1"):
        y = b.conv(x, 3, 8, 3, 1, 1)
    with b.scope("bn1"):
        y = b.batch_norm(y, 8)
    y = b.relu(y)
    y = b.max_pool(y, 2, 2, 0)
    with b.scope("conv2"):
        y = b.conv(y, 8, 16, 3, 1, 1)
    with b.scope("bn2"):
        y = b.batch_norm(y, 16)
    y = b.relu(y)
    y = b.op("GlobalAveragePool", [y])
    y = b.op("Flatten", [y], axis=1)
    with b.scope("fc"):
        y = b.gemm(y, 16, 10, 0.1, 0.1)
    b.output(y, "logits", TensorProto.FLOAT, [batch, 10])
    return b.build()


def small_bert() -> onnx.ModelProto:
    """One BERT layer (hidden 32, 2 heads): two integer inputs, attention, LayerNorm, GELU."""
    return models.bert_base(batch=1, seq=8, layers=1, hidden=32, heads=2, intermediate=64, vocab=100)


def inputs_of(model: onnx.ModelProto, seed: int = 0) -> dict[str, np.ndarray]:
    return models.random_inputs(model, seed)


def mlp(batch: int = 3, width: int = 4, layers: int = 3) -> onnx.ModelProto:
    """x -> (MatMul -> Tanh) x layers -> mean of squares = loss, float64; nodes named layer_<i>_matmul
    and layer_<i>_relu (the activation), the weights fc<i>.weight."""
    rng = np.random.default_rng(0)
    weights = {f"fc{i}.weight": rng.standard_normal((width, width)) * 0.7 for i in range(1, layers + 1)}
    nodes, x = [], "x"
    for i in range(1, layers + 1):
        nodes.append(helper.make_node("MatMul", [x, f"fc{i}.weight"], [f"h{i}"], name=f"layer_{i}_matmul"))
        nodes.append(helper.make_node("Tanh", [f"h{i}"], [f"a{i}"], name=f"layer_{i}_relu"))
        x = f"a{i}"
    nodes += [
        helper.make_node("Mul", [x, x], ["sq"], name="square"),
        helper.make_node("ReduceMean", ["sq"], ["loss"], keepdims=0, name="mean"),
    ]
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [batch, width])],
        [helper.make_tensor_value_info("loss", TensorProto.DOUBLE, [])],
        [numpy_helper.from_array(a, k) for k, a in weights.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def logits_mlp(batch: int = 3) -> onnx.ModelProto:
    """x -> Gemm -> Tanh -> Gemm -> y (float64, no loss): what add-loss appends to."""
    rng = np.random.default_rng(1)
    weights = {"fc1.weight": rng.standard_normal((4, 5)), "fc2.weight": rng.standard_normal((5, 3))}
    nodes = [
        helper.make_node("MatMul", ["x", "fc1.weight"], ["h"], name="fc1"),
        helper.make_node("Tanh", ["h"], ["a"], name="act"),
        helper.make_node("MatMul", ["a", "fc2.weight"], ["y"], name="fc2"),
    ]
    graph = helper.make_graph(
        nodes,
        "logits",
        [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [batch, 4])],
        [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [batch, 3])],
        [numpy_helper.from_array(a, k) for k, a in weights.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def assert_one_line(error: BaseException) -> None:
    text = str(error)
    assert text and "\n" not in text, repr(text)
