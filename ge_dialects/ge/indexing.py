"""Indexing ops: gathers and scatters by index tensors (GatherElements, GatherND, ScatterElements,
ScatterND), tiling, triangular masks (Trilu) and the generated tensors OneHot and EyeLike.

Indices are i64 or i32 and count from the end when negative, as ONNX says. Shape functions check
constant indices they can see; the kernels check the rest and refuse an index out of range in one
line naming the op. The shape rules below (`gather_nd_dims`, `scatter_nd_updates`, `tile_dims`, ...)
are shared with the kernels (interpreter/kernels/indexing.py), so the two cannot disagree.

A gather's gradient is a scatter-add of dy into zeros of the data's shape, and a scatter's is a gather
of dy: each VJP emits the other op of its pair (a scatter with reduction "add", GE's ScatterAdd /
ScatterNdAdd), so the family needs no backward op of its own.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import TensorType, i64
from xdsl.ir import SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_operand_def, opt_prop_def, result_def, traits_def
from xdsl.traits import Pure

from ge.ge_dialects.ge.base import GeOp, InferArgs, IntProp, StrProp, describe
from ge.ge_dialects.ge.facts import CopiesElements, Engine, MovesData, RunsOn
from ge.ge_dialects.ge.grad import GradBuilder, NotDifferentiable, static_shape
from ge.ge_dialects.ge.tensor_grad import operand_cotangents, required_constants
from ge.ge_dialects.ge.tensor_ops import (
    INDEX_TYPES,
    ONNX_ELEMENT_TYPES,
    ConcatOp,
    ShapeError,
    _format_if_same_rank,
    _reports_shape_errors,
    _shape_operand,
    _show,
    _static_length,
    shape_like_operands,
)
from ge.ge_dialects.ge.types import (
    ALL_TYPES,
    NUMERIC_TYPES,
    Shape,
    elements,
    numpy_dtype,
    tensor,
    tensor_type_of,
    type_name,
)

REDUCTIONS = ("none", "add", "mul", "max", "min")
"""ScatterElements' and ScatterND's `reduction`: how an update combines with the value it lands on."""


# -- shared shape rules (used by the shape functions and the kernels) ----------------------------


def check_element_indices(data: Shape, indices: Shape, axis: int) -> None:
    """GatherElements' and ScatterElements' indices: the data's rank, and no longer than the data
    along the other axes (their positions there are the indices' own)."""
    if len(indices) != len(data):
        raise ShapeError(f"indices of rank {len(indices)} do not have the data's rank {len(data)}")
    for i, (n, d) in enumerate(zip(indices, data)):
        if i != axis and n is not None and d is not None and n > d:
            raise ShapeError(f"indices of shape {_show(indices)} exceed data of shape {_show(data)} in dimension {i}")


def gather_nd_dims(data: Shape, indices: Shape, batch_dims: int) -> Shape:
    """GatherND's result: indices.shape[:-1] + data.shape[batch_dims + k:], k = indices.shape[-1]."""
    r, q = len(data), len(indices)
    if r < 1 or q < 1:
        raise ShapeError(f"data and indices must have rank 1 or more, got ranks {r} and {q}")
    if not 0 <= batch_dims < min(q, r):
        raise ShapeError(
            f"batch_dims {batch_dims} must lie in [0, {min(q, r) - 1}] for data rank {r}, indices rank {q}"
        )
    k = _index_depth(indices, r - batch_dims)
    for i in range(batch_dims):
        if data[i] is not None and indices[i] is not None and data[i] != indices[i]:
            raise ShapeError(
                f"batch dimension {i} differs: data of shape {_show(data)}, indices of shape {_show(indices)}"
            )
    return tuple(indices[:-1]) + tuple(data[batch_dims + k :])


def scatter_nd_updates(data: Shape, indices: Shape) -> Shape:
    """The shape ScatterND's updates must have: indices.shape[:-1] + data.shape[k:]."""
    if len(data) < 1 or len(indices) < 1:
        raise ShapeError(f"data and indices must have rank 1 or more, got ranks {len(data)} and {len(indices)}")
    k = _index_depth(indices, len(data))
    return tuple(indices[:-1]) + tuple(data[k:])


def _index_depth(indices: Shape, most: int) -> int:
    """k, the last dim of an ND gather's or scatter's indices: static, in [1, most]."""
    k = indices[-1]
    if k is None:
        raise ShapeError("the last dimension of indices (the index depth) must be static")
    if not 1 <= k <= most:
        raise ShapeError(f"the last dimension of indices is {k}, it must lie in [1, {most}]")
    return k


def check_same_shape(updates: Shape, want: Shape) -> None:
    if len(updates) != len(want) or any(u is not None and w is not None and u != w for u, w in zip(updates, want)):
        raise ShapeError(f"updates have shape {_show(updates)}, expected {_show(want)}")


def tile_dims(source: Shape, repeats: Sequence[int]) -> Shape:
    """Tile's result: each dim times its repeat count."""
    if len(repeats) != len(source):
        raise ShapeError(f"repeats {list(repeats)} has {len(repeats)} values for rank {len(source)}")
    if any(r < 0 for r in repeats):
        raise ShapeError(f"repeats {list(repeats)} has a negative value")
    return tuple(None if d is None else d * r for d, r in zip(source, repeats))


def one_hot_dims(indices: Shape, depth: int | None, axis: int) -> Shape:
    """OneHot's result: the indices' shape with `depth` inserted at `axis` (in [-r-1, r])."""
    rank = len(indices) + 1
    if not -rank <= axis < rank:
        raise ShapeError(f"axis {axis} is out of range for a result of rank {rank}")
    if depth is not None and depth < 0:
        raise ShapeError(f"depth {depth} is negative")
    axis = axis + rank if axis < 0 else axis
    return (*indices[:axis], depth, *indices[axis:])


# -- helpers of the shape functions --------------------------------------------------------------


def _check_constant_indices(a: InferArgs, sizes: Sequence[int | None]) -> None:
    """Visible constant indices must lie in [-size, size) of the dims they index (the last
    dim of the constant runs over `sizes`; one size indexes every element)."""
    values = a.const("indices")
    if values is None or values.size == 0:
        return
    columns = np.asarray(values, dtype=np.int64).reshape(-1, len(sizes))
    for j, size in enumerate(sizes):
        if size is None:
            continue
        column = columns[:, j]
        bad = column[(column < -size) | (column >= size)]
        if bad.size:
            raise a.fail(f"index {int(bad[0])} is out of range for a dimension of size {size}")


def _one_element(a: InferArgs, name: str) -> None:
    shape = a.shape(name)
    if len(shape) > 1 or (shape and shape[0] not in (1, None)):
        raise a.fail(f"operand '{name}' must hold one value (a scalar or 1 element), got shape {_show(shape)}")


def _reduction(a: InferArgs) -> str:
    reduction = a.prop("reduction")
    if reduction not in REDUCTIONS:
        raise a.fail(f'reduction "{reduction}" is not one of {", ".join(REDUCTIONS)}')
    return reduction


# -- gathers ---------------------------------------------------------------------------------------


@irdl_op_definition
class GatherElementsOp(GeOp):
    """output[i][j][k] = data[index][j][k] for axis 0 (index = indices[i][j][k]), likewise along
    any `axis`: the result has the indices' shape."""

    name = "ge.gather_elements"
    ONNX: ClassVar = ("GatherElements",)
    DATA_OPERANDS: ClassVar = ("data",)
    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    output = result_def(TensorType)
    axis = opt_prop_def(IntProp)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR))
    DEFAULTS: ClassVar = {"axis": 0}
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"indices"})

    @classmethod
    @_reports_shape_errors
    def infer(cls, a: InferArgs) -> list[TensorType]:
        data = a.shape("data")
        if not data:
            raise a.fail("operand 'data' must have rank 1 or more, got rank 0")
        a.expect_dtype("indices", INDEX_TYPES)
        axis = a.normalize_axis(a.prop("axis"), len(data))
        indices = a.shape("indices")
        check_element_indices(data, indices, axis)
        _check_constant_indices(a, [data[axis]])
        return [tensor(a.dtype("data"), indices, _format_if_same_rank(a, "data", len(indices)))]

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """dy added into zeros of the data's shape at the positions it was read from (one
        ge.scatter_elements with reduction "add": elements read twice get the sum)."""
        (dy,) = cotangents
        if dy is None:
            return [None, None]
        operands = {"data": g.zeros(self.data), "indices": self.indices, "updates": dy}
        return [g.value(ScatterElementsOp, operands, {"axis": self.p("axis"), "reduction": "add"}), None]


