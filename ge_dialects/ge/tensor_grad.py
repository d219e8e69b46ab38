"""The backward op of the data-movement family, `ge.gather_grad` (GE's UnsortedSegmentSum /
EmbeddingDenseGrad: an embedding's gradient), and the pieces the VJPs of tensor_ops.py share.

Gather copies rows of `data`; its adjoint adds each row of `dy` into the data row its index
picked, so rows several indices pick receive the sum. Like `ge.conv_backprop_input`, the forward
operand's shape is a property (`data_shape`): nothing in dy and indices says how many rows the
data had.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, result_def, traits_def
from xdsl.traits import Pure

from ge.ge_dialects.ge.base import GeOp, InferArgs, IntProp, IntsProp, constant_value, describe
from ge.ge_dialects.ge.facts import Engine, RunsOn
from ge.ge_dialects.ge.grad import GradBuilder, NotDifferentiable, static_shape
from ge.ge_dialects.ge.tensor_ops import (
    INDEX_TYPES,
    PadOp,
    SliceOp,
    _format_if_same_rank,
    _show,
    normalize_axes,
)
from ge.ge_dialects.ge.types import FLOAT_TYPES, tensor


@irdl_op_definition
class GatherGradOp(GeOp):
    """GE's UnsortedSegmentSum / EmbeddingDenseGrad: the gradient of `ge.gather` with respect to
    its data. Zeros of `data_shape`, into which each slice of `dy` along the gathered dims is added
    at the position its index names along `axis` (negative indices count from the end, as
    Gather's do); rows that several indices pick get the sum."""

    name = "ge.gather_grad"
    NO_GRADIENT: ClassVar = "it is a backward op, and second derivatives are not built"
    # UnsortedSegmentSum / EmbeddingDenseGrad: black like reduce_sum, because it sums rows from the whole batch, and
    # small per-row gradients added in f16 round away
    PRECISION: ClassVar = "black"
    DATA_OPERANDS: ClassVar = ("dy",)
    dy = operand_def(TensorType)
    indices = operand_def(TensorType)
    d_data = result_def(TensorType)
    axis = opt_prop_def(IntProp)
    data_shape = opt_prop_def(IntsProp)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR))
    DEFAULTS: ClassVar = {"axis": 0}

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        dtype = a.expect_dtype("dy", FLOAT_TYPES)
        a.expect_dtype("indices", INDEX_TYPES)
        data = cls._data_shape(a)
        axis = a.normalize_axis(a.prop("axis"), len(data))
        indices = a.shape("indices")
        want = (*data[:axis], *indices, *data[axis + 1 :])
        dy = a.shape("dy")
        if len(dy) != len(want) or any(d is not None and d != w for d, w in zip(dy, want)):
            raise a.fail(
                f"operand 'dy' has shape {_show(dy)}, but gathering indices of shape {_show(indices)} from "
                f"data_shape {_show(data)} along axis {axis} gives {_show(want)}"
            )
        values = a.const_ints("indices")
        size = data[axis]
        for index in values or ():
            if not -size <= index < size:
                raise a.fail(f"index {index} is out of range for axis {axis} of data_shape {_show(data)}")
        return [tensor(dtype, data, _format_if_same_rank(a, "dy", len(data)))]

    @staticmethod
    def _data_shape(a: InferArgs) -> tuple[int, ...]:
        data = a.prop("data_shape")
        if data is None:
            raise a.fail("property 'data_shape' is required")
        if not data:
            raise a.fail("data_shape must have rank 1 or more (Gather's data does), got []")
        if any(d < 0 for d in data):
            raise a.fail(f"data_shape {_show(data)} has a negative dimension")
        return tuple(data)


TENSOR_GRAD_OPS: list = [GatherGradOp]


# -- pieces of the VJPs in tensor_ops.py -----------------------------------------------------------


def operand_cotangents(op: GeOp, **grads: Any) -> list[SSAValue | None]:
    """One cotangent per operand of `op`, in order (what `vjp` returns): `grads[name]` for a single
    operand, the items of `grads[name]` for a variadic one, None for the operands not named."""
    out: list[SSAValue | None] = []
    for name, _ in op.get_irdl_definition().operands:
        value = getattr(op, name)
        if value is None:  # an absent optional operand has no entry
            continue
        given = grads.get(name)
        if isinstance(value, SSAValue):
            out.append(given)
        else:
            out.extend(given if given is not None else [None] * len(value))
    return out


