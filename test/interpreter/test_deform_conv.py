"""ge.deform_conv (ONNX DeformConv) against onnxruntime: fractional offsets reaching outside the
image, groups and offset groups, a mask and a bias, strides, pads and dilations; its work facts
and its refusals."""

from __future__ import annotations

import numpy as np
import pytest
from onnx_oracle import compare_with_onnxruntime, node_model

from ge.frontend.onnx_importer import import_model
from ge.frontend.onnx_ops import OnnxImportError
from ge.ge_dialects.ge.facts import Engine

RNG = np.random.default_rng(9)


def deform_inputs(n=1, c=4, size=(6, 5), m=6, k=(3, 3), group=1, offset_group=1, out=(4, 3), mask=True, bias=True):
    taps = offset_group * k[0] * k[1]
    inputs = {
        "X": RNG.standard_normal((n, c, *size)).astype(np.float32),
        "W": RNG.standard_normal((m, c // group, *k)).astype(np.float32),
        "offset": (2 * RNG.standard_normal((n, 2 * taps, *out))).astype(np.float32),  # some reach outside
        "B": RNG.standard_normal(m).astype(np.float32) if bias else None,
        "mask": RNG.uniform(0, 1, (n, taps, *out)).astype(np.float32) if mask else None,
    }
    return inputs


@pytest.mark.parametrize(
    "shape, attrs",
    [
        ({}, {}),
        ({"c": 4, "m": 6, "group": 2, "offset_group": 2, "mask": False}, {"group": 2, "offset_group": 2}),
        ({"n": 2, "size": (7, 7), "out": (4, 4), "bias": False}, {"strides": [2, 2], "pads": [1, 1, 1, 1]}),
        ({"size": (7, 6), "k": (2, 2), "out": (5, 3)}, {"dilations": [2, 3]}),
    ],
)
def test_deform_conv_equals_onnxruntime(shape, attrs):
    inputs = deform_inputs(**shape)
    model = node_model("DeformConv", inputs, 1, **attrs)
    model.opset_import[0].version = 19
    compare_with_onnxruntime(model, {k: v for k, v in inputs.items() if v is not None}, 1e-4, 1e-4)


@pytest.mark.mutation
def test_mutation_nearest_pixel_sampling_is_caught(monkeypatch):
    """The offsets rounded to whole pixels instead of read bilinearly."""
    from ge.interpreter.kernels import deform_conv

    real = deform_conv.sampled_columns
    monkeypatch.setattr(deform_conv, "sampled_columns", lambda x, y, xs: real(x, np.round(y), np.round(xs)))
    with pytest.raises(AssertionError):
        test_deform_conv_equals_onnxruntime({}, {})


def test_a_cube_conv_with_its_sampling_on_the_vector_unit():
    inputs = deform_inputs()
    module, _ = import_model(node_model("DeformConv", inputs, 1))
    (op,) = [o for o in module.walk() if o.name == "ge.deform_conv"]
    assert op.engine() is Engine.CUBE
    assert op.macs() == 1 * 6 * 4 * 3 * (4 * 3 * 3)  # output elements x (C / group) * kH * kW
    assert op.vector_elements() == 4 * 1 * 4 * 3 * 3 * 4 * 3


@pytest.mark.parametrize(
    "change, message",
    [
        (
            lambda i: i.update(offset=i["offset"][:, :10]),
            r"operand 'offset' of shape \[1, 10, 4, 3\] must be \[1, 18, 4, 3\]",
        ),
        (
            lambda i: i.update(mask=i["mask"][:, :, :3]),
            r"operand 'mask' of shape \[1, 9, 3, 3\] must be \[1, 9, 4, 3\]",
        ),
        (lambda i: i.update(X=i["X"][..., 0]), r"X must be \(N, C, H, W\): 2 spatial dims, got rank 3"),
    ],
)
def test_bad_shapes_are_refused_in_one_line(change, message):
    inputs = deform_inputs()
    change(inputs)
    with pytest.raises(OnnxImportError, match=message):
        import_model(node_model("DeformConv", inputs, 1))
