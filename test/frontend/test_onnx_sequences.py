"""Sequence operators fold to tensors at import, and an If with a condition constant at import
is inlined (frontend/onnx_sequences.py, frontend/onnx_control_flow.py). Small hand-built models,
each compared with onnxruntime; every refusal is one line naming the node; the mutation tests
break the branch choice, negative positions, keepdims, stacking and the renaming of a function
body's subgraphs, and show the comparisons catch each."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper
from onnx_oracle import ONNX_TYPES, assert_output_matches

from ge.frontend import onnx_control_flow, onnx_functions, onnx_sequences
from ge.frontend.onnx_importer import import_model
from ge.frontend.onnx_ops import IMPORTED_BY_NAME, SUPPORTED_TYPES, OnnxImportError
from ge.frontend.onnx_value_dependent import VALUE_DEPENDENT_OPS
from ge.ge_dialects import ge
from ge.interpreter.runner import run

RNG = np.random.default_rng(3)
F32 = onnx.TensorProto.FLOAT
I64 = onnx.TensorProto.INT64


def _const(name: str, value) -> onnx.NodeProto:
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(value), name))


def _model(nodes, inputs: dict[str, np.ndarray], outputs: list[str], opset: int = 21, functions=()) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info(n, ONNX_TYPES[v.dtype], v.shape) for n, v in inputs.items()],
        [onnx.ValueInfoProto(name=n) for n in outputs],
    )
    imports = [helper.make_opsetid("", opset)] + [helper.make_opsetid(f.domain, 1) for f in functions]
    return helper.make_model(graph, opset_imports=imports, functions=list(functions))


def _branch(nodes, outputs: list[str]) -> onnx.GraphProto:
    return helper.make_graph(nodes, "branch", [], [onnx.ValueInfoProto(name=n) for n in outputs])


def _compare(model: onnx.ModelProto, feeds: dict[str, np.ndarray]):
    """ge's outputs against onnxruntime's, exactly (the ops here move values, compute little)."""
    import onnxruntime as ort

    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    module, weights = import_model(model)
    got = run(module, feeds, weights)
    for vi, expected in zip(model.graph.output, want):
        assert_output_matches(vi.name, got[vi.name], expected, 1e-6, 1e-6)
    return module


def _refused(model: onnx.ModelProto, *parts: str) -> str:
    with pytest.raises(OnnxImportError) as e:
        import_model(model)
    line = str(e.value)
    assert "\n" not in line
    for part in parts:
        assert part in line, line
    return line


X = RNG.standard_normal((2, 3)).astype(np.float32)
Y = RNG.standard_normal((1, 3)).astype(np.float32)
Z = RNG.standard_normal((4, 3)).astype(np.float32)
XYZ = {"x": X, "y": Y, "z": Z}
V = RNG.standard_normal((2, 7)).astype(np.float32)


def test_every_sequence_operator_is_imported_by_name():
    by_name = set(onnx_sequences.SEQUENCE_OPS) | set(onnx_control_flow.CONTROL_FLOW_OPS) | VALUE_DEPENDENT_OPS
    assert by_name | {"Constant"} == IMPORTED_BY_NAME
    assert IMPORTED_BY_NAME <= SUPPORTED_TYPES


# -- sequences -------------------------------------------------------------------------------------
def _at_model() -> onnx.ModelProto:
    """SequenceAt at 1, at -1 and at a position folded from a shape (dim 0 of y, minus 2: -1)."""
    return _model(
        [
            helper.make_node("SequenceConstruct", ["x", "y", "z"], ["s"]),
            _const("one", np.int64(1)),
            _const("minus_one", np.array([-1], np.int64)),
            helper.make_node("SequenceAt", ["s", "one"], ["at1"]),
            helper.make_node("SequenceAt", ["s", "minus_one"], ["last"]),
            helper.make_node("Shape", ["y"], ["y_shape"]),
            _const("zero", np.int64(0)),
            _const("two", np.int64(2)),
            helper.make_node("Gather", ["y_shape", "zero"], ["y_rows"]),
            helper.make_node("Sub", ["y_rows", "two"], ["folded"]),
            helper.make_node("SequenceAt", ["s", "folded"], ["at_folded"]),
            helper.make_node("SequenceLength", ["s"], ["length"]),
        ],
        XYZ,
        ["at1", "last", "at_folded", "length"],
    )


def test_sequence_construct_at_and_length():
    module = _compare(_at_model(), XYZ)
    assert not any(op.name.startswith("ge.sequence") for op in module.walk())


def _insert_erase_model() -> onnx.ModelProto:
    """Inserts at the front, before the last (-1) and at the end; erases at 1, -1 and the last."""
    return _model(
        [
            helper.make_node("SequenceConstruct", ["x"], ["s0"]),
            _const("zero", np.int64(0)),
            _const("minus_one", np.int64(-1)),
            _const("one", np.int64(1)),
            helper.make_node("SequenceInsert", ["s0", "y", "zero"], ["s1"]),
            helper.make_node("SequenceInsert", ["s1", "z", "minus_one"], ["s2"]),
            helper.make_node("SequenceInsert", ["s2", "x"], ["s3"]),
            helper.make_node("ConcatFromSequence", ["s3"], ["all"], axis=0),
            helper.make_node("SequenceErase", ["s3", "one"], ["e1"]),
            helper.make_node("SequenceErase", ["e1", "minus_one"], ["e2"]),
            helper.make_node("SequenceErase", ["e2"], ["e3"]),
            helper.make_node("ConcatFromSequence", ["e2"], ["kept"], axis=-2),
            helper.make_node("SequenceLength", ["e3"], ["left"]),
        ],
        XYZ,
        ["all", "kept", "left"],
    )


def test_sequence_insert_and_erase_at_every_kind_of_position():
    _compare(_insert_erase_model(), XYZ)


def _empty_stack_model() -> onnx.ModelProto:
    """An empty sequence grown by two inserts, stacked on a new last axis; the empty one's length."""
    return _model(
        [
            helper.make_node("SequenceEmpty", [], ["e"], dtype=F32),
            helper.make_node("SequenceLength", ["e"], ["empty_length"]),
            helper.make_node("SequenceInsert", ["e", "x"], ["s1"]),
            helper.make_node("SequenceInsert", ["s1", "w"], ["s2"]),
            helper.make_node("ConcatFromSequence", ["s2"], ["stacked"], axis=-1, new_axis=1),
            helper.make_node("ConcatFromSequence", ["s2"], ["stacked0"], axis=0, new_axis=1),
        ],
        {"x": X, "w": X + 1},
        ["empty_length", "stacked", "stacked0"],
    )


