"""`ge.Graph` as a builder: a small CNN built with the `add_*` layers and again with `g.op` and GE's
operator names computes what onnxruntime computes for the same network written in ONNX by hand; the
module is complete (verifies, prints, parses, optimizes) after every call; names, outputs, node views,
seeds; every refused call is one line naming the node and the reason, and changes nothing."""

from __future__ import annotations

import sys
import types

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import ge
from ge.api.node import Node, Value
from ge.ge_dialects.context import make_context
from ge.ge_dialects.ge.weights import constant_array, referenced_weights, weights_of
from ge.interpreter.runner import run
from ge.passes.pipeline import apply_all, parse_passes
from ge.tools.common import parse_module, print_module

X = np.random.default_rng(3).standard_normal((2, 3, 16, 16)).astype(np.float32)


def cnn_with_layers(seed: int = 0) -> ge.Graph:
    g = ge.Graph(seed=seed)
    x = g.add_input("input", shape=[2, 3, 16, 16])
    c = g.add_conv2d(x, out_channels=8, kernel_size=3, stride=2, padding=1)
    r = g.add_relu(g.add_batchnorm(c))
    m = g.add_maxpool(r, kernel_size=3, stride=2, padding=1)
    c2 = g.add_conv2d(m, out_channels=8, kernel_size=3, padding=1, bias=False)
    r2 = g.add_relu(g.add_add(g.add_batchnorm(c2), m))
    p = g.add_avgpool(r2, kernel_size=2)
    g.add_softmax(g.add_linear(p, out_features=10))
    return g


def array(g: ge.Graph, name: str) -> np.ndarray:
    value = constant_array(g.value(name).ssa)
    assert value is not None, name
    return value


def onnx_reference(g: ge.Graph) -> onnx.ModelProto:
    """The same network as torch.onnx would export it, written by hand, with `g`'s weights."""
    names = {
        "w1": "conv_1/filter",
        "b1": "conv_1/bias",
        "w2": "conv_2/filter",
        "fc_w": "linear_1/weight",
        "fc_b": "linear_1/bias",
    }
    for bn in ("bn_1", "bn_2"):
        names.update({f"{bn}_{k}": f"{bn}/{k}" for k in ("scale", "offset", "mean", "variance")})
    inits = [numpy_helper.from_array(array(g, v), k) for k, v in names.items()]

    def bn(x: str, prefix: str, out: str):
        ins = [x, *(f"{prefix}_{k}" for k in ("scale", "offset", "mean", "variance"))]
        return helper.make_node("BatchNormalization", ins, [out], epsilon=1e-5)

    nodes = [
        helper.make_node("Conv", ["input", "w1", "b1"], ["c1"], strides=[2, 2], pads=[1, 1, 1, 1]),
        bn("c1", "bn_1", "n1"),
        helper.make_node("Relu", ["n1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["m"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["m", "w2"], ["c2"], pads=[1, 1, 1, 1]),
        bn("c2", "bn_2", "n2"),
        helper.make_node("Add", ["n2", "m"], ["s"]),
        helper.make_node("Relu", ["s"], ["r2"]),
        helper.make_node("AveragePool", ["r2"], ["p"], kernel_shape=[2, 2], strides=[2, 2], count_include_pad=1),
        helper.make_node("Flatten", ["p"], ["f"]),
        helper.make_node("Gemm", ["f", "fc_w", "fc_b"], ["logits"], transB=1),
        helper.make_node("Softmax", ["logits"], ["probs"], axis=-1),
    ]
    graph = helper.make_graph(
        nodes,
        "cnn",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [2, 3, 16, 16])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [2, 10])],
        initializer=inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def onnxruntime_output(model: onnx.ModelProto) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"input": X})[0]


def only_output(g: ge.Graph) -> np.ndarray:
    (out,) = run(g.module, {"input": X}).values()
    return out


def test_layers_match_onnxruntime():
    g = cnn_with_layers()
    g.module.verify()
    assert g.inputs == ["input"] and g.outputs == ["softmax_1"]
    np.testing.assert_allclose(only_output(g), onnxruntime_output(onnx_reference(g)), rtol=1e-4, atol=1e-6)


