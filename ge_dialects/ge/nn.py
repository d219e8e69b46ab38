"""Neural-network ops: convolution, pooling, normalization, matrix products, softmax, dropout.

The sliding-window geometry (`Window`) lives here so the shape functions and the numpy kernels
compute output sizes and padding from one definition.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from xdsl.dialects.builtin import TensorType, bf16, f16, f32, f64, i1, i8, i32, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    AttrSizedResultSegments,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    opt_result_def,
    result_def,
    traits_def,
)
from xdsl.traits import EffectInstance, MemoryEffect, MemoryEffectKind, Pure

from ge.ge_dialects.ge.base import FloatProp, GeOp, InferArgs, IntProp, IntsProp, StrProp, constant_value, describe
from ge.ge_dialects.ge.elementwise import EqualOp, broadcast_shapes
from ge.ge_dialects.ge.facts import (
    Carries,
    ComputesIn,
    CopiesElements,
    Elementwise,
    Engine,
    Reduction,
    RunsOn,
    StorageFormats,
    Transcendental,
)
from ge.ge_dialects.ge.grad import GradBuilder, NotDifferentiable, static_shape
from ge.ge_dialects.ge.layout import ACTIVATION_FORMATS, FRACTAL_NZ, NC1HWC0, conv_formats, nz_along_last_axis
from ge.ge_dialects.ge.tensor_ops import WhereOp
from ge.ge_dialects.ge.types import (
    FLOAT_TYPES,
    NUMERIC_TYPES,
    FormatAttr,
    Shape,
    elements,
    reduction_ratio,
    shape_of,
    tensor,
    tensor_type_of,
    ui8,
)

AUTO_PADS = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")
MATMUL_TYPES = FLOAT_TYPES + (i64, i32)
MAX_POOL_TYPES = FLOAT_TYPES + (i8, ui8)
STASH_TYPES = {1: f32, 10: f16, 11: f64, 16: bf16}
"""LayerNormalization's `stash_type` (an ONNX TensorProto data type) as a ge element type."""


def _show(values: Sequence[int | None]) -> str:
    return "[" + ", ".join("?" if v is None else str(v) for v in values) + "]"