def test_sequence_empty_and_stacking_with_new_axis():
    _compare(_empty_stack_model(), {"x": X, "w": X + 1})


def _split_model() -> onnx.ModelProto:
    """SplitToSequence with a scalar split (7 = 3 + 3 + 1), sizes, and none (keepdims 0 and 1)."""
    return _model(
        [
            _const("three", np.int64(3)),
            _const("sizes", np.array([2, 5], np.int64)),
            helper.make_node("SplitToSequence", ["v", "three"], ["chunks"], axis=1),
            helper.make_node("SplitToSequence", ["v", "sizes"], ["parts"], axis=-1),
            helper.make_node("SplitToSequence", ["v"], ["rows"], axis=0, keepdims=0),
            helper.make_node("SplitToSequence", ["v"], ["rows_kept"], axis=0),
            _const("minus_one", np.int64(-1)),
            helper.make_node("SequenceAt", ["chunks", "minus_one"], ["last_chunk"]),
            helper.make_node("SequenceAt", ["parts", "minus_one"], ["last_part"]),
            helper.make_node("SequenceAt", ["rows", "minus_one"], ["last_row"]),
            helper.make_node("SequenceAt", ["rows_kept", "minus_one"], ["last_row_kept"]),
            helper.make_node("SequenceLength", ["chunks"], ["chunk_count"]),
            helper.make_node("ConcatFromSequence", ["rows"], ["restacked"], axis=0, new_axis=1),
        ],
        {"v": V},
        ["last_chunk", "last_part", "last_row", "last_row_kept", "chunk_count", "restacked"],
    )


def test_split_to_sequence_with_every_kind_of_split():
    _compare(_split_model(), {"v": V})


