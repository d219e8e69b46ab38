"""Scan and Loop unrolled at import (frontend/onnx_control_flow.py), and a Loop whose trip count or
condition is known only at run time kept as `ge.loop` (frontend/onnx_subgraphs.py): small
hand-built models, each compared with onnxruntime; every refusal is one line naming the node; the
mutation tests break the scan directions, the state carry, the trip count, the condition's folding
and the unrolling budget, and show the comparisons (or the budget's refusal) catch each."""

from __future__ import annotations

import time

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper
from onnx_oracle import ONNX_TYPES, assert_output_matches

from ge.frontend import onnx_control_flow
from ge.frontend.onnx_importer import import_model
from ge.frontend.onnx_ops import OnnxImportError
from ge.ge_dialects import ge
from ge.ge_dialects.ge.weights import attach_weights
from ge.interpreter.runner import run
from ge.passes.pipeline import apply_all, parse_passes
from ge.tools.common import make_context

COMPILE = "partition-dynamic,sink-control-flow,lower-to-tasks,plan-memory,lower-to-streams"

RNG = np.random.default_rng(5)
F32 = onnx.TensorProto.FLOAT
I64 = onnx.TensorProto.INT64
BOOL = onnx.TensorProto.BOOL

X = RNG.standard_normal((3, 2)).astype(np.float32)
S = RNG.standard_normal((2,)).astype(np.float32)
W = RNG.standard_normal((2, 4, 3)).astype(np.float32)


def _const(name: str, value) -> onnx.NodeProto:
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(value), name))


def _info(name: str, elem_type: int, shape) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem_type, shape)


def _model(nodes, inputs: dict[str, np.ndarray], outputs: list[str], opset: int = 21) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "g",
        [_info(n, ONNX_TYPES[v.dtype], v.shape) for n, v in inputs.items()],
        [onnx.ValueInfoProto(name=n) for n in outputs],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _body(nodes, inputs: list[onnx.ValueInfoProto], outputs: list) -> onnx.GraphProto:
    """Outputs are names (untyped) or typed infos."""
    infos = [onnx.ValueInfoProto(name=o) if isinstance(o, str) else o for o in outputs]
    return helper.make_graph(nodes, "body", inputs, infos)


def _compare(model: onnx.ModelProto, feeds: dict[str, np.ndarray]):
    import onnxruntime as ort

    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    module, weights = import_model(model)
    got = run(module, feeds, weights)
    for vi, expected in zip(model.graph.output, want):
        assert_output_matches(vi.name, got[vi.name], expected, 1e-5, 1e-5)
    return module


def _refused(model: onnx.ModelProto, *parts: str, **options) -> str:
    with pytest.raises(OnnxImportError) as e:
        import_model(model, **options)
    line = str(e.value)
    assert "\n" not in line
    for part in parts:
        assert part in line, line
    return line


# -- Scan ------------------------------------------------------------------------------------------
def _cumsum_body() -> onnx.GraphProto:
    """state + x_t -> the new state, and it again as the scan output."""
    return _body(
        [helper.make_node("Add", ["s_in", "x_t"], ["s_out"]), helper.make_node("Identity", ["s_out"], ["y_t"])],
        [_info("s_in", F32, [2]), _info("x_t", F32, [2])],
        ["s_out", "y_t"],
    )


def _scan_model(**attrs) -> onnx.ModelProto:
    return _model(
        [
            helper.make_node(
                "Scan", ["s", "x"], ["final", "ys"], name="scan", num_scan_inputs=1, body=_cumsum_body(), **attrs
            )
        ],
        {"s": S, "x": X},
        ["final", "ys"],
    )


@pytest.mark.parametrize(
    "attrs",
    [{}, {"scan_input_directions": [1]}, {"scan_output_directions": [1]}, {"scan_input_axes": [-2]}],
    ids=["forward", "reverse input", "reverse output", "negative axis"],
)
def test_scan_carries_its_state_and_stacks_its_outputs(attrs):
    module = _compare(_scan_model(**attrs), {"s": S, "x": X})
    assert not any(op.name == "ge.scan" for op in module.walk())