def _shape(shape: Shape) -> str:
    return "(" + ", ".join("?" if d is None else str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


# -- sliding windows ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Window:
    """Geometry of a window sliding over the spatial axes (conv and pooling, ONNX semantics)."""

    kernel: tuple[int | None, ...]
    strides: tuple[int, ...]
    dilations: tuple[int, ...]
    pads: tuple[int, ...]
    """Explicit pads in ONNX layout: all begins, then all ends (used when auto_pad is NOTSET)."""
    auto_pad: str = "NOTSET"
    ceil_mode: bool = False

    @staticmethod
    def of(prop: Callable[[str], Any], kernel: Sequence[int | None]) -> Window:
        """The window an op's properties describe (`prop` reads a property or its default);
        `kernel` is the kernel size per spatial axis."""
        rank = len(kernel)
        return Window(
            kernel=tuple(kernel),
            strides=tuple(prop("strides") or [1] * rank),
            dilations=tuple(prop("dilations") or [1] * rank),
            pads=tuple(prop("pads") or [0] * (2 * rank)),
            auto_pad=prop("auto_pad") or "NOTSET",
            ceil_mode=bool(prop("ceil_mode")),
        )

    def extent(self, axis: int) -> int:
        """The span of the dilated kernel along a spatial axis."""
        return (self.kernel[axis] - 1) * self.dilations[axis] + 1

    def padding(self, axis: int, size: int) -> tuple[int, int]:
        """(begin, end) padding of a spatial axis of the given input size."""
        if self.auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            out = -(-size // self.strides[axis])
            total = max((out - 1) * self.strides[axis] + self.extent(axis) - size, 0)
            small = total // 2
            return (small, total - small) if self.auto_pad == "SAME_UPPER" else (total - small, small)
        if self.auto_pad == "VALID":
            return 0, 0
        return self.pads[axis], self.pads[axis + len(self.kernel)]

    def out_size(self, axis: int, size: int | None) -> int | None:
        """The output size along a spatial axis; ceil mode drops a last window that would start
        in the end padding (as onnxruntime and PyTorch do)."""
        if size is None or self.kernel[axis] is None:
            return None
        stride = self.strides[axis]
        if self.auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            return -(-size // stride)
        begin, end = self.padding(axis, size)
        span = size + begin + end - self.extent(axis)
        if span < 0:
            return 0  # not even one window fits
        if not self.ceil_mode:
            return span // stride + 1
        out = -(-span // stride) + 1
        return out - 1 if (out - 1) * stride >= size + begin else out

    def out_sizes(self, sizes: Sequence[int | None]) -> list[int | None]:
        return [self.out_size(i, s) for i, s in enumerate(sizes)]


def _ints_prop(a: InferArgs, name: str, count: int, per_axis: int = 1) -> None:
    values = a.prop(name)
    if values is None:
        return
    if len(values) != count * per_axis:
        raise a.fail(f"{name} must have {count * per_axis} values ({per_axis} per spatial axis), got {len(values)}")
    lowest = 0 if name == "pads" else 1
    if any(v < lowest for v in values):
        raise a.fail(f"{name} must be {'non-negative' if lowest == 0 else 'positive'}, got {_show(values)}")


def _window(a: InferArgs, spatial: int, kernel: Sequence[int | None]) -> Window:
    """Checks the window properties of a conv or pool op and returns its geometry."""
    if a.prop("auto_pad") not in AUTO_PADS:
        raise a.fail(f'auto_pad must be one of {", ".join(AUTO_PADS)}, got "{a.prop("auto_pad")}"')
    _ints_prop(a, "strides", spatial)
    _ints_prop(a, "dilations", spatial)
    _ints_prop(a, "pads", spatial, 2)
    if a.prop("ceil_mode") not in (None, 0, 1):
        raise a.fail(f"ceil_mode must be 0 or 1, got {a.prop('ceil_mode')}")
    return Window.of(a.prop, kernel)


def _spatial_out(a: InferArgs, window: Window, sizes: Shape) -> list[int | None]:
    """Output spatial dims; fails when a window does not fit the (padded) input."""
    out = window.out_sizes(sizes)
    for i, (o, size) in enumerate(zip(out, sizes)):
        if o is not None and o < 1:
            begin, end = window.padding(i, size)
            raise a.fail(
                f"spatial axis {i} has no output: input size {size}, pads {begin}+{end}, "
                f"kernel extent {window.extent(i)}, stride {window.strides[i]}"
            )
    return out


def _spatial_input(a: InferArgs, name: str) -> Shape:
    """Shape of an (N, C, D1, ..., Dk) operand, k >= 1."""
    shape = a.shape(name)
    if len(shape) < 3:
        raise a.fail(f"operand '{name}' must have rank >= 3 (N, C and spatial dims), got rank {len(shape)}")
    return shape


def _pool_kernel(a: InferArgs, spatial: int) -> list[int]:
    kernel = a.prop("kernel_shape")
    if kernel is None:
        raise a.fail("kernel_shape is required")
    _ints_prop(a, "kernel_shape", spatial)
    return kernel


def _image_format(a: InferArgs, name: str, rank: int) -> FormatAttr | None:
    """4-D conv-like results are NCHW unless the input says otherwise."""
    fmt = a.fmt(name)
    if rank == 4 and fmt is None:
        return FormatAttr("NCHW")
    return fmt if rank == a.rank(name) else None


# -- convolution and pooling -------------------------------------------------------------------


def _trailing_elements(value: SSAValue, axis: int) -> int:
    """Elements from `axis` to the end of `value`'s shape: the row a softmax or layer norm reduces."""
    shape = shape_of(tensor_type_of(value))
    axis = axis + len(shape) if axis < 0 else axis
    return math.prod(d or 1 for d in shape[axis:])


def conv_shape(a: InferArgs, x_name: str, w_name: str) -> tuple[Shape, FormatAttr | None]:
    """The result shape and format of a conv of input `x_name` (N, C, D...) and weights `w_name`
    (M, C / group, K...) under the op's window properties (group, strides, pads, dilations,
    auto_pad, kernel_shape; a bias operand "B" is checked against M): ge.conv's and the integer
    convs' (ge_dialects/ge/quantize.py) shape rule."""
    x = _spatial_input(a, x_name)
    w = a.shape(w_name)
    if len(w) != len(x):
        raise a.fail(f"weight rank {len(w)} does not match input rank {len(x)}")
    out_channels = _check_conv_channels(a, x, w)
    kernel = _conv_kernel(a, w)
    window = _window(a, len(x) - 2, kernel)
    shape = (x[0], out_channels, *_spatial_out(a, window, x[2:]))
    return shape, _image_format(a, x_name, len(shape))


def conv_macs(w: SSAValue, y: SSAValue) -> int:
    """A conv's Cube work: one multiply-accumulate per output element and weight element of one
    output channel."""
    return elements(y) * math.prod(d or 1 for d in shape_of(tensor_type_of(w))[1:])


@irdl_op_definition
class ConvOp(GeOp):
    """ONNX Conv: N-d convolution with groups, dilations, strides and (auto) padding."""

    name = "ge.conv"
    ONNX: ClassVar = ("Conv",)
    PRECISION: ClassVar = "white"  # Conv2D: true
    DATA_OPERANDS: ClassVar = ("X", "W", "B")
    X = operand_def(TensorType)
    W = operand_def(TensorType)
    B = opt_operand_def(TensorType)
    Y = result_def(TensorType)
    auto_pad = opt_prop_def(StrProp)
    dilations = opt_prop_def(IntsProp)
    group = opt_prop_def(IntProp)
    kernel_shape = opt_prop_def(IntsProp)
    pads = opt_prop_def(IntsProp)
    strides = opt_prop_def(IntsProp)
    traits = traits_def(
        Pure(),
        RunsOn(Engine.CUBE),
        conv_formats("conv", "X", "Y", "W"),
    )
    DEFAULTS: ClassVar = {"auto_pad": "NOTSET", "group": 1}

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        dtype = a.expect_dtype("X", FLOAT_TYPES)
        a.expect_same_dtype("X", "W", "B")
        shape, fmt = conv_shape(a, "X", "W")
        return [tensor(dtype, shape, fmt)]

    def macs(self) -> int:
        return conv_macs(self.W, self.Y)

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """dX = ConvBackpropInput(dY, W), dW = ConvBackpropFilter(X, dY), dB = dY summed over the
        batch and spatial dims. auto_pad becomes explicit pads (the backward ops have none)."""
        from ge.ge_dialects.ge.conv_grad import (
            ConvBackpropFilterOp,
            ConvBackpropInputOp,
            explicit_window_props,
            typed_like,
        )

        (dy,) = cotangents
        if dy is None:
            return [None] * len(self.operands)
        x, w = static_shape(self.X), static_shape(self.W)
        props = explicit_window_props(self, w[2:], ["group"])
        dx = g.value(ConvBackpropInputOp, {"dy": dy, "W": self.W}, {**props, "input_shape": x})
        dw = g.value(ConvBackpropFilterOp, {"x": self.X, "dy": dy}, {**props, "filter_shape": w})
        grads = [typed_like(g, dx, self.X), typed_like(g, dw, self.W)]
        if self.B is not None:
            db = g.reduce_sum(dy, [0, *range(2, len(x))], keepdims=False)
            grads.append(typed_like(g, db, self.B))
        return grads


def _check_conv_channels(a: InferArgs, x: Shape, w: Shape) -> int | None:
    """Checks channels against group and bias; returns the output channel count."""
    group = a.prop("group")
    if group < 1:
        raise a.fail(f"group must be positive, got {group}")
    if x[1] is not None and w[1] is not None and x[1] != w[1] * group:
        raise a.fail(f"input channels {x[1]} do not match weight channels {w[1]} x group {group}")
    if w[0] is not None and w[0] % group:
        raise a.fail(f"output channels {w[0]} are not divisible by group {group}")
    if a.has("B"):
        b = a.shape("B")
        if len(b) != 1 or (b[0] is not None and w[0] is not None and b[0] != w[0]):
            raise a.fail(f"bias of shape {_shape(b)} does not match {_show(w[:1])} output channels")
    return w[0]


def _conv_kernel(a: InferArgs, w: Shape) -> list[int | None]:
    kernel = a.prop("kernel_shape")
    if kernel is None:
        return list(w[2:])
    if len(kernel) != len(w) - 2 or any(d is not None and d != k for d, k in zip(w[2:], kernel)):
        raise a.fail(f"kernel_shape {_show(kernel)} does not match weight spatial dims {_show(w[2:])}")
    return kernel


class PoolOp(GeOp):
    """Shared shape function of the windowed pools: (N, C, D...) -> (N, C, D'...)."""

    X = operand_def(TensorType)
    Y = result_def(TensorType)
    auto_pad = opt_prop_def(StrProp)
    ceil_mode = opt_prop_def(IntProp)
    dilations = opt_prop_def(IntsProp)
    kernel_shape = opt_prop_def(IntsProp)
    pads = opt_prop_def(IntsProp)
    strides = opt_prop_def(IntsProp)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR))

    ALLOWED: ClassVar[tuple[Attribute, ...]] = FLOAT_TYPES

    @classmethod
    def pool_shape(cls, a: InferArgs) -> tuple[Shape, FormatAttr | None]:
        a.expect_dtype("X", cls.ALLOWED)
        x = _spatial_input(a, "X")
        window = _window(a, len(x) - 2, _pool_kernel(a, len(x) - 2))
        shape = (x[0], x[1], *_spatial_out(a, window, x[2:]))
        return shape, _image_format(a, "X", len(shape))


@irdl_op_definition
class MaxPoolOp(PoolOp):
    """ONNX MaxPool; the optional Indices are flat offsets into X (row-major, or column-major
    over the spatial dims with storage_order=1)."""

    name = "ge.max_pool"
    ONNX: ClassVar = ("MaxPool",)
    PRECISION: ClassVar = "white"  # MaxPool / MaxPoolV3: true (a max is exact in any precision)
    DATA_OPERANDS: ClassVar = ("X",)
    Y = result_def(TensorType)  # restated so that Y comes before the optional Indices
    Indices = opt_result_def(TensorType)
    storage_order = opt_prop_def(IntProp)
    DEFAULTS: ClassVar = {"auto_pad": "NOTSET", "ceil_mode": 0, "storage_order": 0}
    ALLOWED: ClassVar = MAX_POOL_TYPES
    traits = traits_def(
        Pure(),
        RunsOn(Engine.VECTOR),
        CopiesElements(),
        StorageFormats(ComputesIn("pool-nc1hwc0", NC1HWC0, ("X",), ("Y",))),
    )

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        if a.prop("storage_order") not in (0, 1):
            raise a.fail(f"storage_order must be 0 or 1, got {a.prop('storage_order')}")
        shape, fmt = cls.pool_shape(a)
        return [tensor(a.dtype("X"), shape, fmt), tensor(i64, shape, fmt)]

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """dX = MaxPoolGrad(X, dY): each window's gradient to its first maximum. The Indices are
        integers and take no cotangent; storage_order only orders them, so any value is fine."""
        from ge.ge_dialects.ge.conv_grad import MaxPoolGradOp, explicit_window_props, typed_like

        dy = cotangents[0]
        if dy is None:
            return [None]
        if tensor_type_of(self.X).element_type not in FLOAT_TYPES:
            raise NotDifferentiable(f"{self.name} of an integer input has no gradient")
        props = explicit_window_props(self, self.p("kernel_shape"), ["kernel_shape", "ceil_mode"])
        return [typed_like(g, g.value(MaxPoolGradOp, {"x": self.X, "dy": dy}, props), self.X)]


@irdl_op_definition
class AvgPoolOp(PoolOp):
    """ONNX AveragePool; count_include_pad decides whether padding counts in the divisor."""

    name = "ge.avg_pool"
    traits = traits_def(StorageFormats(ComputesIn("pool-nc1hwc0", NC1HWC0, ("X",), ("Y",))))
    ONNX: ClassVar = ("AveragePool",)
    DATA_OPERANDS: ClassVar = ("X",)
    FP16_ONLY: ClassVar = True  # AvgPool / AvgPoolV2 take float16 and int8 only
    count_include_pad = opt_prop_def(IntProp)
    DEFAULTS: ClassVar = {"auto_pad": "NOTSET", "ceil_mode": 0, "count_include_pad": 0}

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        if a.prop("count_include_pad") not in (0, 1):
            raise a.fail(f"count_include_pad must be 0 or 1, got {a.prop('count_include_pad')}")
        shape, fmt = cls.pool_shape(a)
        return [tensor(a.dtype("X"), shape, fmt)]

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """dX = AvgPoolGrad(dY): each window's gradient over its divisor, spread over the window."""
        from ge.ge_dialects.ge.conv_grad import AvgPoolGradOp, explicit_window_props, typed_like

        (dy,) = cotangents
        if dy is None:
            return [None]
        props = explicit_window_props(self, self.p("kernel_shape"), ["kernel_shape", "ceil_mode", "count_include_pad"])
        dx = g.value(AvgPoolGradOp, {"dy": dy}, {**props, "input_shape": static_shape(self.X)})
        return [typed_like(g, dx, self.X)]


@irdl_op_definition
class GlobalAvgPoolOp(GeOp):
    """ONNX GlobalAveragePool: the mean over all spatial dims, kept as size-1 dims."""

    name = "ge.global_avg_pool"
    ONNX: ClassVar = ("GlobalAveragePool",)
    DATA_OPERANDS: ClassVar = ("X",)
    X = operand_def(TensorType)
    Y = result_def(TensorType)
    traits = traits_def(
        Pure(), RunsOn(Engine.VECTOR), Reduction(), StorageFormats(ComputesIn("pool-nc1hwc0", NC1HWC0, ("X",), ("Y",)))
    )

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        dtype = a.expect_dtype("X", FLOAT_TYPES)
        x = _spatial_input(a, "X")
        shape = (x[0], x[1], *[1] * (len(x) - 2))
        return [tensor(dtype, shape, _image_format(a, "X", len(shape)))]

    def reduced_row_elements(self) -> int:
        return reduction_ratio(self.X, self.Y)

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """dX = dY / (D1 * ... * Dk) expanded back over the spatial dims."""
        from ge.ge_dialects.ge.conv_grad import typed_like

        (dy,) = cotangents
        if dy is None:
            return [None]
        x = static_shape(self.X)
        dx = g.expand(g.scale(dy, 1.0 / math.prod(x[2:])), x)
        return [typed_like(g, dx, self.X)]


# -- normalization -----------------------------------------------------------------------------


@irdl_op_definition
class BatchNormOp(GeOp):
    """ONNX BatchNormalization (opset 15): inference with the given statistics, or training
    (training_mode=1) with batch statistics and updated running_mean / running_var outputs."""

    name = "ge.batch_norm"
    ONNX: ClassVar = ("BatchNormalization",)
    DATA_OPERANDS: ClassVar = ("X",)  # scale, bias, mean and variance stay f32 (GE's BNInference)
    X = operand_def(TensorType)
    scale = operand_def(TensorType)
    B = operand_def(TensorType)
    input_mean = operand_def(TensorType)
    input_var = operand_def(TensorType)
    Y = result_def(TensorType)
    running_mean = opt_result_def(TensorType)
    running_var = opt_result_def(TensorType)
    epsilon = opt_prop_def(FloatProp)
    momentum = opt_prop_def(FloatProp)
    training_mode = opt_prop_def(IntProp)
    irdl_options = (AttrSizedResultSegments(as_property=True),)
    traits = traits_def(
        Pure(), RunsOn(Engine.VECTOR), StorageFormats(ComputesIn("batch-norm-nc1hwc0", NC1HWC0, ("X",), ("Y",)))
    )
    DEFAULTS: ClassVar = {"epsilon": 1e-5, "momentum": 0.9, "training_mode": 0}
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"input_mean", "input_var"})

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        dtype = a.expect_dtype("X", FLOAT_TYPES)
        x = a.shape("X")
        if len(x) < 2:
            raise a.fail(f"operand 'X' must have rank >= 2 (N, C, ...), got rank {len(x)}")
        for name in ("scale", "B", "input_mean", "input_var"):
            _check_channel_vector(a, name, x[1])
        a.expect_same_dtype("scale", "B")
        a.expect_same_dtype("input_mean", "input_var")
        if a.prop("training_mode") not in (0, 1):
            raise a.fail(f"training_mode must be 0 or 1, got {a.prop('training_mode')}")
        if a.num_results > 1 and not a.prop("training_mode"):
            raise a.fail("running_mean and running_var are results only in training mode (training_mode = 1)")
        stats = a.dtype("input_mean")
        return [tensor(dtype, x, a.fmt("X")), tensor(stats, (x[1],)), tensor(stats, (x[1],))]

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """One `ge.batch_norm_grad` in the op's mode. The statistics (input_mean / input_var, and
        the running_mean / running_var results) are state, not something the loss is
        differentiated through: a cotangent on the running statistics is refused."""
        from ge.ge_dialects.ge.norm_grad import BatchNormGradOp

        dy, *running = cotangents
        if any(c is not None for c in running):
            raise NotDifferentiable(
                f"{describe(self)}: running_mean and running_var are running statistics and carry no gradient"
            )
        if dy is None:
            return [None] * len(self.operands)
        operands = {"dy": dy, "x": self.X, "scale": self.scale, "mean": self.input_mean, "var": self.input_var}
        props = {"epsilon": self.p("epsilon"), "training_mode": self.p("training_mode")}
        dx, dscale, dbias = g.emit(BatchNormGradOp, operands, props).results
        return [dx, dscale, dbias, None, None]


