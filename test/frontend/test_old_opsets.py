"""Models at opset 1 to 12 are upgraded at import (frontend/onnx_upgrade.py): the onnx wheel's own
model-zoo graphs (opset 9) import and give their shipped outputs; a model the converter cannot
upgrade is refused in one line naming the node."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

from ge.frontend.onnx_importer import import_model
from ge.frontend.onnx_ops import MIN_OPSET, OnnxImportError
from ge.interpreter.runner import run
from ge.tools import ge_translate

onnxruntime = pytest.importorskip("onnxruntime")

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
ZOO = sorted(p.stem.removeprefix("light_") for p in LIGHT.glob("light_*.onnx"))


def zoo_inputs(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    """The inputs onnx's backend runner feeds these graphs (`generate_dummy_data`, random=False):
    0, 1/n, 2/n, ... in the input's shape, unknown dims taken as 1."""
    initializers = {t.name for t in model.graph.initializer}
    feeds = {}
    for vi in model.graph.input:
        if vi.name not in initializers:
            shape = tuple(d.dim_value if d.HasField("dim_value") else 1 for d in vi.type.tensor_type.shape.dim)
            n = int(np.prod(shape))
            feeds[vi.name] = (np.arange(n).reshape(shape) / n).astype(np.float32)
    return feeds


def test_the_zoo_is_there():
    """The onnx wheel ships these nine (AlexNet, DenseNet-121, Inception v1/v2, ResNet-50, ShuffleNet,
    SqueezeNet, VGG-19, ZFNet-512), all at opset 9: if a new onnx drops them, this says so."""
    assert len(ZOO) == 9, ZOO
    assert {onnx.load(LIGHT / f"light_{name}.onnx").opset_import[0].version for name in ZOO} == {9}


LARGE = {"bvlc_alexnet", "vgg19", "zfnet512"}
"""60M-140M weights each (their fully connected layers): random ones cost seconds to draw and to
run; their layers (Conv, LRN, Gemm, Dropout) are all in the smaller graphs."""


def with_random_weights(model: onnx.ModelProto, seed: int = 0) -> onnx.ModelProto:
    """The graph with each ConstantOfShape weight fill (0.02 everywhere, which ties most logits)
    replaced by seeded random values: fan-in-scaled normals for kernels, U(0.5, 1.5) for vectors
    (biases, BatchNorm scales, means and variances alike, so variances stay positive)."""
    rng = np.random.default_rng(seed)
    shapes = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    out = onnx.ModelProto()
    out.CopyFrom(model)
    del out.graph.node[:]
    for node in model.graph.node:
        if node.op_type == "ConstantOfShape" and node.input[0] in shapes:
            shape = tuple(int(d) for d in shapes[node.input[0]])
            if len(shape) > 1:
                value = rng.standard_normal(shape) / np.sqrt(np.prod(shape[1:]))
            else:
                value = rng.uniform(0.5, 1.5, shape)
            out.graph.initializer.append(numpy_helper.from_array(value.astype(np.float32), node.output[0]))
            # these IR versions list every initializer among the graph's inputs too
            out.graph.input.append(helper.make_tensor_value_info(node.output[0], onnx.TensorProto.FLOAT, shape))
        else:
            out.graph.node.append(node)
    return out


def with_outputs(model: onnx.ModelProto, names: list[str]) -> onnx.ModelProto:
    out = onnx.ModelProto()
    out.CopyFrom(model)
    del out.graph.output[:]
    out.graph.output.extend(helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, None) for n in names)
    return out


def tied_softmax_logits(model: onnx.ModelProto, inputs) -> tuple[str, np.ndarray] | None:
    """(name, onnxruntime's values) of the logits of a graph ending in Softmax when they are all
    equal up to float32 rounding, else None. Then the shipped output says only that the logits tie
    exactly, which holds or not by summation order (SqueezeNet's are ~9.5e9, where one ulp is 1024
    and Softmax turns it into a factor of e^1024)."""
    last = model.graph.node[-1]
    if last.op_type != "Softmax":
        return None
    session = onnxruntime.InferenceSession(
        with_outputs(model, [last.input[0]]).SerializeToString(), providers=["CPUExecutionProvider"]
    )
    (logits,) = session.run(None, inputs)
    spread = float(logits.max() - logits.min())
    return (last.input[0], logits) if spread <= 1e-6 * float(np.abs(logits).max()) else None


