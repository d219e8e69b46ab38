"""Reductions and selections along axes: ReduceMax, ReduceMin, ReduceProd (ReduceOp's axes as an
operand, opset 18 style), ArgMax and ArgMin, TopK, the running sums and products CumSum and
CumProd, Hardmax, and Size (the element count).

ReduceMax of an empty set is the type's lowest value (-inf for floats, the minimum integer, false),
ReduceMin's its highest, ReduceProd's 1, as ONNX says. Selections resolve ties as ONNX does: ArgMax,
ArgMin and Hardmax take the first extreme (ArgMax / ArgMin the last with select_last_index), TopK
orders equal values by index, lower first. The shape rules below are shared with the kernels
(interpreter/kernels/reductions.py), so the two cannot disagree.

Gradients: a max or min sends dy to the positions equal to the result, split evenly among ties (as
PyTorch's amax does); a product sends dy times the product of the other elements (exclusive
running products from both sides, so zeros need no division); TopK scatters dy back to the
positions it picked; CumSum's is the running sum in the other direction, CumProd's the running
sum of dy times the products the other way, split at each row's first zero so nothing divides by
zero. The index results and
Hardmax are piecewise constant (zero gradient wherever it exists).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import TensorType, i32, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, result_def, traits_def
from xdsl.traits import Pure

from ge.ge_dialects.ge.base import GeOp, InferArgs, IntProp
from ge.ge_dialects.ge.facts import Engine, Reduction, RunsOn
from ge.ge_dialects.ge.grad import GradBuilder, static_shape, value_shape
from ge.ge_dialects.ge.tensor_grad import operand_cotangents, required_constants
from ge.ge_dialects.ge.tensor_ops import (
    ReduceOp,
    ShapeError,
    _format_if_same_rank,
    _reports_shape_errors,
    _show,
    normalize_axes,
    shape_like_operands,
)
from ge.ge_dialects.ge.types import (
    ALL_TYPES,
    FLOAT_TYPES,
    NARROW_TYPES,
    NUMERIC_TYPES,
    Shape,
    elements,
    reduction_ratio,
    tensor,
)

# -- shared shape rules (used by the shape functions and the kernels) ----------------------------


def arg_reduced_dims(source: Shape, axis: int, keepdims: bool) -> Shape:
    """ArgMax's and ArgMin's result: `axis` (normalized) kept as 1 or removed."""
    if keepdims:
        return tuple(1 if i == axis else d for i, d in enumerate(source))
    return tuple(d for i, d in enumerate(source) if i != axis)


def top_k_dims(source: Shape, axis: int, k: int | None) -> Shape:
    """TopK's results: `k` elements along `axis`, which must be no longer than the axis."""
    if k is not None and k < 0:
        raise ShapeError(f"K {k} is negative")
    size = source[axis]
    if k is not None and size is not None and k > size:
        raise ShapeError(f"K {k} is larger than axis {axis} of size {size}")
    return tuple(k if i == axis else d for i, d in enumerate(source))


def reduced_axes(op: ReduceOp) -> list[int] | None:
    """The axes a reduce op with constant axes reduces, in order; None when it is the identity
    (no axes and noop_with_empty_axes)."""
    rank = len(static_shape(op.data))
    axes = required_constants(op, ["axes"])["axes"] or []
    if not axes:
        return None if op.p("noop_with_empty_axes") else list(range(rank))
    return sorted(normalize_axes(axes, rank))


def _trivial_cotangents(op: ReduceOp, g: GradBuilder, dy: SSAValue) -> Sequence[SSAValue | None] | None:
    """The cotangents of a reduction where no reduced set is formed: dy itself for the identity
    (no axes, noop_with_empty_axes), zeros for empty data; else None."""
    if reduced_axes(op) is None:
        return operand_cotangents(op, data=dy)
    if 0 in static_shape(op.data):
        return operand_cotangents(op, data=g.zeros(op.data))
    return None


def _kept(data: Shape, axes: Sequence[int]) -> tuple[int, ...]:
    return tuple(1 if i in axes else int(d) for i, d in enumerate(data))  # type: ignore[arg-type]


# -- helpers of the shape functions --------------------------------------------------------------


