"""Layouts of a training step's backward (passes/layout/rules.py BACKWARD_ANCHORS) and GE's variable
formats (passes/layout/variable_formats.py), on a small CNN with BatchNorm in training mode and
convs with stride, padding and groups:

- the step with the layout passes trains exactly like the step without (losses and state over 3
  steps, momentum and adam, variable formats on and off), and ge-run's --save-state writes the same
  logical state from both, which either step's --load-state reads;
- the backward convs, pools and BatchNorm compute in NC1HWC0 / FRACTAL_Z, TransData fall, and with
  variable formats no TransData touches a conv weight or its slots;
- mutations: a dropped backward anchor rule, a wrong format for dW, a read_state that does not
  convert, a state output not kept stored: a check below fails.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper
from tool_server import run as run_tool
from xdsl.context import Context

from ge.frontend.onnx_importer import import_model
from ge.frontend.sidecar import WeightStore
from ge.ge_dialects import ge
from ge.ge_dialects.ge.layout import FRACTAL_Z, NC1HWC0, TransDataOp, is_stored_logically, storage_of
from ge.ge_dialects.ge.weights import attach_weights, weights_of
from ge.interpreter.kernels import optimizer as optimizer_kernels
from ge.interpreter.runner import run
from ge.passes.layout import assign_formats
from ge.passes.layout.planning import anchor
from ge.passes.layout.rules import BACKWARD_ANCHORS
from ge.passes.pipeline import parse_passes
from ge.tools.training_state import run_steps, state_outputs

STEP = "add-loss{output=y},autodiff,apply-optimizer{kind=%s lr=0.05}"
LAYOUT = "assign-formats{variable-formats=%s},cancel-trans-data,merge-trans-data,fold-trans-data,dce"
LABELS = np.array([0, 2, 1], np.int64)


def cnn() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """Conv (stride 2, pad 1) -> BN (training) -> Relu -> grouped Conv (pad 1, bias) + residual ->
    Relu -> 1x1 Conv -> MaxPool (3, pad 1) -> AvgPool (2, stride 2) -> GlobalAveragePool -> Gemm."""
    rng = np.random.default_rng(3)
    w = {
        "c1.weight": rng.standard_normal((8, 4, 3, 3)) * 0.3,
        "bn.weight": rng.uniform(0.5, 1.5, 8),
        "bn.bias": rng.standard_normal(8) * 0.1,
        "bn.running_mean": np.zeros(8),
        "bn.running_var": np.ones(8),
        "c2.weight": rng.standard_normal((8, 4, 3, 3)) * 0.3,
        "c2.bias": rng.standard_normal(8) * 0.1,
        "c3.weight": rng.standard_normal((12, 8, 1, 1)) * 0.3,
        "fc.weight": rng.standard_normal((3, 12)) * 0.3,
        "fc.bias": rng.standard_normal(3) * 0.1,
    }
    nodes = [
        helper.make_node("Conv", ["x", "c1.weight"], ["c1"], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node(
            "BatchNormalization",
            ["c1", "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var"],
            ["b1", "m1", "v1"],
            training_mode=1,
        ),
        helper.make_node("Relu", ["b1"], ["r1"]),
        helper.make_node("Conv", ["r1", "c2.weight", "c2.bias"], ["c2"], pads=[1, 1, 1, 1], group=2),
        helper.make_node("Add", ["c2", "r1"], ["s"]),
        helper.make_node("Relu", ["s"], ["r2"]),
        helper.make_node("Conv", ["r2", "c3.weight"], ["c3"]),
        helper.make_node("MaxPool", ["c3"], ["p1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("AveragePool", ["p1"], ["p2"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["p2"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "fc.weight", "fc.bias"], ["y"], transB=1),
    ]
    f32 = onnx.TensorProto.FLOAT
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", f32, [3, 4, 10, 10])],
        [helper.make_tensor_value_info("y", f32, [3, 3])],
        [numpy_helper.from_array(np.asarray(a, np.float32), k) for k, a in w.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return model, {"x": rng.standard_normal((3, 4, 10, 10)).astype(np.float32), "labels": LABELS}


def step(kind: str = "momentum", layout: str | None = None):
    model, inputs = cnn()
    module, weights = import_model(model, training=True)
    attach_weights(module, weights)
    pipeline = STEP % kind + ("" if layout is None else "," + layout)
    for p in parse_passes(pipeline):
        p.apply(Context(), module)
    return module, inputs


def train(module, inputs, steps: int = 3):
    losses: list[float] = []
    _, state = run_steps(
        lambda w: run(module, inputs, w),
        weights_of(module),
        state_outputs(module),
        steps,
        lambda _, out: losses.append(float(out["loss"])),
    )
    return losses, state


def trans_data(module) -> list[TransDataOp]:
    return [op for op in module.walk() if isinstance(op, TransDataOp)]


def storage(value) -> str:
    return storage_of(value.type)


def layout_problems(module) -> list[str]:
    """What is not in the format GE's backward ops compute in (empty: all are)."""
    found = []
    want = {
        ge.ConvBackpropInputOp: (("dy", "dx"), ("W",)),
        ge.ConvBackpropFilterOp: (("x", "dy"), ("dW",)),
        ge.MaxPoolGradOp: (("x", "dy", "dx"), ()),
        ge.AvgPoolGradOp: (("dy", "dx"), ()),
        ge.BatchNormGradOp: (("dy", "x", "dx"), ()),
    }
    for op in module.walk():
        if type(op) not in want:
            continue
        blocked, weights = want[type(op)]
        for name in blocked:
            if storage(getattr(op, name)) != NC1HWC0:
                found.append(f"{op.name} {name} in {storage(getattr(op, name))}")
        if op.p("group") == 1 if hasattr(op, "group") else False:
            found += [
                f"{op.name} {n} in {storage(getattr(op, n))}" for n in weights if storage(getattr(op, n)) != FRACTAL_Z
            ]
    return found