@pytest.mark.parametrize("name", ZOO)
def test_a_zoo_graph_gives_its_shipped_outputs_and_onnxruntimes_with_random_weights(name):
    """The shipped outputs check the graph as shipped (its fills tie most logits, so they say
    little, and where the tie is broken by rounding alone the logits are compared with
    onnxruntime's instead); with random weights, onnxruntime's outputs check every layer."""
    model = onnx.load(LIGHT / f"light_{name}.onnx")
    want = numpy_helper.to_array(onnx.load_tensor(LIGHT / f"light_{name}_output_0.pb"))
    inputs = zoo_inputs(model)
    module, weights = import_model(model)
    (got,) = run(module, inputs, weights).values()
    if not np.allclose(got, want, rtol=1e-4, atol=1e-6):
        # only where rounding decides: logits tied up to rounding, and ge's equal onnxruntime's
        tied = tied_softmax_logits(model, inputs)
        if tied is None:
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)  # fails, showing where
        module, weights = import_model(with_outputs(model, [tied[0]]))
        np.testing.assert_allclose(run(module, inputs, weights)[tied[0]], tied[1], rtol=1e-5)

    if name in LARGE:
        return
    randomized = with_random_weights(model)
    session = onnxruntime.InferenceSession(randomized.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = session.run(None, inputs)
    module, weights = import_model(randomized)
    (got,) = run(module, inputs, weights).values()
    assert np.abs(want).max() > 1e-3 and np.std(want) > 1e-6  # not tied any more
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3 * np.abs(want).max())


def relu_at(opset: int) -> onnx.ModelProto:
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, 3])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="/relu")], "g", [x], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize("opset", [1, 7, 9, 12])
def test_an_old_opset_imports_as_the_upgraded_model(opset):
    old, _ = import_model(relu_at(opset))
    new, _ = import_model(relu_at(MIN_OPSET))
    assert str(old) == str(new)


def test_the_upgrade_is_a_note_with_v_and_silent_without(tmp_path, run_main):
    onnx.save(relu_at(9), tmp_path / "m.onnx")
    argv = ["--import-onnx", tmp_path / "m.onnx", "-o", tmp_path / "m.mlir"]
    code, _, err = run_main(ge_translate.main, argv)
    assert code == 0 and err == ""
    code, _, err = run_main(ge_translate.main, [*argv, "-v"])
    assert code == 0
    assert err == f"ge-translate: note: the model was upgraded from opset 9 to {MIN_OPSET} (onnx.version_converter)\n"


def test_a_model_the_converter_cannot_upgrade_is_one_line_naming_the_node(tmp_path, run_main):
    """onnx has no adapter for Scan from opset 7 (its inputs changed at 8)."""
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2])
    scan = helper.make_node("Scan", ["x"], ["y"], name="/loop/Scan", num_scan_inputs=1)
    model = helper.make_model(helper.make_graph([scan], "g", [x], [y]), opset_imports=[helper.make_opsetid("", 7)])
    with pytest.raises(OnnxImportError) as e:
        import_model(model)
    assert str(e.value) == (
        f"node '/loop/Scan' (Scan, opset 7): onnx's version converter cannot upgrade it to opset {MIN_OPSET} "
        f"(export the model at opset {MIN_OPSET} or newer)"
    )
    onnx.save(model, tmp_path / "m.onnx")
    code, out, err = run_main(ge_translate.main, ["--import-onnx", tmp_path / "m.onnx", "-o", tmp_path / "m.mlir"])
    assert code == 1 and out == "" and len(err.splitlines()) == 1 and "'/loop/Scan'" in err
    assert not (tmp_path / "m.mlir").exists()
