"""The design sources' three Python examples, as written (issue 23, section 2).

- Operator fusion: `add_input -> add_conv2d -> add_batchnorm -> add_relu -> add_maxpool`, and
  `len(graph.nodes)` before and after `GraphOptimizer().apply_operator_fusion(graph)`: the BN is
  folded into the conv, then Conv+ReLU is one kernel (10 nodes -> 4), with the same outputs.
- The same graph through `apply_standard_optimizations`: every node keeps or derives a name (no
  `ge.constant#0`, `ge.trans_data#1`).
- `graph.op("BatchNorm", inputs=[conv])`: the scale, offset, mean and variance a framework would
  create are created (1, 0, 0, 1), as named constants; what cannot be made up is one error line.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from runtime_models import assert_one_line

import ge
from ge.api import op_types
from ge.api.node import Value
from ge.ge_dialects import fused
from ge.ge_dialects.ge.weights import constant_array

EPS = 1e-5


def conv_bn_relu_pool() -> ge.Graph:
    """The operator-fusion example's graph, call for call."""
    graph = ge.Graph()
    x = graph.add_input("input", shape=[1, 3, 224, 224])
    conv = graph.add_conv2d(x, out_channels=64, kernel_size=7, stride=2, padding=3)
    bn = graph.add_batchnorm(conv)
    relu = graph.add_relu(bn)
    graph.add_maxpool(relu, kernel_size=3, stride=2, padding=1)
    return graph


@pytest.fixture(scope="module")
def image() -> np.ndarray:
    return np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)


def test_operator_fusion_as_written(image):
    graph = conv_bn_relu_pool()
    before = len(graph.nodes)
    optimizer = ge.GraphOptimizer()
    fused_graph = optimizer.apply_operator_fusion(graph)
    after = len(fused_graph.nodes)
    assert (before, after) == (10, 4)  # filter, bias, conv, 4 BN parameters, BN, relu, pool -> 2 constants, group, pool
    assert [n.type for n in fused_graph.nodes] == ["Const", "Const", "fused.group", "MaxPool"]
    (group,) = [n.op for n in fused_graph.nodes if isinstance(n.op, fused.GroupOp)]
    assert [m.name for m in group.members] == ["ge.conv", "ge.relu"]  # Conv+BN+ReLU: one kernel
    reference = ge.GraphExecutor().load_graph(graph).run(image)
    result = ge.GraphExecutor().load_graph(fused_graph).run(image)
    np.testing.assert_allclose(result, reference, rtol=1e-4, atol=1e-5)
    assert "fold-conv-bn" in optimizer.last_pipeline and "fuse-ops" in optimizer.last_pipeline


GENERATED = re.compile(r"^[a-z_]+\.[a-z_]+#\d+$")  # api/node.py's name for an op without one


def test_names_survive_standard_optimizations(image):
    graph = conv_bn_relu_pool()
    optimized = ge.GraphOptimizer().apply_standard_optimizations(graph)
    names = [n.name for n in optimized.nodes]
    assert not [n for n in names if GENERATED.match(n)]
    assert names == [
        "conv_1/bias/bn_folded",  # the conv's bias with the BN folded in
        "input/trans_data",  # the image into NC1HWC0
        "conv_1/filter/bn_folded",  # the filter with the BN folded in (FRACTAL_Z)
        "conv_1",  # the conv+relu group, named after its anchor
        "maxpool_1",  # the pool, which converts its result back to NCHW in its UB (TransDataTo5HD)
    ]
    np.testing.assert_allclose(
        ge.GraphExecutor().load_graph(optimized).run(image),
        ge.GraphExecutor().load_graph(graph).run(image),
        rtol=1e-4,
        atol=1e-5,
    )