@irdl_op_definition
class GatherNDOp(GeOp):
    """Slices of `data` at the index tuples of the last axis of `indices` (of length k): the
    result is indices.shape[:-1] + data.shape[batch_dims + k:]; the first `batch_dims` dims of
    both are a batch that index tuples stay within."""

    name = "ge.gather_nd"
    ONNX: ClassVar = ("GatherND",)
    DATA_OPERANDS: ClassVar = ("data",)
    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    output = result_def(TensorType)
    batch_dims = opt_prop_def(IntProp)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR))
    DEFAULTS: ClassVar = {"batch_dims": 0}
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"indices"})

    @classmethod
    @_reports_shape_errors
    def infer(cls, a: InferArgs) -> list[TensorType]:
        a.expect_dtype("indices", INDEX_TYPES)
        data, indices, batch = a.shape("data"), a.shape("indices"), a.prop("batch_dims")
        out = gather_nd_dims(data, indices, batch)
        _check_constant_indices(a, data[batch : batch + (indices[-1] or 0)])
        return [tensor(a.dtype("data"), out)]

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """dy added into zeros of the data's shape at the slices it was read from: one
        ge.scatter_nd with reduction "add". Batch dims are flattened into one, and each index
        tuple gets its batch's number in front (so a scatter without batch dims does it)."""
        (dy,) = cotangents
        if dy is None:
            return [None, None]
        batch = self.p("batch_dims")
        data = static_shape(self.data)
        indices = self.indices
        zeros = g.zeros(self.data)
        if 0 in data or 0 in static_shape(dy):  # nothing was read (and reshapes would read 0 as "copy")
            return [zeros, None]
        if batch == 0:
            return [
                g.value(ScatterNDOp, {"data": zeros, "indices": indices, "updates": dy}, {"reduction": "add"}),
                None,
            ]
        count = math.prod(data[:batch])
        rest = static_shape(indices)[batch:]
        index_dtype = numpy_dtype(tensor_type_of(indices).element_type)
        numbers = g.const(np.arange(count, dtype=index_dtype).reshape(count, *[1] * len(rest)))
        numbered = g.value(
            ConcatOp,
            {"inputs": [g.expand(numbers, (count, *rest[:-1], 1)), g.reshape(indices, (count, *rest))]},
            {"axis": -1},
        )
        flat = (count, *data[batch:])
        updates = g.reshape(dy, (count, *static_shape(dy)[batch:]))
        operands = {"data": g.reshape(zeros, flat), "indices": numbered, "updates": updates}
        return [g.reshape(g.value(ScatterNDOp, operands, {"reduction": "add"}), data), None]


