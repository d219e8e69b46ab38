"""ONNX DeformConv (GE's DeformableConv2D: DeformableOffsets on the Vector unit, then a Conv2D on
the Cube): a 2-D convolution whose every kernel tap reads the input at its position plus a learned
offset (bilinear between pixels, zero outside the image), optionally scaled by a mask."""

from __future__ import annotations

import math
from typing import ClassVar

from xdsl.dialects.builtin import TensorType
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure

from ge.ge_dialects.ge.base import GeOp, InferArgs, IntProp, IntsProp
from ge.ge_dialects.ge.facts import Engine, RunsOn
from ge.ge_dialects.ge.nn import conv_macs, conv_shape
from ge.ge_dialects.ge.types import FLOAT_TYPES, shape_of, tensor, tensor_type_of


@irdl_op_definition
class DeformConvOp(GeOp):
    """X (N, C, H, W), W (M, C / group, kH, kW), offset (N, offset_group * kH * kW * 2, oH, oW: a
    (dy, dx) per tap), B (M,), mask (N, offset_group * kH * kW, oH, oW) -> (N, M, oH, oW)."""

    name = "ge.deform_conv"
    ONNX: ClassVar = ("DeformConv",)
    PRECISION: ClassVar = "white"  # DeformableConv2D: true, as Conv2D
    DATA_OPERANDS: ClassVar = ("X", "W", "offset", "B", "mask")
    X = operand_def(TensorType)
    W = operand_def(TensorType)
    offset = operand_def(TensorType)
    B = opt_operand_def(TensorType)
    mask = opt_operand_def(TensorType)
    Y = result_def(TensorType)
    dilations = opt_prop_def(IntsProp)
    group = opt_prop_def(IntProp)
    kernel_shape = opt_prop_def(IntsProp)
    offset_group = opt_prop_def(IntProp)
    pads = opt_prop_def(IntsProp)
    strides = opt_prop_def(IntsProp)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(Pure(), RunsOn(Engine.CUBE))
    DEFAULTS: ClassVar = {"group": 1, "offset_group": 1, "auto_pad": "NOTSET"}  # no auto_pad: explicit pads
    NO_GRADIENT: ClassVar = "not built: the offsets' gradient needs the bilinear weights' derivatives"

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        dtype = a.expect_dtype("X", FLOAT_TYPES)
        a.expect_same_dtype("X", "W", "offset", "B", "mask")
        if a.rank("X") != 4:
            raise a.fail(f"X must be (N, C, H, W): 2 spatial dims, got rank {a.rank('X')}")
        shape, fmt = conv_shape(a, "X", "W")
        groups, channels = a.prop("offset_group"), a.shape("X")[1]
        if groups < 1 or (channels is not None and channels % groups):
            raise a.fail(f"offset_group {groups} must divide the {channels} input channels")
        taps = groups * math.prod(d or 1 for d in a.shape("W")[2:])
        for name, per_tap in (("offset", 2), ("mask", 1)):
            if a.has(name):
                want = (shape[0], taps * per_tap, *shape[2:])
                got = a.shape(name)
                if len(got) != 4 or any(g is not None and w is not None and g != w for g, w in zip(got, want)):
                    raise a.fail(f"operand '{name}' of shape {list(got)} must be {list(want)}")
        return [tensor(dtype, shape, fmt)]

    def macs(self) -> int:
        return conv_macs(self.W, self.Y)

    def vector_elements(self) -> int:
        """The sampling (GE's DeformableOffsets): every input channel read at every tap of every
        output pixel, four neighbours weighted each."""
        n, _, oh, ow = (d or 1 for d in shape_of(tensor_type_of(self.Y)))
        _, channels, kh, kw = (
            d or 1 for d in shape_of(tensor_type_of(self.X))[:2] + shape_of(tensor_type_of(self.W))[2:]
        )
        return 4 * n * channels * kh * kw * oh * ow


DEFORM_CONV_OPS = [DeformConvOp]

__all__ = ["DeformConvOp", "DEFORM_CONV_OPS"]
