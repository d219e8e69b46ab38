"""ge.GraphExecutor: the three input forms, one array or a dict back, both levels (a graph, a
compiled program) giving the same numbers, and every input mistake as a one-line GEError."""

from __future__ import annotations

import numpy as np
import pytest
from runtime_models import assert_one_line, graph_of, inputs_of, small_bert, small_cnn

import ge
from ge.interpreter.runner import run


@pytest.fixture(scope="module")
def bert():
    model = small_bert()
    return graph_of(model), inputs_of(model)


@pytest.fixture(scope="module")
def cnn():
    model = small_cnn()
    return graph_of(model), inputs_of(model)


def test_input_forms_give_the_same_outputs(bert):
    graph, inputs = bert
    ex = ge.GraphExecutor().load_graph(graph)
    assert ex.inputs == ["input_ids", "attention_mask"] and ex.outputs == ["last_hidden_state"]
    by_name = ex.run(inputs)
    in_order = ex.run([inputs["input_ids"], inputs["attention_mask"]])
    as_tuple = ex.run((inputs["input_ids"], inputs["attention_mask"]))
    assert isinstance(by_name, np.ndarray)  # one output: one array
    np.testing.assert_array_equal(by_name, run(graph.module, inputs)["last_hidden_state"])
    np.testing.assert_array_equal(in_order, by_name)
    np.testing.assert_array_equal(as_tuple, by_name)
    assert ex.runs == 3 and "runs=3" in repr(ex) and "ge level" in repr(ex)


def test_one_array_for_a_single_input_graph(cnn):
    graph, inputs = cnn
    ex = ge.GraphExecutor().load_graph(graph)
    np.testing.assert_array_equal(ex.run(inputs["x"]), ex.run({"x": inputs["x"]}))


def test_several_outputs_come_back_by_name():
    from runtime_models import mlp

    backward = ge.grad(graph_of(mlp(), training=True))
    out = ge.GraphExecutor().load_graph(backward).run(np.ones((3, 4)))
    assert isinstance(out, dict) and list(out) == backward.outputs


def test_a_compiled_program_runs_at_the_stream_level(cnn):
    graph, inputs = cnn
    compiled = ge.Session().compile(graph)
    ex = ge.GraphExecutor().load_graph(compiled)
    assert ex.level == "stream" and "stream level" in repr(ex)
    np.testing.assert_allclose(ex.run(inputs), run(graph.module, inputs)["logits"], rtol=1e-5, atol=1e-6)


class _Duck:
    """What the artifact helper's CompiledGraph offers the executor: a stream-level `.module`."""

    def __init__(self, module):
        self.module = module


def test_any_object_with_a_stream_level_module_loads(cnn):
    graph, inputs = cnn
    compiled = ge.Session().compile(graph)
    out = ge.GraphExecutor().load_graph(_Duck(compiled.module)).run(inputs["x"])
    np.testing.assert_allclose(out, run(graph.module, inputs)["logits"], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "data, message",
    [
        ({"input_ids": np.zeros((1, 9), np.int64), "attention_mask": np.ones((1, 8), np.int64)}, "shape"),
        ({"input_ids": np.zeros((1, 8), np.int32), "attention_mask": np.ones((1, 8), np.int64)}, "dtype int32"),
        ({"input_ids": np.zeros((1, 8), np.int64), "mask": np.ones((1, 8), np.int64)}, "'mask' is not an input"),
        ({"input_ids": np.zeros((1, 8), np.int64)}, "'attention_mask' is missing"),
        ([np.zeros((1, 8), np.int64)], "1 inputs given, the graph has 2"),
        (np.zeros((1, 8), np.int64), "one array given, the graph has 2 inputs"),
        ("tokens", "inputs must be an array"),
    ],
)
def test_input_errors_are_one_line(bert, data, message):
    graph, _ = bert
    ex = ge.GraphExecutor().load_graph(graph)
    with pytest.raises(ge.GEError, match=message) as e:
        ex.run(data)
    assert_one_line(e.value)
    assert ex.runs == 0


def test_a_kernel_refusal_is_one_line(bert):
    """A token id past the embedding table is the gather kernel's refusal, not a traceback."""
    graph, inputs = bert
    bad = dict(inputs, input_ids=np.full((1, 8), 10_000, np.int64))
    with pytest.raises(ge.GEError) as e:
        ge.GraphExecutor().load_graph(graph).run(bad)
    assert_one_line(e.value)


@pytest.mark.parametrize(
    "action, message",
    [
        (lambda g: ge.GraphExecutor().run(np.zeros(1)), "no graph loaded"),
        (lambda g: ge.GraphExecutor().inputs, "no graph loaded"),
        (lambda g: ge.GraphExecutor().load_graph("model.onnx"), "expected a ge.Graph or a compiled graph"),
        (lambda g: ge.GraphExecutor().load_graph(_Duck(g.module)), "not lowered to streams"),
        (lambda g: ge.GraphExecutor().load_graph(_no_main()), "no func.func @main"),
        (lambda g: ge.GraphExecutor().load_graph(ge.Graph.from_module(ge.Session().compile(g).module)), "lowered"),
    ],
)
def test_load_errors_are_one_line(cnn, action, message):
    graph, _ = cnn
    with pytest.raises(ge.GEError, match=message) as e:
        action(graph)
    assert_one_line(e.value)


def test_repr_before_loading():
    assert repr(ge.GraphExecutor()) == "GraphExecutor(no graph loaded)"


def _no_main() -> ge.Graph:
    """A graph over a module without func.func @main (a module a user wrapped by hand)."""
    from xdsl.dialects.builtin import ModuleOp

    return ge.Graph.from_module(ModuleOp([]))


def test_a_session_runs_a_dynamic_bert_bound_at_each_shape():
    """A graph with named unknown dims compiles whole (partition-dynamic leaves @main to be bound
    when it runs) and each run binds and lowers it at the inputs' sizes: equal to onnxruntime."""
    import onnxruntime as ort

    from ge.frontend import models
    from ge.interpreter.differential import relative_error

    model = models.bert_base(batch="batch", seq="seq", layers=1, hidden=32, heads=2, intermediate=64, vocab=100)
    graph = ge.GraphParser().parse_onnx_model(model)
    session = ge.Session()
    onnxruntime = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for batch, seq in [(1, 8), (2, 4), (3, 5)]:
        feeds = models.random_inputs(model, batch + seq, {"batch": batch, "seq": seq})
        (want,) = onnxruntime.run(None, feeds)
        assert relative_error(want, session.run(graph, feeds)) <= 1e-5
    assert session.compiles == 1