def constant_ints(op: Operation, name: str) -> list[int] | None:
    """The values of the op's integer operand `name`: [] when absent, None when not a constant."""
    value = getattr(op, name)
    if value is None:
        return []
    array = constant_value(value)
    return None if array is None else [int(v) for v in array.reshape(-1)]


def required_constants(op: Operation, names: Sequence[str]) -> dict[str, list[int] | None]:
    """The values of shape-like operands the gradient must know; absent optional ones are None."""
    values: dict[str, list[int] | None] = {}
    for name in names:
        ints = constant_ints(op, name)
        if ints is None:
            raise NotDifferentiable(f"{describe(op)}: the gradient needs '{name}' as a constant")
        values[name] = ints if getattr(op, name) is not None else None
    return values


def reduce_cotangent(g: GradBuilder, op: Any, dy: SSAValue, mean: bool) -> SSAValue:
    """The cotangent of ReduceSum's / ReduceMean's data: dy with the reduced dims put back as 1s
    (keepdims 0 removed them), expanded over them, over the element count for the mean."""
    data = static_shape(op.data)
    axes = required_constants(op, ["axes"])["axes"] or []
    if not axes and op.p("noop_with_empty_axes"):
        return dy  # the identity
    reduced = set(normalize_axes(axes, len(data))) if axes else set(range(len(data)))
    count = math.prod(data[i] for i in reduced)
    if mean and count:
        dy = g.scale(dy, 1.0 / count)
    kept = tuple(1 if i in reduced else d for i, d in enumerate(data))
    return g.expand(g.reshape(dy, kept), data)


def pad(g: GradBuilder, value: SSAValue, before: Sequence[int], after: Sequence[int]) -> SSAValue:
    """`value` zero-padded (negative widths crop) in constant mode."""
    if not any(before) and not any(after):
        return value
    return g.value(PadOp, {"data": value, "pads": g.ints([*before, *after])})


def strided_scatter(g: GradBuilder, dy: SSAValue, data: SSAValue, bounds: dict[int, Any]) -> SSAValue:
    """The adjoint of a slice with these (start, end, step) bounds per axis (`slice_bounds`): zeros
    of data's shape with dy's elements at the positions the slice read them from.

    Negative-step axes are reversed first, so every axis reads ascending positions `first + i *
    step`. Steps above 1 are undone by interleaving: a size-1 dim after the axis, zero-padded to
    `step` and merged back, spreads the elements `step` apart. One pad then places them (a
    negative trailing width crops the zeros past the last element)."""
    lengths = static_shape(dy)
    shape = static_shape(data)
    if 0 in lengths:
        return g.zeros(data)
    flipped = sorted(axis for axis, (_, _, step) in bounds.items() if step < 0)
    if flipped:
        operands = {
            "data": dy,
            "starts": g.ints([-1] * len(flipped)),
            "ends": g.ints([-(lengths[axis] + 1) for axis in flipped]),
            "axes": g.ints(flipped),
            "steps": g.ints([-1] * len(flipped)),
        }
        dy = g.value(SliceOp, operands)
    first = {
        axis: start + (lengths[axis] - 1) * step if step < 0 else start for axis, (start, _, step) in bounds.items()
    }
    stride = {axis: abs(step) for axis, (_, _, step) in bounds.items()}
    spread = [axis for axis in sorted(bounds) if stride[axis] > 1]
    if spread:
        dy = _interleave_zeros(g, dy, lengths, {axis: stride[axis] for axis in spread})
    before = [first.get(axis, 0) for axis in range(len(shape))]
    after = [
        shape[axis] - first[axis] - lengths[axis] * stride[axis] if axis in bounds else 0 for axis in range(len(shape))
    ]
    return pad(g, dy, before, after)


def _interleave_zeros(g: GradBuilder, dy: SSAValue, lengths: Sequence[int], strides: dict[int, int]) -> SSAValue:
    """dy with `strides[axis] - 1` zeros after each element along each axis named."""
    with_ones: list[int | None] = []
    widths: list[int] = []
    for axis, n in enumerate(lengths):
        with_ones.append(n)
        widths.append(0)
        if axis in strides:
            with_ones.append(1)
            widths.append(strides[axis] - 1)
    padded = pad(g, g.reshape(dy, tuple(with_ones)), [0] * len(widths), widths)
    return g.reshape(padded, tuple(n * strides.get(axis, 1) for axis, n in enumerate(lengths)))


__all__ = ["GatherGradOp", "TENSOR_GRAD_OPS"]
