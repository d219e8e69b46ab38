"""Operators without a ge op import as their ONNX function bodies (frontend/onnx_functions.py):
schema functions, context-dependent functions and model-local functions, expanded in the node's
place, recursively; onnxruntime (which runs the operators natively or expands them itself) is the
oracle. Recursion and expansions beyond the node budget are refused in one line."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper
from onnx_oracle import compare_with_onnxruntime, node_model

from ge.frontend.onnx_importer import import_model
from ge.frontend.onnx_ops import OnnxImportError
from ge.ge_dialects.ge.base import location_name
from ge.tools import ge_translate

RNG = np.random.default_rng(7)
F32 = onnx.TensorProto.FLOAT
LOCAL = "local.fns"


def _ops(module) -> set[str]:
    return {op.name for op in module.walk()}


def test_a_schema_function_is_expanded_and_equals_onnxruntime():
    """Celu's body (Div, Elu, Mul; Elu's own body: Less, Exp, Sub, Where) with alpha from the node."""
    x = RNG.standard_normal((3, 4)).astype(np.float32) * 3
    module = compare_with_onnxruntime(node_model("Celu", {"x": x}, 1, alpha=0.7), {"x": x}, 1e-6, 1e-6)
    assert {"ge.exp", "ge.where", "ge.less"} <= _ops(module)


def test_a_schema_functions_attribute_defaults_apply():
    """ThresholdedRelu without `alpha` is the body with alpha's default, 1.0."""
    x = np.linspace(-2, 2, 9, dtype=np.float32)
    compare_with_onnxruntime(node_model("ThresholdedRelu", {"x": x}, 1), {"x": x}, 0, 0)


@pytest.mark.parametrize(
    "op_type, opset, inputs, attrs",
    [
        ("CastLike", 21, {"x": np.arange(6, dtype=np.float32).reshape(2, 3), "like": np.zeros(1, np.float16)}, {}),
        (
            "GroupNormalization",
            18,  # GroupNormalization-18's body (opset 21 changed its scale's shape)
            {
                "x": RNG.standard_normal((2, 4, 3, 3)).astype(np.float32),
                "scale": RNG.standard_normal(2).astype(np.float32),
                "bias": RNG.standard_normal(2).astype(np.float32),
            },
            {"num_groups": 2, "epsilon": 1e-3},
        ),
        ("SpaceToDepth", 28, {"x": RNG.standard_normal((1, 2, 4, 6)).astype(np.float32)}, {"blocksize": 2}),
    ],
)
def test_a_context_dependent_function_is_built_for_the_nodes_types(op_type, opset, inputs, attrs):
    model = node_model(op_type, inputs, 1, **attrs)
    model.opset_import[0].version = opset
    compare_with_onnxruntime(model, inputs, 1e-5, 1e-5)


def _local(name: str, nodes, inputs=("x",), outputs=("y",), attributes=()) -> onnx.FunctionProto:
    return helper.make_function(
        LOCAL,
        name,
        list(inputs),
        list(outputs),
        nodes,
        [helper.make_opsetid("", 21), helper.make_opsetid(LOCAL, 1)],
        attributes=list(attributes),
    )


def _scaled_by(attribute: str) -> list[onnx.NodeProto]:
    """y = x * @attribute (a Constant reading the function's attribute)."""
    value = helper.make_attribute_ref("value_float", onnx.AttributeProto.FLOAT, ref_attr_name=attribute)
    constant = helper.make_node("Constant", [], ["s"])
    constant.attribute.append(value)
    return [constant, helper.make_node("Mul", ["x", "s"], ["y"])]


def _model(functions, calls, shape=(2, 3)) -> onnx.ModelProto:
    """x -> call -> call -> ... -> out0, each (function name, attributes)."""
    nodes, current = [], "x"
    for i, (fn, attrs) in enumerate(calls):
        out = "out0" if i == len(calls) - 1 else f"t{i}"
        nodes.append(helper.make_node(fn, [current], [out], name=f"call{i}", domain=LOCAL, **attrs))
        current = out
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", F32, shape)],
        [helper.make_tensor_value_info("out0", F32, shape)],
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid(LOCAL, 1)], functions=functions
    )
    model.ir_version = 10
    return model


def test_model_local_functions_expand_recursively_with_their_attributes():
    """Twice calls Scale twice; Scale's factor is the caller's attribute, else its default (2)."""
    scale = _local("Scale", _scaled_by("factor"))
    scale.attribute_proto.append(helper.make_attribute("factor", 2.0))
    twice = _local(
        "Twice",
        [helper.make_node("Scale", ["x"], ["h"], domain=LOCAL), helper.make_node("Scale", ["h"], ["y"], domain=LOCAL)],
    )
    model = _model([scale, twice], [("Twice", {}), ("Scale", {"factor": 0.5})])
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    module = compare_with_onnxruntime(model, {"x": x}, 0, 0)
    muls = [op for op in module.walk() if op.name == "ge.mul"]
    assert len(muls) == 3
    assert [location_name(op) for op in muls] == ["call0/Scale_0/Mul_1", "call0/Scale_1/Mul_1", "call1/Mul_1"]


