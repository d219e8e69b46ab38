"""`ge.GraphParser` and `ge.build_graph`: the importer's graphs and its refusals, as the tools have them."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from tool_server import run as run_tool

import ge
from ge.api.parser import TORCH_MISSING
from ge.interpreter.runner import run

TOOLS = Path(sys.executable).parent


def small_model() -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    inits = [
        numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "conv.weight"),
        numpy_helper.from_array(rng.standard_normal((5, 4)).astype(np.float32), "fc.weight"),
    ]
    nodes = [
        helper.make_node("Conv", ["input", "conv.weight"], ["c"], name="/conv/Conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="/relu/Relu"),
        helper.make_node("GlobalAveragePool", ["r"], ["p"], name="/pool/GlobalAveragePool"),
        helper.make_node("Flatten", ["p"], ["f"], name="/Flatten"),
        helper.make_node("Gemm", ["f", "fc.weight"], ["output"], name="/fc/Gemm", transB=1),
    ]
    graph = helper.make_graph(
        nodes,
        "small",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 5])],
        initializer=inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


X = np.random.default_rng(1).standard_normal((1, 3, 8, 8)).astype(np.float32)


def reference(model: onnx.ModelProto) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"input": X})[0]


def test_parse_onnx_matches_onnxruntime(tmp_path):
    onnx.save(small_model(), tmp_path / "small.onnx")
    g = ge.GraphParser().parse_onnx(tmp_path / "small.onnx")
    assert (g.name, g.inputs, g.outputs) == ("small", ["input"], ["output"])
    assert [n.type for n in g.nodes if n.type != "Const"] == [
        "Conv2D",
        "Relu",
        "GlobalAveragePool",
        "Flatten",
        "GemmV2",
    ]
    assert g.node("/conv/Conv")["data_format"] == "NCHW"
    g.module.verify()
    np.testing.assert_allclose(run(g.module, {"input": X})["output"], reference(small_model()), rtol=1e-5, atol=1e-6)


def test_parse_onnx_model_in_memory():
    g = ge.GraphParser().parse_onnx_model(small_model())
    assert g.name == "small"
    np.testing.assert_allclose(run(g.module, {"input": X})["output"], reference(small_model()), rtol=1e-5, atol=1e-6)


def test_parsed_graph_takes_more_nodes():
    """Building continues on an imported graph; its outputs stay the model's until `output` adds one."""
    g = ge.GraphParser().parse_onnx_model(small_model())
    probs = g.add_softmax(g.value("/fc/Gemm"))
    assert g.outputs == ["output"]
    g.output(probs, name="probs")
    out = run(g.module, {"input": X})
    logits = reference(small_model())
    np.testing.assert_allclose(out["probs"], np.exp(logits) / np.exp(logits).sum(), rtol=1e-5)


def test_parse_ir_reads_the_sidecar(tmp_path):
    onnx.save(small_model(), tmp_path / "small.onnx")
    translate = run_tool("ge-translate", "--import-onnx", "small.onnx", "-o", "small.mlir", cwd=tmp_path)
    assert translate.returncode == 0, translate.stderr
    assert (tmp_path / "small.safetensors").exists()
    g = ge.GraphParser().parse_ir(tmp_path / "small.mlir")
    np.testing.assert_allclose(run(g.module, {"input": X})["output"], reference(small_model()), rtol=1e-5, atol=1e-6)


def unsupported_model() -> onnx.ModelProto:
    model = small_model()
    model.graph.node[1].op_type = "Mish"
    return model


@pytest.mark.parametrize(
    "write, message",
    [
        (lambda p: None, "cannot open: No such file or directory"),
        (lambda p: p.write_bytes(b"\x08\x07garbage"), "not a valid ONNX model"),
        (
            lambda p: onnx.save(unsupported_model(), p),
            "1 operator is not supported at opset 17: Mish (1 node: '/relu/Relu')",
        ),
    ],
    ids=["missing", "corrupt", "unsupported"],
)
def test_parse_onnx_refuses_as_ge_translate_does(tmp_path, write, message):
    path = tmp_path / "m.onnx"
    write(path)
    with pytest.raises(ge.GEError) as info:
        ge.GraphParser().parse_onnx(path)
    line = str(info.value)
    assert message in line and "\n" not in line and str(path) in line
    tool = run_tool("ge-translate", "--import-onnx", path, "-o", tmp_path / "out.mlir")
    assert tool.returncode == 1 and tool.stderr.strip() == f"ge-translate: error: {line}"


def test_parse_onnx_model_refusals():
    with pytest.raises(
        ge.GEError, match="^small: 1 operator is not supported at opset 17: Mish \\(1 node: '/relu/Relu'\\)"
    ):
        ge.GraphParser().parse_onnx_model(unsupported_model())
    with pytest.raises(ge.GEError, match="parse_onnx_model takes an onnx.ModelProto, got str"):
        ge.GraphParser().parse_onnx_model("model.onnx")  # type: ignore[arg-type]


def test_max_tensor_bytes_bounds_the_import():
    with pytest.raises(ge.GEError, match="conv.weight") as info:
        ge.GraphParser(max_tensor_bytes=256).parse_onnx_model(small_model())
    assert "\n" not in str(info.value)
    assert ge.GraphParser(max_tensor_bytes=1024).parse_onnx_model(small_model()).outputs == ["output"]


def test_build_graph_without_torch(monkeypatch):
    monkeypatch.setitem(
        sys.modules, "torch", None
    )  # how an uninstalled package looks to `import` (even where installed)
    with pytest.raises(ge.GEError) as info:
        ge.build_graph(object(), [np.zeros(1)])
    assert str(info.value) == TORCH_MISSING == "build_graph needs PyTorch (pip install ge-compiler[torch])"


def test_torch_extra_is_declared():
    import tomllib

    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    assert pyproject["project"]["optional-dependencies"]["torch"] == ["torch>=2.1"]


def test_build_graph_with_torch():
    torch = pytest.importorskip("torch")  # runs where the optional extra is installed
    net = torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(256, 5)
    )
    example = torch.from_numpy(X)
    g = ge.build_graph(net, [example], input_names=["input"], output_names=["output"])
    assert g.inputs == ["input"] and g.outputs == ["output"]
    want = net(example).detach().numpy()
    np.testing.assert_allclose(run(g.module, {"input": X})["output"], want, rtol=1e-4, atol=1e-5)