def _one_value(a: InferArgs, name: str, ranks: Sequence[int]) -> None:
    """An operand holding one integer: of one of `ranks` (0 for a scalar, 1 for one element)."""
    shape = a.shape(name)
    if len(shape) not in ranks or (shape and shape[0] not in (1, None)):
        wanted = "a scalar or one element" if 0 in ranks else "a 1-D tensor of one element"
        raise a.fail(f"operand '{name}' must be {wanted}, got shape {_show(shape)}")


# -- reduce ops ----------------------------------------------------------------------------------


class _ExtremeOp(ReduceOp):
    """ReduceMax / ReduceMin: the largest (smallest) element over `axes`."""

    # a max picks one of its inputs: it rounds nothing, so it computes in whatever type it is given
    # (ReduceMaxD's / ReduceMinD's own flags not found)
    PRECISION: ClassVar = "gray"
    DATA_OPERANDS: ClassVar = ("data",)
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"axes"})
    TYPES: ClassVar = ALL_TYPES  # bools too (ReduceMax / ReduceMin since opset 20)

    def vector_elements(self) -> int:
        """One comparison per input element."""
        return elements(self.data)

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """dy to the positions equal to the result, split evenly among ties (PyTorch's amax):
        mask = (x == y), dx = mask * dy / (the mask's count over the reduced axes)."""
        from ge.ge_dialects.ge.elementwise import EqualOp

        (dy,) = cotangents
        if dy is None:
            return operand_cotangents(self)
        trivial = _trivial_cotangents(self, g, dy)
        if trivial is not None:
            return trivial
        axes, data = reduced_axes(self), static_shape(self.data)
        assert axes is not None  # the identity is one of the trivial cases
        kept = _kept(data, axes)
        hit = g.cast_like(g.value(EqualOp, {"a": self.data, "b": g.reshape(self.reduced, kept)}), self.data)
        share = g.div(g.reshape(dy, kept), g.reduce_sum(hit, axes, keepdims=True))
        return operand_cotangents(self, data=g.mul(hit, share))


@irdl_op_definition
class ReduceMaxOp(_ExtremeOp):
    """Largest element over `axes` (an empty set gives the type's lowest value: -inf, the minimum
    integer, false)."""

    name = "ge.reduce_max"
    ONNX: ClassVar = ("ReduceMax",)


@irdl_op_definition
class ReduceMinOp(_ExtremeOp):
    """Smallest element over `axes` (an empty set gives the type's highest value: inf, the maximum
    integer, true)."""

    name = "ge.reduce_min"
    ONNX: ClassVar = ("ReduceMin",)


@irdl_op_definition
class ReduceProdOp(ReduceOp):
    """Product over `axes` (an empty set gives 1)."""

    name = "ge.reduce_prod"
    ONNX: ClassVar = ("ReduceProd",)
    PRECISION: ClassVar = "black"  # ReduceProd: false (a long product under- and overflows in f16)
    DATA_OPERANDS: ClassVar = ("data",)
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"axes"})

    def vector_elements(self) -> int:
        """One multiplication per input element."""
        return elements(self.data)

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """dy times the product of the other elements of each element's reduced set: the reduced
        axes moved last and merged into one, where the exclusive running products from the left
        and from the right multiply to it (no division, so zeros are exact)."""
        (dy,) = cotangents
        if dy is None:
            return operand_cotangents(self)
        trivial = _trivial_cotangents(self, g, dy)
        if trivial is not None:
            return trivial
        axes, data = reduced_axes(self), static_shape(self.data)
        assert axes is not None  # the identity is one of the trivial cases
        rest = [i for i in range(len(data)) if i not in axes]
        perm = rest + axes
        outer = [data[i] for i in rest]
        rows = g.reshape(g.transpose(self.data, perm), (*outer, math.prod(data[i] for i in axes)))
        last = g.const(np.asarray(len(outer), np.int64))
        left = g.value(CumProdOp, {"x": rows, "axis": last}, {"exclusive": 1})
        right = g.value(CumProdOp, {"x": rows, "axis": last}, {"exclusive": 1, "reverse": 1})
        others = g.reshape(g.mul(left, right), (*outer, *(data[i] for i in axes)))
        others = g.transpose(others, [perm.index(i) for i in range(len(data))])
        return operand_cotangents(self, data=g.mul(others, g.reshape(dy, _kept(data, axes))))