def _multi_scan_model() -> onnx.ModelProto:
    """Two states, two scan inputs (one along axis 1 reversed, one along axis -1), two scan outputs
    (one along axis 1 reversed, one along -1): w is [2, 4, 3], scanned along its 4 and v along its 4."""
    body = _body(
        [
            helper.make_node("Add", ["a_in", "w_t"], ["a_out"]),  # [2, 3]
            helper.make_node("ReduceSum", ["v_t"], ["v_sum"], keepdims=0),  # scalar
            helper.make_node("Mul", ["b_in", "v_sum"], ["b_out"]),  # [3]
            helper.make_node("Mul", ["a_out", "b_out"], ["p_t"]),  # [2, 3]
            helper.make_node("Sub", ["b_out", "v_sum"], ["q_t"]),  # [3]
        ],
        [_info("a_in", F32, [2, 3]), _info("b_in", F32, [3]), _info("w_t", F32, [2, 3]), _info("v_t", F32, [3])],
        ["a_out", "b_out", "p_t", "q_t"],
    )
    scan = helper.make_node(
        "Scan",
        ["a", "b", "w", "v"],
        ["a_final", "b_final", "ps", "qs"],
        name="multi",
        num_scan_inputs=2,
        body=body,
        scan_input_axes=[1, -1],
        scan_input_directions=[1, 0],
        scan_output_axes=[1, -1],
        scan_output_directions=[1, 0],
    )
    return _model([scan], MULTI, ["a_final", "b_final", "ps", "qs"])


MULTI = {
    "a": RNG.standard_normal((2, 3)).astype(np.float32),
    "b": RNG.standard_normal((3,)).astype(np.float32) * 0.5,
    "w": W,
    "v": RNG.standard_normal((3, 4)).astype(np.float32) * 0.5,
}


def test_scan_with_several_states_inputs_outputs_and_axes():
    _compare(_multi_scan_model(), MULTI)


def test_scan_without_state_and_with_a_loop_in_its_body():
    """No state variable; the body holds a Loop of constant trip count 2 doubling each slice."""
    loop_body = _body(
        [helper.make_node("Identity", ["c_in"], ["c_out"]), helper.make_node("Add", ["r_in", "r_in"], ["r_out"])],
        [_info("j", I64, []), _info("c_in", BOOL, []), _info("r_in", F32, [2])],
        ["c_out", "r_out"],
    )
    body = _body(
        [
            _const("two", np.int64(2)),
            helper.make_node("Loop", ["two", "", "x_t"], ["doubled"], name="inner", body=loop_body),
            helper.make_node("Neg", ["doubled"], ["y_t"]),
        ],
        [_info("x_t", F32, [2])],
        [_info("y_t", F32, [2])],
    )
    scan = helper.make_node("Scan", ["x"], ["ys"], name="scan", num_scan_inputs=1, body=body, scan_output_axes=[1])
    _compare(_model([scan], {"x": X}, ["ys"]), {"x": X})


def test_linear_attention_imports_its_scan_unrolled():
    """LinearAttention's function body is a Scan over the sequence (2 steps here)."""
    q, k, v = (RNG.standard_normal((1, 2, 8)).astype(np.float32) for _ in range(3))
    node = helper.make_node(
        "LinearAttention", ["q", "k", "v"], ["out", "state"], q_num_heads=2, kv_num_heads=2, update_rule="linear"
    )
    model = _model([node], {"q": q, "k": k, "v": v}, ["out", "state"], opset=27)
    module = _compare(model, {"q": q, "k": k, "v": v})
    assert sum(op.name == "ge.matmul" for op in module.walk()) == 4  # two per step


