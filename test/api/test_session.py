"""ge.Session: GE's option names reach the compile pipeline (what the compiled program shows), runs
give the graph's numbers, an unchanged graph is compiled once, and bad options are one line."""

from __future__ import annotations

import numpy as np
import pytest
from runtime_models import assert_one_line, graph_of, inputs_of, small_cnn
from xdsl.dialects.builtin import StringAttr

import ge
from ge.ge_dialects import stream, task
from ge.ge_dialects.ge.target_attr import module_target
from ge.interpreter.runner import main_function, run
from ge.interpreter.stream_executor import memory_figures


@pytest.fixture(scope="module")
def cnn():
    model = small_cnn()
    return graph_of(model), inputs_of(model)


def _mode(module) -> str:
    attr = main_function(module).attributes[stream.MODE_ATTR]
    assert isinstance(attr, StringAttr)
    return attr.data


def _kernels(module) -> list[task.KernelOp]:
    return [op for op in module.walk() if isinstance(op, task.KernelOp)]


def _streams(module) -> set[int]:
    return {op.get("stream") for op in module.walk() if isinstance(op, task.KernelOp)}


def test_run_gives_the_graphs_outputs_and_compiles_once(cnn):
    graph, inputs = cnn
    sess = ge.Session()
    sess.set_option("graph_sink", True).set_option("stream_num", 4)
    out = sess.run(graph, inputs)
    np.testing.assert_allclose(out, run(graph.module, inputs)["logits"], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(sess.run(graph, inputs["x"]), out)
    assert sess.compiles == 1
    assert sess.compile(graph) is sess.compile(graph)
    assert "mode=graph" in repr(sess) and "1 compiled" in repr(sess)


def test_a_changed_graph_or_option_recompiles(cnn):
    graph, _ = cnn
    sess = ge.Session()
    first = sess.compile(graph)
    sess.set_option("ge.oo.level", "O1")
    second = sess.compile(graph)
    assert sess.compiles == 2 and "level=1" in second.pipeline and "level=3" in first.pipeline
    changed = graph.copy()
    from ge.ge_dialects.ge.weights import weights_of

    weights_of(changed.module).added["conv1.weight"] = np.zeros_like(weights_of(graph.module)["conv1.weight"])
    sess.compile(changed)
    assert sess.compiles == 3


def test_options_reach_the_compiled_program(cnn):
    graph, _ = cnn
    sink = ge.Session({"graph_sink": True}).compile(graph)
    per_op = ge.Session({"graph_sink": False}).compile(graph)
    assert _mode(sink.module) == "graph" and _mode(per_op.module) == "op"
    single = ge.Session({"ge.enableSingleStream": 1}).compile(graph)
    assert _streams(single.module) == {0} and "single_stream=true" in single.pipeline
    no_reuse = ge.Session({"ge.exec.disableReuseMemory": True}).compile(graph)
    figures = memory_figures(no_reuse.module)
    assert figures is not None and figures.pool == figures.no_reuse
    reuse = memory_figures(sink.module)
    assert reuse is not None and reuse.pool < reuse.no_reuse
    chip = ge.Session({"soc_version": "Ascend910"}).compile(graph)
    assert module_target(chip.module) == "ascend910" and chip.target == "ascend910"
    o1 = ge.Session({"ge.oo.level": 1}).compile(graph)
    assert len(_kernels(o1.module)) > len(_kernels(sink.module))  # O1 fuses nothing: a task per op
    adjusted = ge.Session({"is_input_adjust_hw_layout": True, "ge.hcomParallel": True}).compile(graph)
    assert "adjust_input_hw_layout=true" in adjusted.pipeline and "hcom_parallel=true" in adjusted.pipeline
    assert len(_kernels(adjusted.module)) == len(_kernels(sink.module)) - 1  # the input's TransData
    f16 = ge.Session({"precision_mode": "force_fp16"}).compile(graph)
    assert "f16" in str(f16.module) and "f16" not in str(sink.module)


def test_the_pipeline_is_a_command_line(cnn):
    graph, _ = cnn
    compiled = ge.Session({"stream_num": 2, "graph_sink": False}).compile(graph)
    assert compiled.pipeline.startswith("ge-optimize{level=3")
    assert "lower-to-streams{mode=op streams=2}" in compiled.pipeline


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("graph_mode", True, "unknown option 'graph_mode'"),
        ("graph_sink", "maybe", "is not True/False"),
        ("stream_num", -1, "not a non-negative integer"),
        ("stream_num", True, "not a non-negative integer"),
        ("ge.oo.level", "O7", "is not one of 0, 1, 2, 3"),
        ("precision_mode", "fp8", "is not one of"),
        ("soc_version", "ascend999", "ascend999"),
        ("ge.exec.disableReuseMemory", "sometimes", "is not 0, 1, true or false"),
    ],
)
def test_bad_options_are_one_line(key, value, message):
    sess = ge.Session()
    with pytest.raises(ge.GEError, match=message) as e:
        sess.set_option(key, value)
    assert_one_line(e.value)
    assert sess.options == {}


def test_compile_and_run_refuse_what_is_not_a_graph(cnn):
    _, inputs = cnn
    for call in (lambda s: s.compile("model.onnx"), lambda s: s.run(None, inputs)):
        with pytest.raises(ge.GEError, match="expected a ge.Graph") as e:
            call(ge.Session())
        assert_one_line(e.value)


def test_run_input_errors_are_one_line(cnn):
    graph, _ = cnn
    with pytest.raises(ge.GEError, match="Session.run: input 'x' has shape") as e:
        ge.Session().run(graph, np.zeros((1, 3, 16, 16), np.float32))
    assert_one_line(e.value)


@pytest.fixture(scope="module")
def dynamic_bert():
    from ge.frontend import models

    model = models.bert_base(batch="batch", seq="seq", layers=1, hidden=32, heads=2, intermediate=64, vocab=100)
    return model, graph_of(model)


def test_dynamic_shape_options_reach_the_compile(dynamic_bert):
    """ge.inputShape binds the dims it sizes (and bounds those it ranges); ge.dynamicDims compiles
    gears; both runs equal the graph's numbers."""
    from ge.frontend import models
    from ge.ge_dialects.ge.dims import ranges_of
    from ge.ge_dialects.ge.types import shape_of

    model, graph = dynamic_bert
    feeds = models.random_inputs(model, 0, {"batch": 2, "seq": 4})
    want = run(graph.module, feeds)
    bound = ge.Session({"ge.inputShape": "input_ids:2,4;attention_mask:2,4"})
    assert all(
        list(shape_of(t)) == [2, 4] for t in main_function(bound.compile(graph).module).function_type.inputs.data
    )
    ranged = ge.Session({"ge.inputShape": "input_ids:1~8,-1;attention_mask:1~8,-1"}).compile(graph)
    assert "input_shape=" in ranged.pipeline
    assert ranges_of(main_function(ranged.module)) == {"batch": (1, 8)}
    gears = ge.Session({"ge.dynamicDims": "1,8,1,8;2,4,2,4"})  # GE's form: a value per unknown dim
    for session in (bound, gears):
        got = session.run(graph, feeds)
        (name,) = want
        np.testing.assert_allclose(got, want[name], rtol=1e-5, atol=1e-6)
