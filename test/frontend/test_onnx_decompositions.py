"""Operators whose schema has no function body import through a body ge builds itself
(frontend/onnx_decompositions.py): RNN, GRU and the LSTMs ge.lstm does not take (peepholes, a cell
clip, coupled gates, other activations) unrolled over their sequence, LpNormalization, ReverseSequence and TensorScatter; onnxruntime, which runs them natively, is the
oracle."""

from __future__ import annotations

import numpy as np
import pytest
from onnx_oracle import compare_with_onnxruntime, node_model

from ge.frontend.onnx_importer import import_model
from ge.frontend.onnx_ops import OnnxImportError
from ge.interpreter.kernels.checked import KernelError

RNG = np.random.default_rng(11)
SEQ, BATCH, IN, HIDDEN = 5, 3, 4, 6


def _f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _recurrent(op_type: str, gates: int, directions: int, *, bias=True, initial=True, lengths=None, peephole=False):
    inputs = {
        "X": _f32(SEQ, BATCH, IN),
        "W": _f32(directions, gates * HIDDEN, IN) * 0.5,
        "R": _f32(directions, gates * HIDDEN, HIDDEN) * 0.5,
        "B": _f32(directions, 2 * gates * HIDDEN) if bias else None,
        "sequence_lens": None if lengths is None else np.asarray(lengths, dtype=np.int32),
        "initial_h": _f32(directions, BATCH, HIDDEN) if initial else None,
    }
    if op_type == "LSTM":
        inputs["initial_c"] = _f32(directions, BATCH, HIDDEN) if initial else None
        inputs["P"] = _f32(directions, 3 * HIDDEN) if peephole else None
    return inputs


def _feeds(inputs):
    return {k: v for k, v in inputs.items() if v is not None}


@pytest.mark.parametrize(
    "direction, options, attrs",
    [
        ("reverse", {"initial": False, "bias": False}, {"clip": 3.0}),
        ("bidirectional", {"peephole": True, "lengths": [5, 2, 4]}, {"clip": 1.5}),
        ("forward", {"lengths": [1, 5, 3]}, {"input_forget": 1}),
    ],
)
def test_lstm_equals_onnxruntime(direction, options, attrs):
    inputs = _recurrent("LSTM", 4, 2 if direction == "bidirectional" else 1, **options)
    model = node_model("LSTM", inputs, 3, hidden_size=HIDDEN, direction=direction, **attrs)
    compare_with_onnxruntime(model, _feeds(inputs), 1e-5, 1e-5)


@pytest.mark.parametrize("linear_before_reset", [0, 1])
@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
def test_gru_equals_onnxruntime(linear_before_reset, direction):
    inputs = _recurrent("GRU", 3, 2 if direction == "bidirectional" else 1, lengths=[5, 3, 1])
    model = node_model(
        "GRU", inputs, 2, hidden_size=HIDDEN, direction=direction, linear_before_reset=linear_before_reset
    )
    compare_with_onnxruntime(model, _feeds(inputs), 1e-5, 1e-5)


@pytest.mark.parametrize(
    "activations, alpha, beta",
    [(["Tanh"], [], []), (["Relu", "LeakyRelu"], [0.3], []), (["ScaledTanh", "Affine"], [0.5, 2.0], [1.5, -0.5])],
)
def test_rnn_activations_equal_onnxruntime(activations, alpha, beta):
    directions = len(activations)
    inputs = _recurrent("RNN", 1, directions)
    attrs = {k: v for k, v in {"activation_alpha": alpha, "activation_beta": beta}.items() if v}
    model = node_model(
        "RNN",
        inputs,
        2,
        hidden_size=HIDDEN,
        direction="bidirectional" if directions == 2 else "forward",
        activations=activations,
        **attrs,
    )
    compare_with_onnxruntime(model, _feeds(inputs), 1e-5, 1e-5)


@pytest.mark.parametrize("p", [1, 2])
def test_lp_normalization_equals_onnxruntime_zero_rows_included(p):
    x = _f32(3, 4, 5)
    x[1, 2] = 0
    compare_with_onnxruntime(node_model("LpNormalization", {"x": x}, 1, p=p, axis=-1), {"x": x}, 1e-6, 1e-6)


def test_the_unrolled_lstm_is_plain_ge_ops():
    inputs = _recurrent("LSTM", 4, 1, peephole=True)
    module, _ = import_model(node_model("LSTM", inputs, 3, hidden_size=HIDDEN))
    names = {op.name for op in module.walk()}
    assert {"ge.matmul", "ge.sigmoid", "ge.tanh", "ge.mul", "ge.add"} <= names
    assert sum(op.name == "ge.sigmoid" for op in module.walk()) == 3 * SEQ  # i, f, o per step


def test_an_unknown_sequence_length_is_refused_in_one_line():
    inputs = _recurrent("GRU", 3, 1)
    model = node_model("GRU", inputs, 2, hidden_size=HIDDEN)
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "seq"
    with pytest.raises(OnnxImportError, match="needs a static sequence length to be unrolled"):
        import_model(model)


def test_an_unknown_activation_is_refused():
    inputs = _recurrent("RNN", 1, 1)
    model = node_model("RNN", inputs, 2, hidden_size=HIDDEN, activations=["Swish"])
    with pytest.raises(OnnxImportError, match="activation 'Swish' is not one ONNX defines"):
        import_model(model)


