"""NonZero, Unique, Compress and NonMaxSuppression on constants (onnx_value_dependent.py): each is
evaluated at import and the graph around it equals onnxruntime; a Compress with a constant
condition gathers from a run-time input; an input the result's shape depends on that is computed
at run time is refused in one line. onnx's node cases of these operators, with their inputs made
constants, give their expected outputs."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx_node_cases import _load_pb, collect
from onnx_oracle import assert_output_matches
from xdsl.dialects.builtin import ModuleOp

from ge.frontend.onnx_importer import import_model, load_onnx
from ge.frontend.onnx_ops import OnnxImportError
from ge.frontend.onnx_value_dependent import VALUE_DEPENDENT_OPS
from ge.interpreter.runner import run

ort = pytest.importorskip("onnxruntime")
RNG = np.random.default_rng(0)


def _const(name: str, array: np.ndarray) -> onnx.NodeProto:
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(array, name))


def _model(nodes, outputs, x_shape=(4, 6)) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape))],
        [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None) for o in outputs],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    inferred = {vi.name: vi for vi in onnx.shape_inference.infer_shapes(model).graph.output}
    for vi in model.graph.output:  # the element types onnxruntime requires of graph outputs
        vi.type.tensor_type.elem_type = inferred[vi.name].type.tensor_type.elem_type
    return model


def _equals_onnxruntime(model: onnx.ModelProto, x: np.ndarray) -> ModuleOp:
    module, weights = import_model(model)
    got = run(module, {"x": x}, weights)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for vi, want in zip(model.graph.output, session.run(None, {"x": x})):
        np.testing.assert_allclose(got[vi.name], want, rtol=1e-6, err_msg=vi.name)
    return module


def _ops(module) -> set[str]:
    return {op.name for op in module.walk()}


def test_nonzero_of_a_constant_mask_indexes_a_runtime_input():
    """Longformer's pattern: NonZero of a constant mask, its indices gathered from the input."""
    mask = (RNG.random((4, 6)) > 0.5).astype(np.float32)
    nodes = [
        _const("mask", mask),
        helper.make_node("NonZero", ["mask"], ["nz"]),
        helper.make_node("Transpose", ["nz"], ["idx"]),
        helper.make_node("GatherND", ["x", "idx"], ["y"]),
    ]
    module = _equals_onnxruntime(_model(nodes, ["y"]), RNG.standard_normal((4, 6)).astype(np.float32))
    assert "ge.gather_nd" in _ops(module)


@pytest.mark.parametrize("attrs", [{}, {"sorted": 0}, {"axis": 0}, {"axis": -1, "sorted": 1}])
def test_unique_of_a_constant(attrs):
    values = RNG.integers(0, 3, (5, 4)).astype(np.float32)
    nodes = [
        _const("v", values),
        helper.make_node("Unique", ["v"], ["u", "first", "inverse", "counts"], **attrs),
        helper.make_node("Cast", ["first"], ["first_f"], to=TensorProto.FLOAT),
        helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
        helper.make_node("Mul", ["first_f", "s"], ["y"]),
    ]
    _equals_onnxruntime(_model(nodes, ["u", "y", "inverse", "counts"]), RNG.standard_normal((4, 6)).astype(np.float32))


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_compress_with_a_constant_condition_gathers_from_a_runtime_input(axis):
    condition = np.array([True, False, True, True], dtype=bool)
    attrs = {} if axis is None else {"axis": axis}
    nodes = [_const("c", condition), helper.make_node("Compress", ["x", "c"], ["y"], **attrs)]
    module = _equals_onnxruntime(_model(nodes, ["y"]), RNG.standard_normal((4, 6)).astype(np.float32))
    assert "ge.gather" in _ops(module)


def test_nonmaxsuppression_of_constant_boxes():
    boxes = np.array([[[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, 10, 1, 11], [0, 100, 1, 101]]], dtype=np.float32)
    scores = np.array([[[0.9, 0.75, 0.6, 0.95]]], dtype=np.float32)
    nodes = [
        _const("boxes", boxes),
        _const("scores", scores),
        _const("keep", np.array([3], dtype=np.int64)),
        _const("iou", np.array([0.5], dtype=np.float32)),
        helper.make_node("NonMaxSuppression", ["boxes", "scores", "keep", "iou"], ["sel"]),
        helper.make_node("Gather", ["sel", "two"], ["box_index"], axis=1),
        helper.make_node("Gather", ["x", "box_index"], ["y"], axis=0),
    ]
    nodes.insert(4, _const("two", np.array(2, dtype=np.int64)))
    _equals_onnxruntime(_model(nodes, ["sel", "y"]), RNG.standard_normal((4, 6)).astype(np.float32))


@pytest.mark.parametrize(
    ("op", "inputs", "which"),
    [("NonZero", ["x"], "#0 'x'"), ("Unique", ["x"], "#0 'x'"), ("Compress", ["x", "xc"], "#1 'xc'")],
)
def test_a_runtime_input_the_shape_depends_on_is_refused(op, inputs, which):
    nodes = [
        helper.make_node("ArgMax", ["x"], ["xs"], axis=1, keepdims=0),
        helper.make_node("Cast", ["xs"], ["xc"], to=TensorProto.BOOL),
        helper.make_node(op, inputs, ["y"], name="n"),
    ]
    with pytest.raises(OnnxImportError) as e:
        import_model(_model(nodes, ["y"]))
    message = str(e.value)
    assert "\n" not in message and f"node 'n' ({op}, opset 17)" in message and f"input {which}" in message


def test_compress_condition_longer_than_the_axis_is_refused():
    nodes = [_const("c", np.ones(5, dtype=bool)), helper.make_node("Compress", ["x", "c"], ["y"], name="n", axis=0)]
    with pytest.raises(OnnxImportError, match=r"node 'n' \(Compress, opset 17\): the condition has shape \[5\]"):
        import_model(_model(nodes, ["y"]))


def _with_inputs_as_constants(model: onnx.ModelProto, values: list[np.ndarray]) -> onnx.ModelProto:
    constants = [_const(vi.name, v) for vi, v in zip(model.graph.input, values)]
    graph = helper.make_graph([*constants, *model.graph.node], "g", [], list(model.graph.output))
    return helper.make_model(graph, opset_imports=model.opset_import)


CASES = [c for c in collect() if c.op in VALUE_DEPENDENT_OPS and not c.unsupported_dtype()]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_node_cases_with_their_inputs_as_constants(case):
    """onnx's backend node cases of these operators, their inputs made Constant nodes: the
    folded outputs equal the expected ones."""
    model = load_onnx(case.folder / "model.onnx")
    for data in sorted(case.folder.glob("test_data_set_*")):
        values = [_load_pb(data / f"input_{j}.pb") for j in range(len(model.graph.input))]
        module, weights = import_model(_with_inputs_as_constants(model, values))
        got = run(module, {}, weights)
        for j, vi in enumerate(model.graph.output):
            assert_output_matches(vi.name, got[vi.name], _load_pb(data / f"output_{j}.pb"), case.rtol, case.atol)


def test_the_node_cases_cover_each_operator():
    assert {c.op for c in CASES} == VALUE_DEPENDENT_OPS