def _map_model() -> onnx.ModelProto:
    """SequenceMap over SplitToSequence's rows, with a tensor as the second input: each row plus
    the tensor, and each row's Shape (a body that folds)."""
    body = helper.make_graph(
        [helper.make_node("Add", ["row", "bias"], ["sum"]), helper.make_node("Shape", ["row"], ["shape"])],
        "body",
        [helper.make_tensor_value_info("row", F32, None), helper.make_tensor_value_info("bias", F32, None)],
        [helper.make_tensor_value_info("sum", F32, None), helper.make_tensor_value_info("shape", I64, None)],
    )
    return _model(
        [
            helper.make_node("SplitToSequence", ["v"], ["rows"], axis=1, keepdims=0),
            helper.make_node("SequenceMap", ["rows", "b"], ["sums", "shapes"], body=body, name="sums"),
            helper.make_node("ConcatFromSequence", ["sums"], ["summed"], axis=1, new_axis=1),
            helper.make_node("ConcatFromSequence", ["shapes"], ["row_shapes"], axis=0),
        ],
        {"v": V, "b": np.float32([10, 20])},
        ["summed", "row_shapes"],
    )


def test_sequence_map_unrolls_its_body():
    _compare(_map_model(), {"v": V, "b": np.float32([10, 20])})


# -- If --------------------------------------------------------------------------------------------
def _if_model(cond: bool) -> onnx.ModelProto:
    """A constant condition; the then branch reads the graph input x and an outer node's value and
    makes a sequence the graph reads on; the else branch holds a nested If (its condition folded
    from x's rank) whose taken branch uses Celu (a function body)."""
    then_branch = _branch(
        [
            helper.make_node("Max", ["x", "doubled"], ["t"]),
            helper.make_node("SequenceConstruct", ["t", "x"], ["then_seq"]),
        ],
        ["t", "then_seq"],
    )
    inner_then = _branch([helper.make_node("Celu", ["x"], ["inner"], alpha=0.5)], ["inner"])
    inner_else = _branch([helper.make_node("Neg", ["x"], ["inner_neg"])], ["inner_neg"])
    else_branch = _branch(
        [
            helper.make_node("Shape", ["x"], ["shape"]),
            helper.make_node("Size", ["shape"], ["rank"]),
            _const("two", np.int64(2)),
            helper.make_node("Equal", ["rank", "two"], ["is_2d"]),
            helper.make_node("If", ["is_2d"], ["e"], then_branch=inner_then, else_branch=inner_else, name="inner_if"),
            helper.make_node("SequenceConstruct", ["x", "e"], ["else_seq"]),
        ],
        ["e", "else_seq"],
    )
    return _model(
        [
            _const("cond", np.array(cond)),
            helper.make_node("Add", ["x", "x"], ["doubled"]),
            helper.make_node("If", ["cond"], ["r", "seq"], then_branch=then_branch, else_branch=else_branch, name="if"),
            _const("zero", np.int64(0)),
            helper.make_node("SequenceAt", ["seq", "zero"], ["first"]),
        ],
        {"x": X},
        ["r", "first"],
    )


@pytest.mark.parametrize("cond", [True, False])
def test_if_with_a_constant_condition_inlines_the_taken_branch(cond):
    module = _compare(_if_model(cond), {"x": X})
    names = {op.name for op in module.walk()}
    assert ("ge.maximum" in names) == cond and ("ge.exp" in names) == (not cond)  # Celu's body has Exp


def test_the_branch_left_out_may_hold_operators_ge_lacks():
    model = _model(
        [
            _const("cond", np.array(False)),
            helper.make_node(
                "If",
                ["cond"],
                ["r"],
                then_branch=_branch([helper.make_node("StringNormalizer", ["x"], ["s"])], ["s"]),
                else_branch=_branch([helper.make_node("Relu", ["x"], ["e"])], ["e"]),
            ),
        ],
        {"x": X},
        ["r"],
    )
    module, weights = import_model(model)
    np.testing.assert_array_equal(run(module, {"x": X}, weights)["r"], np.maximum(X, 0))


def _local_function_with_an_if() -> tuple[onnx.ModelProto, np.ndarray]:
    """A model-local function whose body's If (on its input's rank) reads the function's input
    and a value of the body: both are renamed for the call, inside the branch too."""
    fn = helper.make_function(
        "local.fns",
        "Scaled",
        ["a"],
        ["out"],
        [
            helper.make_node("Add", ["a", "a"], ["twice"]),
            helper.make_node("Shape", ["a"], ["shape"]),
            helper.make_node("Size", ["shape"], ["rank"]),
            _const("two", np.int64(2)),
            helper.make_node("Equal", ["rank", "two"], ["is_2d"]),
            helper.make_node(
                "If",
                ["is_2d"],
                ["out"],
                then_branch=_branch([helper.make_node("Mul", ["twice", "a"], ["m"])], ["m"]),
                else_branch=_branch([helper.make_node("Identity", ["a"], ["i"])], ["i"]),
            ),
        ],
        [helper.make_opsetid("", 21)],
    )
    model = _model([helper.make_node("Scaled", ["x"], ["y"], domain="local.fns")], {"x": X}, ["y"], functions=[fn])
    return model, 2 * X * X


