"""Import of the ONNX training domain's update ops (ai.onnx.preview.training Momentum, Adam, Adagrad):
every mode and attribute combination against onnx's reference implementation (onnx.reference, not
onnxruntime, whose default build lacks these ops), run through the importer and the ge interpreter;
the errors for what the importer refuses; a mutation of the import mapping the comparison catches;
and ge.apply_adagrad's kernel against an independent numpy formula."""

from __future__ import annotations

import itertools

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from ge.frontend import onnx_training
from ge.frontend.onnx_importer import import_model
from ge.frontend.onnx_ops import OnnxImportError
from ge.ge_dialects import ge
from ge.interpreter.runner import run

DOMAIN = "ai.onnx.preview.training"
SLOTS = {"Momentum": ["V"], "Adam": ["V", "H"], "Adagrad": ["H"]}
SHAPES = [(3, 4), (5,)]


def _model(op_type: str, attrs: dict, count: int = 2, rate=0.1, step=3, runtime_rate: bool = False):
    """An update node over `count` tensors; X, G and the slots are graph inputs (so nothing folds)."""
    groups = ["X", "G", *SLOTS[op_type]]
    inputs = [f"{k}{i}" for k in groups for i in range(count)]
    outputs = [f"{k}{i}_new" for k in ["X", *SLOTS[op_type]] for i in range(count)]
    shapes = {f"{k}{i}": SHAPES[i % len(SHAPES)] for k in groups for i in range(count)}
    node = helper.make_node(op_type, ["R", "T", *inputs], outputs, name="update", domain=DOMAIN, **attrs)
    graph_inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, shapes[n]) for n in inputs]
    inits = [numpy_helper.from_array(np.asarray(step, np.int64), "T")]
    if runtime_rate:
        graph_inputs.append(helper.make_tensor_value_info("R", TensorProto.FLOAT, []))
    else:
        inits.append(numpy_helper.from_array(np.asarray(rate, np.float32), "R"))
    out_shapes = {f"{k}{i}_new": SHAPES[i % len(SHAPES)] for k in ["X", *SLOTS[op_type]] for i in range(count)}
    graph = helper.make_graph(
        [node],
        "g",
        graph_inputs,
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, out_shapes[n]) for n in outputs],
        inits,
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid(DOMAIN, 1)]
    return helper.make_model(graph, opset_imports=opsets)


