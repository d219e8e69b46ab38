"""The pools beyond nn.py's max and average: ONNX GlobalMaxPool, LpPool, GlobalLpPool and
MaxUnpool (GE's GlobalMaxPool, LpPool, MaxUnpool). LpPool shares the windowed pools' geometry
(`PoolOp`, `Window`); the Lp gradients are built from AvgPoolGrad and elementwise ops; MaxUnpool's
default output size is `unpool_sizes`, shared with its kernel.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import TensorType, i64
from xdsl.ir import SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_operand_def, opt_prop_def, result_def, traits_def
from xdsl.traits import Pure

from ge.ge_dialects.ge.base import GeOp, InferArgs, IntProp, IntsProp
from ge.ge_dialects.ge.conv_grad import AvgPoolGradOp, MaxPoolGradOp, explicit_window_props, typed_like
from ge.ge_dialects.ge.elementwise import AbsOp, EqualOp, PowOp, SignOp
from ge.ge_dialects.ge.facts import Engine, Reduction, RunsOn, Transcendental
from ge.ge_dialects.ge.grad import GradBuilder, NotDifferentiable, static_shape
from ge.ge_dialects.ge.nn import PoolOp, Window, _image_format, _ints_prop, _pool_kernel, _shape, _show, _spatial_input
from ge.ge_dialects.ge.tensor_ops import WhereOp
from ge.ge_dialects.ge.types import FLOAT_TYPES, Shape, elements, reduction_ratio, tensor


def _global_shape(a: InferArgs) -> list[TensorType]:
    """(N, C, D...) -> (N, C, 1...), in X's type."""
    dtype = a.expect_dtype("X", FLOAT_TYPES)
    x = _spatial_input(a, "X")
    shape = (x[0], x[1], *[1] * (len(x) - 2))
    return [tensor(dtype, shape, _image_format(a, "X", len(shape)))]


def _check_p(a: InferArgs) -> None:
    if a.prop("p") < 1:
        raise a.fail(f"p must be a positive integer, got {a.prop('p')}")


@irdl_op_definition
class GlobalMaxPoolOp(GeOp):
    """ONNX GlobalMaxPool: the maximum over all spatial dims, kept as size-1 dims."""

    name = "ge.global_max_pool"
    ONNX: ClassVar = ("GlobalMaxPool",)
    DATA_OPERANDS: ClassVar = ("X",)
    X = operand_def(TensorType)
    Y = result_def(TensorType)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR), Reduction())

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        return _global_shape(a)

    def reduced_row_elements(self) -> int:
        return reduction_ratio(self.X, self.Y)

    def vector_elements(self) -> int:
        """One comparison per input element."""
        return elements(self.X)

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """MaxPoolGrad with one window over the whole image: dY goes to the first maximum."""
        (dy,) = cotangents
        if dy is None:
            return [None]
        spatial = static_shape(self.X)[2:]
        props = {
            "kernel_shape": list(spatial),
            "strides": [1] * len(spatial),
            "dilations": [1] * len(spatial),
            "pads": [0] * (2 * len(spatial)),
        }
        return [typed_like(g, g.value(MaxPoolGradOp, {"x": self.X, "dy": dy}, props), self.X)]


def _lp_input_grad(g: GradBuilder, x: SSAValue, y: SSAValue, dy: SSAValue, p: int, spread) -> SSAValue:
    """dX of y = (sum |x|^p)^(1/p) over windows: dy / y^(p-1) per window (dy / inf = 0 where y is
    0: the window is all zeros, where the gradient is 0 for p > 1 and taken as 0), summed back over
    the windows holding each input position by `spread`, times d|x|^p/dx / p = sign(x) |x|^(p-1)."""
    if p == 1:
        per_window = dy
    else:
        power = g.value(PowOp, {"a": y, "b": g.scalar(float(p - 1), y)})
        zero = g.value(EqualOp, {"a": y, "b": g.scalar(0.0, y)})
        per_window = g.div(dy, g.value(WhereOp, {"condition": zero, "X": g.scalar(float("inf"), y), "Y": power}))
    summed = spread(per_window)
    if p == 1:
        slope = g.value(SignOp, {"x": x})
    elif p == 2:
        slope = x
    else:
        magnitude = g.value(PowOp, {"a": g.value(AbsOp, {"x": x}), "b": g.scalar(float(p - 2), x)})
        slope = g.mul(x, magnitude)
    return g.mul(summed, slope)