# -- scatters ---------------------------------------------------------------------------------------


class _ScatterOp(GeOp):
    """A copy of `data` with `updates` written (or combined by `reduction`) at `indices`."""

    # black, though only "add" and "mul" sum or multiply (GE's ScatterAdd / ScatterMul: false): the list is
    # per class, and a reduction in f16 rounds away small updates; "none", "max" and "min" merely copy in f32
    PRECISION: ClassVar = "black"
    DATA_OPERANDS: ClassVar = ("data", "updates")
    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    updates = operand_def(TensorType)
    output = result_def(TensorType)
    reduction = opt_prop_def(StrProp)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR))
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"indices"})

    def vector_elements(self) -> int:
        """The copy of the data, then one lane-op per update."""
        return elements(self.output) + elements(self.updates)

    def scatter_vjp(
        self, g: GradBuilder, dy: SSAValue | None, gather: type[GeOp], gather_props: dict[str, int]
    ) -> list[SSAValue | None]:
        """Reduction "none": data gets dy with the overwritten positions zeroed (dy scattered over by
        zeros), updates get dy where they landed (a gather). "add": data gets dy itself. Where
        "none" writes an index twice (ONNX leaves the result undefined) every update gets the
        gradient of the one position. The other reductions are refused."""
        if dy is None:
            return [None, None, None]
        reduction = self.p("reduction")
        if reduction not in ("none", "add"):
            raise NotDifferentiable(
                f'{describe(self)}: the gradient of reduction "{reduction}" is not built ("none" and "add" only)'
            )
        d_updates = g.value(gather, {"data": dy, "indices": self.indices}, gather_props)
        if reduction == "add":
            return [dy, None, d_updates]
        props = {k: v for k, v in self.properties.items() if k in self.property_kinds()}
        cleared = g.value(type(self), {"data": dy, "indices": self.indices, "updates": g.zeros(self.updates)}, props)
        return [cleared, None, d_updates]