# -- Loop ------------------------------------------------------------------------------------------
def _loop_body(cond_nodes=(), cond_out: str = "c_in") -> onnx.GraphProto:
    """y + rows[i] carried, y * i stacked; `cond_nodes` compute the condition `cond_out`."""
    return _body(
        [
            *cond_nodes,
            helper.make_node("Identity", [cond_out], ["c_out"]),
            _const("rows", ROWS),
            helper.make_node("Gather", ["rows", "i"], ["row"]),
            helper.make_node("Add", ["y_in", "row"], ["y_out"]),
            helper.make_node("Cast", ["i"], ["i_f"], to=F32),
            helper.make_node("Mul", ["y_out", "i_f"], ["scan_t"]),
        ],
        [_info("i", I64, []), _info("c_in", BOOL, []), _info("y_in", F32, [2])],
        ["c_out", "y_out", "scan_t"],
    )


ROWS = RNG.standard_normal((16, 2)).astype(np.float32)


def _loop_model(trip_count, cond=None, body=None, name: str = "loop") -> onnx.ModelProto:
    nodes = []
    if trip_count is not None:
        nodes.append(_const("M", np.int64(trip_count)))
    if cond is not None:
        nodes.append(_const("cond", np.bool_(cond)))
    loop = helper.make_node(
        "Loop",
        ["M" if trip_count is not None else "", "cond" if cond is not None else "", "y"],
        ["y_final", "scans"],
        name=name,
        body=body or _loop_body(),
    )
    return _model([*nodes, loop], {"y": S}, ["y_final", "scans"])


def _stops_after(iteration: int) -> onnx.GraphProto:
    """The condition i < `iteration`, folded at import from the iteration number."""
    return _loop_body(
        [_const("last", np.int64(iteration)), helper.make_node("Less", ["i", "last"], ["keep"])], cond_out="keep"
    )


def test_loop_over_its_trip_count_carries_and_stacks():
    module = _compare(_loop_model(3), {"y": S})
    assert not any(op.name == "ge.loop" for op in module.walk())


def test_loop_stops_where_its_folded_condition_turns_false():
    """M = 10 bounds it; i < 1 ends it after the iterations i = 0 and 1."""
    _compare(_loop_model(10, True, _stops_after(1)), {"y": S})


def test_a_loop_without_trip_count_ends_by_its_condition():
    _compare(_loop_model(None, True, _stops_after(2)), {"y": S})


def test_a_loop_that_runs_no_iteration_gives_empty_scan_outputs():
    body = _loop_body()
    body.output[2].CopyFrom(_info("scan_t", F32, [2]))
    _compare(_loop_model(3, False, body), {"y": S})
    _compare(_loop_model(0, None, body), {"y": S})


def test_an_if_on_the_iteration_number_in_a_loop_body_folds():
    then = helper.make_graph([helper.make_node("Relu", ["y_in"], ["t"])], "then", [], [onnx.ValueInfoProto(name="t")])
    other = helper.make_graph([helper.make_node("Neg", ["y_in"], ["e"])], "else", [], [onnx.ValueInfoProto(name="e")])
    body = _body(
        [
            helper.make_node("Identity", ["c_in"], ["c_out"]),
            _const("one", np.int64(1)),
            helper.make_node("Equal", ["i", "one"], ["is_one"]),
            helper.make_node("If", ["is_one"], ["y_out"], name="pick", then_branch=then, else_branch=other),
            helper.make_node("Identity", ["y_out"], ["scan_t"]),
        ],
        [_info("i", I64, []), _info("c_in", BOOL, []), _info("y_in", F32, [2])],
        ["c_out", "y_out", "scan_t"],
    )
    _compare(_loop_model(3, True, body), {"y": S})


def test_a_loop_carried_sequence_grows_at_import():
    """The sequence is loop-carried, one tensor inserted per iteration, then concatenated."""
    body = _body(
        [
            helper.make_node("Identity", ["c_in"], ["c_out"]),
            helper.make_node("Cast", ["i"], ["i_f"], to=F32),
            helper.make_node("Mul", ["y", "i_f"], ["item"]),
            helper.make_node("SequenceInsert", ["seq_in", "item"], ["seq_out"]),
        ],
        [
            _info("i", I64, []),
            _info("c_in", BOOL, []),
            helper.make_tensor_sequence_value_info("seq_in", F32, [2]),
        ],
        ["c_out", "seq_out"],
    )
    nodes = [
        _const("M", np.int64(3)),
        helper.make_node("SequenceEmpty", [], ["empty"], dtype=F32),
        helper.make_node("Loop", ["M", "", "empty"], ["seq"], name="grow", body=body),
        helper.make_node("ConcatFromSequence", ["seq"], ["all"], axis=0, new_axis=1),
    ]
    _compare(_model(nodes, {"y": S}, ["all"]), {"y": S})


