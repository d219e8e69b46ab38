"""ge.GraphProfiler: the run's outputs, the modeled device's figures (the same simulation ge-run
reports), the per-op table and the Chrome trace; a ge-level graph compiled on the fly."""

from __future__ import annotations

import json

import numpy as np
import pytest
from runtime_models import assert_one_line, graph_of, inputs_of, small_cnn

import ge
from ge.device import chrome_trace
from ge.ge_dialects import task
from ge.interpreter.runner import run
from ge.interpreter.stream_executor import simulate_module
from ge.target import load_target


@pytest.fixture(scope="module")
def cnn():
    model = small_cnn()
    return graph_of(model), inputs_of(model)


def _profile(graph, inputs, **options):
    sess = ge.Session()
    for k, v in options.items():
        sess.set_option(k, v)
    compiled = sess.compile(graph)
    ex = ge.GraphExecutor().load_graph(compiled)
    return compiled, ge.GraphProfiler().profile(ex, inputs)


def test_profile_of_a_compiled_program(cnn):
    graph, inputs = cnn
    compiled, prof = _profile(graph, inputs)
    np.testing.assert_allclose(prof.outputs, run(graph.module, inputs)["logits"], rtol=1e-5, atol=1e-6)
    expected = simulate_module(compiled.module, load_target("ascend910b"))
    assert prof.latency == expected.latency > 0
    assert prof.memory_bandwidth_utilization == expected.hbm_util
    assert prof.cube_utilization == expected.cube_util and prof.vector_utilization == expected.vector_util
    low, high = sorted((expected.cube_util, expected.vector_util))
    assert low <= prof.compute_utilization <= high  # a weighted mean of the two units' figures
    assert 0 < prof.npu_utilization <= 1
    kernels = [op for op in compiled.module.walk() if isinstance(op, task.KernelOp)]
    table = prof.op_table
    assert len(table) == len(kernels) and {r["name"] for r in table} == {k.task_name.data for k in kernels}
    assert [r["start_us"] for r in table] == sorted(r["start_us"] for r in table)
    assert prof.timeline == chrome_trace(expected)
    assert prof.op_summary_csv().count("\n") == len(kernels) + 1
    assert prof.pipeline is None  # compiled by the session, not by the profiler
    text = repr(prof)
    assert f"latency {expected.latency * 1e6:.1f} us" in text and "npu" in text and "HBM bandwidth" in text


def test_per_op_launch_leaves_the_cores_idle_longer(cnn):
    """Per-op launch (graph_sink off) adds a host launch before every task: the same work over a
    longer run, so AI Core occupancy falls; the launch mode does not change the numbers."""
    graph, inputs = cnn
    _, sink = _profile(graph, inputs, graph_sink=True)
    _, per_op = _profile(graph, inputs, graph_sink=False)
    assert per_op.latency > sink.latency
    assert per_op.npu_utilization < sink.npu_utilization
    assert per_op.result.mode == "op" and sink.result.mode == "graph"
    np.testing.assert_array_equal(per_op.outputs, sink.outputs)


def test_a_graph_is_compiled_on_the_fly(cnn):
    graph, inputs = cnn
    ex = ge.GraphExecutor().load_graph(graph)
    prof = ge.GraphProfiler().profile(ex, inputs)
    assert prof.pipeline.startswith("ge-optimize{level=0")
    np.testing.assert_array_equal(prof.outputs, ex.run(inputs))
    o3 = ge.GraphProfiler(optimization_level=3).profile(ex, inputs)
    assert "level=3" in o3.pipeline and o3.latency < prof.latency


def test_save_trace(cnn, tmp_path):
    graph, inputs = cnn
    _, prof = _profile(graph, inputs)
    path = prof.save_trace(tmp_path / "trace.json")
    assert json.loads(path.read_text())["otherData"]["latency_us"] == pytest.approx(prof.latency * 1e6)
    with pytest.raises(ge.GEError) as e:
        prof.save_trace(tmp_path / "missing" / "trace.json")
    assert_one_line(e.value)


@pytest.mark.parametrize(
    "action, message",
    [
        (lambda g, i: ge.GraphProfiler().profile("executor", i), "expected a ge.GraphExecutor"),
        (lambda g, i: ge.GraphProfiler().profile(ge.GraphExecutor(), i), "no graph loaded"),
        (lambda g, i: ge.GraphProfiler().latency, "nothing profiled yet"),
        (lambda g, i: ge.GraphProfiler().timeline, "nothing profiled yet"),
        (lambda g, i: ge.GraphProfiler(target="ascend999"), "ascend999"),
        (
            lambda g, i: ge.GraphProfiler(target="ascend910").profile(
                ge.GraphExecutor().load_graph(ge.Session().compile(g)), i
            ),
            "contradicts the module's target",
        ),
        (
            lambda g, i: ge.GraphProfiler(mode="sometimes").profile(ge.GraphExecutor().load_graph(g), i),
            "mode .sometimes. is not one of",
        ),
        (
            lambda g, i: ge.GraphProfiler(optimization_level=7).profile(ge.GraphExecutor().load_graph(g), i),
            "optimization level 7",
        ),
        (lambda g, i: ge.GraphProfiler().profile(ge.GraphExecutor().load_graph(g), {"y": i["x"]}), "'y'"),
    ],
)
def test_errors_are_one_line(cnn, action, message):
    graph, inputs = cnn
    with pytest.raises(ge.GEError, match=message) as e:
        action(graph, inputs)
    assert_one_line(e.value)


def test_repr_before_profiling():
    assert repr(ge.GraphProfiler()) == "GraphProfiler(nothing profiled yet)"