# -- selections ----------------------------------------------------------------------------------


class _ArgOp(GeOp):
    """ArgMax / ArgMin: the i64 index of the extreme element along `axis` (the first one, the last
    with select_last_index=1), the axis kept as 1 or removed."""

    # an index result: the pass never changes its type, and its data keeps the type it arrives in
    PRECISION: ClassVar = "keep"
    data = operand_def(TensorType)
    reduced = result_def(TensorType)
    axis = opt_prop_def(IntProp)
    keepdims = opt_prop_def(IntProp)
    select_last_index = opt_prop_def(IntProp)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR), Reduction())
    DEFAULTS: ClassVar = {"axis": 0, "keepdims": 1, "select_last_index": 0}
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"data"})

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        a.expect_dtype("data", NUMERIC_TYPES)
        shape = a.shape("data")
        axis = a.normalize_axis(a.prop("axis"), len(shape))
        if a.prop("select_last_index") not in (0, 1):
            raise a.fail(f"select_last_index must be 0 or 1, got {a.prop('select_last_index')}")
        if shape and shape[axis] == 0:
            raise a.fail(f"axis {axis} of shape {_show(shape)} is empty: it has no extreme element")
        return [tensor(i64, arg_reduced_dims(shape, axis, bool(a.prop("keepdims"))))]

    def vector_elements(self) -> int:
        """One comparison per input element."""
        return elements(self.data)

    def reduced_row_elements(self) -> int:
        return reduction_ratio(self.data, self.reduced)

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """None: the i64 result carries no cotangent, and an index is piecewise constant in the data."""
        return [None]


@irdl_op_definition
class ArgMaxOp(_ArgOp):
    name = "ge.arg_max"
    ONNX: ClassVar = ("ArgMax",)


@irdl_op_definition
class ArgMinOp(_ArgOp):
    name = "ge.arg_min"
    ONNX: ClassVar = ("ArgMin",)


@irdl_op_definition
class TopKOp(GeOp):
    """The K largest (smallest with largest=0) elements along `axis` and their i64 indices, in
    order from the most extreme; equal values are ordered by index, lower first. K is a 1-D i64
    tensor of one element: constant, it gives the results an exact size along the axis."""

    name = "ge.top_k"
    ONNX: ClassVar = ("TopK",)
    DATA_OPERANDS: ClassVar = ("X",)
    X = operand_def(TensorType)
    K = operand_def(TensorType)
    Values = result_def(TensorType)
    Indices = result_def(TensorType)
    axis = opt_prop_def(IntProp)
    largest = opt_prop_def(IntProp)
    sorted = opt_prop_def(IntProp)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR), Reduction())
    DEFAULTS: ClassVar = {"axis": -1, "largest": 1, "sorted": 1}
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"K"})

    @classmethod
    @_reports_shape_errors
    def infer(cls, a: InferArgs) -> list[TensorType]:
        dtype = a.expect_dtype("X", NUMERIC_TYPES)
        shape = a.shape("X")
        if not shape:
            raise a.fail("operand 'X' must have rank 1 or more, got rank 0")
        axis = a.normalize_axis(a.prop("axis"), len(shape))
        for flag in ("largest", "sorted"):
            if a.prop(flag) not in (0, 1):
                raise a.fail(f"{flag} must be 0 or 1, got {a.prop(flag)}")
        a.expect_dtype("K", (i64,))
        _one_value(a, "K", (1,))
        k = a.const_ints("K")
        out = top_k_dims(shape, axis, None if k is None else k[0])
        return [tensor(dtype, out), tensor(i64, out)]

    def vector_elements(self) -> int:
        """A pass over the input, then the K results of each row written."""
        return elements(self.X) + elements(self.Values) + elements(self.Indices)

    def reduced_row_elements(self) -> int:
        shape = value_shape(self.X)
        axis = self.p("axis") % len(shape)
        return shape[axis] or 1

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """dy put back at the positions TopK picked, zeros elsewhere (a scatter-add of dy into
        zeros of X's shape; the indices along a row are distinct). Indices take no cotangent."""
        from ge.ge_dialects.ge.indexing import ScatterElementsOp

        d_values = cotangents[0]
        if d_values is None:
            return [None, None]
        operands = {"data": g.zeros(self.X), "indices": self.Indices, "updates": d_values}
        return [g.value(ScatterElementsOp, operands, {"axis": self.p("axis"), "reduction": "add"}), None]