@irdl_op_definition
class ScatterElementsOp(_ScatterOp):
    """A copy of `data` with updates[i][j][k] put at data[index][j][k] for axis 0 (index =
    indices[i][j][k]), likewise along any `axis`; `reduction` "add", "mul", "max" or "min"
    combines it with the value there instead, in the order of the updates."""

    name = "ge.scatter_elements"
    ONNX: ClassVar = ("ScatterElements",)
    axis = opt_prop_def(IntProp)
    DEFAULTS: ClassVar = {"axis": 0, "reduction": "none"}

    @classmethod
    @_reports_shape_errors
    def infer(cls, a: InferArgs) -> list[TensorType]:
        _reduction(a)
        data = a.shape("data")
        if not data:
            raise a.fail("operand 'data' must have rank 1 or more, got rank 0")
        a.expect_dtype("indices", INDEX_TYPES)
        a.expect_same_dtype("data", "updates")
        axis = a.normalize_axis(a.prop("axis"), len(data))
        indices = a.shape("indices")
        check_element_indices(data, indices, axis)
        check_same_shape(a.shape("updates"), indices)
        _check_constant_indices(a, [data[axis]])
        return [a.type("data")]

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        return self.scatter_vjp(g, cotangents[0], GatherElementsOp, {"axis": self.p("axis")})


@irdl_op_definition
class ScatterNDOp(_ScatterOp):
    """A copy of `data` with the slices of `updates` put at the index tuples of the last axis of
    `indices` (updates.shape = indices.shape[:-1] + data.shape[k:]); `reduction` "add", "mul",
    "max" or "min" combines them with the values there instead, in the order of the updates."""

    name = "ge.scatter_nd"
    ONNX: ClassVar = ("ScatterND",)
    DEFAULTS: ClassVar = {"reduction": "none"}

    @classmethod
    @_reports_shape_errors
    def infer(cls, a: InferArgs) -> list[TensorType]:
        _reduction(a)
        a.expect_dtype("indices", INDEX_TYPES)
        a.expect_same_dtype("data", "updates")
        data, indices = a.shape("data"), a.shape("indices")
        check_same_shape(a.shape("updates"), scatter_nd_updates(data, indices))
        _check_constant_indices(a, data[: indices[-1] or 0])
        return [a.type("data")]

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        return self.scatter_vjp(g, cotangents[0], GatherNDOp, {})


