"""ge.lstm (GE's DynamicRNN) against onnxruntime, its gradient against central differences, which
LSTM nodes stay whole at import and which are unrolled, its export, and its work on the device
model; with mutations the checks catch."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from onnx_oracle import compare_with_onnxruntime, node_model
from vjp_check import check_vjp

from ge.device.ir_work import ops_work, work_time
from ge.frontend.onnx_exporter import export_module
from ge.frontend.onnx_importer import import_model
from ge.frontend.onnx_ops import OnnxImportError
from ge.ge_dialects import ge
from ge.ge_dialects.ge.types import shape_of
from ge.ge_dialects.ge.weights import attach_weights
from ge.interpreter.kernels import recurrent
from ge.interpreter.kernels.checked import KernelError
from ge.interpreter.runner import run
from ge.target import load_target

RNG = np.random.default_rng(5)
SEQ, BATCH, IN, HIDDEN = 5, 3, 4, 6


def _lstm_inputs(directions: int, *, layout=0, bias=True, initial=True, lengths=None, dtype=np.float32):
    def draw(*shape, scale=1.0):
        return (RNG.standard_normal(shape) * scale).astype(dtype)

    state = (BATCH, directions, HIDDEN) if layout else (directions, BATCH, HIDDEN)
    return {
        "X": draw(BATCH, SEQ, IN) if layout else draw(SEQ, BATCH, IN),
        "W": draw(directions, 4 * HIDDEN, IN, scale=0.5),
        "R": draw(directions, 4 * HIDDEN, HIDDEN, scale=0.5),
        "B": draw(directions, 8 * HIDDEN) if bias else None,
        "sequence_lens": None if lengths is None else np.asarray(lengths, np.int32),
        "initial_h": draw(*state) if initial else None,
        "initial_c": draw(*state) if initial else None,
    }


def _feeds(inputs):
    return {k: v for k, v in inputs.items() if v is not None}


DIRECTIONS = {"forward": 1, "reverse": 1, "bidirectional": 2}
CASES = [
    ("forward", {}),
    ("reverse", {"bias": False, "initial": False}),
    ("bidirectional", {"lengths": [5, 2, 4]}),
    ("bidirectional", {"layout": 1}),
    ("reverse", {"layout": 1, "lengths": [1, 5, 3], "initial": False}),
]


def _model(direction, options, outputs=3):
    inputs = _lstm_inputs(DIRECTIONS[direction], **options)
    attrs = {"layout": options["layout"]} if options.get("layout") else {}
    return node_model("LSTM", inputs, outputs, hidden_size=HIDDEN, direction=direction, **attrs), inputs


@pytest.mark.parametrize("direction, options", [c for c in CASES if not c[1].get("layout")])
def test_lstm_equals_onnxruntime(direction, options):
    model, inputs = _model(direction, options)
    module, _ = import_model(model)
    assert [op.name for op in module.walk() if op.name.startswith("ge.")] == ["ge.lstm"]
    compare_with_onnxruntime(model, _feeds(inputs), 1e-5, 1e-5)


@pytest.mark.parametrize("direction, options", [c for c in CASES if c[1].get("layout")])
def test_batch_major_layout_is_the_time_major_one_transposed(direction, options):
    """onnxruntime refuses layout = 1, so the oracle is its layout-0 run on the transposed inputs."""
    ort = pytest.importorskip("onnxruntime")
    model, inputs = _model(direction, options)
    module, _ = import_model(model)
    got = list(run(module, _feeds(inputs)).values())
    swapped = {
        k: (np.swapaxes(v, 0, 1) if k in ("X", "initial_h", "initial_c") and v is not None else v)
        for k, v in inputs.items()
    }
    plain = node_model("LSTM", swapped, 3, hidden_size=HIDDEN, direction=direction)
    session = ort.InferenceSession(plain.SerializeToString(), providers=["CPUExecutionProvider"])
    y, h, c = session.run(None, _feeds(swapped))
    for g, w in zip(got, (np.transpose(y, (2, 0, 1, 3)), np.swapaxes(h, 0, 1), np.swapaxes(c, 0, 1))):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_f16_lstm_equals_onnxruntime_within_f16():
    model, inputs = _model("forward", {"dtype": np.float16})
    compare_with_onnxruntime(model, _feeds(inputs), 2e-2, 2e-2)


def test_only_the_sequence_is_asked_for():
    model, inputs = _model("bidirectional", {}, outputs=1)
    compare_with_onnxruntime(model, _feeds(inputs), 1e-5, 1e-5)


@pytest.mark.parametrize(
    "options, attrs",
    [
        ({"P": True}, {}),
        ({}, {"clip": 1.5}),
        ({}, {"input_forget": 1}),
        ({}, {"activations": ["Sigmoid", "Tanh", "Tanh"]}),
    ],
)
def test_what_dynamic_rnn_does_not_take_is_unrolled(options, attrs):
    inputs = _lstm_inputs(1)
    if options.get("P"):
        inputs["P"] = RNG.standard_normal((1, 3 * HIDDEN)).astype(np.float32)
    model = node_model("LSTM", inputs, 3, hidden_size=HIDDEN, **attrs)
    module, _ = import_model(model)
    names = {op.name for op in module.walk()}
    assert "ge.lstm" not in names and "ge.sigmoid" in names
    compare_with_onnxruntime(model, _feeds(inputs), 1e-5, 1e-5)


def test_an_unknown_sequence_length_runs():
    """Kept whole, the layer needs no static sequence length (the unrolled form did)."""
    model, inputs = _model("forward", {})
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "seq"
    module, _ = import_model(model)
    (lstm,) = [op for op in module.walk() if isinstance(op, ge.LstmOp)]
    assert shape_of(lstm.Y.type)[0] is None
    compare_with_onnxruntime(model, _feeds(inputs), 1e-5, 1e-5)


def test_a_sequence_length_past_the_sequence_is_refused_in_one_line():
    model, inputs = _model("forward", {"lengths": [5, 6, 1]})
    module, _ = import_model(model)
    with pytest.raises(KernelError, match=r"sequence_lens \[5, 6, 1\] must lie in \[0, 5\]") as caught:
        run(module, _feeds(inputs))
    assert "\n" not in str(caught.value)


def test_a_bad_weight_is_refused_at_import_in_one_line_naming_the_node():
    inputs = _lstm_inputs(1)
    inputs["W"] = inputs["W"][:, :20]  # 20 rows: not 4 * hidden_size
    model = node_model("LSTM", inputs, 3, hidden_size=HIDDEN)
    model.graph.node[0].name = "/encoder/lstm"
    with pytest.raises(OnnxImportError, match=r"/encoder/lstm.*W's second dim must be 4 \* hidden_size = 24, got 20"):
        import_model(model)


def test_export_runs_in_onnxruntime():
    ort = pytest.importorskip("onnxruntime")
    model, inputs = _model("bidirectional", {"lengths": [5, 2, 4]})
    module, weights = import_model(model)
    attach_weights(module, weights)
    exported = export_module(module)
    assert [n.op_type for n in exported.graph.node] == ["LSTM"]
    session = ort.InferenceSession(exported.SerializeToString(), providers=["CPUExecutionProvider"])
    got = session.run(None, _feeds(inputs))
    want = run(module, _feeds(inputs))
    for g, w in zip(got, want.values() if isinstance(want, dict) else want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


# -- the gradient ---------------------------------------------------------------------------------


def _f64(inputs):
    return {k: (v.astype(np.float64) if v is not None and v.dtype.kind == "f" else v) for k, v in inputs.items()}


@pytest.mark.parametrize("direction, options", CASES)
def test_lstm_vjp(direction, options):
    inputs = _f64(_lstm_inputs(DIRECTIONS[direction], **options))
    props = {"hidden_size": HIDDEN, "direction": direction, "layout": options.get("layout", 0)}
    check_vjp(ge.LstmOp, inputs, props, rtol=1e-5)


def test_lstm_vjp_with_only_the_sequence():
    inputs = _f64(_lstm_inputs(1))
    check_vjp(ge.LstmOp, inputs, {"hidden_size": HIDDEN}, num_results=1, rtol=1e-5)


def test_mutation_a_state_kept_past_the_sequence_without_its_gradient_is_caught(monkeypatch):
    """The backward walk drops the cotangent a kept state passes on past a row's length."""
    real = np.where

    def forgetful(cond, a, b=None):
        if b is not None and np.ndim(a) == 0 and a == 0:  # where(valid, 0, dh): the pass-through
            return np.zeros_like(b)
        return real(cond, a, b) if b is not None else real(cond)

    monkeypatch.setattr(recurrent.np, "where", forgetful)
    with pytest.raises(AssertionError):
        test_lstm_vjp("bidirectional", {"lengths": [5, 2, 4]})