def _check_channel_vector(a: InferArgs, name: str, channels: int | None) -> None:
    a.expect_dtype(name, FLOAT_TYPES)
    shape = a.shape(name)
    if len(shape) != 1 or (shape[0] is not None and channels is not None and shape[0] != channels):
        raise a.fail(
            f"operand '{name}' must have shape ({'?' if channels is None else channels},), got {_shape(shape)}"
        )


@irdl_op_definition
class LayerNormOp(GeOp):
    """ONNX LayerNormalization: normalizes over dims axis.. (in the stash type), then scales and
    shifts; Mean and InvStdDev keep the leading dims and have size 1 from axis on."""

    name = "ge.layer_norm"
    ONNX: ClassVar = ("LayerNormalization",)
    DATA_OPERANDS: ClassVar = ("X", "Scale", "B")  # statistics stay in stash_type
    X = operand_def(TensorType)
    Scale = operand_def(TensorType)
    B = opt_operand_def(TensorType)
    Y = result_def(TensorType)
    Mean = opt_result_def(TensorType)
    InvStdDev = opt_result_def(TensorType)
    axis = opt_prop_def(IntProp)
    epsilon = opt_prop_def(FloatProp)
    stash_type = opt_prop_def(IntProp)
    irdl_options = (AttrSizedResultSegments(as_property=True),)
    traits = traits_def(
        Pure(),
        RunsOn(Engine.VECTOR),
        Reduction(),
        Transcendental(),
        nz_along_last_axis("layer-norm-last-axis", ("X", "Scale", "B"), "Y"),
    )
    DEFAULTS: ClassVar = {"axis": -1, "epsilon": 1e-5, "stash_type": 1}

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        dtype = a.expect_dtype("X", FLOAT_TYPES)
        a.expect_same_dtype("X", "Scale", "B")
        x = a.shape("X")
        axis = a.normalize_axis(a.prop("axis"), len(x))
        stash = STASH_TYPES.get(a.prop("stash_type"))
        if stash is None:
            raise a.fail(f"stash_type {a.prop('stash_type')} is not one of 1 (f32), 10 (f16), 11 (f64), 16 (bf16)")
        for name in ("Scale", "B"):
            if a.has(name):
                _check_unidirectional(a, name, x)
        stats = (*x[:axis], *[1] * (len(x) - axis))
        return [tensor(dtype, x, a.fmt("X")), tensor(stash, stats), tensor(stash, stats)]

    def reduced_row_elements(self) -> int:
        return _trailing_elements(self.X, self.p("axis"))

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """One `ge.layer_norm_grad` (it recomputes the statistics from X, in X's type). Mean and
        InvStdDev only feed a backward: a cotangent on them is refused."""
        from ge.ge_dialects.ge.norm_grad import LayerNormGradOp

        dy, *stats = cotangents
        if any(c is not None for c in stats):
            raise NotDifferentiable(
                f"{describe(self)}: Mean and InvStdDev carry no gradient (they only feed the backward)"
            )
        if dy is None:
            return [None] * len(self.operands)
        props = {"axis": self.p("axis"), "epsilon": self.p("epsilon")}
        dx, dscale, dbias = g.emit(LayerNormGradOp, {"dy": dy, "x": self.X, "scale": self.Scale}, props).results
        if self.B is None:
            return [dx, dscale]
        if static_shape(self.B) != static_shape(self.Scale):
            dbias = g.sum_to(dy, static_shape(self.B))  # B broadcasts on its own, not like Scale
        return [dx, dscale, dbias]


