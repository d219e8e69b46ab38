"""ConvTranspose in the layout passes (passes/layout/rules.py `conv-transpose-*`): like GE's
Conv2DTranspose it computes on NC1HWC0 activations with a FRACTAL_Z filter, so a conv /
conv_transpose chain (an upsampling decoder) keeps NC1HWC0 throughout, at the same numbers; a
grouped one keeps its weight ND; a training step through it trains exactly as without layouts and
keeps its weight variable stored in FRACTAL_Z; a dropped anchor is caught."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper
from xdsl.context import Context

from ge.frontend.onnx_importer import import_model
from ge.ge_dialects import ge
from ge.ge_dialects.ge.layout import FRACTAL_Z, NC1HWC0, TransDataOp, is_stored_logically, storage_of
from ge.ge_dialects.ge.weights import attach_weights, weights_of
from ge.interpreter.runner import run
from ge.passes.layout import assign_formats
from ge.passes.pipeline import parse_passes
from ge.tools.training_state import run_steps, state_outputs

LAYOUT = "assign-formats,cancel-trans-data,merge-trans-data,fold-trans-data,dce"
F32 = onnx.TensorProto.FLOAT


def decoder(training: bool = False) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """Conv (stride 2) -> Relu -> ConvTranspose (stride 2, pads, output_padding, bias) -> Relu ->
    grouped ConvTranspose (output_shape) -> Add; for training, -> GlobalAveragePool -> Gemm."""
    rng = np.random.default_rng(5)
    w = {
        "c.weight": rng.standard_normal((8, 3, 3, 3)) * 0.3,
        "t1.weight": rng.standard_normal((8, 6, 4, 4)) * 0.3,
        "t1.bias": rng.standard_normal(6) * 0.1,
        "t2.weight": rng.standard_normal((6, 2, 3, 3)) * 0.3,
    }
    nodes = [
        helper.make_node("Conv", ["x", "c.weight"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node(
            "ConvTranspose",
            ["r", "t1.weight", "t1.bias"],
            ["t1"],
            strides=[2, 2],
            pads=[1, 1, 1, 1],
            output_padding=[1, 1],
        ),
        helper.make_node("Relu", ["t1"], ["s"]),
        helper.make_node("ConvTranspose", ["s", "t2.weight"], ["t2"], group=2, strides=[2, 2], output_shape=[34, 35]),
        helper.make_node("Add", ["t2", "t2"], ["y"]),
    ]
    outputs = [helper.make_tensor_value_info("y", F32, [2, 4, 34, 35])]
    if training:
        w["fc.weight"] = rng.standard_normal((3, 4)) * 0.3
        nodes += [
            helper.make_node("GlobalAveragePool", ["y"], ["g"]),
            helper.make_node("Flatten", ["g"], ["f"]),
            helper.make_node("Gemm", ["f", "fc.weight"], ["z"], transB=1),
        ]
        outputs = [helper.make_tensor_value_info("z", F32, [2, 3])]
    graph = helper.make_graph(
        nodes,
        "decoder",
        [helper.make_tensor_value_info("x", F32, [2, 3, 16, 16])],
        outputs,
        [numpy_helper.from_array(np.asarray(a, np.float32), k) for k, a in w.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    inputs = {"x": rng.standard_normal((2, 3, 16, 16)).astype(np.float32)}
    if training:
        inputs["labels"] = np.array([0, 2], np.int64)
    return model, inputs


def _apply(module, pipeline: str) -> None:
    for p in parse_passes(pipeline):
        p.apply(Context(), module)
    module.verify()


def _trans_data(module) -> list[TransDataOp]:
    return [op for op in module.walk() if isinstance(op, TransDataOp)]


def _conv_transposes(module) -> list[ge.ConvTransposeOp]:
    return [op for op in module.walk() if isinstance(op, ge.ConvTransposeOp)]


def _laid_out():
    model, inputs = decoder()
    module, weights = import_model(model)
    before = run(module, inputs, weights)
    attach_weights(module, weights)
    _apply(module, LAYOUT)
    return module, before, run(module, inputs, weights_of(module))


def test_the_decoder_stays_in_nc1hwc0_at_the_same_numbers():
    module, before, after = _laid_out()
    np.testing.assert_allclose(after["y"], before["y"], rtol=1e-5, atol=1e-5)
    transposes = _conv_transposes(module)
    assert len(transposes) == 2
    for op in transposes:
        assert storage_of(op.X.type) == storage_of(op.Y.type) == NC1HWC0
    ungrouped, grouped = transposes
    assert storage_of(ungrouped.W.type) == FRACTAL_Z
    assert is_stored_logically(grouped.W.type)  # group packing is not modeled
    assert len(_trans_data(module)) == 2  # the graph input in, the output out


def test_mutation_a_dropped_conv_transpose_anchor_is_caught(monkeypatch):
    """Without conv-transpose-nc1hwc0 the activations go back to NCHW around each transposed
    conv: more TransData, and the check above fails."""
    rules = tuple(r for r in assign_formats.RULES if r.name != "conv-transpose-nc1hwc0")
    monkeypatch.setattr(assign_formats, "RULES", rules)
    with pytest.raises(AssertionError):
        test_the_decoder_stays_in_nc1hwc0_at_the_same_numbers()


def _step(layout: bool):
    model, inputs = decoder(training=True)
    module, weights = import_model(model, training=True)
    attach_weights(module, weights)
    _apply(
        module, "add-loss{output=z},autodiff,apply-optimizer{kind=momentum lr=0.05}" + ("," + LAYOUT if layout else "")
    )
    return module, inputs


def _train(module, inputs, steps: int = 3):
    losses: list[float] = []
    _, state = run_steps(
        lambda w: run(module, inputs, w),
        weights_of(module),
        state_outputs(module),
        steps,
        lambda _, out: losses.append(float(out["loss"])),
    )
    return losses, state


def test_a_training_step_through_conv_transpose_trains_as_without_layouts():
    want_losses, want_state = _train(*_step(layout=False))
    module, inputs = _step(layout=True)
    losses, state = _train(module, inputs)
    np.testing.assert_allclose(losses, want_losses, rtol=1e-6)
    assert losses[-1] < losses[0]
    for key, value in want_state.items():
        np.testing.assert_allclose(state[key], value, rtol=1e-5, atol=1e-6, err_msg=key)
    stored = {
        op.state_key
        for op in module.walk()
        if isinstance(op, ge.VariableOp) and not is_stored_logically(op.output.type)
    }
    assert {"t1.weight", "t1.weight.momentum"} <= stored  # read by the Cube in FRACTAL_Z, kept there
    assert "t2.weight" not in stored  # grouped
    ungrouped = [op for op in _conv_transposes(module) if op.p("group") == 1]
    assert ungrouped and all(storage_of(op.W.type) == FRACTAL_Z for op in ungrouped)