def test_a_loop_at_opset_11_is_upgraded_and_unrolled():
    model = _loop_model(3, True, _stops_after(1))
    model.opset_import[0].version = 11
    _compare(model, {"y": S})


# -- refusals --------------------------------------------------------------------------------------
def _loops(module) -> list:
    return [op for op in module.walk() if isinstance(op, ge.LoopOp)]


def test_a_loop_over_a_runtime_trip_count_is_a_ge_loop():
    loop = helper.make_node("Loop", ["m", "", "y"], ["y_final", "scans"], name="dyn", body=_loop_body())
    model = _model([loop], {"m": np.int64(3).reshape(()), "y": S}, ["y_final", "scans"])
    for trips in (1, 3, 5):
        module = _compare(model, {"m": np.array(trips, np.int64), "y": S})
    assert len(_loops(module)) == 1


def _while_positive(name: str) -> onnx.ModelProto:
    """While the carried sum stays positive (at most 5 times): termination known only at run time."""
    body = _loop_body(
        [
            helper.make_node("ReduceSum", ["y_in"], ["total"], keepdims=0),
            _const("z", np.float32(0)),
            helper.make_node("Greater", ["total", "z"], ["positive"]),
        ],
        cond_out="positive",
    )
    return _loop_model(5, True, body, name=name)


def test_data_dependent_termination_is_a_ge_loop_and_the_unrolled_copies_are_taken_back():
    """The first copy of the body unrolls (its condition reads the initial value, a graph input:
    it does not fold), and is taken back: main holds the loop and none of the body's ops."""
    model = _while_positive("while")
    for y in (S, -S, np.abs(S), np.float32([0.5, -0.25])):
        module = _compare(model, {"y": y})
    main = next(op for op in module.ops if op.sym_name.data == "main")
    assert len(_loops(main)) == 1
    assert not any(isinstance(op, (ge.ReduceSumOp, ge.AddOp, ge.MulOp)) for op in main.body.block.ops)


def test_a_runtime_condition_input_is_a_ge_loop():
    model = _loop_model(5, True, name="runtime_cond")
    model.graph.node.pop(1)
    model.graph.input.append(_info("cond", BOOL, []))
    for cond in (True, False):
        module = _compare(model, {"y": S, "cond": np.array(cond)})
    assert len(_loops(module)) == 1


def test_a_carried_value_that_grows_is_carried_with_an_unknown_dim():
    """y := concat(y, y[:1]) each iteration: the body is imported again with y's dim unknown."""
    body = _body(
        [
            helper.make_node("Identity", ["c_in"], ["c_out"]),
            _const("starts", np.int64([0])),
            _const("ends", np.int64([1])),
            helper.make_node("Slice", ["y_in", "starts", "ends"], ["head"]),
            helper.make_node("Concat", ["y_in", "head"], ["y_out"], axis=0),
        ],
        [_info("i", I64, []), _info("c_in", BOOL, []), _info("y_in", F32, [None])],
        ["c_out", "y_out"],
    )
    loop = helper.make_node("Loop", ["m", "", "y"], ["y_final"], name="grow", body=body)
    model = _model([loop], {"m": np.array(3, np.int64), "y": S}, ["y_final"])
    module = _compare(model, {"m": np.array(3, np.int64), "y": S})
    (op,) = _loops(module)
    assert str(op.results[0].type) == "tensor<?xf32>"