@irdl_op_definition
class LpPoolOp(PoolOp):
    """ONNX LpPool (opset 18): (sum over the window of |x|^p)^(1/p); padding and the ceil-mode
    overhang count as zeros."""

    name = "ge.lp_pool"
    ONNX: ClassVar = ("LpPool",)
    DATA_OPERANDS: ClassVar = ("X",)
    norm = opt_prop_def(IntProp, prop_name="p")  # ONNX's `p` (GeOp.p reads properties)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR), Transcendental())
    DEFAULTS: ClassVar = {"auto_pad": "NOTSET", "ceil_mode": 0, "p": 2}

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        _check_p(a)
        shape, fmt = cls.pool_shape(a)
        return [tensor(a.dtype("X"), shape, fmt)]

    def vector_elements(self) -> int:
        """The powers and the window sums: a kernel's worth of lane-operations per output element
        (the root is `transcendental_elements`)."""
        return math.prod(self.p("kernel_shape")) * elements(self.Y)

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """The per-window factor summed back over each window by AvgPoolGrad with
        count_include_pad (which divides every window by the kernel size, undone by a scale).
        A window in the ceil-mode overhang averages over fewer positions: refused there."""
        (dy,) = cotangents
        if dy is None:
            return [None]
        x = static_shape(self.X)
        kernel = self.p("kernel_shape")
        window = Window.of(self.p, kernel)
        for i, (size, out) in enumerate(zip(x[2:], static_shape(self.Y)[2:])):
            begin, end = window.padding(i, size)
            if (out - 1) * window.strides[i] + window.extent(i) > size + begin + end:
                raise NotDifferentiable(
                    f"{self.name}: the last window of spatial axis {i} overhangs the input (ceil_mode); "
                    "that gradient is not built"
                )
        props = explicit_window_props(self, kernel, ["kernel_shape", "ceil_mode"])
        props.update(count_include_pad=1, input_shape=x)

        def spread(per_window: SSAValue) -> SSAValue:
            return g.scale(g.value(AvgPoolGradOp, {"dy": per_window}, props), float(math.prod(kernel)))

        return [typed_like(g, _lp_input_grad(g, self.X, self.Y, dy, self.p("p"), spread), self.X)]


@irdl_op_definition
class GlobalLpPoolOp(GeOp):
    """ONNX GlobalLpPool: (sum over all spatial dims of |x|^p)^(1/p), kept as size-1 dims."""

    name = "ge.global_lp_pool"
    ONNX: ClassVar = ("GlobalLpPool",)
    DATA_OPERANDS: ClassVar = ("X",)
    X = operand_def(TensorType)
    Y = result_def(TensorType)
    norm = opt_prop_def(IntProp, prop_name="p")  # ONNX's `p` (GeOp.p reads properties)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR), Reduction(), Transcendental())
    DEFAULTS: ClassVar = {"p": 2}

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        _check_p(a)
        return _global_shape(a)

    def reduced_row_elements(self) -> int:
        return reduction_ratio(self.X, self.Y)

    def vector_elements(self) -> int:
        """A power and a sum per input element (the root is `transcendental_elements`)."""
        return elements(self.X)

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """The per-image factor expanded back over the image."""
        (dy,) = cotangents
        if dy is None:
            return [None]
        x = static_shape(self.X)
        dx = _lp_input_grad(g, self.X, self.Y, dy, self.p("p"), lambda per_image: g.expand(per_image, x))
        return [typed_like(g, dx, self.X)]