def refusal(model, **options) -> str:
    with pytest.raises(OnnxImportError) as e:
        import_model(model, **options)
    return str(e.value)


def test_a_function_that_calls_itself_is_refused_naming_the_cycle():
    ping = _local("Ping", [helper.make_node("Pong", ["x"], ["y"], domain=LOCAL)])
    pong = _local(
        "Pong", [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Ping", ["r"], ["y"], domain=LOCAL)]
    )
    assert refusal(_model([ping, pong], [("Ping", {})])) == (
        f"node 'call0/Pong_0/Ping_1' (Ping, opset 21): model-local function '{LOCAL}.Ping' calls itself "
        f"({LOCAL}.Ping -> {LOCAL}.Pong -> {LOCAL}.Ping)"
    )


def _doubling(levels: int) -> list[onnx.FunctionProto]:
    """F0 = Relu; F(k) calls F(k-1) twice: F(levels) expands to 2**levels Relus."""
    functions = [_local("F0", [helper.make_node("Relu", ["x"], ["y"])])]
    for k in range(1, levels + 1):
        calls = [
            helper.make_node(f"F{k - 1}", ["x"], ["h"], domain=LOCAL),
            helper.make_node(f"F{k - 1}", ["h"], ["y"], domain=LOCAL),
        ]
        functions.append(_local(f"F{k}", calls))
    return functions


def test_an_expansion_beyond_the_node_budget_is_refused():
    """2**40 nodes from 41 small functions: refused once the budget is spent (5,000 here; the
    default, MAX_EXPANDED_NODES, is 100,000), long before the doubling would end."""
    message = refusal(_model(_doubling(40), [("F40", {})]), max_expanded_nodes=5000)
    assert message.startswith("node 'call0/F39_0/F38_0/")
    assert message.endswith(
        "(F0, opset 21): expanding its function body would exceed the budget of 5000 nodes "
        "that function expansion may add to a model"
    )


def test_the_budget_counts_every_expanded_node():
    """F3 adds 2 + 4 + 8 call nodes and 8 Relus: a budget of 22 takes them, one of 21 does not."""
    model = _model(_doubling(3), [("F3", {})])
    import_model(model, max_expanded_nodes=2 + 4 + 8 + 8)
    assert "exceed the budget of 21 nodes" in refusal(model, max_expanded_nodes=21)


def test_functions_nested_too_deep_are_refused():
    """F1 calls F2 calls ... F3000: no recursion, but deeper than 64 levels (and than Python's stack)."""
    functions = [_local(f"F{k}", [helper.make_node(f"F{k + 1}", ["x"], ["y"], domain=LOCAL)]) for k in range(1, 3000)]
    functions.append(_local("F3000", [helper.make_node("Relu", ["x"], ["y"])]))
    assert refusal(_model(functions, [("F1", {})])).endswith(
        "(F65, opset 21): function bodies nest deeper than 64 levels"
    )


def test_a_body_with_an_unsupported_operator_is_listed_as_unsupported():
    odd = _local("Odd", [helper.make_node("StringNormalizer", ["x"], ["y"])])
    assert refusal(_model([odd], [("Odd", {})])) == (
        f"1 operator is not supported at opset 21: {LOCAL}.Odd (1 node: 'call0'); register a custom operator "
        "with --load-op-library (docs/custom_ops.md)"
    )


def test_the_tool_prints_a_recursion_as_its_one_error_line(tmp_path, run_main):
    loop = _local("Loop1", [helper.make_node("Loop1", ["x"], ["y"], domain=LOCAL)])
    onnx.save(_model([loop], [("Loop1", {})]), tmp_path / "m.onnx")
    code, out, err = run_main(ge_translate.main, ["--import-onnx", tmp_path / "m.onnx", "-o", tmp_path / "m.mlir"])
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and f"model-local function '{LOCAL}.Loop1' calls itself" in err
    assert not (tmp_path / "m.mlir").exists()


# -- mutations the checks above catch ------------------------------------------------------------


def test_mutation_attribute_references_left_unresolved_is_caught(monkeypatch):
    """Bodies that drop every attribute reference (so Celu runs with Elu's default alpha, 1.0)."""
    from ge.frontend import onnx_functions

    monkeypatch.setattr(onnx_functions, "_attributes_of_call", lambda node, fn, opset: {})
    with pytest.raises((AssertionError, OnnxImportError)):
        test_a_schema_function_is_expanded_and_equals_onnxruntime()


def test_mutation_no_recursion_guard_is_caught(monkeypatch):
    """Without the guard, Ping -> Pong -> Ping nests until the depth limit: another message."""
    from ge.frontend import onnx_functions

    real_enter = onnx_functions.FunctionBodies.enter
    monkeypatch.setattr(
        onnx_functions.FunctionBodies, "enter", lambda self, op, function, where: real_enter(self, op, None, where)
    )
    with pytest.raises(AssertionError):
        test_a_function_that_calls_itself_is_refused_naming_the_cycle()