class _CumulativeOp(GeOp):
    """CumSum / CumProd: the running sum (product) along `axis` (a scalar or one-element i32 / i64
    operand); `exclusive` leaves the element itself out, `reverse` runs from the end."""

    # black like ReduceSum / ReduceProd (false): a running sum or product is long accumulation, and f16
    # rounds the late terms away (Cumsum's / Cumprod's own flags not found)
    PRECISION: ClassVar = "black"
    DATA_OPERANDS: ClassVar = ("x",)
    x = operand_def(TensorType)
    axis = operand_def(TensorType)
    y = result_def(TensorType)
    exclusive = opt_prop_def(IntProp)
    reverse = opt_prop_def(IntProp)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR))
    DEFAULTS: ClassVar = {"exclusive": 0, "reverse": 0}
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"axis"})

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        dtype = a.expect_dtype("x", NUMERIC_TYPES)
        shape = a.shape("x")
        if not shape:
            raise a.fail("operand 'x' must have rank 1 or more, got rank 0")
        a.expect_dtype("axis", (i64, i32))
        _one_value(a, "axis", (0, 1))
        axis = a.const_ints("axis")
        if axis is not None:
            a.normalize_axis(axis[0], len(shape))
        for flag in ("exclusive", "reverse"):
            if a.prop(flag) not in (0, 1):
                raise a.fail(f"{flag} must be 0 or 1, got {a.prop(flag)}")
        return [tensor(dtype, shape, a.fmt("x"))]


@irdl_op_definition
class CumSumOp(_CumulativeOp):
    name = "ge.cum_sum"
    ONNX: ClassVar = ("CumSum",)

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """The running sum of dy in the other direction (same `exclusive`): element j feeds the
        results from j on (after j when exclusive)."""
        (dy,) = cotangents
        if dy is None:
            return [None, None]
        axis = required_constants(self, ["axis"])["axis"]
        assert axis is not None  # a required operand
        props = {"exclusive": self.p("exclusive"), "reverse": 1 - self.p("reverse")}
        return [g.value(CumSumOp, {"x": dy, "axis": g.const(np.asarray(axis[0], np.int64))}, props), None]


