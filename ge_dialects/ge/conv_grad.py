"""Backward ops of convolution and pooling, named after GE's: `ge.conv_backprop_input`
(Conv2DBackpropInput), `ge.conv_backprop_filter` (Conv2DBackpropFilter), `ge.max_pool_grad`
(MaxPoolGrad) and `ge.avg_pool_grad` (AvgPoolGrad). N-d like the forward ops (1, 2 or 3 spatial
dims, or more), NCHW-style (N, C, D1, ..., Dk) operands.

Their windows are explicit: strides, dilations and pads as ConvOp / the pools spell them, but no
auto_pad. The forward op's VJP resolves auto_pad into pads for its static input shape, so a
backward op never needs to recompute SAME padding. The forward input's shape is a property
(`input_shape`, `filter_shape`) where no operand has it: a strided window drops trailing input
positions, so the output's size does not determine the input's.

The module also holds the pieces the forward ops' VJPs (in nn.py) share: the explicit window
properties of a forward op, and the retyping of a cotangent to its operand's exact type.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, result_def, traits_def
from xdsl.rewriter import Rewriter
from xdsl.traits import Pure

from ge.ge_dialects.ge.base import GeOp, InferArgs, IntProp, IntsProp
from ge.ge_dialects.ge.elementwise import IdentityOp
from ge.ge_dialects.ge.facts import ComputesIn, Engine, RunsOn, StorageFormats
from ge.ge_dialects.ge.grad import GradBuilder, NotDifferentiable, static_shape
from ge.ge_dialects.ge.layout import FRACTAL_Z, NC1HWC0, conv_formats
from ge.ge_dialects.ge.nn import (
    Window,
    _image_format,
    _ints_prop,
    _pool_kernel,
    _shape,
    _show,
    _spatial_input,
    _spatial_out,
)
from ge.ge_dialects.ge.types import FLOAT_TYPES, Shape, elements, shape_of, tensor, tensor_type_of

# -- shared checks ----------------------------------------------------------------------------


def _explicit_window(a: InferArgs, spatial: int, kernel: Sequence[int | None]) -> Window:
    """Checks strides, dilations, pads (and ceil_mode where the op has it) and returns the window."""
    _ints_prop(a, "strides", spatial)
    _ints_prop(a, "dilations", spatial)
    _ints_prop(a, "pads", spatial, 2)
    if a.prop("ceil_mode") not in (None, 0, 1):
        raise a.fail(f"ceil_mode must be 0 or 1, got {a.prop('ceil_mode')}")
    return Window.of(a.prop, kernel)


def _forward_shape(a: InferArgs, name: str, rank: int) -> tuple[int, ...]:
    """A forward operand's shape given as a property (`input_shape`, `filter_shape`)."""
    values = a.prop(name)
    if values is None:
        raise a.fail(f"{name} is required")
    if len(values) != rank:
        raise a.fail(f"{name} {_show(values)} must have {rank} values (the rank of dy)")
    if any(v < 1 for v in values):
        raise a.fail(f"{name} must be positive, got {_show(values)}")
    return tuple(values)


def _check_dy(a: InferArgs, want: Shape, source: str) -> None:
    """dy must have the shape the forward op gives its result (`source` says from what)."""
    dy = a.shape("dy")
    if len(dy) != len(want) or any(d is not None and w is not None and d != w for d, w in zip(dy, want)):
        raise a.fail(f"operand 'dy' has shape {_shape(dy)}, but the forward output of {source} is {_shape(want)}")


def _check_conv_channels(a: InferArgs, x: Shape, w: Shape) -> None:
    """Input channels = weight channels x group; output channels divisible by group."""
    group = a.prop("group")
    if group < 1:
        raise a.fail(f"group must be positive, got {group}")
    if x[1] is not None and w[1] is not None and x[1] != w[1] * group:
        raise a.fail(f"input channels {x[1]} do not match weight channels {w[1]} x group {group}")
    if w[0] is not None and w[0] % group:
        raise a.fail(f"output channels {w[0]} are not divisible by group {group}")


def _conv_out(a: InferArgs, x: Shape, w: Shape) -> Shape:
    """The forward conv's output shape for input `x` and weight `w` (checks the window)."""
    window = _explicit_window(a, len(x) - 2, w[2:])
    return (x[0], w[0], *_spatial_out(a, window, x[2:]))


# -- convolution ------------------------------------------------------------------------------


class _ConvGradOp(GeOp):
    """Properties both conv gradients share with ConvOp (pads explicit)."""

    dilations = opt_prop_def(IntsProp)
    group = opt_prop_def(IntProp)
    pads = opt_prop_def(IntsProp)
    strides = opt_prop_def(IntsProp)
    traits = traits_def(Pure(), RunsOn(Engine.CUBE))
    DEFAULTS: ClassVar = {"group": 1}


