"""ge.grad: gradients against central finite differences on a tiny float64 MLP; checkpoints change no
number; add-loss when the forward has no loss; every refusal in one line."""

from __future__ import annotations

import numpy as np
import pytest
from runtime_models import assert_one_line, graph_of, logits_mlp, mlp

import ge
from ge.api.graph import Graph
from ge.ge_dialects.ge.constant import ConstantOp
from ge.ge_dialects.ge.weights import weights_of
from ge.interpreter.runner import run
from ge.passes.checkpoint import RECOMPUTE_ATTR


@pytest.fixture(scope="module")
def fwd() -> Graph:
    return graph_of(mlp(), training=True)


X = {"x": np.random.default_rng(7).standard_normal((3, 4))}


def _loss(graph: Graph, key: str | None = None, value: np.ndarray | None = None, inputs=X) -> float:
    copy = graph.copy()
    if key is not None:
        weights_of(copy.module).added[key] = value
    return float(run(copy.module, inputs)["loss"])


def _finite_differences(graph: Graph, key: str, inputs=X, eps: float = 1e-6) -> np.ndarray:
    base = np.array(weights_of(graph.module)[key])
    grad = np.zeros_like(base)
    for i in np.ndindex(base.shape):
        up, down = base.copy(), base.copy()
        up[i] += eps
        down[i] -= eps
        grad[i] = (_loss(graph, key, up, inputs) - _loss(graph, key, down, inputs)) / (2 * eps)
    return grad


def test_gradients_match_finite_differences(fwd):
    backward = ge.grad(fwd, wrt=["fc1.weight", "fc3.weight"])
    assert backward.outputs == ["loss", "fc1.weight_grad", "fc3.weight_grad"]
    assert fwd.outputs == ["loss"]  # the forward is untouched
    out = ge.GraphExecutor().load_graph(backward).run(X["x"])
    assert float(out["loss"]) == _loss(fwd)
    for key in ("fc1.weight", "fc3.weight"):
        np.testing.assert_allclose(out[f"{key}_grad"], _finite_differences(fwd, key), rtol=1e-6, atol=1e-9)


def test_every_trainable_weight_by_default(fwd):
    assert ge.grad(fwd).outputs == ["loss", "fc1.weight_grad", "fc2.weight_grad", "fc3.weight_grad"]


class _Node:
    """A node object as a graph builder hands out: a view of its op."""

    def __init__(self, op):
        self.op = op
        self.name = "not the weight key"


def test_wrt_takes_parameters_as_a_dict_or_weight_nodes(fwd):
    params = {k: weights_of(fwd.module)[k] for k in ("fc2.weight", "fc3.weight")}
    assert ge.grad(fwd, wrt=params).outputs == ["loss", "fc2.weight_grad", "fc3.weight_grad"]
    constants = [op for op in fwd.module.walk() if isinstance(op, ConstantOp) and op.weight_key == "fc1.weight"]
    assert ge.grad(fwd, wrt=[_Node(constants[0])]).outputs == ["loss", "fc1.weight_grad"]


def test_checkpoints_change_nothing_numerically(fwd):
    plain = ge.grad(fwd)
    kept = ge.grad(fwd, checkpoints=["layer_1_relu", "layer_3_relu"])
    recomputed = [op for op in kept.module.walk() if RECOMPUTE_ATTR in op.attributes]
    assert recomputed, "checkpointing recomputed nothing"
    assert not [op for op in plain.module.walk() if RECOMPUTE_ATTR in op.attributes]
    a, b = run(plain.module, X), run(kept.module, X)
    assert a.keys() == b.keys()
    for name in a:
        np.testing.assert_array_equal(a[name], b[name])
    by_policy = ge.grad(fwd, checkpoints="sqrt")
    for name, value in run(by_policy.module, X).items():
        np.testing.assert_array_equal(value, a[name])


