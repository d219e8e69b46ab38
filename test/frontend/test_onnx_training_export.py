"""A PyTorch-style training export (built by hand: torch.onnx.export(..., training=TrainingMode.TRAINING)
gives BatchNormalization with training_mode=1 and three outputs, and Dropout with its ratio and
training_mode as Constant nodes) imports for training and agrees with onnx's reference
implementation where the ops are deterministic: BatchNormalization's Y, running_mean, running_var,
and Dropout at ratio 0. At ratio 0.5 (random) the output is checked against its own mask."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from ge.frontend.onnx_importer import import_model
from ge.interpreter.runner import run

SHAPE = [4, 3, 5, 5]


def _export(ratio: float) -> onnx.ModelProto:
    rng = np.random.default_rng(7)
    stats = {
        "bn.weight": rng.uniform(0.5, 1.5, 3),
        "bn.bias": rng.standard_normal(3),
        "bn.running_mean": rng.standard_normal(3),
        "bn.running_var": rng.uniform(0.5, 2.0, 3),
    }
    nodes = [
        helper.make_node(
            "BatchNormalization",
            ["input", *stats],
            ["bn_out", "bn.running_mean_out", "bn.running_var_out"],
            name="/bn/BatchNormalization",
            epsilon=1e-5,
            momentum=0.9,
            training_mode=1,
        ),
        helper.make_node("Relu", ["bn_out"], ["relu_out"], name="/relu/Relu"),
        helper.make_node("Constant", [], ["ratio"], value=numpy_helper.from_array(np.float32(ratio))),
        helper.make_node("Constant", [], ["training"], value=numpy_helper.from_array(np.bool_(True))),
        helper.make_node(
            "Dropout", ["relu_out", "ratio", "training"], ["output", "mask"], name="/drop/Dropout", seed=5
        ),
    ]
    channel = [3]
    graph = helper.make_graph(
        nodes,
        "export",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, SHAPE)],
        [
            helper.make_tensor_value_info("output", TensorProto.FLOAT, SHAPE),
            helper.make_tensor_value_info("mask", TensorProto.BOOL, SHAPE),
            helper.make_tensor_value_info("bn_out", TensorProto.FLOAT, SHAPE),
            helper.make_tensor_value_info("bn.running_mean_out", TensorProto.FLOAT, channel),
            helper.make_tensor_value_info("bn.running_var_out", TensorProto.FLOAT, channel),
        ],
        [numpy_helper.from_array(v.astype(np.float32), k) for k, v in stats.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)])
    onnx.checker.check_model(model, full_check=True)
    return model


def _run(model: onnx.ModelProto, x: np.ndarray) -> dict[str, np.ndarray]:
    module, weights = import_model(model, training=True)
    assert sorted(weights) == ["bn.bias", "bn.running_mean", "bn.running_var", "bn.weight"]
    return run(module, {"input": x}, weights)


@pytest.mark.parametrize("seed", [0, 1])
def test_batch_norm_training_and_dropout_match_reference(seed):
    model = _export(ratio=0.0)
    x = (np.random.default_rng(seed).standard_normal(SHAPE) * 2 + 0.5).astype(np.float32)
    names = [o.name for o in model.graph.output]
    expected = dict(zip(names, ReferenceEvaluator(model).run(None, {"input": x})))
    got = _run(model, x)
    for name in names:
        np.testing.assert_allclose(got[name], expected[name], rtol=1e-5, atol=1e-5, err_msg=name)
    # the running statistics moved: training mode, not inference with the stored statistics
    stored_mean = numpy_helper.to_array(model.graph.initializer[2])
    assert not np.allclose(got["bn.running_mean_out"], stored_mean)


def test_random_dropout_agrees_with_its_mask():
    model = _export(ratio=0.5)
    x = np.random.default_rng(3).standard_normal(SHAPE).astype(np.float32)
    got = _run(model, x)
    expected_bn = ReferenceEvaluator(model).run(["bn_out"], {"input": x})[0]
    np.testing.assert_allclose(got["bn_out"], expected_bn, rtol=1e-5, atol=1e-5)
    mask = got["mask"]
    assert mask.dtype == np.bool_ and 0.3 < mask.mean() < 0.7
    np.testing.assert_allclose(got["output"], np.where(mask, np.maximum(expected_bn, 0) / 0.5, 0), rtol=1e-5, atol=1e-6)