def test_a_loop_that_never_ends_is_stopped_in_one_line(monkeypatch):
    from ge.interpreter import control_flow

    monkeypatch.setattr(control_flow, "MAX_ITERATIONS", 50)
    body = _body(
        [helper.make_node("Identity", ["c_in"], ["c_out"]), helper.make_node("Neg", ["y_in"], ["y_out"])],
        [_info("i", I64, []), _info("c_in", BOOL, []), _info("y_in", F32, [2])],
        ["c_out", "y_out"],
    )
    loop = helper.make_node("Loop", ["", "cond", "y"], ["y_final"], name="forever_at_run_time", body=body)
    model = _model([loop], {"y": S, "cond": np.array(True)}, ["y_final"])
    module, weights = import_model(model)
    with pytest.raises(control_flow.LoopError, match="ge.loop 'forever_at_run_time': more than 50 iterations"):
        run(module, {"y": S, "cond": np.array(True)}, weights)


def test_a_huge_trip_count_is_refused_by_the_budget_at_once():
    start = time.perf_counter()
    _refused(_loop_model(10**9, name="huge"), "node 'huge'", "unrolling its body 1000000000 times would exceed")
    assert time.perf_counter() - start < 1.0


def test_a_condition_true_in_every_iteration_is_charged_the_whole_trip_count_at_once():
    """The condition passes cond_in through: after the first copy the budget is charged for M."""
    start = time.perf_counter()
    _refused(_loop_model(10**9, True, name="forever"), "node 'forever'", "unrolling its body 1000000000 times")
    assert time.perf_counter() - start < 1.0
    _compare(_loop_model(3, True), {"y": S})


def test_a_varying_condition_that_stays_true_is_stopped_by_the_budget():
    """i < 10^9 varies with i, so each copy is charged as it is made, until the budget ends it."""
    _refused(
        _loop_model(10**9, True, _stops_after(10**9), name="long"),
        "node 'long'",
        "unrolling its body 6 times would exceed the budget of 40",
        max_expanded_nodes=40,
    )


@pytest.mark.parametrize(
    "model, parts",
    [
        (_loop_model(None, None, name="endless"), ["node 'endless'", "neither a trip count nor a condition"]),
        (_loop_model(None, True, name="while_true"), ["node 'while_true'", "true in every iteration and there is no"]),
        (_loop_model(0, None, name="empty"), ["node 'empty'", "declares no static tensor type"]),
        (
            _model(
                [
                    helper.make_node(
                        "Scan",
                        ["s", "x"],
                        ["f", "ys"],
                        name="axis",
                        num_scan_inputs=1,
                        body=_cumsum_body(),
                        scan_input_axes=[2],
                    )
                ],
                {"s": S, "x": X},
                ["f", "ys"],
            ),
            ["node 'axis'", "scan input #0's axis 2 is out of range for rank 2"],
        ),
        (
            _model(
                [
                    helper.make_node(
                        "Scan",
                        ["x", "w"],
                        ["ys"],
                        name="lengths",
                        num_scan_inputs=2,
                        body=_body(
                            [helper.make_node("Identity", ["p"], ["o"])],
                            [_info("p", F32, [2]), _info("q", F32, [4, 3])],
                            ["o"],
                        ),
                    )
                ],
                {"x": X, "w": W},
                ["ys"],
            ),
            ["node 'lengths'", "different sequence lengths [2, 3]"],
        ),
        (
            _model(
                [
                    helper.make_node(
                        "Scan", ["s", "x"], ["f", "ys"], name="arity", num_scan_inputs=3, body=_cumsum_body()
                    )
                ],
                {"s": S, "x": X},
                ["f", "ys"],
            ),
            ["node 'arity'", "num_scan_inputs is 3, the node has 2 inputs"],
        ),
        (
            _model(
                [
                    helper.make_node(
                        "Scan",
                        ["x"],
                        ["ys"],
                        name="strings",
                        num_scan_inputs=1,
                        body=_body([helper.make_node("StringNormalizer", ["p"], ["o"])], [_info("p", F32, [2])], ["o"]),
                    )
                ],
                {"x": X},
                ["ys"],
            ),
            ["node 'strings'", "body cannot be imported", "StringNormalizer"],
        ),
    ],
    ids=["no end", "always true", "empty undeclared", "axis", "lengths", "arity", "body operator"],
)
def test_loop_and_scan_refusals_are_one_line_naming_the_node(model, parts):
    _refused(model, *parts)