def test_mutation_swapped_gate_order_is_caught(monkeypatch):
    """The kernel reads the gates in ifoc order instead of iofc: onnxruntime's outputs differ."""
    real = recurrent.np.split

    def swapped(a, n, axis=0):
        parts = real(a, n, axis=axis)
        return [parts[0], parts[2], parts[1], parts[3]] if n == 4 else parts

    monkeypatch.setattr(recurrent.np, "split", swapped)
    with pytest.raises(AssertionError):
        test_lstm_equals_onnxruntime("forward", {})


# -- work on the device model ---------------------------------------------------------------------


def _lstm_op(steps: int) -> ge.LstmOp:
    from xdsl.dialects.builtin import f32

    from ge.ge_dialects.ge.types import tensor

    block_args = [tensor(f32, s) for s in ((steps, 16, 64), (1, 4 * 128, 64), (1, 4 * 128, 128))]
    from xdsl.ir import Block

    block = Block(arg_types=block_args)
    op = ge.LstmOp.create({"X": block.args[0], "W": block.args[1], "R": block.args[2]}, {"hidden_size": 128})
    block.add_op(op)
    return op


def test_work_facts():
    op = _lstm_op(8)
    assert op.macs() == 8 * 16 * 4 * 128 * (64 + 128)
    assert op.transcendental_elements() == 5 * 8 * 16 * 128
    assert op.serial_steps() == 8


def test_the_steps_of_a_layer_do_not_overlap():
    """A recurrent kernel's stages overlap only within a step: the same work in one step would be
    faster, and a layer twice as long takes about twice as long."""
    target = load_target("ascend910b")
    op = _lstm_op(64)
    work = ops_work([op], list(op.operands), list(op.results), "cube+vector", 1)
    serial, parallel = work_time(work, target), work_time(dataclasses.replace(work, serial_steps=1), target)
    assert serial > 1.2 * parallel
    longer = _lstm_op(128)
    twice = work_time(ops_work([longer], list(longer.operands), list(longer.results), "cube+vector", 1), target)
    assert 1.8 < (twice - target.overheads.task_device_s) / (serial - target.overheads.task_device_s) < 2.2


def test_the_cube_geometry_counts_the_rows_of_one_step():
    """The steps of a layer wait for each other: its blocks share one step's batch rows, not every
    step's (16 rows here: one Cube fractal row, whatever the sequence length)."""
    from ge.device.engines import geometry

    target = load_target("ascend910b")
    for steps in (8, 64):
        op = _lstm_op(steps)
        _, tiling = geometry([op], list(op.operands), list(op.results), "cube+vector", target)
        assert tiling.startswith("m=16 ")