@irdl_op_definition
class ConvBackpropInputOp(_ConvGradOp):
    """GE's Conv2DBackpropInput (N-d): the gradient of ge.conv with respect to its input X, from
    the output gradient dy (N, M, O...) and the weight W (M, C/group, K...). `input_shape` is X's
    shape. dx is the transposed convolution of dy with W."""

    name = "ge.conv_backprop_input"
    traits = traits_def(conv_formats("conv-backprop-input", "dy", "dx", "W", backward=True))
    NO_GRADIENT: ClassVar = "it is a backward op, and second derivatives are not built"
    PRECISION: ClassVar = "white"  # Conv2DBackpropInput: true (Cube work like the forward conv)
    DATA_OPERANDS: ClassVar = ("dy", "W")
    dy = operand_def(TensorType)
    W = operand_def(TensorType)
    dx = result_def(TensorType)
    input_shape = opt_prop_def(IntsProp)

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        dtype = a.expect_dtype("dy", FLOAT_TYPES)
        a.expect_same_dtype("dy", "W")
        dy = _spatial_input(a, "dy")
        w = a.shape("W")
        if len(w) != len(dy):
            raise a.fail(f"weight rank {len(w)} does not match dy rank {len(dy)}")
        x = _forward_shape(a, "input_shape", len(dy))
        _check_conv_channels(a, x, w)
        _check_dy(a, _conv_out(a, x, w), f"input_shape {_show(x)} and weight {_shape(w)}")
        return [tensor(dtype, x, _image_format(a, "dy", len(x)))]

    def macs(self) -> int:
        """As many multiply-accumulates as the forward conv: one per dy element and weight element
        of one output channel."""
        return elements(self.dy) * math.prod(d or 1 for d in shape_of(tensor_type_of(self.W))[1:])


@irdl_op_definition
class ConvBackpropFilterOp(_ConvGradOp):
    """GE's Conv2DBackpropFilter (N-d): the gradient of ge.conv with respect to its weight W, from
    the forward input x (N, C, D...) and the output gradient dy. `filter_shape` is W's shape
    (M, C/group, K...). dW is the correlation of x with dy, summed over the batch."""

    name = "ge.conv_backprop_filter"
    traits = traits_def(
        StorageFormats(
            ComputesIn("conv-backprop-filter-nc1hwc0", NC1HWC0, ("x", "dy"), (), backward=True),
            ComputesIn(
                "conv-backprop-filter-dw-fractal-z",
                FRACTAL_Z,
                (),
                ("dW",),
                (("ungrouped",), ("read_in", "dW", FRACTAL_Z)),
                backward=True,
            ),
        )
    )
    NO_GRADIENT: ClassVar = "it is a backward op, and second derivatives are not built"
    PRECISION: ClassVar = "white"  # Conv2DBackpropFilter: true
    DATA_OPERANDS: ClassVar = ("x", "dy")
    x = operand_def(TensorType)
    dy = operand_def(TensorType)
    dW = result_def(TensorType)
    filter_shape = opt_prop_def(IntsProp)

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        dtype = a.expect_dtype("x", FLOAT_TYPES)
        a.expect_same_dtype("x", "dy")
        x = _spatial_input(a, "x")
        w = _forward_shape(a, "filter_shape", len(x))
        _check_conv_channels(a, x, w)
        _check_dy(a, _conv_out(a, x, w), f"x {_shape(x)} and filter_shape {_show(w)}")
        return [tensor(dtype, w)]

    def macs(self) -> int:
        """As the forward conv's (and ConvBackpropInputOp's)."""
        return elements(self.dy) * math.prod(d or 1 for d in shape_of(tensor_type_of(self.dW))[1:])


# -- pooling ----------------------------------------------------------------------------------


class _PoolGradOp(GeOp):
    """The pools' window properties (pads explicit)."""

    ceil_mode = opt_prop_def(IntProp)
    dilations = opt_prop_def(IntsProp)
    kernel_shape = opt_prop_def(IntsProp)
    pads = opt_prop_def(IntsProp)
    strides = opt_prop_def(IntsProp)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR))

    @classmethod
    def pool_out(cls, a: InferArgs, x: Shape) -> Shape:
        spatial = len(x) - 2
        window = _explicit_window(a, spatial, _pool_kernel(a, spatial))
        return (x[0], x[1], *_spatial_out(a, window, x[2:]))