def weight_trans_data(module) -> list[str]:
    """TransData that convert a variable, or an update's result or gradient (none, with variable formats)."""
    found = []
    for t in trans_data(module):
        src = t.src.owner
        if isinstance(src, (ge.VariableOp, ge.ApplyMomentumOp, ge.ApplyAdamOp, ge.ConvBackpropFilterOp)):
            found.append(f"{src.name} -> {t.p('dst_format')}")
    return found


@pytest.fixture(scope="module")
def reference():
    return {kind: train(*step(kind)) for kind in ("momentum", "adam")}


@pytest.mark.parametrize("kind", ["momentum", "adam"])
@pytest.mark.parametrize("variable_formats", ["true", "false"])
def test_the_step_with_layouts_trains_exactly_like_the_step_without(reference, kind, variable_formats):
    module, inputs = step(kind, LAYOUT % variable_formats)
    losses, state = train(module, inputs)
    want_losses, want_state = reference[kind]
    assert losses == want_losses
    assert losses[-1] < losses[0]
    assert state.keys() == want_state.keys()
    for key, value in want_state.items():
        assert state[key].shape == value.shape, key  # the state is logical, whatever the storage
        np.testing.assert_array_equal(state[key], value, err_msg=key)


def test_the_backward_computes_in_the_blocked_formats():
    module, _ = step(layout=LAYOUT % "true")
    assert layout_problems(module) == []
    kinds = {type(op) for op in module.walk()}
    assert {ge.ConvBackpropInputOp, ge.ConvBackpropFilterOp, ge.MaxPoolGradOp, ge.AvgPoolGradOp} <= kinds
    assert ge.BatchNormGradOp in kinds
    grouped = [op for op in module.walk() if isinstance(op, ge.ConvBackpropInputOp) and op.p("group") == 2]
    assert grouped and all(is_stored_logically(op.W.type) for op in grouped)  # no group-packed FRACTAL_Z
    relu_grads = [op for op in module.walk() if isinstance(op, ge.ReluGradOp)]
    assert relu_grads and all(storage(op.dx) == NC1HWC0 for op in relu_grads)


def test_trans_data_fall_and_variable_formats_keep_weights_stored(monkeypatch):
    with_all, _ = step(layout=LAYOUT % "true")
    without_variables, _ = step(layout=LAYOUT % "false")
    monkeypatch.setattr(assign_formats, "RULES", tuple(r for r in assign_formats.RULES if r not in BACKWARD_ANCHORS))
    forward_only, _ = step(layout=LAYOUT % "false")
    counts = [len(trans_data(m)) for m in (forward_only, without_variables, with_all)]
    assert counts[0] > counts[1] > counts[2], counts
    assert weight_trans_data(with_all) == []
    assert weight_trans_data(without_variables)  # each step converts the weights for the convs
    stored = {
        op.state_key
        for op in with_all.walk()
        if isinstance(op, ge.VariableOp) and not is_stored_logically(op.output.type)
    }
    assert stored == {"c1.weight", "c1.weight.momentum", "c3.weight", "c3.weight.momentum"}  # c2 is grouped
    outputs = {key: t for key, t in state_outputs(with_all).values()}
    assert {k for k, t in outputs.items() if storage_of(t) == FRACTAL_Z} == stored
    assert all(is_stored_logically(op.output.type) for op in without_variables.walk() if isinstance(op, ge.VariableOp))