def _check_unidirectional(a: InferArgs, name: str, target: Shape) -> None:
    """`name` must broadcast to `target` without changing it (ONNX unidirectional broadcasting)."""
    shape = a.shape(name)
    tail = target[len(target) - len(shape) :] if len(shape) <= len(target) else None
    if tail is None or any(d is not None and t is not None and d not in (1, t) for d, t in zip(shape, tail)):
        raise a.fail(f"operand '{name}' of shape {_shape(shape)} does not broadcast to {_shape(target)}")


class RandomWhenTraining(MemoryEffect):
    """A dropout in training mode draws random numbers: it reads and advances the generator's
    state, so two of them on the same input are not one (cse) and neither is free to drop (dce).
    With training_mode absent or a constant false, or a constant zero ratio, it is the identity
    and as pure as any other op."""

    @classmethod
    def get_effects(cls, op) -> set[EffectInstance]:
        return (
            set()
            if op.is_identity()
            else {EffectInstance(MemoryEffectKind.READ), EffectInstance(MemoryEffectKind.WRITE)}
        )


@irdl_op_definition
class DropoutOp(GeOp):
    """ONNX Dropout: identity (mask all true) unless training_mode is true and ratio nonzero."""

    name = "ge.dropout"
    ONNX: ClassVar = ("Dropout",)
    DATA_OPERANDS: ClassVar = ("data",)
    data = operand_def(TensorType)
    ratio = opt_operand_def(TensorType)
    training_mode = opt_operand_def(TensorType)
    output = result_def(TensorType)
    mask = opt_result_def(TensorType)
    seed = opt_prop_def(IntProp)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(
        RandomWhenTraining(),
        RunsOn(Engine.VECTOR),
        Elementwise(),
        StorageFormats(Carries("dropout", ACTIVATION_FORMATS, ("data",), ("output",))),
    )
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"ratio", "training_mode"})
    GRADIENT_NEEDS_ALL_RESULTS: ClassVar = True

    def is_identity(self) -> bool:
        """Whether the op is known, from its IR alone, to pass its input through unchanged."""
        if self.training_mode is None:
            return True
        training = constant_value(self.training_mode)
        if training is not None and not training.any():
            return True
        ratio = constant_value(self.ratio) if self.ratio is not None else np.array(0.5)
        return ratio is not None and not ratio.any()

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        dtype = a.expect_dtype("data", FLOAT_TYPES)
        if a.has("ratio"):
            a.expect_dtype("ratio", FLOAT_TYPES)
            _check_scalar(a, "ratio")
            ratio = a.const("ratio")
            if ratio is not None and not 0 <= float(ratio.reshape(-1)[0]) < 1:
                raise a.fail(f"ratio {float(ratio.reshape(-1)[0])} must be in [0, 1)")
        if a.has("training_mode"):
            a.expect_dtype("training_mode", (i1,))
            _check_scalar(a, "training_mode")
        x = a.shape("data")
        return [tensor(dtype, x, a.fmt("data")), tensor(i1, x, a.fmt("data"))]

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """dy where the op is the identity; in training, dy * mask / (1 - ratio) with the mask the
        forward drew (a second draw would be another mask), so the forward must yield it."""
        dy = cotangents[0]
        grads: list[SSAValue | None] = [None] * len(self.operands)
        if dy is None or self.is_identity():
            grads[0] = dy
            return grads
        if self.mask is None:
            raise NotDifferentiable(
                f"{describe(self)}: the gradient of a dropout in training mode needs its mask; request the mask result"
            )
        kept = g.mul(dy, g.cast_like(self.mask, dy))
        scaled = g.div(kept, self._keep_probability(g, dy))
        training = constant_value(self.training_mode) if self.training_mode is not None else None
        if training is None:  # decided at run time: the op is the identity when it is false
            grads[0] = g.value(WhereOp, {"condition": g.reshape(self.training_mode, ()), "X": scaled, "Y": dy})
        else:
            grads[0] = scaled
        return grads

    def _keep_probability(self, g: GradBuilder, like: SSAValue) -> SSAValue:
        """1 - ratio as a scalar of `like`'s type (ratio 0.5 when absent, as the kernel has it)."""
        if self.ratio is None or constant_value(self.ratio) is not None:
            ratio = 0.5 if self.ratio is None else float(np.asarray(constant_value(self.ratio)).reshape(-1)[0])
            return g.scalar(1.0 - ratio, like)
        ratio = g.cast_like(g.reshape(self.ratio, ()), like)
        return g.sub(g.scalar(1.0, like), ratio)