def _dynamic(model: onnx.ModelProto, dims: dict[str, int]) -> onnx.ModelProto:
    """The model with input `name`'s dim `dims[name]` made a dim_param (a length known when it runs)."""
    for vi in model.graph.input:
        if vi.name in dims:
            vi.type.tensor_type.shape.dim[dims[vi.name]].dim_param = f"{vi.name}_length"
    return model


@pytest.mark.parametrize(
    "attrs",
    [{}, {"scan_input_directions": [1]}, {"scan_output_directions": [1]}, {"scan_input_axes": [-2]}],
    ids=["forward", "reverse input", "reverse output", "negative axis"],
)
@pytest.mark.parametrize("length", [1, 4])
def test_a_scan_over_a_length_known_when_it_runs_is_a_loop(attrs, length):
    model = _dynamic(_scan_model(**attrs), {"x": 0})
    x = RNG.standard_normal((length, 2)).astype(np.float32)
    module = _compare(model, {"s": S, "x": x})
    assert sum(op.name == "ge.loop" for op in module.walk()) == 1


def test_a_runtime_scan_at_o3_and_bound_at_the_stream_level():
    """The same numbers optimized (O3 on the unknown length) and bound to the length, lowered."""
    model = _dynamic(_scan_model(scan_output_directions=[1]), {"x": 0})
    x = RNG.standard_normal((3, 2)).astype(np.float32)
    feeds = {"s": S, "x": x}
    import onnxruntime as ort

    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    for passes in ("ge-optimize{level=3}", 'ge-optimize{level=3},bind-dims{sizes="x_length=3"},' + COMPILE):
        module, weights = import_model(model)
        attach_weights(module, weights)
        apply_all(make_context(), module, parse_passes(passes))
        got = run(module, feeds)
        for vi, expected in zip(model.graph.output, want):
            assert_output_matches(vi.name, got[vi.name], expected, 1e-5, 1e-5)


def test_a_runtime_scan_with_several_states_inputs_outputs_and_axes():
    model = _dynamic(_multi_scan_model(), {"w": 1, "v": 1})
    feeds = dict(MULTI, w=RNG.standard_normal((2, 6, 3)).astype(np.float32), v=MULTI["v"][:, :2].repeat(3, 1))
    module = _compare(model, feeds)
    assert any(op.name == "ge.loop" for op in module.walk())


def test_opset_8s_batch_scan_is_refused_before_the_upgrade():
    body = _cumsum_body()
    scan = helper.make_node("Scan", ["", "s", "x"], ["final", "ys"], name="batch", num_scan_inputs=1, body=body)
    model = _model([scan], {"s": S[None], "x": X[None]}, ["final", "ys"], opset=8)
    _refused(model, "node 'batch' (Scan, opset 8): opset 8's batch form of Scan", "export at opset 9")


# -- mutations -------------------------------------------------------------------------------------
@pytest.mark.parametrize("attribute", ["scan_input_directions", "scan_output_directions"])
def test_mutation_scanning_the_wrong_direction_is_caught(monkeypatch, attribute):
    original = onnx_control_flow._ints_attribute

    def flipped(node, name, count, what, where):
        values = original(node, name, count, what, where)
        return [1 - v for v in values] if name == attribute else values

    monkeypatch.setattr(onnx_control_flow, "_ints_attribute", flipped)
    with pytest.raises(AssertionError):
        _compare(_multi_scan_model(), MULTI)