def test_batchnorm_op_as_written():
    graph = ge.Graph()
    x = graph.placeholder(shape=[2, 3, 8, 8], dtype="float32", name="x")
    w = graph.const(value=np.random.default_rng(1).standard_normal((4, 3, 3, 3)).astype(np.float32), name="w")
    conv = graph.op("Conv2D", inputs=[x, w], attrs={"pads": [1, 1, 1, 1]})
    bn = graph.op("BatchNorm", inputs=[conv])
    assert isinstance(bn, Value) and bn.shape == [2, 4, 8, 8]
    made = {n.name: n for n in graph.nodes if n.type == "Const" and n.name.startswith("BatchNorm_1/")}
    assert sorted(made) == ["BatchNorm_1/mean", "BatchNorm_1/offset", "BatchNorm_1/scale", "BatchNorm_1/variance"]
    bn_node = graph.node("BatchNorm_1")
    assert [v.name for v in bn_node.inputs[1:]] == [f"BatchNorm_1/{k}" for k in ("scale", "offset", "mean", "variance")]
    for key, value in {"scale": 1.0, "offset": 0.0, "mean": 0.0, "variance": 1.0}.items():
        array = constant_array(made[f"BatchNorm_1/{key}"].outputs[0].ssa)
        assert array is not None and array.dtype == np.float32
        np.testing.assert_array_equal(array, np.full(4, value, np.float32), err_msg=key)
    graph.set_outputs([bn, conv], ["bn", "conv"])
    data = np.random.default_rng(2).standard_normal((2, 3, 8, 8)).astype(np.float32)
    out = ge.GraphExecutor().load_graph(graph).run(data)
    # scale 1, offset 0, mean 0, variance 1: y = x / sqrt(1 + eps)
    np.testing.assert_allclose(out["bn"], out["conv"] / np.sqrt(np.float32(1 + EPS)), rtol=1e-6, atol=1e-6)