def _check_scalar(a: InferArgs, name: str) -> None:
    shape = a.shape(name)
    if len(shape) > 1 or (len(shape) == 1 and shape[0] not in (1, None)):
        raise a.fail(f"operand '{name}' must be a scalar, got shape {_shape(shape)}")


# -- elementwise-like --------------------------------------------------------------------------


@irdl_op_definition
class ClipOp(GeOp):
    """ONNX Clip: min(max(input, min), max); absent bounds do not clip."""

    name = "ge.clip"
    ONNX: ClassVar = ("Clip",)
    DATA_OPERANDS: ClassVar = ("input", "min", "max")
    input = operand_def(TensorType)
    min = opt_operand_def(TensorType)
    max = opt_operand_def(TensorType)
    output = result_def(TensorType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(
        Pure(),
        RunsOn(Engine.VECTOR),
        Elementwise(),
        StorageFormats(Carries("clip", ACTIVATION_FORMATS, ("input", "min", "max"), ("output",))),
    )
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"min", "max"})

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        dtype = a.expect_dtype("input", NUMERIC_TYPES)
        a.expect_same_dtype("input", "min", "max")
        for name in ("min", "max"):
            if a.has(name):
                _check_scalar(a, name)
        return [tensor(dtype, a.shape("input"), a.fmt("input"))]

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """dy where min <= input <= max, else 0: exactly where the output equals the input (the
        bounds are hyperparameters and get no gradient)."""
        (dy,) = cotangents
        grads: list[SSAValue | None] = [None] * len(self.operands)
        if dy is None or (self.min is None and self.max is None):
            grads[0] = dy
            return grads
        inside = g.value(EqualOp, {"a": self.output, "b": self.input})
        grads[0] = g.value(WhereOp, {"condition": inside, "X": dy, "Y": g.scalar(0.0, dy)})
        return grads