def _feeds(model: onnx.ModelProto, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    feeds = {}
    for vi in model.graph.input:
        shape = [d.dim_value for d in vi.type.tensor_type.shape.dim]
        value = rng.standard_normal(shape).astype(np.float32)
        feeds[vi.name] = np.abs(value) if vi.name.startswith("H") else value  # squared-gradient sums
    return feeds


def _compare(model: onnx.ModelProto, seed: int = 0) -> None:
    feeds = _feeds(model, seed)
    names = [o.name for o in model.graph.output]
    expected = dict(zip(names, ReferenceEvaluator(model).run(None, feeds)))
    module, weights = import_model(model)
    got = run(module, feeds, weights)
    for name in names:
        np.testing.assert_allclose(got[name], expected[name], rtol=2e-5, atol=2e-6, err_msg=name)


MOMENTUM = [
    {"mode": mode, "alpha": alpha, "beta": beta, "norm_coefficient": norm, "_step": step}
    for mode, alpha, beta, norm, step in itertools.product(
        ["standard", "nesterov"], [0.0, 0.9], [1.0, 0.1], [0.0, 0.05], [0, 3]
    )
]
ADAM = [
    {"alpha": a, "beta": b, "epsilon": eps, "norm_coefficient": norm, "norm_coefficient_post": post, "_step": step}
    for (a, b), eps, norm, post, step in itertools.product(
        [(0.9, 0.999), (0.5, 0.0)], [1e-6, 0.1], [0.0, 0.05], [0.0, 0.02], [0, 1, 7]
    )
]
ADAGRAD = [
    {"decay_factor": decay, "epsilon": eps, "norm_coefficient": norm, "_step": step}
    for decay, eps, norm, step in itertools.product([0.0, 0.3], [0.0, 1e-6, 0.1], [0.0, 0.05], [0, 4])
]
CASES = [("Momentum", c) for c in MOMENTUM] + [("Adam", c) for c in ADAM] + [("Adagrad", c) for c in ADAGRAD]


def _case_id(case) -> str:
    op_type, attrs = case
    return op_type + "-" + "-".join(f"{k.strip('_')}={v}" for k, v in attrs.items())


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_update_matches_onnx_reference(case):
    op_type, attrs = case
    attrs = dict(attrs)
    step = attrs.pop("_step")
    _compare(_model(op_type, attrs, step=step), seed=step)


@pytest.mark.parametrize("op_type", ["Momentum", "Adam", "Adagrad"])
def test_single_tensor_and_defaults(op_type):
    attrs = {"mode": "nesterov", "alpha": 0.8, "beta": 0.5, "norm_coefficient": 0.01} if op_type == "Momentum" else {}
    _compare(_model(op_type, attrs, count=1, rate=0.03, step=2))


def test_each_tensor_gets_one_update_op():
    model = _model("Adam", {}, count=3)
    module, _ = import_model(model)
    updates = [op for op in module.walk() if isinstance(op, ge.ApplyAdamOp)]
    assert len(updates) == 3
    assert all(op.p("beta1") == pytest.approx(0.9) and op.p("decoupled") == 0 for op in updates)


def test_r_and_t_as_constant_nodes():
    """R and T made by Constant nodes (not initializers) are constants too."""
    model = _model("Adagrad", {"decay_factor": 0.5}, count=1)
    graph = model.graph
    del graph.initializer[:]
    graph.node.insert(0, helper.make_node("Constant", [], ["R"], value_float=0.2))
    graph.node.insert(1, helper.make_node("Constant", [], ["T"], value=numpy_helper.from_array(np.int64(2))))
    _compare(model)


def test_training_import_keeps_rank_one_rate_usable():
    """With training=True a rank-1 R is a weight, not an inline literal: still a constant."""
    model = _model("Momentum", {"mode": "standard", "alpha": 0.5, "beta": 1.0, "norm_coefficient": 0.0})
    model.graph.initializer[1].CopyFrom(numpy_helper.from_array(np.asarray([0.1], np.float32), "R"))
    feeds = _feeds(model, 1)
    expected = ReferenceEvaluator(model).run(None, feeds)
    module, weights = import_model(model, training=True)
    got = run(module, feeds, weights)
    np.testing.assert_allclose(got["X0_new"], expected[0], rtol=2e-5, atol=2e-6)


# -- mutations the comparison catches ------------------------------------------------------------------


def _swapped(one_tensor):
    def mutated(*args):
        x_new, slot_new, *rest = one_tensor(*args)
        return [slot_new, x_new, *rest]

    return mutated


@pytest.mark.parametrize("op_type", ["Momentum", "Adam", "Adagrad"])
def test_mutation_swapped_outputs_is_caught(monkeypatch, op_type):
    form = onnx_training.FORMS[op_type]
    monkeypatch.setitem(
        onnx_training.FORMS, op_type, form.__class__(**{**form.__dict__, "one_tensor": _swapped(form.one_tensor)})
    )
    attrs = {"mode": "standard", "alpha": 0.9, "beta": 0.5, "norm_coefficient": 0.0} if op_type == "Momentum" else {}
    with pytest.raises(AssertionError):
        _compare(_model(op_type, attrs))


def test_mutation_ignoring_first_step_beta_rule_is_caught(monkeypatch):
    """Momentum's beta is 1 at T = 0: importing beta unconditionally differs from the reference."""
    attrs = {"mode": "standard", "alpha": 0.9, "beta": 0.5, "norm_coefficient": 0.0}
    model = _model("Momentum", attrs, step=0)
    _compare(model)  # the correct import agrees
    original = onnx_training._momentum

    def beta_always(node, x, g, v):
        node.count = max(node.count, 1)
        return original(node, x, g, v)

    form = onnx_training.FORMS["Momentum"]
    monkeypatch.setitem(onnx_training.FORMS, "Momentum", form.__class__(**{**form.__dict__, "one_tensor": beta_always}))
    with pytest.raises(AssertionError):
        _compare(model)


# -- errors -------------------------------------------------------------------------------------------------


def _import_error(model: onnx.ModelProto) -> str:
    with pytest.raises(OnnxImportError) as e:
        import_model(model)
    message = str(e.value)
    assert "\n" not in message
    return message


def _with_attr(model: onnx.ModelProto, **attrs) -> onnx.ModelProto:
    node = model.graph.node[0]
    for key, value in attrs.items():
        kept = [a for a in node.attribute if a.name != key]
        del node.attribute[:]
        node.attribute.extend(kept)
        node.attribute.append(helper.make_attribute(key, value))
    return model


MOMENTUM_ATTRS = {"mode": "standard", "alpha": 0.9, "beta": 1.0, "norm_coefficient": 0.0}


@pytest.mark.parametrize(
    "op_type, attrs, message",
    [
        ("Momentum", {"mode": "heavy_ball"}, "mode = 'heavy_ball' is not supported (must be 'standard' or 'nesterov')"),
        ("Momentum", {"alpha": 1.0}, "alpha = 1.0 is not supported (must be in [0, 1))"),
        ("Adam", {"beta": 1.0}, "beta = 1.0 is not supported (must be in [0, 1))"),
        ("Adam", {"epsilon": 0.0}, "epsilon = 0.0 is not supported (must be > 0)"),
        ("Adam", {"norm_coefficient": -0.5}, "norm_coefficient = -0.5 is not supported (must be >= 0)"),
        ("Adagrad", {"decay_factor": -1.0}, "decay_factor = -1.0 is not supported (must be >= 0)"),
        ("Adagrad", {"lr_power": 0.5}, "unknown attribute 'lr_power'"),
    ],
)
def test_unsupported_attribute_values(op_type, attrs, message):
    base = MOMENTUM_ATTRS if op_type == "Momentum" else {}
    text = _import_error(_with_attr(_model(op_type, base), **attrs))
    assert text == f"node 'update': {DOMAIN} {op_type}: {message}"


def test_missing_required_momentum_attribute():
    attrs = {k: v for k, v in MOMENTUM_ATTRS.items() if k != "beta"}
    text = _import_error(_model("Momentum", attrs))
    assert text == f"node 'update': {DOMAIN} Momentum: required attribute 'beta' is missing"


def test_runtime_rate_is_refused():
    text = _import_error(_model("Adam", {}, runtime_rate=True))
    assert text == (
        f"node 'update': {DOMAIN} Adam: R 'R' must be a constant (an initializer or a Constant node), "
        "ge's update ops take it as a property"
    )


def test_float_step_count_is_refused():
    model = _model("Adagrad", {})
    model.graph.initializer[0].CopyFrom(numpy_helper.from_array(np.asarray(1.0, np.float32), "T"))
    assert _import_error(model) == f"node 'update': {DOMAIN} Adagrad: T 'T' must be one integer value, got float32 []"


def test_negative_rate_is_refused():
    assert _import_error(_model("Adagrad", {}, rate=-0.1)).endswith("Adagrad: R = -0.10000000149011612 must be >= 0")


def test_wrong_input_count():
    model = _model("Adagrad", {})
    model.graph.node[0].input.pop()
    text = _import_error(model)
    assert text == f"node 'update': {DOMAIN} Adagrad: takes R, T and 3 inputs per optimized tensor, got 7 inputs"


def test_wrong_output_count():
    model = _model("Adam", {}, count=1)
    model.graph.node[0].output.pop()
    model.graph.output.pop()
    text = _import_error(model)
    assert text == f"node 'update': {DOMAIN} Adam: 1 optimized tensors need 3 outputs, the node has 2"


def test_mismatched_slot_shape_names_the_node():
    model = _model("Momentum", MOMENTUM_ATTRS, count=1)
    model.graph.input[2].CopyFrom(helper.make_tensor_value_info("V0", TensorProto.FLOAT, [2, 2]))
    text = _import_error(model)
    assert text.startswith(f"node 'update': {DOMAIN} Momentum: ge.apply_momentum 'update': operand 'accum'")


@pytest.mark.parametrize("op_type", ["Gradient", "GraphCall"])
def test_unknown_training_operator(op_type):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    node = helper.make_node(op_type, ["x"], ["y"], name="n", domain=DOMAIN)
    graph = helper.make_graph([node], "g", [x], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(DOMAIN, 1)])
    assert _import_error(model) == f"node 'n': {DOMAIN} {op_type} is not supported"