@irdl_op_definition
class CumProdOp(_CumulativeOp):
    name = "ge.cum_prod"
    ONNX: ClassVar = ("CumProd",)

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """dx_j = sum over the results i that x_j feeds of dy_i times the product of the others.

        For the inclusive scan, along the scan's direction: before the first zero of a row x_j is
        nonzero and dx_j = (the running sum of dy * y the other way) / x_j; at the first zero
        z, dx_z is that running sum of dy * y', y' the scan with x_z read as 1 (every product it
        enters skips x_z and nothing before it is zero); after it every product holds x_z, so 0.
        No division by a zero, so the gradient is exact where x has zeros. The exclusive scan is
        the inclusive one shifted by one, so its dy is shifted back first."""
        from ge.ge_dialects.ge.elementwise import EqualOp
        from ge.ge_dialects.ge.logic import LogicalAndOp
        from ge.ge_dialects.ge.tensor_grad import pad
        from ge.ge_dialects.ge.tensor_ops import WhereOp

        (dy,) = cotangents
        if dy is None:
            return [None, None]
        shape = static_shape(self.x)
        if 0 in shape:
            return [g.zeros(self.x), None]
        values = required_constants(self, ["axis"])["axis"]
        assert values is not None  # a required operand
        axis = normalize_axes(values[:1], len(shape))[0]
        reverse = self.p("reverse")
        if self.p("exclusive"):  # y_i is the inclusive scan's y_{i-1} (y_{i+1} reversed)
            widths = [[0] * len(shape), [0] * len(shape)]
            widths[0][axis], widths[1][axis] = (1, -1) if reverse else (-1, 1)
            dy = pad(g, dy, *widths)
        axis_value = g.const(np.asarray(axis, np.int64))

        def scan(cls: type[GeOp], value: SSAValue, backwards: int) -> SSAValue:
            return g.value(cls, {"x": value, "axis": axis_value}, {"reverse": backwards})

        def where(condition: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
            return g.value(WhereOp, {"condition": condition, "X": a, "Y": b})

        zero, one = g.scalar(0.0, self.x), g.scalar(1.0, self.x)
        is_zero = g.value(EqualOp, {"a": self.x, "b": zero})
        zeros_so_far = scan(CumSumOp, g.cast_like(is_zero, self.x), reverse)
        before = g.value(EqualOp, {"a": zeros_so_far, "b": zero})
        first = g.value(LogicalAndOp, {"a": is_zero, "b": g.value(EqualOp, {"a": zeros_so_far, "b": one})})
        inclusive = scan(CumProdOp, self.x, reverse)
        ahead = scan(CumSumOp, g.mul(dy, inclusive), 1 - reverse)
        skipped = scan(CumProdOp, where(first, one, self.x), reverse)  # the first zero read as 1
        at_first = scan(CumSumOp, g.mul(dy, skipped), 1 - reverse)
        before_zero = g.div(ahead, where(before, self.x, one))
        return [where(before, before_zero, where(first, at_first, g.zeros(self.x))), None]


@irdl_op_definition
class HardmaxOp(GeOp):
    """1 at the first largest element along `axis`, 0 elsewhere."""

    name = "ge.hardmax"
    ONNX: ClassVar = ("Hardmax",)
    DATA_OPERANDS: ClassVar = ("input",)
    input = operand_def(TensorType)
    output = result_def(TensorType)
    axis = opt_prop_def(IntProp)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR), Reduction())
    DEFAULTS: ClassVar = {"axis": -1}

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        dtype = a.expect_dtype("input", FLOAT_TYPES)
        shape = a.shape("input")
        if not shape:
            raise a.fail("operand 'input' must have rank 1 or more, got rank 0")
        a.normalize_axis(a.prop("axis"), len(shape))
        return [tensor(dtype, shape, _format_if_same_rank(a, "input", len(shape)))]

    def vector_elements(self) -> int:
        """A comparison per input element, then the one-hot result written."""
        return elements(self.input) + elements(self.output)

    def reduced_row_elements(self) -> int:
        shape = value_shape(self.input)
        return shape[self.p("axis") % len(shape)] or 1

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """None: piecewise constant, its derivative is zero wherever it exists."""
        return [None]


@irdl_op_definition
class SizeOp(GeOp):
    """The input's element count as an i64 scalar (the importer folds it when the shape is static)."""

    name = "ge.size"
    ONNX: ClassVar = ("Size",)
    PRECISION: ClassVar = "keep"
    data = operand_def(TensorType)
    size = result_def(TensorType)
    traits = traits_def(Pure(), RunsOn(Engine.AICPU))
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"data"})
    TYPES: ClassVar[tuple[Attribute, ...]] = (*ALL_TYPES, *NARROW_TYPES)

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        a.expect_dtype("data", cls.TYPES)
        return [tensor(i64, [])]

    def static_size(self) -> int | None:
        """The count when the input's shape is static, else None."""
        shape = value_shape(self.data)
        return None if None in shape else math.prod(shape)  # type: ignore[arg-type]

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """No gradient flows: the count does not depend on the data's values (a true zero gradient)."""
        return [None]


REDUCTION_OPS: list = [
    ReduceMaxOp,
    ReduceMinOp,
    ReduceProdOp,
    ArgMaxOp,
    ArgMinOp,
    TopKOp,
    CumSumOp,
    CumProdOp,
    HardmaxOp,
    SizeOp,
]

# The family's operands whose values decide result shapes, in the one table of them.
shape_like_operands.update({ReduceMaxOp: ("axes",), ReduceMinOp: ("axes",), ReduceProdOp: ("axes",), TopKOp: ("K",)})

__all__ = [
    "ReduceMaxOp",
    "ReduceMinOp",
    "ReduceProdOp",
    "ArgMaxOp",
    "ArgMinOp",
    "TopKOp",
    "CumSumOp",
    "CumProdOp",
    "HardmaxOp",
    "SizeOp",
    "REDUCTION_OPS",
]