@irdl_op_definition
class MaxPoolGradOp(_PoolGradOp):
    """GE's MaxPoolGrad: the gradient of ge.max_pool with respect to X. Each window's dy goes to
    the window's maximum in x; on ties, to the first maximum in row-major window order (the one
    ge.max_pool's Indices name). Windows that overlap add up."""

    name = "ge.max_pool_grad"
    traits = traits_def(
        StorageFormats(ComputesIn("max-pool-grad-nc1hwc0", NC1HWC0, ("x", "dy"), ("dx",), backward=True))
    )
    NO_GRADIENT: ClassVar = "it is a backward op, and second derivatives are not built"
    DATA_OPERANDS: ClassVar = ("x", "dy")
    x = operand_def(TensorType)
    dy = operand_def(TensorType)
    dx = result_def(TensorType)
    DEFAULTS: ClassVar = {"ceil_mode": 0}

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        dtype = a.expect_dtype("x", FLOAT_TYPES)
        a.expect_same_dtype("x", "dy")
        x = _spatial_input(a, "x")
        _check_dy(a, cls.pool_out(a, x), f"x {_shape(x)}")
        return [tensor(dtype, x, a.fmt("x"))]


@irdl_op_definition
class AvgPoolGradOp(_PoolGradOp):
    """GE's AvgPoolGrad: the gradient of ge.avg_pool with respect to X. Each window's dy, divided
    by the count the forward divided by (count_include_pad as there), spreads evenly over the
    window's positions inside the input. `input_shape` is X's shape."""

    name = "ge.avg_pool_grad"
    traits = traits_def(StorageFormats(ComputesIn("avg-pool-grad-nc1hwc0", NC1HWC0, ("dy",), ("dx",), backward=True)))
    NO_GRADIENT: ClassVar = "it is a backward op, and second derivatives are not built"
    DATA_OPERANDS: ClassVar = ("dy",)
    dy = operand_def(TensorType)
    dx = result_def(TensorType)
    count_include_pad = opt_prop_def(IntProp)
    input_shape = opt_prop_def(IntsProp)
    DEFAULTS: ClassVar = {"ceil_mode": 0, "count_include_pad": 0}

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        dtype = a.expect_dtype("dy", FLOAT_TYPES)
        if a.prop("count_include_pad") not in (0, 1):
            raise a.fail(f"count_include_pad must be 0 or 1, got {a.prop('count_include_pad')}")
        dy = _spatial_input(a, "dy")
        x = _forward_shape(a, "input_shape", len(dy))
        _check_dy(a, cls.pool_out(a, x), f"input_shape {_show(x)}")
        return [tensor(dtype, x, _image_format(a, "dy", len(x)))]


CONV_GRAD_OPS = [ConvBackpropInputOp, ConvBackpropFilterOp, MaxPoolGradOp, AvgPoolGradOp]

__all__ = ["ConvBackpropInputOp", "ConvBackpropFilterOp", "MaxPoolGradOp", "AvgPoolGradOp", "CONV_GRAD_OPS"]


# -- what the forward ops' VJPs share ----------------------------------------------------------


def explicit_window_props(op: GeOp, kernel: Sequence[int], names: Sequence[str]) -> dict[str, Any]:
    """A forward conv or pool op's window as the backward ops take it: auto_pad resolved into
    explicit pads for the op's static input shape (SAME ignores ceil_mode, so it is dropped
    then), plus the properties `names` copied as they are."""
    sizes = static_shape(op.operands[0])[2:]
    window = Window.of(op.p, kernel)
    begins, ends = zip(*(window.padding(i, size) for i, size in enumerate(sizes)))
    props: dict[str, Any] = {name: op.p(name) for name in names}
    props.update(strides=list(window.strides), dilations=list(window.dilations), pads=[*begins, *ends])
    if "ceil_mode" in names and window.auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        props["ceil_mode"] = 0
    return props


def typed_like(g: GradBuilder, value: SSAValue, like: SSAValue) -> SSAValue:
    """`value` declared with `like`'s exact type (the cotangent of operand `like`).

    A cotangent must have its operand's type, format annotation included; the backward ops infer
    NCHW for a 4-D image the way the forward ops do, while a graph input may be unannotated. Only
    the annotation may differ, and it is the declaring op's to choose (infer-shapes keeps it too).
    A value the builder did not just make (a cotangent passed through) goes through an identity
    first, so no other use of it sees the new type."""
    want = like.type
    if value.type == want:
        return value
    got = tensor_type_of(value)
    if not isinstance(want, TensorType) or (got.element_type, got.get_shape()) != (
        want.element_type,
        want.get_shape(),
    ):
        raise NotDifferentiable(f"the gradient has type {got} but its operand has {want}")
    if value.owner not in g.emitted or value.uses:
        value = g.value(IdentityOp, {"x": value})
    return Rewriter.replace_value_with_new_type(value, want)
