"""The stream level computes what the ge level computes, on every test model, at every
optimization level and stream count; and its modeled time respects the roofline bound."""

import pytest

from ge.frontend import models
from ge.ge_dialects import stream, task
from ge.ge_dialects.ge.weights import clone_with_weights
from ge.interpreter.differential import relative_error
from ge.interpreter.runner import run
from ge.interpreter.stream_executor import memory_figures, simulate_module
from ge.passes.pipeline import apply_all, parse_passes
from ge.target import load_target
from ge.tools.common import make_context

MODELS = {
    "resnet50": models.resnet50,
    "mobilenet_v2": models.mobilenet_v2,
    "bert_base": models.bert_base,
    "gpt2": models.gpt2,
}
STREAMS = (1, 2, 4, 8)


@pytest.mark.parametrize("name", list(MODELS))
def test_every_level_and_stream_count_gives_the_ge_level_outputs(name, references):
    """At the small size (every op, fusion and stream structure of the model; full-size numerics are
    test_models_onnxruntime's and the optimize tests')."""
    inputs = references.model(name)[1]
    reference = run(references.module(name), inputs)
    target = load_target("ascend910b")
    for level in range(4):
        lowered = references.module(name, level=level, lower="lower-to-tasks,plan-memory")
        for count in STREAMS:
            streamed = clone_with_weights(lowered)
            apply_all(make_context(), streamed, parse_passes(f"lower-to-streams{{streams={count}}}"))
            fn = next(iter(streamed.ops))
            assert fn.attributes[stream.COUNT_ATTR].value.data <= count
            outputs = run(streamed, inputs)
            for key in reference:
                error = relative_error(reference[key], outputs[key])
                assert error <= (0.0 if level == 0 else 1e-4), (name, level, count, key, error)
            result = simulate_module(streamed, target)
            assert result.latency >= result.bound.value * (1 - 1e-9)
            assert len(result.tasks) == sum(1 for op in fn.body.block.ops if isinstance(op, task.KernelOp))


@pytest.mark.parametrize("name", ["resnet50", "bert_base"])
def test_planned_peak_is_within_5_percent_of_the_lower_bound(name, references):
    """Full size: how close the plan comes to its bound depends on the real buffer sizes."""
    module = references.module(name, size="full", level=3, lower="lower-to-tasks,plan-memory")
    figures = memory_figures(module)
    assert figures.pool <= 1.05 * figures.lower_bound
    assert figures.lower_bound <= figures.pool <= figures.no_reuse


def events_in_ir(fn):
    """(src task, dst task) of every record/wait pair in program order, from the IR alone."""
    kernels, recorded, pending, pairs = [], {}, {}, set()
    for op in fn.body.block.ops:
        if isinstance(op, task.KernelOp):
            for event in pending.pop(op.stream.value.data, []):
                pairs.add((recorded[event], len(kernels)))
            kernels.append(op)
        elif isinstance(op, stream.RecordOp):
            recorded[op.event_id] = len(kernels) - 1
        elif isinstance(op, stream.WaitOp):
            pending.setdefault(op.stream_id, []).append(op.event_id)
    return kernels, pairs


def brute_force_events(kernels):
    """Cross-stream edges of the transitive reduction of data + stream-order edges, by definition:
    an edge is kept unless another path joins its ends."""
    index = {k: i for i, k in enumerate(kernels)}
    edges = {(index[v.owner], i) for i, k in enumerate(kernels) for v in k.inputs if v.owner in index}
    last = {}
    for i, k in enumerate(kernels):
        s = k.stream.value.data
        if s in last:
            edges.add((last[s], i))
        last[s] = i
    succ = {i: {v for u, v in edges if u == i} for i in range(len(kernels))}

    def reachable_without(u, v):
        stack, seen = [w for w in succ[u] if w != v], set()
        while stack:
            w = stack.pop()
            if w == v:
                return True
            if w not in seen and w < v:
                seen.add(w)
                stack.extend(succ[w])
        return False

    stream_of = [k.stream.value.data for k in kernels]
    return {(u, v) for u, v in edges if stream_of[u] != stream_of[v] and not reachable_without(u, v)}


@pytest.mark.parametrize("name, count", [("gpt2", 4), ("bert_base", 8), ("resnet50", 2)])
def test_events_in_the_ir_are_exactly_the_non_redundant_cross_stream_edges(name, count, references):
    module = references.module(name, level=3, lower=f"lower-to-tasks,lower-to-streams{{streams={count}}}")
    kernels, pairs = events_in_ir(next(iter(module.ops)))
    assert pairs == brute_force_events(kernels)