@pytest.mark.parametrize("carried", [("s_in", lambda: _scan_model()), ("y_in", lambda: _loop_model(3))])
def test_mutation_dropping_the_state_carry_is_caught(monkeypatch, carried):
    """Every iteration reads the initial state instead of the previous iteration's."""
    state, make = carried
    original = onnx_control_flow.inline_graph
    first = {}

    def stale(importer, graph, inputs, prefix, what, checked=False):
        first.setdefault(state, inputs.get(state))
        return original(importer, graph, {**inputs, state: first[state]}, prefix, what, checked)

    monkeypatch.setattr(onnx_control_flow, "inline_graph", stale)
    feeds = {"s": S, "x": X} if state == "s_in" else {"y": S}
    with pytest.raises(AssertionError):
        _compare(make(), feeds)


def test_mutation_an_off_by_one_trip_count_is_caught(monkeypatch):
    original = onnx_control_flow.constant_value

    def one_more(value):
        folded = original(value)
        return folded + 1 if folded is not None and np.asarray(folded).dtype == np.int64 else folded

    monkeypatch.setattr(onnx_control_flow, "constant_value", one_more)
    with pytest.raises(AssertionError):
        _compare(_loop_model(3), {"y": S})


def test_mutation_a_condition_not_folded_after_each_iteration_is_caught(monkeypatch):
    monkeypatch.setattr(onnx_control_flow, "_condition", lambda *args: True)
    with pytest.raises(AssertionError):
        _compare(_loop_model(4, True, _stops_after(1)), {"y": S})


def test_mutation_without_the_charge_an_unrolling_over_the_budget_imports(monkeypatch):
    monkeypatch.setattr(onnx_control_flow, "charge_unrolling", lambda *args, **kwargs: None)
    import_model(_loop_model(10), max_expanded_nodes=20)


def test_mutation_a_condition_taken_as_invariant_when_it_varies_is_caught(monkeypatch):
    monkeypatch.setattr(onnx_control_flow, "loop_invariant", lambda body, value: True)
    with pytest.raises(AssertionError):
        _compare(_loop_model(4, True, _stops_after(1)), {"y": S})


def test_the_condition_is_invariant_only_without_the_iteration_number_carried_values_or_subgraphs():
    assert onnx_control_flow.loop_invariant(_loop_body(), "c_out")
    assert not onnx_control_flow.loop_invariant(_stops_after(1), "c_out")
    carried = _loop_body([helper.make_node("IsNaN", ["y_in"], ["nan"]), helper.make_node("Not", ["nan"], ["ok"])])
    carried.node[2].input[0] = "ok"  # the Identity giving c_out
    assert not onnx_control_flow.loop_invariant(carried, "c_out")
    branch = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["b"])], "b", [], [onnx.ValueInfoProto(name="b")]
    )
    nested = _loop_body([helper.make_node("If", ["c_in"], ["picked"], then_branch=branch, else_branch=branch)])
    nested.node[1].input[0] = "picked"
    assert not onnx_control_flow.loop_invariant(nested, "c_out")


def test_mutation_without_the_batch_scan_refusal_the_upgrade_changes_the_interface(monkeypatch):
    """What the refusal guards: the converter's opset-9 Scan takes the inputs without their batch
    axis, so the imported graph no longer takes the model's [1, 2] and [1, 3, 2] tensors."""
    from ge.frontend import onnx_importer

    monkeypatch.setattr(onnx_importer, "refuse_batch_scan", lambda graph, opset: None)
    scan = helper.make_node(
        "Scan", ["", "s", "x"], ["final", "ys"], name="batch", num_scan_inputs=1, body=_cumsum_body()
    )
    module, _ = import_model(_model([scan], {"s": S[None], "x": X[None]}, ["final", "ys"], opset=8))
    (fn,) = module.ops
    assert [str(t) for t in fn.function_type.inputs] == ["tensor<2xf32>", "tensor<3x2xf32>"]


def test_mutation_without_the_body_check_an_unsupported_operator_is_not_listed(monkeypatch):
    monkeypatch.setattr(onnx_control_flow, "check_subgraph", lambda *args: None)
    body = _body([helper.make_node("StringNormalizer", ["p"], ["o"])], [_info("p", F32, [2])], ["o"])
    scan = helper.make_node("Scan", ["x"], ["ys"], name="strings", num_scan_inputs=1, body=body)
    with pytest.raises(Exception) as e:
        import_model(_model([scan], {"x": X}, ["ys"]))
    assert "not supported at opset" not in str(e.value)