def test_add_loss_when_the_forward_has_none():
    fwd = graph_of(logits_mlp(), training=True)
    backward = ge.grad(fwd, loss_kind="mse")
    assert backward.inputs == ["x", "labels"]
    assert backward.outputs == ["y", "loss", "fc1.weight_grad", "fc2.weight_grad"]
    rng = np.random.default_rng(3)
    inputs = {"x": rng.standard_normal((3, 4)), "labels": rng.standard_normal((3, 3))}
    out = run(backward.module, inputs)
    loss_graph = ge.grad(fwd, loss_kind="mse", wrt=["fc2.weight"])  # same loss, one gradient
    assert out["loss"].dtype == np.float32  # add-loss keeps a loss in f32: differences at a coarser step
    expected = _finite_differences(loss_graph, "fc2.weight", inputs, eps=1e-3)
    np.testing.assert_allclose(out["fc2.weight_grad"], expected, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"wrt": ["fc9.weight"]}, "fc9.weight"),
        ({"wrt": "fc1.weight"}, "wrt must be a list"),
        ({"wrt": 3}, "wrt must be a list"),
        ({"wrt": [3]}, "wrt must be a list"),
        ({"wrt": ["fc1.weight,fc2.weight"]}, "without commas"),
        ({"wrt": []}, "wrt names no parameter"),
        ({"frozen": []}, "frozen names no parameter"),
        ({"frozen": ["fc9.weight"]}, "frozen names 'fc9.weight', which is not a parameter"),
        ({"frozen": ["fc1.weight"], "wrt": ["fc1.weight"]}, "not both"),
        ({"checkpoints": ["layer_9_relu"]}, "checkpoint 'layer_9_relu' names no node"),
        ({"checkpoints": "nodes"}, "checkpoints='nodes'"),
        ({"loss": "y"}, "no output 'y'"),
        ({"loss": "loss", "loss_kind": "mse"}, "give one of them"),
        ({"loss_kind": "hinge"}, "hinge"),
    ],
)
def test_errors_are_one_line(fwd, kwargs, message):
    with pytest.raises(ge.GEError, match=message) as e:
        ge.grad(fwd, **kwargs)
    assert_one_line(e.value)


def test_a_graph_without_a_scalar_output_needs_a_loss():
    with pytest.raises(ge.GEError, match="0 float scalar outputs") as e:
        ge.grad(graph_of(logits_mlp(), training=True))
    assert_one_line(e.value)
    with pytest.raises(ge.GEError, match="expected a ge.Graph"):
        ge.grad("fwd")
    several = ge.grad(graph_of(mlp(), training=True))
    with pytest.raises(ge.GEError, match=r"has 4 outputs; name the one to add the loss on \(output=...\)") as e:
        ge.grad(several, loss_kind="mse")
    assert_one_line(e.value)
    with pytest.raises(ge.GEError, match="no func.func @main"):
        ge.grad(_no_main())


def _no_main() -> ge.Graph:
    """A graph over a module without func.func @main (a module a user wrapped by hand)."""
    from xdsl.dialects.builtin import ModuleOp

    return ge.Graph.from_module(ModuleOp([]))


def _layers_graph(literal_scale: bool = True) -> Graph:
    """conv (4 channels: a bias of 4), batch norm, layer norm, linear (a bias of 3), MSE loss: the
    layers' small weights are inline constants, parameters all the same."""
    g = Graph(seed=1)
    x = g.add_input("x", [2, 2, 4, 4], "float64")
    y = g.add_relu(g.add_batchnorm(g.add_conv2d(x, 4, 3, padding=1, name="conv"), name="bn"))
    y = g.add_layernorm(g.add_flatten(y), name="ln")
    y = g.add_linear(y, 3, name="fc")
    if literal_scale:
        y = g.op("Mul", [y, g.const(np.array(0.5), name="scale", parameter=False)])
    g.set_outputs([y], ["y"])
    return g


def test_the_layers_small_weights_are_parameters():
    g = _layers_graph()
    keys = sorted(op.parameter_key for op in g.module.walk() if isinstance(op, ConstantOp) and op.parameter_key)
    assert keys == [
        "bn/mean", "bn/offset", "bn/scale", "bn/variance", "conv/bias", "conv/filter",
        "fc/bias", "fc/weight", "ln/beta", "ln/gamma",
    ]  # fmt: skip
    inline = {op.parameter_key for op in g.module.walk() if isinstance(op, ConstantOp) and op.weight_key is None}
    assert {"conv/bias", "fc/bias", "bn/scale", "bn/offset"} <= inline
    backward = ge.grad(g, loss_kind="mse")
    grads = sorted(n.removesuffix("_grad") for n in backward.outputs if n.endswith("_grad"))
    # the inference BatchNorm's statistics take no gradient; the literal scale is no parameter
    assert grads == [k for k in keys if k not in ("bn/mean", "bn/variance")]
    frozen = ge.grad(g, loss_kind="mse", frozen=["fc/bias", "conv/bias"])
    assert "fc/bias_grad" not in frozen.outputs and "conv/bias_grad" not in frozen.outputs
    assert len([n for n in frozen.outputs if n.endswith("_grad")]) == len(grads) - 2


def test_a_parameter_is_a_float_constant():
    g = Graph()
    assert g.const(np.arange(3), name="ids").node.op.parameter_key is None  # integers are literals
    assert g.const([1.0, 2.0], name="w").node.op.parameter_key == "w"
    with pytest.raises(ge.GEError, match="constant 'n': a parameter is a float tensor, got dtype int64") as e:
        g.const(np.arange(3), name="n", parameter=True)
    assert_one_line(e.value)