def test_training_domain_not_imported():
    model = _model("Adagrad", {})
    del model.opset_import[1]
    text = _import_error(model)
    assert text == f"node 'update': {DOMAIN} Adagrad needs the model to import {DOMAIN} version 1, it imports None"


# -- ge.apply_adagrad's kernel -------------------------------------------------------------------------------


@pytest.mark.parametrize("update_slots", [1, 0])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_apply_adagrad_kernel(update_slots, dtype):
    from xdsl.dialects import func
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.ir import Block, Region

    from ge.ge_dialects.ge.types import element_type_of, tensor

    rng = np.random.default_rng(3)
    var, grad = rng.standard_normal((2, 3)).astype(dtype), rng.standard_normal((2, 3)).astype(dtype)
    accum = np.abs(rng.standard_normal((2, 3))).astype(dtype)
    t = tensor(element_type_of(np.dtype(dtype)), (2, 3))
    block = Block(arg_types=[t, t, t])
    props = {"lr": 0.25, "epsilon": 0.125, "update_slots": update_slots}
    op = ge.ApplyAdagradOp.create(dict(zip(("var", "accum", "grad"), block.args)), props)
    block.add_ops([op, func.ReturnOp(*op.results)])
    module = ModuleOp([func.FuncOp("main", ([t, t, t], [t, t]), Region(block))])
    got = list(run(module, {"arg0": var, "arg1": accum, "arg2": grad}, {}).values())
    new_accum = accum + grad**2 if update_slots else accum
    expected_var = var - 0.25 * grad / (np.sqrt(new_accum) + 0.125)
    assert got[0].dtype == dtype
    np.testing.assert_allclose(got[0], expected_var, rtol=1e-6)
    np.testing.assert_allclose(got[1], new_accum, rtol=1e-6)
