"""Models with control flow decided at run time, exported by torch (test/corpus/export_dynamic.py):

- a scripted model with a data-dependent If (a gate on the input's mean) and a Loop whose trip
  count is a graph input: both branches and several trip counts equal onnxruntime at O0, at O3
  and at the stream level, where partition-dynamic leaves the control flow to the host and sinks
  the rest, or sink-control-flow hands it to the device as label tasks (the record and modeled
  time follow the path the inputs took);
- a voice-activity-style streaming model (an If on the frame's energy updates the recurrent state
  or lets it decay) run over a sequence of calls, each feeding the state it returned to the next.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from xdsl.dialects.builtin import ModuleOp

from ge.frontend.onnx_importer import import_model
from ge.ge_dialects.ge.control_flow import is_host_program
from ge.ge_dialects.ge.weights import attach_weights, clone_with_weights
from ge.ge_dialects.stream import LabelSwitchOp, is_control_program
from ge.interpreter import control_flow
from ge.interpreter.differential import relative_error
from ge.interpreter.host_program import host_time, run_host
from ge.interpreter.runner import main_function, run
from ge.interpreter.stream_executor import simulate_module
from ge.passes.ge_optimize import GeOptimizePass
from ge.passes.pipeline import apply_all, parse_passes
from ge.target import load_target
from ge.tools.common import make_context

HERE = Path(__file__).parent / "dynamic"
LOWER = "partition-dynamic,lower-to-tasks,plan-memory,lower-to-streams"
SUNK = "partition-dynamic,sink-control-flow,lower-to-tasks,plan-memory,lower-to-streams"


def _load(name: str) -> onnx.ModelProto:
    return onnx.load_from_string(gzip.decompress((HERE / f"{name}.onnx.gz").read_bytes()))


def _levels(model: onnx.ModelProto, bind: str = "") -> dict[str, ModuleOp]:
    """The model at O0 and O3 (ge level) and lowered from O3 (stream level): with the control
    flow on the host (subgraph sink) and decided on the device (label tasks)."""
    found = {}
    for level in (0, 3):
        module, weights = import_model(model)
        attach_weights(module, weights)
        GeOptimizePass(level=level).apply(make_context(), module)
        found[f"O{level}"] = module
    for name, lowering in (("stream", LOWER), ("sunk", SUNK)):
        lowered = clone_with_weights(found["O3"])
        apply_all(
            make_context(), lowered, parse_passes(f'bind-dims{{sizes="{bind}"}},{lowering}' if bind else lowering)
        )
        found[name] = lowered
    return found


@pytest.fixture(scope="module")
def scripted():
    model = _load("scripted_control")
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session, _levels(model, "batch=2")


@pytest.mark.parametrize("sign", [1, -1], ids=["then", "else"])
@pytest.mark.parametrize("steps", [0, 1, 3, 5])
def test_both_branches_and_several_trip_counts_at_every_level(scripted, sign, steps):
    session, levels = scripted
    x = (np.abs(np.random.default_rng(steps).standard_normal((2, 8))) * sign).astype(np.float32)
    feeds = {"x": x, "steps": np.array(steps, np.int64)}
    (want,) = session.run(None, feeds)
    for level, module in levels.items():
        assert relative_error(want, run(module, feeds)["h"]) <= 1e-5, level


def test_the_host_runs_the_control_flow_between_sunk_subgraphs(scripted):
    """The lowered @main is a host program; a run calls the gate's subgraph, one branch and the
    loop body once per iteration, and reads back the If's condition and the Loop's condition once
    per iteration and once more: each read is charged [host] d2h_read_s."""
    _, levels = scripted
    lowered = levels["stream"]
    assert is_host_program(main_function(lowered))
    x = np.ones((2, 8), np.float32)
    target = load_target("ascend910b")
    for steps in (0, 3):
        _, record = run_host(lowered, {"x": x, "steps": np.array(steps, np.int64)})
        assert record.calls == ["main_sub_0_know", "/If/then_branch", *["/Loop/body"] * steps]
        assert record.reads == 2 + steps
        timed = host_time(record, target)
        assert timed.reads_s == pytest.approx((2 + steps) * target.host.d2h_read_s)
        assert timed.total_s > timed.device_s > 0


def test_the_device_decides_sunk_control_flow(scripted):
    """The sunk @main is a control program: one launch, no value read back; the device runs the
    gate, one branch, the loop's condition once per iteration and once more, and the body, each
    without a launch of its own, and label tasks: the If's switch and goto, the goto into the loop,
    a switch per decision and a goto per iteration."""
    _, levels = scripted
    sunk = levels["sunk"]
    assert is_control_program(main_function(sunk))
    x = np.ones((2, 8), np.float32)
    target = load_target("ascend910b")
    for steps in (0, 3):
        _, record = run_host(sunk, {"x": x, "steps": np.array(steps, np.int64)})
        loop = ["main_loop_0_cond", "/Loop/body"] * steps + ["main_loop_0_cond"]
        assert record.calls == ["main_sub_0_know", "/If/then_branch", *loop]
        assert all(record.on_device) and record.programs == 1 and record.reads == 0
        assert record.labels == 2 + 1 + 2 * steps + 1
        timed = host_time(record, target)
        alone = 0.0
        for call in record.calls:
            owner, name = record.functions[call]
            alone += simulate_module(owner, target, name).latency
        launches = (len(record.calls) - 1) * target.host.launch_s
        assert timed.total_s == pytest.approx(alone - launches + record.labels * target.events.label_s)


def test_mutation_a_switch_to_the_wrong_branch_is_caught(scripted):
    """The If's switch with its labels swapped runs the other branch: the outputs differ."""
    session, levels = scripted
    mutant = clone_with_weights(levels["sunk"])
    switch = next(op for op in main_function(mutant).walk() if isinstance(op, LabelSwitchOp))
    switch.successors = [switch.branches[1], switch.branches[0]]
    feeds = {"x": np.ones((2, 8), np.float32), "steps": np.array(1, np.int64)}
    (want,) = session.run(None, feeds)
    assert relative_error(want, run(levels["sunk"], feeds)["h"]) <= 1e-5
    assert relative_error(want, run(mutant, feeds)["h"]) > 1e-2