@irdl_op_definition
class SoftmaxOp(GeOp):
    """ONNX Softmax (opset 13): normalized exponentials along one axis."""

    name = "ge.softmax"
    ONNX: ClassVar = ("Softmax",)
    DATA_OPERANDS: ClassVar = ("input",)
    input = operand_def(TensorType)
    output = result_def(TensorType)
    axis = opt_prop_def(IntProp)
    traits = traits_def(
        Pure(),
        RunsOn(Engine.VECTOR),
        Reduction(),
        Transcendental(),
        nz_along_last_axis("softmax-last-axis", ("input",), "output"),
    )
    DEFAULTS: ClassVar = {"axis": -1}

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        dtype = a.expect_dtype("input", FLOAT_TYPES)
        a.normalize_axis(a.prop("axis"), a.rank("input"))
        return [tensor(dtype, a.shape("input"), a.fmt("input"))]

    def reduced_row_elements(self) -> int:
        return _trailing_elements(self.input, self.p("axis"))

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """`ge.softmax_grad` through the output: dx = y * (dy - sum(dy * y, axis))."""
        from ge.ge_dialects.ge.norm_grad import SoftmaxGradOp

        (dy,) = cotangents
        if dy is None:
            return [None]
        return [g.value(SoftmaxGradOp, {"y": self.output, "dy": dy}, {"axis": self.p("axis")})]