def test_an_if_in_a_function_body_reads_the_bodys_values():
    model, want = _local_function_with_an_if()
    module, weights = import_model(model)
    np.testing.assert_allclose(run(module, {"x": X}, weights)["y"], want, rtol=1e-6)


@pytest.mark.parametrize("shape", [(), (3,), (2, 0, 4), (2, 3, 4)])
def test_size_is_the_product_of_the_dims(shape):
    """ge.size: folded to a constant for a static shape, computed for a dynamic one."""
    x = RNG.standard_normal(shape).astype(np.float32)
    model = _model([helper.make_node("Size", ["x"], ["n"])], {"x": x}, ["n"])
    _compare(model, {"x": x})
    if shape:
        model.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "batch"  # a dynamic dim
        _compare(model, {"x": x})


# -- refusals --------------------------------------------------------------------------------------
def test_an_if_on_a_runtime_condition_is_a_ge_if_over_two_functions():
    """The branches read the graph's x and y by name: both become operands, taken by both functions;
    the branches return different shapes for r2, so its type has an unknown dim."""
    model = _model(
        [
            _const("zero", np.float32(0)),
            helper.make_node("ReduceSum", ["x"], ["total"], keepdims=0),
            helper.make_node("Greater", ["total", "zero"], ["c"]),
            helper.make_node(
                "If",
                ["c"],
                ["r", "r2"],
                name="dynamic_if",
                then_branch=_branch(
                    [helper.make_node("Relu", ["x"], ["t"]), helper.make_node("Concat", ["x", "x"], ["t2"], axis=0)],
                    ["t", "t2"],
                ),
                else_branch=_branch(
                    [helper.make_node("Mul", ["x", "y"], ["e"]), helper.make_node("Neg", ["x"], ["e2"])], ["e", "e2"]
                ),
            ),
        ],
        {"x": X, "y": X},
        ["r", "r2"],
    )
    for x in (X, -np.abs(X), np.abs(X)):
        module = _compare(model, {"x": x, "y": X + 1})
    (op,) = [op for op in module.walk() if isinstance(op, ge.IfOp)]
    assert len(op.inputs) == 2
    assert str(op.results[1].type).startswith("tensor<?x")


def _if_node(cond_value, **branches) -> onnx.ModelProto:
    return _model(
        [_const("cond", cond_value), helper.make_node("If", ["cond"], ["r"], name="if", **branches)], {"x": X}, ["r"]
    )


