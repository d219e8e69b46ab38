"""bind-dims: a graph compiled once on symbolic shapes, bound to each shape when it runs, lowered
for dynamic execution (the host infers shapes and tiling per kernel): equal to onnxruntime at the
stream level at several shapes, and charged the host's work per launch."""

from __future__ import annotations

import onnxruntime as ort
import pytest
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr

from ge.device import simulate
from ge.frontend import models
from ge.frontend.onnx_importer import import_model
from ge.ge_dialects.ge.weights import attach_weights, clone_with_weights
from ge.interpreter.differential import relative_error
from ge.interpreter.runner import run
from ge.interpreter.stream_executor import sim_tasks, stream_function
from ge.interpreter.stream_program import MEMORY_ATTR
from ge.passes.ge_optimize import GeOptimizePass
from ge.passes.pipeline import apply_all, parse_passes
from ge.target import load_target
from ge.tools.common import make_context

SHAPES = [(1, 16), (2, 8), (4, 4)]


def _bert():
    return models.bert_base(batch="batch", seq="seq", layers=2, hidden=64, heads=4, intermediate=128, vocab=100)


@pytest.fixture(scope="module")
def dynamic_bert():
    module, weights = import_model(_bert())
    attach_weights(module, weights)
    GeOptimizePass(level=3, dim_ranges="batch=1:8,seq=1:64").apply(make_context(), module)
    return module


def _bound(module, batch, seq, mode="dynamic"):
    bound = clone_with_weights(module)
    passes = f'bind-dims{{sizes="batch={batch},seq={seq}"}},lower-to-tasks,plan-memory,lower-to-streams{{mode={mode}}}'
    apply_all(make_context(), bound, parse_passes(passes))
    return bound


def test_bound_at_each_shape_it_equals_onnxruntime_at_the_stream_level(dynamic_bert):
    session = ort.InferenceSession(_bert().SerializeToString(), providers=["CPUExecutionProvider"])
    for batch, seq in SHAPES:
        feeds = models.random_inputs(_bert(), batch * 100 + seq, {"batch": batch, "seq": seq})
        (want,) = session.run(None, feeds)
        assert relative_error(want, run(_bound(dynamic_bert, batch, seq), feeds)["last_hidden_state"]) <= 1e-5


def test_dynamic_execution_charges_shape_inference_and_tiling_per_launch(dynamic_bert):
    """The same tasks per kernel launch: in dynamic mode each launch also pays the host's shape
    inference and tiling; a launch-bound program takes exactly that much longer per launch."""
    spec = load_target("ascend910b")
    tasks = sim_tasks(stream_function(_bound(dynamic_bert, 1, 16)))
    per_op, dynamic = simulate(tasks, spec, "op"), simulate(tasks, spec, "dynamic")
    host = spec.host
    assert dynamic.launches == per_op.launches == len(tasks)
    assert dynamic.bound.limiter == "launch"
    extra = len(tasks) * (host.shape_infer_s + host.tiling_s)
    assert dynamic.latency - per_op.latency == pytest.approx(extra, rel=1e-6)
    assert dynamic.bound.launch_s == pytest.approx(len(tasks) * (host.launch_s + host.shape_infer_s + host.tiling_s))


def test_the_runtime_pool_of_each_shape_is_its_own_plan(dynamic_bert):
    """A bound graph plans its own pool: never below the shape's lower bound, and larger for more
    tokens."""
    pools = {}
    for shape in [(1, 16), (8, 64)]:
        memory = _bound(dynamic_bert, *shape).attributes[MEMORY_ATTR]
        assert isinstance(memory, DictionaryAttr)
        pool, lower_bound = (memory.data[k] for k in ("pool", "lower_bound"))
        assert isinstance(pool, IntegerAttr) and isinstance(lower_bound, IntegerAttr)
        assert pool.value.data >= lower_bound.value.data > 0
        pools[shape] = pool.value.data
    assert pools[(8, 64)] > pools[(1, 16)]


def test_compiled_whole_a_dynamic_graph_is_bound_when_it_runs(dynamic_bert):
    """The compile pipeline (lowering/compile.py) marks the dynamic @main `ge.unknown_shape`
    (partition-dynamic) and lowers nothing; run_dynamic binds it to each input's sizes, lowers it
    for dynamic execution (kept per shape) and runs it at the stream level; the host's record
    names each bound function, and its modeled time charges the host's shape work per launch."""
    from ge.ge_dialects.ge.control_flow import UNKNOWN_SHAPE_ATTR
    from ge.interpreter.host_program import host_time
    from ge.interpreter.runner import main_function
    from ge.lowering.run_time import run_dynamic

    compiled = clone_with_weights(dynamic_bert)
    apply_all(make_context(), compiled, parse_passes("partition-dynamic,lower-to-tasks,plan-memory,lower-to-streams"))
    assert UNKNOWN_SHAPE_ATTR in main_function(compiled).attributes
    session = ort.InferenceSession(_bert().SerializeToString(), providers=["CPUExecutionProvider"])
    spec = load_target("ascend910b")
    for batch, seq in SHAPES:
        feeds = models.random_inputs(_bert(), batch * 100 + seq, {"batch": batch, "seq": seq})
        (want,) = session.run(None, feeds)
        got, record = run_dynamic(compiled, feeds)
        assert relative_error(want, got["last_hidden_state"]) <= 1e-5
        assert record.calls == [f"main@{batch}x{seq}/{batch}x{seq}"]
        owner, _ = record.functions[record.calls[0]]
        tasks = sim_tasks(stream_function(owner))
        timed = host_time(record, spec)
        assert timed.device_s == pytest.approx(simulate(tasks, spec, "dynamic").latency)