@irdl_op_definition
class LrnOp(GeOp):
    """ONNX LRN (GE's LRN): each element divided by (bias + alpha / size * the sum of squares over
    `size` neighbouring channels) ** beta; the window is [c - (size-1)//2, c + size//2], clipped."""

    name = "ge.lrn"
    ONNX: ClassVar = ("LRN",)
    DATA_OPERANDS: ClassVar = ("X",)
    X = operand_def(TensorType)
    Y = result_def(TensorType)
    size = opt_prop_def(IntProp)
    alpha = opt_prop_def(FloatProp)
    beta = opt_prop_def(FloatProp)
    bias = opt_prop_def(FloatProp)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR), Transcendental())
    DEFAULTS: ClassVar = {"alpha": 1e-4, "beta": 0.75, "bias": 1.0}

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        dtype = a.expect_dtype("X", FLOAT_TYPES)
        if a.prop("size") is None or a.prop("size") < 1:
            raise a.fail(f"size must be a positive channel count, got {a.prop('size')}")
        if a.rank("X") < 3:
            raise a.fail(f"X must be N x C x D1 ... (rank 3 or more), got rank {a.rank('X')}")
        return [tensor(dtype, a.shape("X"), a.fmt("X"))]

    def vector_elements(self) -> int:
        """The squares and the window sums: `size` lane-operations per element (the power is
        `transcendental_elements`)."""
        return self.p("size") * elements(self.Y)

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """One ge.lrn_grad (GE's LRNGrad), which recomputes the window sums from X."""
        from ge.ge_dialects.ge.norm_grad import LrnGradOp

        (dy,) = cotangents
        if dy is None:
            return [None]
        props = {n: self.p(n) for n in ("size", "alpha", "beta", "bias")}
        return [g.value(LrnGradOp, {"dy": dy, "X": self.X}, props)]


# -- matrix products ---------------------------------------------------------------------------


def _inner_match(a: InferArgs, k1: int | None, k2: int | None) -> None:
    if k1 is not None and k2 is not None and k1 != k2:
        raise a.fail(f"inner dimensions {k1} and {k2} do not match")