def test_ge_type_names_build_the_same_network():
    """The CNN again with `g.op`, GE's type names and GE's attribute forms (NCHW strides, pads
    [top, bottom, left, right], ksize), on the layer-built graph's weights."""
    layers = cnn_with_layers()
    g = ge.Graph()
    x = g.placeholder(shape=[2, 3, 16, 16], dtype="float32", name="input")

    def w(name: str) -> ge.api.node.Value:
        return g.const(value=array(layers, name), name=name)

    def bn(v, prefix):
        ins = [v, *(w(f"{prefix}/{k}") for k in ("scale", "offset", "mean", "variance"))]
        return g.op("BatchNorm", ins, {"epsilon": 1e-5, "data_format": "NCHW"})

    conv = {"strides": [1, 1, 2, 2], "pads": [1, 1, 1, 1], "dilations": [1, 1, 1, 1], "data_format": "NCHW"}
    c = g.op("Conv2D", inputs=[x, w("conv_1/filter"), w("conv_1/bias")], attrs=conv)
    r = g.op("Relu", [bn(c, "bn_1")])
    m = g.op("MaxPoolV3", [r], {"ksize": [1, 1, 3, 3], "strides": [1, 1, 2, 2], "pads": [1, 1, 1, 1]})
    c2 = g.op("Conv2D", [m, w("conv_2/filter")], {"pads": [1, 1, 1, 1]})
    r2 = g.op("Relu", [g.op("Add", [bn(c2, "bn_2"), m])])
    p = g.op("AvgPoolV2", [r2], {"ksize": [1, 1, 2, 2], "strides": [1, 1, 2, 2], "exclusive": False})
    f = g.op("Flatten", [p])
    logits = g.op("GemmV2", [f, w("linear_1/weight"), None, None, w("linear_1/bias")], {"transpose_b": True})
    g.output(g.op("SoftmaxV2", [logits], {"axes": [-1]}), name="probs")
    g.module.verify()
    assert g.outputs == ["probs"]
    assert [n.type for n in g.nodes if n.type != "Const"] == [n.type for n in layers.nodes if n.type != "Const"]
    np.testing.assert_allclose(only_output(g), only_output(layers), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(only_output(g), onnxruntime_output(onnx_reference(layers)), rtol=1e-4, atol=1e-6)


def test_issue_interface_block():
    """The building calls of GE's graph-building interface, as a user writes them (at a smaller size)."""
    g = ge.Graph()
    x = g.placeholder(shape=[2, 3, 8, 8], dtype="float16", name="x")
    w = g.const(value=np.ones((4, 3, 3, 3), np.float16), name="conv1_w")
    y = g.op("Conv2D", inputs=[x, w], attrs={"stride": [1, 1]})
    assert isinstance(y, Value) and y.shape == [2, 4, 6, 6] and y.dtype == "float16"
    n = g.add_input("input", shape=[1, 3, 32, 32])
    c = g.add_conv2d(n, out_channels=16, kernel_size=7, stride=2)
    b = g.add_batchnorm(c)
    r = g.add_relu(b)
    m = g.add_maxpool(r, kernel_size=3, stride=2)
    f = g.add_linear(m, out_features=10)
    s = g.add_softmax(f)
    assert (c.shape, m.shape, f.shape, s.shape) == ([1, 16, 13, 13], [1, 16, 6, 6], [1, 10], [1, 10])
    assert g.inputs == ["x", "input"] and g.outputs == [y.name, s.name]
    assert all(isinstance(node, Node) for node in g.nodes)
    g.module.verify()
    outs = run(g.module, {"x": np.ones((2, 3, 8, 8), np.float16), "input": np.ones((1, 3, 32, 32), np.float32)})
    assert outs[y.name].dtype == np.float16 and np.all(outs[y.name] == 27)
    np.testing.assert_allclose(outs[s.name].sum(), 1.0, rtol=1e-5)


def test_module_is_complete_after_every_call():
    """Prints, parses back and verifies at every step; its weights are what the constants name."""
    g = ge.Graph()
    x = g.add_input("input", shape=[1, 3, 8, 8])
    steps = [
        lambda v: g.add_conv2d(v, out_channels=4, kernel_size=3, padding="same"),
        g.add_batchnorm,
        g.add_relu,
        g.add_global_avgpool,
        lambda v: g.add_linear(v, out_features=3),
    ]
    v = x
    for step in steps:
        v = step(v)
        parse_module(print_module(g.module), "built").verify()
        assert g.outputs == [v.name]
    assert set(referenced_weights(g.module)) <= set(weights_of(g.module))


def test_passes_take_the_module():
    """ge-opt's O3 on the built module (folds BN into the conv, fuses) keeps the outputs."""
    g = cnn_with_layers()
    before = only_output(g)
    optimized = g.copy()
    apply_all(make_context(), optimized.module, parse_passes("ge-optimize{level=3}"))
    assert "BatchNorm" not in {n.type for n in optimized.nodes}
    assert "BatchNorm" in {n.type for n in g.nodes}  # the copy was optimized, not the original
    np.testing.assert_allclose(only_output(optimized), before, rtol=1e-4, atol=1e-6)


def test_seeded_weights_are_deterministic():
    a, b, c = cnn_with_layers(0), cnn_with_layers(0), cnn_with_layers(1)
    assert np.array_equal(array(a, "conv_2/filter"), array(b, "conv_2/filter"))
    assert not np.array_equal(array(a, "conv_2/filter"), array(c, "conv_2/filter"))
    np.testing.assert_array_equal(only_output(a), only_output(b))
    # a weight depends on its name and the seed, not on what was built before it
    g = ge.Graph(seed=0)
    x = g.add_input("input", shape=[2, 8, 4, 4])
    g.add_relu(x)
    g.add_conv2d(x, out_channels=8, kernel_size=3, bias=False, name="conv_2")
    assert np.array_equal(array(g, "conv_2/filter"), array(a, "conv_2/filter"))


def test_conv_weights_have_he_scale_and_input_dtype():
    g = ge.Graph(seed=0)
    x = g.add_input("input", shape=[1, 64, 8, 8], dtype="float16")
    g.add_conv2d(x, out_channels=128, kernel_size=3, bias=False)
    w = array(g, "conv_1/filter")
    assert w.dtype == np.float16 and w.shape == (128, 64, 3, 3)
    assert abs(w.astype(np.float64).std() - np.sqrt(2 / (64 * 9))) < 0.003


def test_default_and_explicit_outputs():
    g = ge.Graph()
    x = g.add_input("x", shape=[2, 3])
    a = g.add_relu(x)
    b = g.add_sigmoid(x)
    assert g.outputs == ["relu_1", "sigmoid_1"]  # nobody uses them
    s = g.add_add(a, b)
    assert g.outputs == ["add_1"]
    g.output(a, name="features")
    assert g.outputs == ["features"]  # the first explicit output replaces the default ones
    g.output(s)
    g.add_relu(s)  # not an output: outputs are explicit now
    assert g.outputs == ["features", "add_1"]
    g.set_outputs([s, a], names=["sum", "relu"])
    assert g.outputs == ["sum", "relu"] and [v.name for v in g.output_values] == ["add_1", "relu_1"]
    out = run(g.module, {"x": np.full((2, 3), -1.0, np.float32)})
    np.testing.assert_allclose(out["sum"], 1 / (1 + np.e))
    g.module.verify()


def test_multi_result_ops_and_optional_results():
    g = ge.Graph()
    x = g.placeholder([2, 6], name="x")
    parts = g.op("SplitD", [x], {"split_dim": 1, "num_split": 3})
    assert isinstance(parts, tuple) and [p.shape for p in parts] == [[2, 2]] * 3
    assert [p.name for p in parts] == ["SplitD_1", "SplitD_1:1", "SplitD_1:2"]
    img = g.placeholder([1, 1, 4, 4], name="img")
    y, indices = g.op("MaxPool", [img], {"ksize": [2, 2], "strides": [2, 2]}, num_outputs=2)
    assert indices.dtype == "int64" and y.shape == [1, 1, 2, 2]
    assert g.outputs == ["SplitD_1", "SplitD_1:1", "SplitD_1:2", "MaxPool_1", "MaxPool_1:1"]
    g.module.verify()


def test_inputs_as_data_become_named_constants():
    g = ge.Graph()
    x = g.placeholder([2, 3, 4], name="x")
    y = g.op("Reshape", [x, [4, -1]], name="flat")
    assert y.shape == [4, 6]
    node = g.node("flat")
    assert node.inputs[1].name == "flat/shape" and node.inputs[1].dtype == "int64"
    z = g.op("Mul", [y, 2.0])  # a Python float: float32, as the graph's values
    assert g.node(z.name).inputs[1].dtype == "float32"


def test_node_views():
    g = cnn_with_layers()
    conv = g.node("conv_1")
    assert (conv.type, conv.ge_op, conv.name) == ("Conv2D", "ge.conv", "conv_1")
    assert [v.name for v in conv.inputs] == ["input", "conv_1/filter", "conv_1/bias"]
    assert conv.outputs[0].shape == [2, 8, 8, 8]
    assert conv["data_format"] == "NCHW" and conv["strides"] == [2, 2]
    assert conv["groups"] == conv["group"] == 1  # GE's name and ge's name of one attribute
    assert conv.attrs["pads"] == [1, 1, 1, 1] and conv.get("nonexistent", "-") == "-"
    assert "strides" in conv and "nonexistent" not in conv
    with pytest.raises(KeyError):
        conv["nonexistent"]
    assert conv.outputs[0].node == conv and g.value("input").node is None
    linear = g.node("linear_1")
    assert linear.type == "GemmV2" and linear["data_format"] == "ND"
    assert g.node("softmax_1").type == "SoftmaxV2" and g.node("bn_1").type == "BatchNorm"
    assert g.node("conv_1/filter").type == "Const"
    assert "Conv2D" in repr(conv) and "float32[2, 8, 8, 8]" in repr(conv)


def test_repr():
    g = cnn_with_layers()
    text = repr(g)
    constants = sum(1 for n in g.nodes if n.type == "Const")
    assert f"{len(g.nodes)} nodes ({constants} constants)" in text
    assert "inputs=['input']" in text and "outputs=['softmax_1']" in text
    expected = sum(array(g, n.name).nbytes for n in g.nodes if n.type == "Const")
    assert g.parameter_bytes == expected and f"{expected:,} bytes" in text
    assert (
        repr(ge.Graph()) == "Graph('main', 0 nodes (0 constants), inputs=[], outputs=[], parameters=0 bytes (0.0 MiB))"
    )


def test_copy_is_independent():
    g = cnn_with_layers()
    clone = g.copy()
    clone.add_relu(clone.value("softmax_1"))
    assert g.outputs == ["softmax_1"] and clone.outputs == ["relu_3"]


def test_visualize_calls_go_to_the_visualize_module(monkeypatch, tmp_path):
    calls = []
    fake = types.ModuleType("ge.api.visualize")
    fake.visualize = lambda graph, path, remarks=False: calls.append((graph, path, remarks))  # type: ignore[attr-defined]
    fake.svg = lambda graph: "<svg/>"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ge.api.visualize", fake)
    g = cnn_with_layers()
    g.visualize(str(tmp_path / "g.dot"), remarks=True)
    assert calls == [(g, str(tmp_path / "g.dot"), True)]
    assert g._repr_svg_() == "<svg/>"


# -- refused calls: one line naming the node and the reason; nothing changes ------------------------


def small() -> tuple[ge.Graph, Value, Value]:
    g = ge.Graph()
    x = g.placeholder([1, 3, 8, 8], name="x")
    w = g.const(np.zeros((4, 3, 3, 3), np.float32), name="w")
    return g, x, w


REFUSED = [
    (lambda g, x, w: g.op("Conv3D", [x, w]), "unknown GE operator type 'Conv3D' (did you mean Conv2D"),
    (lambda g, x, w: g.op("Relu", [x], {"alpha": 1}), "node 'Relu_1' (Relu): unknown attribute 'alpha'"),
    (
        lambda g, x, w: g.op("Conv2D", [x, w], {"strides": [1, 2, 3]}),
        "node 'Conv2D_1' (Conv2D): attribute 'strides' expects an int, [h, w] or [1, 1, h, w]",
    ),
    (
        lambda g, x, w: g.op("Conv2D", [x, w], {"pads": [1, 1, 1]}),
        "attribute 'pads' expects an int, [h, w] or [top, bottom, left, right]",
    ),
    (lambda g, x, w: g.op("Conv2D", [x, w], {"groups": "two"}), "attribute 'groups' expects an int, got 'two'"),
    (lambda g, x, w: g.op("Conv2D", [x, w], {"data_format": "NHWC"}), "attribute 'data_format' only NCHW"),
    (lambda g, x, w: g.op("Conv2D", [x, w], {"padding": "FULL"}), "expects one of SAME, VALID, CALCULATED"),
    (lambda g, x, w: g.op("MaxPool", [x]), "node 'MaxPool_1' (MaxPool): attribute 'ksize' is required"),
    (lambda g, x, w: g.op("MatMul", [x, x], {"transpose_x2": True}), "attribute 'transpose_x2' only false"),
    (lambda g, x, w: g.op("Cast", [x], {"dst_type": 99}), "attribute 'dst_type' expects a GE DataType number"),
    (lambda g, x, w: g.op("Cast", [x], {"dst_type": None}), "attribute 'dst_type' expects a GE DataType number"),
    (lambda g, x, w: g.op("Shape", [x], {"dtype": 3}), "attribute 'dtype' only int64 (DT_INT64, 9) is supported"),
    (lambda g, x, w: g.op("Conv2D", [x]), "node 'Conv2D_1' (Conv2D): takes 2 to 3 inputs (x, filter, bias?), got 1"),
    (lambda g, x, w: g.op("Relu", [x, x]), "node 'Relu_1' (Relu): takes 1 input (x), got 2"),
    (lambda g, x, w: g.op("Add", [x, None]), "node 'Add_1' (Add): takes 2 inputs (x1, x2), got 2"),
    (lambda g, x, w: g.op("ConcatD", []), "takes at least 1 inputs (x...), got 0"),
    (
        lambda g, x, w: g.op("Conv2D", [x, np.zeros((4, 2, 3, 3), np.float32)]),
        "node 'Conv2D_1' (Conv2D): input channels 3 do not match weight channels 2 x group 1",
    ),
    (
        lambda g, x, w: g.op("Add", [x, g.placeholder([5], name="y")]),
        "node 'Add_1' (Add): shapes (1, 3, 8, 8) and (5,) do not broadcast",
    ),
    (
        lambda g, x, w: g.op("MatMul", [x, w]),
        "node 'MatMul_1' (MatMul): inner dimensions 8 and 3 do not match",
    ),
    (
        lambda g, x, w: g.op("Conv2D", [x, np.zeros((4, 3, 3, 3), np.float16)]),
        "node 'Conv2D_1' (Conv2D): operands 'X' and 'W' must have one element type, got f32 and f16",
    ),
    (
        lambda g, x, w: g.op("Transpose", [x, g.add_relu(g.placeholder([4], "int64", name="p"))]),
        "input 'perm' must be a constant",
    ),
    (
        lambda g, x, w: g.op("SplitD", [g.placeholder([], name="s")], {"num_split": 1}),
        "node 'SplitD_1' (SplitD): cannot split a rank-0 tensor",
    ),
    (lambda g, x, w: g.op("Relu", [x], name="w"), "graph 'main': the name 'w' is already used"),
    (lambda g, x, w: g.placeholder([1, 2], name="x"), "the name 'x' is already used"),
    (lambda g, x, w: g.placeholder([1, -2]), "input 'input_1': dims must be non-negative ints"),
    (lambda g, x, w: g.placeholder([1, 2], dtype="complex64"), "dtype 'complex64' is not a ge element type"),
    (lambda g, x, w: g.placeholder([1, 2], dtype="float17"), "dtype 'float17' is not a ge element type"),
    (
        lambda g, x, w: g.add_relu(ge.Graph().placeholder([1])),
        "node 'relu_1' (Relu): value 'input_1' belongs to another graph",
    ),
    (
        lambda g, x, w: g.add_linear(g.placeholder([3], name="v"), 4),
        "node 'linear_1' (GemmV2): needs an input of rank >= 2",
    ),
    (lambda g, x, w: g.add_conv2d(x, 8, kernel_size=3, groups=2), "input channels 3 do not divide into 2 groups"),
    (
        lambda g, x, w: g.add_maxpool(x, kernel_size=[1, 2, 3]),
        "node 'maxpool_1' (MaxPoolV3): attribute 'ksize' expects",
    ),
    (lambda g, x, w: g.set_outputs([x, x], names=["a", "a"]), "graph 'main': two outputs named 'a'"),
    (lambda g, x, w: g.node("nope"), "graph 'main': no node named 'nope'"),
]


@pytest.mark.parametrize("call, message", REFUSED, ids=[m for _, m in REFUSED])
def test_refused_in_one_line_and_nothing_changes(call, message):
    g, x, w = small()
    before = print_module(g.module)
    weights_before = dict(weights_of(g.module).added)
    with pytest.raises(ge.GEError) as info:
        call(g, x, w)
    text = str(info.value)
    assert message in text and "\n" not in text
    new_inputs = [n for n in g.inputs if n not in ("x",)]
    if not new_inputs:  # calls that made an input first (to have a bad operand) changed the graph on purpose
        assert print_module(g.module) == before
        assert dict(weights_of(g.module).added).keys() == weights_before.keys()


def test_refused_call_leaves_no_staged_weight():
    """A refused op whose data inputs were large (weights, not inline) leaves no weight behind."""
    g, x, _ = small()
    before = set(weights_of(g.module))
    with pytest.raises(ge.GEError, match="input channels 3 do not match"):
        g.op("Conv2D", [x, np.zeros((64, 5, 3, 3), np.float32)])
    assert set(weights_of(g.module)) == before


def test_stale_handle_after_a_pass():
    g = ge.Graph()
    x = g.placeholder([2], name="x")
    dead = g.add_relu(x)
    g.output(g.add_sigmoid(x))
    apply_all(make_context(), g.module, parse_passes("dce"))
    with pytest.raises(ge.GEError, match="value 'relu_1' is no longer in the graph"):
        g.add_relu(dead)
