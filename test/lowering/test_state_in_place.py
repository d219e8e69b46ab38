"""In-place state updates (lowering/memory/state.py): a training step's new parameters and slots
written over their variables. The ge level, the stream level and the planned arena (one storage
per variable, random allowed schedules) give bit-equal losses and state over three steps, with
state_in_place on and off; without the write-after-read edges random schedules read updated
parameters where the old ones were meant, and verify-streams refuses the program."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, StringAttr
from xdsl.utils.exceptions import DiagnosticException

from ge.frontend.onnx_importer import import_model
from ge.ge_dialects import task
from ge.ge_dialects.ge.weights import attach_weights, weights_of
from ge.interpreter.arena_executor import ArenaError, run_in_arena
from ge.interpreter.runner import run
from ge.interpreter.stream_executor import memory_figures
from ge.lowering.memory import state
from ge.lowering.streams import reuse_tradeoff
from ge.lowering.streams import verify as stream_verify
from ge.passes.pipeline import parse_passes
from ge.tools.training_state import run_steps, state_outputs

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "passes"))
from training_models import cnn, deep_mlp

LABELS = np.array([0, 2, 1, 2], np.int64)
STEPS = 3
SEEDS = 40


def _cnn(pipeline: str, kind: str):
    model, inputs = cnn(np.random.default_rng(0), dtype=np.float32, batch=4, mse=False)
    module, weights = import_model(model, training=True)
    attach_weights(module, weights)
    for p in parse_passes(f"add-loss{{output=y}},autodiff,apply-optimizer{{kind={kind} lr=0.1}},{pipeline}"):
        p.apply(Context(), module)
    return module, {**inputs, "labels": LABELS}


def _mlp(pipeline: str):
    """Four layers on three streams: each layer's input gradient reads the weight its update
    overwrites, on another stream than the update unless an edge says otherwise."""
    model, inputs = deep_mlp(np.random.default_rng(0), depth=4, width=8, batch=4)
    module, weights = import_model(model, training=True)
    attach_weights(module, weights)
    for p in parse_passes(f"autodiff,apply-optimizer{{kind=momentum lr=0.1}},{pipeline}"):
        p.apply(Context(), module)
    return module, inputs


def _train(module, inputs, runner=run):
    """(last step's outputs, final state) after STEPS steps."""
    return run_steps(
        lambda w: runner(module, inputs, w), weights_of(module), state_outputs(module), STEPS, lambda *_: None
    )


def _bit_equal(a, b) -> bool:
    return all(
        x.keys() == y.keys() and all(np.array_equal(x[k], y[k]) for k in x) for x, y in ((a[0], b[0]), (a[1], b[1]))
    )


def _kernels(module) -> list[task.KernelOp]:
    return [op for op in module.walk() if isinstance(op, task.KernelOp)]


def _main(module) -> func.FuncOp:
    return next(op for op in module.ops if isinstance(op, func.FuncOp))


LOWER = "ge-optimize{level=3},lower-to-tasks,plan-memory{state_in_place=%s},lower-to-streams{streams=%d}"


@pytest.mark.parametrize("kind", ["momentum", "adam"])
@pytest.mark.parametrize("in_place", ["true", "false"])
def test_ge_stream_and_arena_levels_train_bit_equal(kind, in_place):
    module, inputs = _cnn("ge-optimize{level=3}", kind)
    want = _train(module, inputs)
    lowered, _ = _cnn(LOWER % (in_place, 2), kind)
    assert _bit_equal(_train(lowered, inputs), want)
    for seed in (None, 0, 1, 2):
        assert _bit_equal(_train(lowered, inputs, lambda m, i, w, s=seed: run_in_arena(m, i, w, s)), want), seed


@pytest.mark.parametrize("kind", ["sgd", "momentum", "adam"])
def test_every_state_output_is_written_in_place_and_counted_once(kind):
    on, _ = _cnn(LOWER % ("true", 2), kind)
    off, _ = _cnn(LOWER % ("false", 2), kind)
    marked = state_outputs(on)
    aliased = [a.data for k in _kernels(on) if k.state_alias is not None for a in k.state_alias.data if a.data]
    assert sorted(aliased) == sorted(key for key, _ in marked.values())
    assert all(k.state_alias is None for k in _kernels(off))
    f_on, f_off = memory_figures(on), memory_figures(off)
    assert f_on is not None and f_off is not None
    state_bytes = state.state_bytes(_main(on))
    assert f_on.state == f_off.state == state_bytes
    assert f_on.state_in_place == len(marked) and f_off.state_in_place == 0
    assert f_on.state_copies_avoided == state_bytes  # every variable is written, each once
    assert f_off.io - f_on.io == f_on.state_copies_avoided
    assert f_off.device_total - f_on.device_total == f_on.state_copies_avoided
    assert f_on.device_total == f_on.pool + f_on.weights + f_on.state + f_on.io


def test_every_reader_of_a_variable_is_ordered_before_its_update():
    module, inputs = _mlp(LOWER % ("true", 3))
    edges = state.war_edges(_kernels(module))
    assert edges, "the input gradients read the weights the updates overwrite"
    facts = stream_verify.verify_stream_function(_main(module))
    assert all(facts.ordered(e.src, e.dst) for e in edges)
    want = _train(*_mlp("ge-optimize{level=3}"))
    for seed in range(SEEDS):
        assert _bit_equal(_train(module, inputs, lambda m, i, w, s=seed: run_in_arena(m, i, w, s)), want), seed


@pytest.fixture
def without_war_edges(monkeypatch):
    """Mutation: lower-to-streams plans (and checks) streams as if in-place writes needed no
    write-after-read ordering."""
    monkeypatch.setattr(reuse_tradeoff, "war_edges", lambda kernels: [])
    monkeypatch.setattr(stream_verify, "war_edges", lambda kernels: [])
    module, inputs = _mlp(LOWER % ("true", 3))
    monkeypatch.undo()
    return module, inputs


def test_without_war_edges_random_schedules_read_updated_parameters(without_war_edges):
    """The arena holds one storage per variable, so an update the events let run before a reader
    of the old value changes what that reader computes."""
    module, inputs = without_war_edges
    want = _train(*_mlp("ge-optimize{level=3}"))
    wrong = [
        seed
        for seed in range(SEEDS)
        if not _bit_equal(_train(module, inputs, lambda m, i, w, s=seed: run_in_arena(m, i, w, s)), want)
    ]
    assert len(wrong) >= SEEDS // 4, wrong
    assert _bit_equal(_train(module, inputs, lambda m, i, w: run_in_arena(m, i, w, None)), want)  # program order


def test_verify_streams_rejects_a_missing_war_edge(without_war_edges):
    module, _ = without_war_edges
    with pytest.raises(stream_verify.StreamError) as e:
        stream_verify.verify_stream_function(_main(module))
    message = str(e.value)
    assert "\n" not in message
    assert "/momentum' (stream" in message and "overwrites variable 'layers." in message
    assert "may still read its old value: no stream order or event between them" in message


def test_lower_to_streams_refuses_its_own_missing_war_edge(monkeypatch):
    """Mutation of the scheduler alone: the check lower-to-streams ends with catches it."""
    monkeypatch.setattr(reuse_tradeoff, "war_edges", lambda kernels: [])
    with pytest.raises(DiagnosticException, match="internal error: .* overwrites variable .* in place"):
        _mlp(LOWER % ("true", 3))


def test_the_arena_refuses_an_alias_of_another_type():
    module, inputs = _cnn(LOWER % ("true", 2), "momentum")
    writer = next(k for k in _kernels(module) if k.state_alias is not None)
    keys = [a.data for a in writer.state_alias.data]
    shapes = {key: t.shape for key, t in state_outputs(module).values()}
    other = next(key for key in shapes if shapes[key] != shapes[keys[0]])
    writer.state_alias = ArrayAttr([StringAttr(other), *writer.state_alias.data[1:]])
    with pytest.raises(ArenaError, match=f"is written over variable '{other}'"):
        run_in_arena(module, inputs, None, 0)


REFUSED = """
func.func @main(%x: tensor<8x8xf32>) -> (tensor<8x8xf32> {ge.name = "a", ge.state = "a"},
    tensor<8x8xf32> {ge.name = "b", ge.state = "b"}, tensor<8x8xf32> {ge.name = "old_b"},
    tensor<8x8xf32> {ge.name = "c", ge.state = "c"}, tensor<8x8xf32> {ge.name = "d", ge.state = "d"},
    tensor<8x8xf32> {ge.name = "d2", ge.state = "d"}) {
  %a = ge.variable "a" : tensor<8x8xf32>
  %b = ge.variable "b" : tensor<8x8xf32>
  %c = ge.variable "c" : tensor<8x8xf32>
  %d = ge.variable "d" : tensor<8x8xf32>
  %t = ge.transpose %a {perm = array<i64: 1, 0>} : (tensor<8x8xf32>) -> tensor<8x8xf32> loc("/transpose")
  %nb = ge.add %b, %x : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc("/add_b")
  %nc = ge.add %x, %x : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc("/add_c")
  %late = ge.relu %c : (tensor<8x8xf32>) -> tensor<8x8xf32> loc("/late")
  %nd = ge.add %d, %late : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc("/add_d")
  func.return %t, %nb, %b, %nc, %nd, %nd : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}
"""


def test_each_unsound_alias_is_refused_with_its_reason():
    """One state output per rule of lowering/memory/state.py; only d's first output is written in place."""
    from ge.lowering.plan_memory import INPLACE_PATTERNS
    from ge.tools.common import make_context, parse_module

    module = parse_module(REFUSED, "refused.mlir")
    for p in parse_passes("lower-to-tasks"):
        p.apply(make_context(), module)
    aliases, copies = state.find_state_aliases(_main(module), INPLACE_PATTERNS)
    assert [(a.key, a.kernel.task_name.data) for a in aliases] == [("d", "/add_d")]
    reasons = {c.key: c.reason for c in copies}
    assert reasons == {
        "a": "its writer '/transpose' reads the variable but is not elementwise",
        "b": "the variable's old value is returned",
        "c": "'/late' reads the old value after the writer '/add_c'",
        "d": "another state output takes the key or the value",
    }