# -- tiles and masks --------------------------------------------------------------------------------


@irdl_op_definition
class TileOp(GeOp):
    """`input` repeated `repeats[i]` times along each axis i (`repeats`: 1-D i64, one per axis)."""

    name = "ge.tile"
    ONNX: ClassVar = ("Tile",)
    DATA_OPERANDS: ClassVar = ("input",)
    input = operand_def(TensorType)
    repeats = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR), CopiesElements(), MovesData())
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"repeats"})

    @classmethod
    @_reports_shape_errors
    def infer(cls, a: InferArgs) -> list[TensorType]:
        source = a.shape("input")
        repeats = _shape_operand(a, "repeats")
        if repeats is None:
            if _static_length(a, "repeats") != len(source):
                raise a.fail(f"operand 'repeats' has {_static_length(a, 'repeats')} values for rank {len(source)}")
            return [tensor(a.dtype("input"), [None] * len(source), a.fmt("input"))]
        return [tensor(a.dtype("input"), tile_dims(source, repeats), a.fmt("input"))]

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """dy summed over the tiles: each repeated axis split into (repeat, size), the repeat
        axes summed away. The repeats must be constants."""
        (dy,) = cotangents
        if dy is None:
            return [None, None]
        repeats = required_constants(self, ["repeats"])["repeats"]
        assert repeats is not None  # a required operand
        source = static_shape(self.input)
        if 0 in static_shape(dy):
            return [g.zeros(self.input), None]
        split: list[int] = []
        summed: list[int] = []
        for r, d in zip(repeats, source):
            if r != 1:
                summed.append(len(split))
                split.append(r)
            split.append(d)
        return [g.reshape(g.reduce_sum(g.reshape(dy, tuple(split)), summed, keepdims=False), source), None]


@irdl_op_definition
class TriluOp(GeOp):
    """The upper (`upper` = 1) or lower triangle of the last two axes, the rest zeroed: elements on
    or above (below) diagonal `k` are kept (k > 0 is above the main diagonal)."""

    name = "ge.trilu"
    ONNX: ClassVar = ("Trilu",)
    DATA_OPERANDS: ClassVar = ("input",)
    input = operand_def(TensorType)
    k = opt_operand_def(TensorType)
    output = result_def(TensorType)
    upper = opt_prop_def(IntProp)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR))
    DEFAULTS: ClassVar = {"upper": 1}
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"k"})

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        if a.prop("upper") not in (0, 1):
            raise a.fail(f"upper must be 0 or 1, got {a.prop('upper')}")
        if a.rank("input") < 2:
            raise a.fail(f"operand 'input' must have rank 2 or more, got rank {a.rank('input')}")
        if a.has("k"):
            a.expect_dtype("k", (i64,))
            _one_element(a, "k")
        return [a.type("input")]

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """The same triangle of dy (the mask is linear)."""
        (dy,) = cotangents
        if dy is None:
            return operand_cotangents(self)
        masked = g.value(TriluOp, {"input": dy, "k": self.k}, {"upper": self.p("upper")})
        return operand_cotangents(self, input=masked)


# -- generated tensors ------------------------------------------------------------------------------