def test_a_loop_past_the_iteration_bound_is_one_line(scripted, monkeypatch):
    """A loop whose condition does not fail by the bound stops with an error naming it, on the host
    (ge.loop) and on the device (the label the body's goto returns to)."""
    _, levels = scripted
    monkeypatch.setattr(control_flow, "MAX_ITERATIONS", 4)
    feeds = {"x": np.ones((2, 8), np.float32), "steps": np.array(10, np.int64)}
    with pytest.raises(control_flow.LoopError, match="ge.loop '/Loop': more than 4 iterations"):
        run(levels["stream"], feeds)
    with pytest.raises(
        control_flow.LoopError, match="to the label calling @main_loop_0_cond: gone to more than 4 times"
    ):
        run(levels["sunk"], feeds)


def test_a_streaming_model_carries_its_state_over_a_sequence_of_calls():
    model = _load("vad_style")
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    levels = _levels(model)
    rng = np.random.default_rng(0)
    frames = [(rng.standard_normal((1, 16)) * scale).astype(np.float32) for scale in (0.1, 2.0, 2.0, 0.1, 1.5, 0.2)]
    states = {name: np.zeros((1, 8), np.float32) for name in ["ort", *levels]}
    for frame in frames:  # loud frames update the state, quiet ones let it decay: both branches run
        want, states["ort"] = session.run(None, {"frame": frame, "state": states["ort"]})
        for name, module in levels.items():
            got = run(module, {"frame": frame, "state": states[name]})
            assert relative_error(want, got["speech"]) <= 1e-5, name
            states[name] = got["next_state"]
            assert relative_error(states["ort"], states[name]) <= 1e-5, name
