"""ge.conv_transpose against onnxruntime beyond the ONNX node tests: 1-D/2-D/3-D, groups,
dilations, output_padding, SAME with strides larger than the kernel, output_shape that crops or
extends (onnxruntime's readings of the spec, ge_dialects/ge/conv_transpose.py), bias, f16; and a
mutation the comparison catches.

Each case is one ONNX node, imported with the ONNX importer and run by the interpreter."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from onnx_oracle import compare_with_onnxruntime, node_model

from ge.interpreter.kernels import conv_grad, conv_transpose

ort = pytest.importorskip("onnxruntime")

RNG = np.random.default_rng(0)


def rand(*shape: int, dtype=np.float32) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


def compare(inputs: dict[str, np.ndarray | None], rtol: float = 1e-4, atol: float = 1e-4, **attrs) -> None:
    feeds = {n: v for n, v in inputs.items() if v is not None}
    compare_with_onnxruntime(node_model("ConvTranspose", inputs, 1, **attrs), feeds, rtol, atol)


CASES = {
    "group2_dilated_strided": ((2, 4, 4, 5), (4, 3, 3, 2), dict(group=2, dilations=[2, 1], strides=[2, 3])),
    "pads_and_output_padding": (
        (1, 3, 5, 4),
        (3, 2, 3, 3),
        dict(strides=[3, 2], pads=[1, 2, 0, 1], output_padding=[2, 1]),
    ),
    "same_upper_odd": ((1, 2, 4, 3), (2, 3, 3, 4), dict(auto_pad="SAME_UPPER", strides=[2, 3])),
    "same_lower_odd": ((1, 2, 4, 3), (2, 3, 3, 4), dict(auto_pad="SAME_LOWER", strides=[2, 3])),
    "same_stride_beyond_kernel": ((1, 2, 3, 3), (2, 1, 2, 2), dict(auto_pad="SAME_UPPER", strides=[3, 3])),
    "valid": ((1, 2, 3, 4), (2, 2, 2, 3), dict(auto_pad="VALID", strides=[2, 1])),
    "output_shape_crops": ((1, 2, 4, 4), (2, 2, 3, 3), dict(strides=[2, 2], output_shape=[7, 8])),
    "output_shape_crops_same_upper": (
        (1, 2, 4, 4),
        (2, 2, 3, 3),
        dict(strides=[2, 2], output_shape=[6, 7], auto_pad="SAME_UPPER"),
    ),
    "output_shape_extends": ((1, 2, 3, 3), (2, 2, 3, 3), dict(strides=[3, 3], output_shape=[10, 11])),
    "output_shape_over_pads": (
        (1, 1, 3, 3),
        (1, 2, 3, 3),
        dict(strides=[2, 2], output_shape=[6, 6], pads=[0, 0, 1, 1]),
    ),
    "depthwise": ((1, 4, 5, 5), (4, 1, 3, 3), dict(group=4, strides=[2, 2], pads=[1, 1, 1, 1])),
    "conv1d": ((2, 3, 7), (3, 2, 4), dict(strides=[3], pads=[2, 1], dilations=[2], output_padding=[1])),
    "conv3d": ((1, 2, 3, 4, 3), (2, 3, 2, 3, 2), dict(pads=[1, 0, 1, 0, 1, 1], strides=[1, 2, 2])),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("bias", [False, True])
def test_conv_transpose(name, bias):
    x, w, attrs = CASES[name]
    out_channels = w[1] * attrs.get("group", 1)
    compare({"X": rand(*x), "W": rand(*w), "B": rand(out_channels) if bias else None}, **attrs)


def test_conv_transpose_f16():
    inputs = {
        "X": rand(1, 4, 5, 5, dtype=np.float16),
        "W": rand(4, 2, 3, 3, dtype=np.float16),
        "B": rand(2, dtype=np.float16),
    }
    compare(inputs, rtol=2e-3, atol=5e-3, strides=[2, 2], pads=[1, 1, 1, 1])


def test_mutation_a_transposed_conv_that_ignores_dilation_is_caught(monkeypatch):
    """Mutation: the kernel's window forgets the dilations (the result keeps its shape, so only the
    numbers tell); the comparison with onnxruntime fails."""

    def undilated(dy, w, shape, window, groups):
        return conv_grad.transposed_conv(dy, w, shape, dataclasses.replace(window, dilations=(1, 1)), groups)

    compare({"X": rand(1, 2, 4, 4), "W": rand(2, 2, 3, 3)}, dilations=[2, 2])
    monkeypatch.setattr(conv_transpose, "transposed_conv", undilated)
    with pytest.raises(AssertionError, match="out0"):
        compare({"X": rand(1, 2, 4, 4), "W": rand(2, 2, 3, 3)}, dilations=[2, 2])