@irdl_op_definition
class OneHotOp(GeOp):
    """values[1] where an index (cast to i64, negative ones plus `depth`) equals its position along
    the new `axis` of size `depth`, values[0] elsewhere (an index outside [-depth, depth) marks no
    position). The result has the values' type; `depth` must be a constant for its size to be known."""

    name = "ge.one_hot"
    ONNX: ClassVar = ("OneHot",)
    DATA_OPERANDS: ClassVar = ("values",)
    indices = operand_def(TensorType)
    depth = operand_def(TensorType)
    values = operand_def(TensorType)
    output = result_def(TensorType)
    axis = opt_prop_def(IntProp)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR))
    DEFAULTS: ClassVar = {"axis": -1}
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"indices", "depth"})

    @classmethod
    @_reports_shape_errors
    def infer(cls, a: InferArgs) -> list[TensorType]:
        a.expect_dtype("indices", NUMERIC_TYPES)
        a.expect_dtype("depth", NUMERIC_TYPES)
        _one_element(a, "depth")
        values = a.shape("values")
        if len(values) != 1 or values[0] not in (2, None):
            raise a.fail(f"operand 'values' must be [off_value, on_value] (shape [2]), got shape {_show(values)}")
        depth = a.const("depth")
        count = None
        if depth is not None:
            value = np.asarray(depth).reshape(-1)[0]
            if not np.isfinite(value):
                raise a.fail(f"depth {value} is not finite")
            count = int(value)  # a float depth is cast to i64, as ONNX says
        return [tensor(a.dtype("values"), one_hot_dims(a.shape("indices"), count, a.prop("axis")))]

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """values[1] gets the sum of dy where an index marks a position (a one-hot mask of 0s and
        1s), values[0] the rest of dy's sum. Indices and depth get none: integers, or piecewise
        constant. (A float initializer is a parameter, so OneHot's values usually are one.)"""
        (dy,) = cotangents
        if dy is None:
            return [None, None, None]
        unit = g.const(np.array([0, 1], dtype=numpy_dtype(tensor_type_of(dy).element_type)))
        mask = g.value(
            OneHotOp, {"indices": self.indices, "depth": self.depth, "values": unit}, {"axis": self.p("axis")}
        )
        everything = list(range(len(static_shape(dy))))
        on = g.reduce_sum(g.mul(dy, mask), everything, keepdims=False)
        off = g.sub(g.reduce_sum(dy, everything, keepdims=False), on)
        d_values = g.value(ConcatOp, {"inputs": [g.reshape(off, (1,)), g.reshape(on, (1,))]}, {"axis": 0})
        return [None, None, d_values]


@irdl_op_definition
class EyeLikeOp(GeOp):
    """A 2-D tensor of the input's shape with ones on diagonal `k` (k > 0 above the main one) and
    zeros elsewhere, of element type `dtype` (an ONNX data type number; the input's when absent)."""

    name = "ge.eye_like"
    ONNX: ClassVar = ("EyeLike",)
    PRECISION: ClassVar = "keep"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    dtype = opt_prop_def(IntProp)
    k = opt_prop_def(IntProp)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR))
    DEFAULTS: ClassVar = {"k": 0}
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"input"})

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        a.expect_rank("input", 2)
        a.expect_dtype("input", ALL_TYPES)
        number = a.prop("dtype")
        if number is None:
            return [tensor(a.dtype("input"), a.shape("input"))]
        dtype = ONNX_ELEMENT_TYPES.get(number)
        if dtype not in ALL_TYPES:
            shown = f"{number}" + (f" ({type_name(dtype)})" if dtype is not None else "")
            raise a.fail(f"dtype {shown} is not a numeric or bool type")
        return [tensor(dtype, a.shape("input"))]

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """No gradient flows: the result depends on the input's shape only (a true zero gradient)."""
        return [None]


INDEXING_OPS: list = [
    GatherElementsOp,
    GatherNDOp,
    ScatterElementsOp,
    ScatterNDOp,
    TileOp,
    TriluOp,
    OneHotOp,
    EyeLikeOp,
]

# The family's operands whose values decide result shapes, in the one table of them.
shape_like_operands.update({TileOp: ("repeats",), OneHotOp: ("depth",)})

__all__ = [
    "GatherElementsOp",
    "GatherNDOp",
    "ScatterElementsOp",
    "ScatterNDOp",
    "TileOp",
    "TriluOp",
    "OneHotOp",
    "EyeLikeOp",
    "INDEXING_OPS",
    "REDUCTIONS",
]