def unpool_sizes(prop: Callable[[str], Any], sizes: Sequence[int | None]) -> list[int | None]:
    """MaxUnpool's default output sizes: (I - 1) * stride + kernel - pads, per spatial axis."""
    rank = len(sizes)
    kernel = prop("kernel_shape")
    strides = prop("strides") or [1] * rank
    pads = prop("pads") or [0] * (2 * rank)
    return [
        None if n is None else (n - 1) * strides[i] + kernel[i] - pads[i] - pads[i + rank] for i, n in enumerate(sizes)
    ]


def unpool_shape_problem(wanted: Sequence[int], default: Shape) -> str | None:
    """Why `wanted` cannot be MaxUnpool's output_shape for an input whose default output is
    `default` (None: it can): the same N and C, and no spatial dim below the default."""
    if len(wanted) != len(default):
        return f"output_shape {_show(list(wanted))} must have {len(default)} values (the rank of X)"
    for i, (w, d) in enumerate(zip(wanted, default)):
        if d is None:
            continue
        if i < 2 and w != d:
            return f"output_shape {_show(list(wanted))} must keep X's N and C {_show(list(default[:2]))}"
        if i >= 2 and w < d:
            return f"output_shape {_show(list(wanted))} is smaller than the unpooled size {_show(list(default))}"
    return None


@irdl_op_definition
class MaxUnpoolOp(GeOp):
    """ONNX MaxUnpool: a zero tensor with each X value written at its index I, a flat offset into
    the whole output (as ge.max_pool's Indices are into its input); where indices repeat, the last
    write lands (as in onnxruntime). The output is (N, C, (I - 1) * stride + kernel - pads...) or
    the `output_shape` operand, which may only grow the spatial dims."""

    name = "ge.max_unpool"
    ONNX: ClassVar = ("MaxUnpool",)
    NO_GRADIENT: ClassVar = (
        "not built: indices may repeat (overlapping pooling windows) and only the last write lands, "
        "which a gather of dY would not respect"
    )
    DATA_OPERANDS: ClassVar = ("X",)
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"I", "output_shape"})
    X = operand_def(TensorType)
    I = operand_def(TensorType)  # noqa: E741 (ONNX's name)
    output_shape = opt_operand_def(TensorType)
    Y = result_def(TensorType)
    kernel_shape = opt_prop_def(IntsProp)
    pads = opt_prop_def(IntsProp)
    strides = opt_prop_def(IntsProp)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR))

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        dtype = a.expect_dtype("X", FLOAT_TYPES)
        x = _spatial_input(a, "X")
        a.expect_dtype("I", (i64,))
        indices = a.shape("I")
        if len(indices) != len(x) or any(i is not None and d is not None and i != d for i, d in zip(indices, x)):
            raise a.fail(f"indices of shape {_shape(indices)} must have X's shape {_shape(x)}")
        spatial = len(x) - 2
        _pool_kernel(a, spatial)
        _ints_prop(a, "strides", spatial)
        _ints_prop(a, "pads", spatial, 2)
        sizes = unpool_sizes(a.prop, x[2:])
        for i, size in enumerate(sizes):
            if size is not None and size < 1:
                raise a.fail(f"spatial axis {i} has no output: the unpooled size is {size}")
        default = (x[0], x[1], *sizes)
        if not a.has("output_shape"):
            return [tensor(dtype, default, _image_format(a, "X", len(default)))]
        a.expect_dtype("output_shape", (i64,))
        length = a.shape("output_shape")
        if len(length) != 1 or length[0] not in (None, len(x)):
            raise a.fail(f"operand 'output_shape' must be 1-D with {len(x)} values, got shape {_shape(length)}")
        wanted = a.const_ints("output_shape")
        if wanted is None:
            shape: Shape = (x[0], x[1], *[None] * spatial)
        else:
            problem = unpool_shape_problem(wanted, default)
            if problem is not None:
                raise a.fail(problem)
            shape = tuple(wanted)
        return [tensor(dtype, shape, _image_format(a, "X", len(shape)))]


POOLING_OPS = [GlobalMaxPoolOp, LpPoolOp, GlobalLpPoolOp, MaxUnpoolOp]

__all__ = ["GlobalMaxPoolOp", "LpPoolOp", "GlobalLpPoolOp", "MaxUnpoolOp", "POOLING_OPS"]