RELU = _branch([helper.make_node("Relu", ["x"], ["t"])], ["t"])
TWO_OUTPUTS = _branch([helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Neg", ["x"], ["b"])], ["a", "b"])
BAD_ATTRIBUTE = _branch([helper.make_node("Softmax", ["x"], ["t"], name="soft", axis=1.5)], ["t"])
UNDEFINED = _branch([helper.make_node("Relu", ["later"], ["t"], name="early")], ["t"])


@pytest.mark.parametrize(
    "model, reason",
    [
        (_if_node(np.array([True, False]), then_branch=RELU, else_branch=RELU), "the condition has 2 elements"),
        (_if_node(np.int64(1), then_branch=RELU, else_branch=RELU), "the condition is int64, If takes a bool"),
        (
            _if_node(np.array(False), then_branch=RELU),
            "the condition selects else_branch, which the node does not have",
        ),
        (
            _if_node(np.array(True), then_branch=TWO_OUTPUTS, else_branch=RELU),
            "then_branch has 2 outputs, the node has 1",
        ),
        (
            _if_node(np.array(True), then_branch=BAD_ATTRIBUTE, else_branch=RELU),
            "then_branch: node 'soft' (Softmax, opset 21): attribute 'axis' is FLOAT, the operator expects INT",
        ),
        (
            _if_node(np.array(True), then_branch=UNDEFINED, else_branch=RELU),
            "then_branch: node 'early' (Relu, opset 21): input #0 'later' is not defined before the node",
        ),
    ],
    ids=[
        "two-element condition",
        "int condition",
        "missing branch",
        "output count",
        "attribute type",
        "undefined name",
    ],
)
def test_if_refusals_are_one_line_naming_the_node(model, reason):
    _refused(model, "node 'if' (If, opset 21)", reason)


def test_the_taken_branchs_unsupported_operators_are_listed():
    model = _model(
        [
            _const("cond", np.array(True)),
            helper.make_node(
                "If",
                ["cond"],
                ["r"],
                name="if",
                then_branch=_branch([helper.make_node("StringNormalizer", ["x"], ["s"], name="norm")], ["s"]),
                else_branch=_branch([helper.make_node("Relu", ["x"], ["e"])], ["e"]),
            ),
        ],
        {"x": X},
        ["r"],
    )
    _refused(model, "node 'if'", "then_branch cannot be imported", "StringNormalizer (1 node: 'norm')")


def test_a_branch_that_redefines_an_outer_name_is_refused():
    model = _model(
        [
            _const("cond", np.array(True)),
            helper.make_node(
                "If",
                ["cond"],
                ["r"],
                name="if",
                then_branch=_branch([helper.make_node("Relu", ["x"], ["x"], name="shadow")], ["x"]),
                else_branch=_branch([helper.make_node("Relu", ["x"], ["e"])], ["e"]),
            ),
        ],
        {"x": X},
        ["r"],
    )
    _refused(
        model,
        "node 'if' (If, opset 21): then_branch: node 'shadow'",
        "tensor 'x' is already defined by the enclosing graph",
    )


def _seq_nodes(*nodes: onnx.NodeProto) -> list[onnx.NodeProto]:
    return [helper.make_node("SequenceConstruct", ["x", "y", "z"], ["s"]), *nodes]


@pytest.mark.parametrize(
    "nodes, inputs, output, parts",
    [
        (
            _seq_nodes(helper.make_node("SequenceAt", ["s", "p"], ["a"], name="at")),
            {"p": np.int64(0).reshape(())},
            "a",
            ("node 'at'", "the position 'p' is not a constant at import"),
        ),
        (
            _seq_nodes(_const("p", np.int64(3)), helper.make_node("SequenceAt", ["s", "p"], ["a"], name="at")),
            {},
            "a",
            ("node 'at'", "position 3 is out of range for a sequence of length 3 (it takes -3 to 2)"),
        ),
        (
            _seq_nodes(
                _const("p", np.int64(-4)), helper.make_node("SequenceInsert", ["s", "x", "p"], ["t"], name="ins")
            ),
            {},
            "t",
            ("node 'ins'", "position -4 is out of range for a sequence of length 3 (it takes -3 to 3)"),
        ),
        (
            [
                helper.make_node("SequenceEmpty", [], ["e"]),
                helper.make_node("SequenceErase", ["e"], ["t"], name="erase"),
                helper.make_node("SequenceLength", ["t"], ["n"]),
            ],
            {},
            "n",
            ("node 'erase'", "cannot erase from an empty sequence"),
        ),
        (
            [
                helper.make_node("SequenceEmpty", [], ["e"]),
                helper.make_node("ConcatFromSequence", ["e"], ["c"], axis=0, name="cat"),
            ],
            {},
            "c",
            ("node 'cat'", "the sequence is empty"),
        ),
        (
            [
                helper.make_node("SplitToSequence", ["x", "k"], ["t"], name="split"),
                helper.make_node("SequenceLength", ["t"], ["n"]),
            ],
            {"k": np.int64(1).reshape(())},
            "n",
            ("node 'split'", "split 'k' is not a constant at import"),
        ),
        (
            [
                helper.make_node("SequenceConstruct", ["x", "k"], ["t"], name="mixed"),
                helper.make_node("SequenceLength", ["t"], ["n"]),
            ],
            {"k": np.int64(1).reshape(())},
            "n",
            ("node 'mixed'", "input #1 has element type i64, the sequence holds f32"),
        ),
        (
            _seq_nodes(helper.make_node("Relu", ["s"], ["r"], name="relu")),
            {},
            "r",
            ("node 'relu'", "input #0 's' is a sequence; the operator takes tensors"),
        ),
        (
            [
                helper.make_node("SplitToSequence", ["x", "k"], ["t"], name="split"),
                helper.make_node("SequenceLength", ["t"], ["n"]),
            ],
            {"k": None},
            "n",
            ("node 'split'", "split [1, 2] must be sizes >= 0 that add up to dim 0's 2"),
        ),
        (
            [
                helper.make_node("SplitToSequence", ["x"], ["t"], name="split", axis=1),
                helper.make_node("ConcatFromSequence", ["t"], ["c"], name="stack", axis=3, new_axis=1),
            ],
            {},
            "c",
            ("node 'stack'", "axis 3 is out of range for stacking rank-2 tensors"),
        ),
        (_seq_nodes(), {}, "s", ("graph output 's' is a sequence, not a tensor (ge graphs return tensors)",)),
    ],
    ids=[
        "runtime position",
        "past the end",
        "before the front",
        "erase empty",
        "concat empty",
        "runtime split",
        "mixed types",
        "sequence into Relu",
        "split sizes",
        "stacking axis",
        "sequence output",
    ],
)
def test_sequence_refusals_are_one_line_naming_the_node(nodes, inputs, output, parts):
    """A `None` input is the constant split sizes [1, 2]."""
    if "k" in inputs and inputs["k"] is None:
        nodes = [_const("k", np.array([1, 2], np.int64)), *nodes]
        inputs = {}
    _refused(_model(nodes, {**XYZ, **inputs}, [output]), *parts)


def test_unrolling_beyond_the_expansion_budget_is_refused():
    with pytest.raises(
        OnnxImportError, match="node 'sums'.*: unrolling its body 7 times would exceed the budget of 10 nodes"
    ):
        import_model(_map_model(), max_expanded_nodes=10)


def test_a_declared_sequence_output_is_refused_before_any_node():
    model = _model(_seq_nodes(), XYZ, [])
    model.graph.output.append(helper.make_tensor_sequence_value_info("s", F32, None))
    _refused(model, "graph output 's' is a sequence, not a tensor")


# -- mutations -------------------------------------------------------------------------------------
def test_mutation_inlining_the_other_branch_is_caught(monkeypatch):
    monkeypatch.setattr(onnx_control_flow, "taken_branch", lambda value: "else_branch" if value else "then_branch")
    with pytest.raises(AssertionError):
        _compare(_if_model(True), {"x": X})


def test_mutation_dropping_negative_positions_is_caught(monkeypatch):
    """Positions taken as they are, negative ones refused as out of range: the models with
    negative positions no longer import."""

    def front_only(self, index, length, inserting):
        position = int(self.constant_ints(index, "the position").reshape(-1)[0])
        if not 0 <= position <= (length if inserting else length - 1):
            raise self.fail(f"position {position} is out of range")
        return position

    monkeypatch.setattr(onnx_sequences._Node, "position", front_only)
    for model, feeds in ((_at_model(), XYZ), (_insert_erase_model(), XYZ)):
        with pytest.raises(OnnxImportError, match="out of range"):
            _compare(model, feeds)


@pytest.mark.parametrize(
    "attribute, model, feeds",
    [("keepdims", _split_model, {"v": V}), ("new_axis", _empty_stack_model, {"x": X, "w": X + 1})],
)
def test_mutation_ignoring_keepdims_or_new_axis_is_caught(monkeypatch, attribute, model, feeds):
    original = onnx_sequences._Node.attr
    monkeypatch.setattr(
        onnx_sequences._Node,
        "attr",
        lambda self, name, default=None: default if name == attribute else original(self, name, default),
    )
    with pytest.raises((AssertionError, OnnxImportError)):
        _compare(model(), feeds)


def test_mutation_subgraphs_of_a_function_body_left_unrenamed_are_caught(monkeypatch):
    monkeypatch.setattr(onnx_functions, "_rename_graph", lambda *args: None)
    model, _ = _local_function_with_an_if()
    with pytest.raises(OnnxImportError, match="not defined"):
        import_model(model)


def test_mutation_without_the_branch_validation_a_shadowing_branch_imports(monkeypatch):
    """The refusal of a branch that redefines an outer name is validate_subgraph's."""
    shadow = _branch([helper.make_node("Relu", ["x"], ["x"], name="shadow")], ["x"])
    monkeypatch.setattr(onnx_control_flow, "validate_subgraph", lambda *args: None)
    import_model(_if_node(np.array(True), then_branch=shadow, else_branch=RELU))


def test_mutation_without_the_branch_operator_check_the_refusal_is_no_longer_the_list(monkeypatch):
    monkeypatch.setattr(onnx_control_flow, "unsupported_operators", lambda *args: None)
    strings = _branch([helper.make_node("StringNormalizer", ["x"], ["s"])], ["s"])
    with pytest.raises(Exception) as e:
        import_model(_if_node(np.array(True), then_branch=strings, else_branch=RELU))
    assert "not supported at opset" not in str(e.value)