@irdl_op_definition
class GemmOp(GeOp):
    """ONNX Gemm: alpha * A' @ B' + beta * C, C broadcast to (M, N)."""

    name = "ge.gemm"
    ONNX: ClassVar = ("Gemm",)
    PRECISION: ClassVar = "white"  # GemmV2 (or MatMulV2 + bias): true
    DATA_OPERANDS: ClassVar = ("A", "B", "C")
    A = operand_def(TensorType)
    B = operand_def(TensorType)
    C = opt_operand_def(TensorType)
    Y = result_def(TensorType)
    alpha = opt_prop_def(FloatProp)
    beta = opt_prop_def(FloatProp)
    transA = opt_prop_def(IntProp)
    transB = opt_prop_def(IntProp)
    traits = traits_def(
        Pure(),
        RunsOn(Engine.CUBE),
        StorageFormats(
            ComputesIn(
                "gemm-fractal-nz",
                FRACTAL_NZ,
                ("A", "B"),
                ("Y",),
                (("nz_enabled",), ("cube_type", "A"), ("cube_dims",)),
                benefit="cube_macs",
            )
        ),
    )
    DEFAULTS: ClassVar = {"alpha": 1.0, "beta": 1.0, "transA": 0, "transB": 0}

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        dtype = a.expect_dtype("A", MATMUL_TYPES)
        a.expect_same_dtype("A", "B", "C")
        a.expect_rank("A", 2)
        a.expect_rank("B", 2)
        m, k1 = a.shape("A")[:: -1 if a.prop("transA") else 1]
        k2, n = a.shape("B")[:: -1 if a.prop("transB") else 1]
        _inner_match(a, k1, k2)
        if a.has("C"):
            _check_unidirectional(a, "C", (m, n))
        return [tensor(dtype, (m, n))]

    def macs(self) -> int:
        a = shape_of(tensor_type_of(self.A))
        k = a[0] if self.p("transA") else a[-1]
        return elements(self.Y) * (k or 1)

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """Two Gemms, the transposes folded into their transA / transB: with A' = op(A), B' = op(B),
        dA' = alpha dY B'^T and dB' = alpha A'^T dY; dC = beta dY summed back to C's shape."""
        (dy,) = cotangents
        if dy is None:
            return [None] * len(self.operands)
        alpha, ta, tb = self.p("alpha"), self.p("transA"), self.p("transB")

        def gemm(a: SSAValue, b: SSAValue, trans_a: int, trans_b: int) -> SSAValue:
            return g.value(GemmOp, {"A": a, "B": b}, {"alpha": alpha, "transA": trans_a, "transB": trans_b})

        da = gemm(self.B, dy, tb, 1) if ta else gemm(dy, self.B, 0, 1 - tb)
        db = gemm(dy, self.A, 1, ta) if tb else gemm(self.A, dy, 1 - ta, 0)
        if self.C is None:
            return [da, db]
        beta = self.p("beta")
        dc = g.zeros(self.C) if beta == 0 else g.sum_to(g.scale(dy, beta), static_shape(self.C))
        return [da, db, dc]


def matmul_shape(a: InferArgs, x_name: str, y_name: str) -> Shape:
    """numpy matmul's result shape (1-D operands promoted, batch dims broadcast): ge.matmul's and
    the integer matmuls' (ge_dialects/ge/quantize.py) shape rule."""
    x, y = a.shape(x_name), a.shape(y_name)
    if not x or not y:
        raise a.fail(f"operands must have rank >= 1, got shapes {_shape(x)} and {_shape(y)}")
    _inner_match(a, x[-1], y[0] if len(y) == 1 else y[-2])
    batch = broadcast_shapes(a, x[:-2], y[:-2])
    rows = x[-2:-1]
    cols = y[-1:] if len(y) > 1 else ()
    return (*batch, *rows, *cols)


def matmul_macs(x: SSAValue, y: SSAValue) -> int:
    """A matmul's Cube work: one multiply-accumulate per result element and inner index."""
    return elements(y) * (shape_of(tensor_type_of(x))[-1] or 1)


@irdl_op_definition
class MatMulOp(GeOp):
    """ONNX MatMul: numpy matmul (1-D operands promoted, batch dims broadcast)."""

    name = "ge.matmul"
    ONNX: ClassVar = ("MatMul",)
    PRECISION: ClassVar = "white"  # MatMul / MatMulV2 / BatchMatMul / BatchMatMulV2: true
    DATA_OPERANDS: ClassVar = ("A", "B")
    A = operand_def(TensorType)
    B = operand_def(TensorType)
    Y = result_def(TensorType)
    traits = traits_def(
        Pure(),
        RunsOn(Engine.CUBE),
        StorageFormats(
            ComputesIn(
                "matmul-fractal-nz",
                FRACTAL_NZ,
                ("A", "B"),
                ("Y",),
                (("nz_enabled",), ("cube_type", "A"), ("cube_dims",)),
                benefit="cube_macs",
            )
        ),
    )

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        dtype = a.expect_dtype("A", MATMUL_TYPES)
        a.expect_same_dtype("A", "B")
        return [tensor(dtype, matmul_shape(a, "A", "B"))]

    def macs(self) -> int:
        return matmul_macs(self.A, self.Y)

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """dA = dY @ B^T, dB = A^T @ dY with numpy's 1-D promotion and batch broadcasting undone
        (ge_dialects/ge/matmul_grad.py)."""
        from ge.ge_dialects.ge.matmul_grad import matmul_grads

        (dy,) = cotangents
        if dy is None:
            return [None, None]
        return list(matmul_grads(g, self.A, self.B, dy))


NN_OPS = [
    ConvOp,
    MaxPoolOp,
    AvgPoolOp,
    GlobalAvgPoolOp,
    BatchNormOp,
    LayerNormOp,
    DropoutOp,
    ClipOp,
    SoftmaxOp,
    LrnOp,
    GemmOp,
    MatMulOp,
]

__all__ = [
    "ConvOp",
    "MaxPoolOp",
    "AvgPoolOp",
    "GlobalAvgPoolOp",
    "BatchNormOp",
    "LayerNormOp",
    "DropoutOp",
    "ClipOp",
    "SoftmaxOp",
    "LrnOp",
    "GemmOp",
    "MatMulOp",
    "NN_OPS",
]
