"""ONNX ConvTranspose (GE's Conv2DTranspose): the transposed convolution, N-d.

A transposed convolution is a convolution's input gradient: X (N, C, I...) scattered through W
(C, M/group, K...) gives the full output of s * (I - 1) + output_padding + extent positions per
axis, of which the op keeps `size` starting `begin` positions in (the crop its pads, auto_pad or
output_shape decide). `transposed_axes` is that geometry, used by the shape function, the kernel
(interpreter/kernels/conv_transpose.py, which runs conv_backprop_input's arithmetic) and the VJP.

Where ONNX leaves room, onnxruntime's reading holds: an output_shape larger than the full output
extends it with zeros at the end (it is never a negative pad), SAME crops `max(0, full - I * s)`
positions (so a stride larger than the kernel can give fewer than I * s), and output_shape
overrides pads.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_operand_def, opt_prop_def, result_def, traits_def
from xdsl.traits import Pure

from ge.ge_dialects.ge.base import GeOp, InferArgs, IntProp, IntsProp, StrProp
from ge.ge_dialects.ge.conv_grad import ConvBackpropFilterOp, typed_like
from ge.ge_dialects.ge.facts import Engine, RunsOn
from ge.ge_dialects.ge.grad import GradBuilder, static_shape
from ge.ge_dialects.ge.layout import conv_formats
from ge.ge_dialects.ge.nn import AUTO_PADS, ConvOp, Window, _conv_kernel, _image_format, _shape, _show, _spatial_input
from ge.ge_dialects.ge.types import FLOAT_TYPES, Shape, elements, shape_of, tensor, tensor_type_of


@dataclass(frozen=True)
class TransposedAxis:
    """One spatial axis of a transposed convolution (None where an input size is unknown)."""

    full: int | None
    """The scattered length s * (I - 1) + output_padding + (K - 1) * d + 1."""
    begin: int | None
    """Positions cropped off the start of the full output (the pad at the begin)."""
    end: int | None
    """Positions cropped off its end (0 when output_shape asks for more than the full output)."""
    size: int | None
    """The output size."""


def transposed_axes(
    prop: Callable[[str], Any], sizes: Sequence[int | None], kernel: Sequence[int | None]
) -> list[TransposedAxis]:
    """The geometry of each spatial axis for input sizes `sizes` and kernel sizes `kernel`; `prop`
    reads the op's properties (DEFAULTS filled in)."""
    rank = len(sizes)
    strides = prop("strides") or [1] * rank
    dilations = prop("dilations") or [1] * rank
    adjust = prop("output_padding") or [0] * rank
    pads = prop("pads") or [0] * (2 * rank)
    wanted = prop("output_shape")
    auto_pad = prop("auto_pad")
    axes = []
    for i, (n, k) in enumerate(zip(sizes, kernel)):
        full = None if n is None or k is None else strides[i] * (n - 1) + adjust[i] + (k - 1) * dilations[i] + 1
        if wanted is None and auto_pad in ("NOTSET", "VALID"):
            begin, end = (pads[i], pads[i + rank]) if auto_pad == "NOTSET" else (0, 0)
            axes.append(TransposedAxis(full, begin, end, None if full is None else full - begin - end))
            continue
        size = wanted[i] if wanted is not None else None if n is None else n * strides[i]
        if full is None or size is None:
            axes.append(TransposedAxis(full, None, None, size))
            continue
        total = max(0, full - size)
        begin = total // 2 if auto_pad == "SAME_UPPER" else total - total // 2
        axes.append(TransposedAxis(full, begin, total - begin, size if wanted is not None else full - total))
    return axes


def explicit_window(
    prop: Callable[[str], Any], sizes: Sequence[int], kernel: Sequence[int]
) -> tuple[Window, list[int]]:
    """The convolution a transposed convolution of known `sizes` is the input gradient of: its
    window with explicit pads, and the output (that convolution's input) sizes."""
    axes = transposed_axes(prop, sizes, kernel)
    rank = len(sizes)
    begins = [a.begin for a in axes]
    ends = [a.end for a in axes]
    assert all(v is not None for v in (*begins, *ends))  # known sizes give known crops
    window = Window(
        kernel=tuple(kernel),
        strides=tuple(prop("strides") or [1] * rank),
        dilations=tuple(prop("dilations") or [1] * rank),
        pads=tuple(begins + ends),  # type: ignore[arg-type]
    )
    return window, [a.size for a in axes]  # type: ignore[misc]


def _check_ints(a: InferArgs, name: str, count: int, lowest: int) -> list[int] | None:
    values = a.prop(name)
    if values is None:
        return None
    if len(values) != count:
        raise a.fail(f"{name} must have {count} values, got {len(values)}")
    if any(v < lowest for v in values):
        raise a.fail(f"{name} must be {'non-negative' if lowest == 0 else 'positive'}, got {_show(values)}")
    return values


def _check_window(a: InferArgs, spatial: int) -> None:
    if a.prop("auto_pad") not in AUTO_PADS:
        raise a.fail(f'auto_pad must be one of {", ".join(AUTO_PADS)}, got "{a.prop("auto_pad")}"')
    if a.prop("pads") is not None and a.prop("auto_pad") != "NOTSET":
        raise a.fail(f'pads cannot be given with auto_pad "{a.prop("auto_pad")}"')
    strides = _check_ints(a, "strides", spatial, 1) or [1] * spatial
    _check_ints(a, "dilations", spatial, 1)
    _check_ints(a, "pads", 2 * spatial, 0)
    _check_ints(a, "output_shape", spatial, 1)
    adjust = _check_ints(a, "output_padding", spatial, 0) or [0] * spatial
    for i, (p, s) in enumerate(zip(adjust, strides)):
        if p >= s:
            raise a.fail(f"output_padding[{i}] = {p} must be less than strides[{i}] = {s}")