@pytest.mark.parametrize("time_axis, batch_axis, shape", [(0, 1, (5, 3, 2)), (1, 0, (3, 5))])
def test_reverse_sequence_equals_onnxruntime(time_axis, batch_axis, shape):
    x = _f32(*shape)
    lens = np.asarray([5, 1, 3], dtype=np.int64)  # the whole row, one step (kept), a prefix
    model = node_model("ReverseSequence", {"x": x, "lens": lens}, 1, time_axis=time_axis, batch_axis=batch_axis)
    compare_with_onnxruntime(model, {"x": x, "lens": lens}, 0, 0)


@pytest.mark.parametrize(
    "mode, axis, indices",
    [("linear", -2, None), ("linear", 2, [0, 3]), ("circular", -2, [4, 6]), ("circular", 1, [1, 2])],
)
def test_tensor_scatter_equals_onnxruntime(mode, axis, indices):
    cache = _f32(2, 3, 6, 4)
    update_shape = list(cache.shape)
    update_shape[axis] = 3 if axis != 1 else 2
    inputs = {"cache": cache, "update": _f32(*update_shape)}
    if indices is not None:
        inputs["write_indices"] = np.asarray(indices, dtype=np.int64)
    model = node_model("TensorScatter", inputs, 1, mode=mode, axis=axis)
    model.opset_import[0].version = 24
    compare_with_onnxruntime(model, inputs, 0, 0)


@pytest.mark.parametrize(
    "op_type, inputs, attrs, message",
    [
        (
            "ReverseSequence",
            {"x": _f32(2, 3, 4), "lens": np.ones(3, np.int64)},
            {"time_axis": 2},
            "time_axis and batch",
        ),
        ("TensorScatter", {"c": _f32(2, 6), "u": _f32(2, 3)}, {"axis": 0}, "axis 0 must name a dim after the batch"),
        ("TensorScatter", {"c": _f32(2, 6, 1), "u": _f32(2, 3, 1)}, {"mode": "ring"}, "mode must be 'linear' or"),
    ],
)
def test_bad_attributes_are_refused_in_one_line(op_type, inputs, attrs, message):
    model = node_model(op_type, inputs, 1, **attrs)
    model.opset_import[0].version = 24
    with pytest.raises(OnnxImportError, match=message):
        import_model(model)


@pytest.mark.parametrize("op_type", ["ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"])
@pytest.mark.parametrize("opset, attrs", [(13, {"axes": [1], "keepdims": 0}), (17, {"axes": [-1, 0]}), (17, {})])
def test_reductions_before_opset_18_equal_onnxruntime(op_type, opset, attrs):
    """Their schemas have a body only from opset 18: older nodes are read as the opset-18 node."""
    x = np.abs(_f32(3, 4, 5)) + 0.1  # ReduceLogSum takes the log of the sum
    model = node_model(op_type, {"x": x}, 1, **attrs)
    model.opset_import[0].version = opset
    compare_with_onnxruntime(model, {"x": x}, 1e-5, 1e-6)


# -- mutations -----------------------------------------------------------------------------------


def test_mutation_swapped_gate_order_is_caught(monkeypatch):
    """LSTM gates read in ifoc order instead of iofc: onnxruntime's outputs differ."""
    from ge.frontend import onnx_decompositions

    real = onnx_decompositions._Recurrent.gates

    def swapped(self, v):
        gates = real(self, v)
        return [gates[0], gates[2], gates[1], gates[3]] if len(gates) == 4 else gates

    monkeypatch.setattr(onnx_decompositions._Recurrent, "gates", swapped)
    with pytest.raises(AssertionError):
        test_lstm_equals_onnxruntime("bidirectional", {"peephole": True, "lengths": [5, 2, 4]}, {"clip": 1.5})


def test_node_name_of_the_body():
    """The unrolled body's ops carry the node's name as their prefix."""
    inputs = _recurrent("GRU", 3, 1)
    model = node_model("GRU", inputs, 2, hidden_size=HIDDEN)
    model.graph.node[0].name = "/encoder/gru"
    module, _ = import_model(model)
    from ge.ge_dialects.ge.base import location_name

    names = [location_name(op) for op in module.walk() if op.name == "ge.matmul"]
    assert names and all(n.startswith("/encoder/gru/") for n in names)


def test_mutation_circular_writes_without_the_wrap_are_caught(monkeypatch):
    """TensorScatter's circular mode built as linear: the writes past the cache's end are refused
    by the scatter's kernel instead of wrapping to its start."""
    from ge.frontend import onnx_decompositions

    real = onnx_decompositions._tensor_scatter

    def linear(node, types, where):
        for a in node.attribute:
            if a.name == "mode":
                a.s = b"linear"
        return real(node, types, where)

    monkeypatch.setitem(onnx_decompositions.DECOMPOSITIONS, "TensorScatter", linear)
    with pytest.raises(KernelError, match="index 6 is out of range for axis 2 of size 6"):
        test_tensor_scatter_equals_onnxruntime("circular", -2, [4, 6])


def test_mutation_a_decomposition_at_every_opset_nests_itself(monkeypatch):
    """Without the opset bound the opset-18 node would be decomposed again, into itself."""
    from ge.frontend import onnx_decompositions

    monkeypatch.setitem(onnx_decompositions.DECOMPOSED_BEFORE, "ReduceL2", 10**6)
    with pytest.raises(OnnxImportError, match="function bodies nest deeper than 64 levels"):
        test_reductions_before_opset_18_equal_onnxruntime("ReduceL2", 17, {})