def test_layernorm_op_creates_gamma_and_beta():
    graph = ge.Graph()
    x = graph.placeholder(shape=[2, 5, 6], name="x")
    y = graph.op("LayerNorm", inputs=[x], attrs={"begin_norm_axis": -2})
    gamma, beta = graph.node("LayerNorm_1").inputs[1:]
    assert (gamma.name, gamma.shape, beta.name, beta.shape) == ("LayerNorm_1/gamma", [5, 6], "LayerNorm_1/beta", [5, 6])
    np.testing.assert_array_equal(constant_array(gamma.ssa), np.ones((5, 6), np.float32))
    np.testing.assert_array_equal(constant_array(beta.ssa), np.zeros((5, 6), np.float32))
    no_bias = graph.op("LayerNorm", inputs=[x, None, None])  # None leaves the optional beta out
    assert [v.name for v in graph.node("LayerNorm_2").inputs] == ["x", "LayerNorm_2/gamma"]
    data = np.random.default_rng(3).standard_normal((2, 5, 6)).astype(np.float32)
    graph.set_outputs([y, no_bias], ["y", "no_bias"])
    out = ge.GraphExecutor().load_graph(graph).run(data)
    mean = data.mean(axis=(1, 2), keepdims=True)
    var = data.var(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(out["y"], (data - mean) / np.sqrt(var + EPS), rtol=1e-5, atol=1e-5)
    last = (data - data.mean(-1, keepdims=True)) / np.sqrt(data.var(-1, keepdims=True) + EPS)
    np.testing.assert_allclose(out["no_bias"], last, rtol=1e-5, atol=1e-5)


def test_add_layernorm_takes_the_tables_values():
    graph = ge.Graph()
    y = graph.add_layernorm(graph.placeholder([2, 6], name="x"))
    gamma, beta = graph.node(y.name).inputs[1:]
    assert (gamma.name, beta.name) == ("layernorm_1/gamma", "layernorm_1/beta")
    np.testing.assert_array_equal(constant_array(gamma.ssa), np.ones(6, np.float32))
    np.testing.assert_array_equal(constant_array(beta.ssa), np.zeros(6, np.float32))


def test_created_parameters_are_trained():
    """What `op` creates for a framework is a parameter (ge.constant `parameter`), as add_layernorm's were."""
    graph = ge.Graph()
    x = graph.placeholder(shape=[2, 3, 4, 4], name="x")
    graph.op("BatchNorm", inputs=[x])
    graph.add_layernorm(graph.placeholder([2, 6], name="y"))
    made = [n for n in graph.nodes if n.type == "Const"]
    assert len(made) == 6
    for node in made:
        assert node.outputs[0].ssa.owner.parameter is not None, node.name


def test_only_the_norms_create_parameters():
    """The table's `Initial`s: a norm's scale, offset and statistics; never a filter, weight or bias
    (their shapes or values are the caller's), and never an input before one that must be given."""
    created = {
        name: [s.name for s in entry.inputs if s.initial is not None]
        for name, entry in op_types.OP_TYPES.items()
        if any(s.initial is not None for s in entry.inputs)
    }
    assert created == {"BatchNorm": ["scale", "offset", "mean", "variance"], "LayerNorm": ["gamma", "beta"]}
    for entry in op_types.OP_TYPES.values():
        kinds = [s.required for s in entry.inputs]
        assert kinds == sorted(kinds, reverse=True), f"{entry.name}: an input to create comes before a required one"


def _image(graph: ge.Graph, dims=(2, 3, 8, 8)) -> ge.Value:
    return graph.placeholder(shape=list(dims), name="x")


@pytest.mark.parametrize(
    "build, message",
    [
        (
            lambda g: g.op("BatchNorm", inputs=[]),
            r"'BatchNorm_1' \(BatchNorm\): takes 1 to 5 inputs \(x, scale=1, "
            r"offset=0, mean=0, variance=1\), got 0, 'x' is not given",
        ),
        (
            lambda g: g.op("BatchNorm", inputs=[_image(g), 1, 2, 3, 4, 5]),
            r"'BatchNorm_1' \(BatchNorm\): takes 1 to 5 .*got 6$",
        ),
        (lambda g: g.op("BatchNorm", inputs=[None]), r"'BatchNorm_1' \(BatchNorm\): takes 1 to 5 .*got 1, 'x' is None"),
        (
            lambda g: g.op("BatchNorm", inputs=[_image(g, (2, None, 8, 8))]),
            r"'BatchNorm_1' \(BatchNorm\): input 'scale' is not given and cannot be created: needs the channel dim "
            r"\(dim 1\) of x, which has dims \[2, \?, 8, 8\]",
        ),
        (
            lambda g: g.op("BatchNorm", inputs=[g.placeholder([6], name="v")]),
            r"'BatchNorm_1' \(BatchNorm\): input 'scale' is not given and cannot be created: needs the channel dim",
        ),
        (  # the parameters are made, then the op refuses its input: none of them stays in the graph
            lambda g: g.op("BatchNorm", inputs=[g.placeholder([2, 3, 4, 4], "int64", name="i")]),
            r"'BatchNorm_1' \(BatchNorm\): operand 'X' has element type i64; expected one of f32",
        ),
        (
            lambda g: g.op("LayerNorm", inputs=[_image(g)], attrs={"begin_norm_axis": 4}),
            r"'LayerNorm_1' \(LayerNorm\): input 'gamma' is not given and cannot be created: needs begin_norm_axis 4",
        ),
        (
            lambda g: g.op("Conv2D", inputs=[_image(g)]),
            r"'Conv2D_1' \(Conv2D\): takes 2 to 3 inputs \(x, filter, bias\?\), got 1, 'filter' is not given",
        ),
        (
            lambda g: g.op("GemmV2", inputs=[g.placeholder([2, 3], name="a")]),
            r"'GemmV2_1' \(GemmV2\): takes 2 to 5 inputs .*got 1, 'b' is not given",
        ),
    ],
)
def test_what_cannot_be_created_is_one_line(build, message):
    graph = ge.Graph()
    before = len(graph.nodes)
    with pytest.raises(ge.GEError, match=message) as e:
        build(graph)
    assert_one_line(e.value)
    assert len(graph.nodes) == before  # a refused call adds nothing (no half-made parameters)
