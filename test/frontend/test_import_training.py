"""Every float initializer is a parameter, inline or in the sidecar; integer ones are literals. With
`training`, every float initializer of rank >= 1 is stored in the sidecar however small; scalars
and integer initializers stay inline."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from tool_server import run as run_tool

from ge.frontend.onnx_importer import import_model
from ge.frontend.sidecar import WeightStore
from ge.ge_dialects import ge


def _model() -> onnx.ModelProto:
    inits = {
        "w": np.ones((3, 2), np.float32),
        "b": np.zeros(2, np.float32),  # small: inline unless training
        "scale": np.array(0.5, np.float32),  # a scalar literal either way
        "shape": np.array([2, 2], np.int64),  # a shape: inline either way
    }
    graph = helper.make_graph(
        [
            helper.make_node("Gemm", ["x", "w", "b"], ["y"]),
            helper.make_node("Mul", ["y", "scale"], ["z"]),
            helper.make_node("Reshape", ["z", "shape"], ["out"]),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [2, 2])],
        [numpy_helper.from_array(a, k) for k, a in inits.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _parameters(module) -> dict[str, bool]:
    """Parameter key -> whether it is in the sidecar."""
    return {
        op.parameter_key: op.weight_key is not None
        for op in module.walk()
        if isinstance(op, ge.ConstantOp) and op.parameter_key is not None
    }


def test_training_import_keeps_every_float_parameter_a_weight():
    module, plain = import_model(_model())
    training_module, training = import_model(_model(), training=True)
    assert sorted(plain) == []  # everything is under the inline limit
    assert sorted(training) == ["b", "w"]
    # parameters either way: only where they are stored differs
    assert _parameters(module) == {"w": False, "b": False, "scale": False}
    assert _parameters(training_module) == {"w": True, "b": True, "scale": False}


def test_ge_translate_training_flag(tmp_path):
    onnx.save(_model(), tmp_path / "m.onnx")
    r = run_tool("ge-translate", "--import-onnx", tmp_path / "m.onnx", "--training", "-o", tmp_path / "m.mlir")
    assert r.returncode == 0, r.stderr
    (sidecar,) = tmp_path.glob("*.safetensors")
    assert sorted(WeightStore(sidecar)) == ["b", "w"]
    assert '#ge.weight<"b">' in (tmp_path / "m.mlir").read_text()