def _check_axes(a: InferArgs, sizes: Shape, axes: list[TransposedAxis]) -> None:
    """Every output size is positive, and a convolution of the output gives back the input (the
    largest output_shape a stride-s transposed convolution reaches is s - 1 past its full output
    without output_padding)."""
    strides = a.prop("strides") or [1] * len(sizes)
    adjust = a.prop("output_padding") or [0] * len(sizes)
    for i, (n, axis) in enumerate(zip(sizes, axes)):
        if axis.size is not None and axis.size < 1:
            raise a.fail(
                f"spatial axis {i} has no output: the full output of {axis.full} positions less pads "
                f"{axis.begin}+{axis.end} is {axis.size}"
            )
        if axis.full is not None and axis.size is not None:
            largest = axis.full - adjust[i] + strides[i] - 1
            if axis.size > largest:
                raise a.fail(
                    f"output_shape[{i}] = {axis.size} does not fit input size {n}: a stride-{strides[i]} "
                    f"transposed convolution of it gives at most {largest} positions"
                )


@irdl_op_definition
class ConvTransposeOp(GeOp):
    """ONNX ConvTranspose (GE's Conv2DTranspose): X (N, C, I...) and W (C, M/group, K...) give
    (N, M, O...); the bias B has M values. The input gradient of a convolution with W."""

    name = "ge.conv_transpose"
    ONNX: ClassVar = ("ConvTranspose",)
    PRECISION: ClassVar = "white"  # Conv2DTranspose: true
    DATA_OPERANDS: ClassVar = ("X", "W", "B")
    X = operand_def(TensorType)
    W = operand_def(TensorType)
    B = opt_operand_def(TensorType)
    Y = result_def(TensorType)
    auto_pad = opt_prop_def(StrProp)
    dilations = opt_prop_def(IntsProp)
    group = opt_prop_def(IntProp)
    kernel_shape = opt_prop_def(IntsProp)
    output_padding = opt_prop_def(IntsProp)
    output_shape = opt_prop_def(IntsProp)
    pads = opt_prop_def(IntsProp)
    strides = opt_prop_def(IntsProp)
    traits = traits_def(
        Pure(),
        RunsOn(Engine.CUBE),
        conv_formats("conv-transpose", "X", "Y", "W"),
    )
    DEFAULTS: ClassVar = {"auto_pad": "NOTSET", "group": 1}

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        dtype = a.expect_dtype("X", FLOAT_TYPES)
        a.expect_same_dtype("X", "W", "B")
        x = _spatial_input(a, "X")
        w = a.shape("W")
        if len(w) != len(x):
            raise a.fail(f"weight rank {len(w)} does not match input rank {len(x)}")
        out_channels = _check_channels(a, x, w)
        kernel = _conv_kernel(a, w)
        _check_window(a, len(x) - 2)
        axes = transposed_axes(a.prop, x[2:], kernel)
        _check_axes(a, x[2:], axes)
        shape = (x[0], out_channels, *[axis.size for axis in axes])
        return [tensor(dtype, shape, _image_format(a, "X", len(shape)))]

    def macs(self) -> int:
        """One multiply-accumulate per input element and weight element of one input channel (as
        conv_backprop_input, whose arithmetic this is)."""
        return elements(self.X) * math.prod(d or 1 for d in shape_of(tensor_type_of(self.W))[1:])

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """Y is the input gradient of a convolution with W, so dX = Conv(dY, W) and dW =
        ConvBackpropFilter(dY, X), with that convolution's explicit pads; dB = dY summed over
        the batch and spatial dims."""
        (dy,) = cotangents
        if dy is None:
            return [None] * len(self.operands)
        x, w = static_shape(self.X), static_shape(self.W)
        window, _ = explicit_window(self.p, x[2:], w[2:])
        props = {
            "group": self.p("group"),
            "strides": list(window.strides),
            "dilations": list(window.dilations),
            "pads": list(window.pads),
        }
        dx = g.value(ConvOp, {"X": dy, "W": self.W}, props)
        dw = g.value(ConvBackpropFilterOp, {"x": dy, "dy": self.X}, {**props, "filter_shape": w})
        grads = [typed_like(g, dx, self.X), typed_like(g, dw, self.W)]
        if self.B is not None:
            db = g.reduce_sum(dy, [0, *range(2, len(x))], keepdims=False)
            grads.append(typed_like(g, db, self.B))
        return grads


def _check_channels(a: InferArgs, x: Shape, w: Shape) -> int | None:
    """Input channels = W's first dim, divisible by group; returns the output channels (W's second
    dim x group), which the bias must have."""
    group = a.prop("group")
    if group < 1:
        raise a.fail(f"group must be positive, got {group}")
    if x[1] is not None and w[0] is not None and x[1] != w[0]:
        raise a.fail(f"input channels {x[1]} do not match weight dim 0 ({w[0]})")
    if w[0] is not None and w[0] % group:
        raise a.fail(f"input channels {w[0]} are not divisible by group {group}")
    out = None if w[1] is None else w[1] * group
    if a.has("B"):
        b = a.shape("B")
        if len(b) != 1 or (b[0] is not None and out is not None and b[0] != out):
            raise a.fail(f"bias of shape {_shape(b)} does not match {_show([out])} output channels")
    return out


CONV_TRANSPOSE_OPS = [ConvTransposeOp]

__all__ = ["ConvTransposeOp", "CONV_TRANSPOSE_OPS"]