def test_runtime_control_flow_keeps_its_outputs_at_o3():
    """ge-optimize works on main and on every function a ge.loop or ge.if runs: the outputs stay
    onnxruntime's."""
    import onnxruntime as ort

    from ge.passes.ge_optimize import GeOptimizePass
    from ge.tools.common import make_context

    model = _while_positive("while")
    module, weights = import_model(model)
    GeOptimizePass(level=3).apply(make_context(), module)
    module.verify()
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for y in (S, -S, np.abs(S)):
        want = session.run(None, {"y": y})
        got = run(module, {"y": y}, weights)
        for vi, expected in zip(model.graph.output, want):
            assert_output_matches(vi.name, got[vi.name], expected, 1e-5, 1e-5)
    assert len(_loops(module)) == 1


def test_an_if_in_a_body_imported_again_leaves_one_copy_of_its_branches():
    """The carried value grows, so the body is imported twice; its If (on the iteration number)
    must leave its two branch functions once, not once per import."""

    def branch(op: str) -> onnx.GraphProto:
        return helper.make_graph([helper.make_node(op, ["y_in"], ["b"])], op, [], [onnx.ValueInfoProto(name="b")])

    body = _body(
        [
            helper.make_node("Identity", ["c_in"], ["c_out"]),
            _const("zero", np.int64(0)),
            helper.make_node("Greater", ["i", "zero"], ["later"]),
            helper.make_node(
                "If", ["later"], ["picked"], name="pick", then_branch=branch("Neg"), else_branch=branch("Relu")
            ),
            helper.make_node("Concat", ["y_in", "picked"], ["y_out"], axis=0),
        ],
        [_info("i", I64, []), _info("c_in", BOOL, []), _info("y_in", F32, [None])],
        ["c_out", "y_out"],
    )
    loop = helper.make_node("Loop", ["m", "", "y"], ["y_final"], name="grow_pick", body=body)
    model = _model([loop], {"m": np.array(3, np.int64), "y": S}, ["y_final"])
    module = _compare(model, {"m": np.array(3, np.int64), "y": S})
    functions = sorted(op.sym_name.data for op in module.ops)
    assert len(functions) == 4, functions  # main, the body, the two branches


def test_a_loop_over_a_named_dim_is_unrolled_at_o3_in_each_gear():
    """The trip count is the length of input `steps` (a dim_param): a ge.loop in the dynamic graph,
    a constant in each gear, where O3 unrolls it (inline-control-flow's unroll_limit) and folds
    the row each iteration gathers; O1 keeps the loop. Both equal onnxruntime."""
    import onnxruntime as ort

    from ge.ge_dialects.ge.weights import attach_weights
    from ge.passes.ge_optimize import GeOptimizePass
    from ge.tools.common import make_context

    nodes = [
        helper.make_node("Shape", ["steps"], ["shape"]),
        _const("zero", np.int64(0)),
        helper.make_node("Gather", ["shape", "zero"], ["n"]),
        helper.make_node("Loop", ["n", "", "y"], ["y_final", "scans"], name="over_steps", body=_loop_body()),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [_info("steps", F32, ["n"]), _info("y", F32, [2])],
        [onnx.ValueInfoProto(name="y_final"), onnx.ValueInfoProto(name="scans")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for level, loops_left in ((1, 2), (3, 0)):
        module, weights = import_model(model)
        attach_weights(module, weights)
        assert len(_loops(module)) == 1
        GeOptimizePass(level=level, dynamic_dims="n=2;n=5").apply(make_context(), module)
        assert len(_loops(module)) == loops_left, level
        for n in (2, 5):
            feeds = {"steps": np.zeros(n, np.float32), "y": S}
            got = run(module, feeds)
            for name, want in zip(("y_final", "scans"), session.run(None, feeds)):
                assert_output_matches(name, got[name], want, 1e-5, 1e-5)