# -- mutations -------------------------------------------------------------------------------------


@pytest.mark.parametrize("dropped", [r.name for r in BACKWARD_ANCHORS])
def test_dropping_a_backward_anchor_is_caught(monkeypatch, dropped):
    monkeypatch.setattr(assign_formats, "RULES", tuple(r for r in assign_formats.RULES if r.name != dropped))
    module, _ = step(layout=LAYOUT % "true")
    assert layout_problems(module) or weight_trans_data(module)


def test_a_wrong_format_for_dw_is_caught(monkeypatch):
    wrong = anchor("conv-backprop-filter-dw-fractal-z", (ge.ConvBackpropFilterOp,), NC1HWC0, (), ("dW",))
    table = tuple(wrong if r.name == wrong.name else r for r in assign_formats.RULES)
    monkeypatch.setattr(assign_formats, "RULES", table)
    module, _ = step(layout=LAYOUT % "true")
    assert any("dW in NC1HWC0" in p for p in layout_problems(module))
    assert weight_trans_data(module)


def test_state_outputs_not_kept_stored_are_caught(monkeypatch):
    monkeypatch.setattr(assign_formats, "keep_state_stored", lambda module, groups: 0)
    module, _ = step(layout=LAYOUT % "true")
    assert weight_trans_data(module)


def test_read_state_must_convert_logical_state(monkeypatch):
    """The state (sidecar, saved, carried) is logical; without the conversion a stored variable refuses it."""
    monkeypatch.setattr(optimizer_kernels, "to_physical", lambda value, t: value)
    module, inputs = step(layout=LAYOUT % "true")
    with pytest.raises(Exception, match="state 'c1.weight' holds float32 \\[8, 4, 3, 3\\]"):
        train(module, inputs, steps=1)


# -- ge-run --save-state / --load-state -----------------------------------------------------------


def _tool(name: str, *args):
    r = run_tool(name, *args)
    assert r.returncode == 0, r.stderr
    return r


def test_saved_state_is_logical_and_the_same_with_and_without_layouts(tmp_path: Path):
    model, inputs = cnn()
    onnx.save(model, tmp_path / "m.onnx")
    np.savez(tmp_path / "in.npz", **inputs)
    _tool("ge-translate", "--import-onnx", tmp_path / "m.onnx", "--training", "-o", tmp_path / "m.mlir")
    _tool("ge-opt", tmp_path / "m.mlir", "-p", STEP % "momentum", "-o", tmp_path / "plain.mlir")
    _tool("ge-opt", tmp_path / "plain.mlir", "-p", LAYOUT % "true", "-o", tmp_path / "stored.mlir")
    assert '#ge.fmt<NCHW, FRACTAL_Z>> {ge.name = "c1.weight"' in (tmp_path / "stored.mlir").read_text()
    state = {}
    for name in ("plain", "stored"):
        path = tmp_path / f"{name}.state.safetensors"
        _tool(
            "ge-run",
            tmp_path / f"{name}.mlir",
            "--inputs",
            tmp_path / "in.npz",
            "--steps",
            2,
            "--save-state",
            path,
        )
        state[name] = WeightStore(path)
    assert set(state["plain"]) == set(state["stored"])
    for key in state["plain"]:
        np.testing.assert_array_equal(np.asarray(state["stored"][key]), np.asarray(state["plain"][key]), err_msg=key)
    assert np.asarray(state["stored"]["c1.weight"]).shape == (8, 4, 3, 3)
    # either step resumes from the other's state: one more step, the same outputs
    outs = {}
    for name, other in (("plain", "stored"), ("stored", "plain")):
        out = tmp_path / f"{name}.out.npz"
        _tool(
            "ge-run",
            tmp_path / f"{name}.mlir",
            "--inputs",
            tmp_path / "in.npz",
            "--load-state",
            tmp_path / f"{other}.state.safetensors",
            "-o",
            out,
        )
        with np.load(out) as f:
            outs[name] = {k: f[k] for k in f.files}
    for key, value in outs["plain"].items():
        np.testing.assert_array_equal(outs["stored"][key], value, err_msg=key)
