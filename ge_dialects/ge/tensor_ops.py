"""Data-movement and shape ops: transpose, reshape, concat, split, slice, gather, cast, pad, ...

Several of these ops take shape-like operands (a target shape, axes, slice bounds, pads) whose
VALUES decide the result shape. When such an operand is a visible constant the shape functions
compute exact dims; otherwise they still know the result rank and leave the dims unknown.
The pure shape rules below (`reshape_dims`, `slice_bounds`, `split_sizes`, ...) are shared with
the kernels, so the compiler and the interpreter cannot disagree on a shape.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType, i1, i32, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import Pure

from ge.ge_dialects.ge.base import GeOp, InferArgs, IntProp, IntsProp, StrProp, constant_value, describe
from ge.ge_dialects.ge.constant import dense_from_numpy, numpy_from_dense
from ge.ge_dialects.ge.elementwise import broadcast_shapes
from ge.ge_dialects.ge.facts import (
    Broadcasting,
    Carries,
    CopiesElements,
    Elementwise,
    Engine,
    MovesData,
    Reduction,
    Reshapes,
    RunsOn,
    StorageFormats,
)
from ge.ge_dialects.ge.grad import GradBuilder, NotDifferentiable, static_shape
from ge.ge_dialects.ge.layout import FRACTAL_NZ, NC1HWC0, whole_channel_blocks
from ge.ge_dialects.ge.symbolic import Dim
from ge.ge_dialects.ge.types import (
    ELEMENT_TYPES,
    NUMERIC_TYPES,
    Shape,
    format_of,
    is_float,
    numpy_dtype,
    reduction_ratio,
    shape_of,
    tensor,
    tensor_type_of,
    type_name,
)

INDEX_TYPES = (i64, i32)


class ShapeError(ValueError):
    """A shape rule of an op is violated; the message names the problem and the values."""


def _reports_shape_errors(infer: Callable) -> Callable:
    """Turns the ShapeErrors of the shared shape rules into verifier errors naming the op."""

    @functools.wraps(infer)
    def run(cls, a: InferArgs) -> list[TensorType]:
        try:
            return infer(cls, a)
        except ShapeError as e:
            raise a.fail(str(e)) from None

    return run


# -- shared shape rules (used by the shape functions and the kernels) ----------------------------


def normalize_axes(axes: Sequence[int], rank: int, what: str = "axis") -> list[int]:
    """Axes made non-negative; each must lie in [-rank, rank-1] and appear once."""
    out = []
    for axis in axes:
        if not -rank <= axis < rank:
            raise ShapeError(f"{what} {axis} is out of range for rank {rank}")
        out.append(axis + rank if axis < 0 else axis)
    if len(set(out)) != len(out):
        raise ShapeError(f"axes {list(axes)} name an axis twice")
    return out


def _product(dims: Sequence[int | None]) -> int | None:
    return None if any(d is None for d in dims) else math.prod(dims)


def reshape_dims(source: Shape, target: Sequence[int], allowzero: bool) -> Shape:
    """Reshape's result shape: 0 copies the input dim (unless allowzero), one -1 is inferred."""
    if target.count(-1) > 1:
        raise ShapeError(f"shape {list(target)} has more than one -1")
    if any(d < -1 for d in target):
        raise ShapeError(f"shape {list(target)} has a negative dimension other than -1")
    if allowzero and 0 in target and -1 in target:
        raise ShapeError(f"shape {list(target)} has both 0 and -1 while allowzero is 1")
    dims: list[int | None] = []
    copied = set()
    for i, d in enumerate(target):
        if d == 0 and not allowzero:
            if i >= len(source):
                raise ShapeError(f"shape {list(target)} copies dimension {i}, but the input has rank {len(source)}")
            dims.append(source[i])
            copied.add(i)
        else:
            dims.append(d)
    total = _product(source)
    if -1 not in dims:
        known = _product(dims)
        if total is not None and known is not None and known != total:
            raise ShapeError(f"cannot reshape {total} elements into {list(target)}")
        return tuple(dims)
    # Elements left for -1: the input's dims minus those copied one for one by 0s.
    rest = _product([d for i, d in enumerate(source) if i not in copied])
    others = _product([d for i, d in enumerate(dims) if d != -1 and i not in copied])
    inferred = None
    if rest is not None and others is not None:
        if others == 0 or rest % others:
            count = total if total is not None else rest
            raise ShapeError(f"cannot reshape {count} elements into {list(target)}")
        inferred = rest // others
    return tuple(inferred if d == -1 else d for d in dims)


def flatten_dims(source: Shape, axis: int) -> Shape:
    """Flatten's 2-D result: the dims before `axis` and the dims from `axis` on, multiplied."""
    rank = len(source)
    if not -rank <= axis <= rank:
        raise ShapeError(f"axis {axis} is out of range for rank {rank} (Flatten allows [-{rank}, {rank}])")
    axis = axis + rank if axis < 0 else axis
    return (_product(source[:axis]), _product(source[axis:]))


def slice_bounds(
    dims: Shape,
    starts: Sequence[int],
    ends: Sequence[int],
    axes: Sequence[int] | None,
    steps: Sequence[int] | None,
) -> dict[int, tuple[int, int, int] | None]:
    """Per sliced axis, the (start, end, step) after the spec's clamping, or None when the axis
    size is unknown. For negative steps `end` may be -1 (= before element 0)."""
    rank = len(dims)
    axes = list(range(len(starts))) if axes is None else list(axes)
    steps = [1] * len(starts) if steps is None else list(steps)
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise ShapeError(
            f"starts, ends, axes and steps must have one length, got {len(starts)}, {len(ends)}, "
            f"{len(axes)} and {len(steps)}"
        )
    bounds: dict[int, tuple[int, int, int] | None] = {}
    for axis, start, end, step in zip(normalize_axes(axes, rank), starts, ends, steps):
        if step == 0:
            raise ShapeError(f"step 0 on axis {axis} is invalid")
        dim = dims[axis]
        if dim is None:
            bounds[axis] = None
            continue
        start = start + dim if start < 0 else start
        end = end + dim if end < 0 else end
        if step > 0:
            start, end = min(max(start, 0), dim), min(max(end, 0), dim)
        else:
            start, end = min(max(start, 0), dim - 1), min(max(end, -1), dim - 1)
        bounds[axis] = (start, end, step)
    return bounds


def slice_length(start: int, end: int, step: int) -> int:
    return max(0, -(-(end - start) // step))


def concat_dims(shapes: Sequence[Shape], axis: int) -> Shape:
    """Concat's result: sizes along `axis` add up, every other dim must agree (unknown ones adapt)."""
    sizes = [s[axis] for s in shapes]
    out = list(shapes[0])
    out[axis] = None if None in sizes else sum(sizes)
    for dim in (d for d in range(len(out)) if d != axis):
        known = [(i, s[dim]) for i, s in enumerate(shapes) if s[dim] is not None]
        for i, size in known[1:]:
            if size != known[0][1]:
                raise ShapeError(
                    f"concat inputs {known[0][0]} and {i} differ in dimension {dim}: {known[0][1]} vs {size}"
                )
        out[dim] = known[0][1] if known else None
    return tuple(out)


def split_sizes(dim: int | None, split: Sequence[int] | None, num_outputs: int | None, count: int) -> list[int | None]:
    """Sizes of Split's `count` parts: the `split` operand, else `num_outputs` parts of
    ceil(dim / num_outputs) with a smaller last part, else `count` equal parts."""
    if split is not None:
        if num_outputs is not None:
            raise ShapeError("split and num_outputs must not both be given")
        if len(split) != count:
            raise ShapeError(f"split {list(split)} has {len(split)} sizes for {count} outputs")
        if any(s < 0 for s in split):
            raise ShapeError(f"split {list(split)} has a negative size")
        if dim is not None and sum(split) != dim:
            raise ShapeError(f"split {list(split)} sums to {sum(split)}, but the dimension is {dim}")
        return list(split)
    if num_outputs is not None:
        if num_outputs < 1:
            raise ShapeError(f"num_outputs must be positive, got {num_outputs}")
        if num_outputs != count:
            raise ShapeError(f"num_outputs {num_outputs} does not match the {count} results")
        if dim is None:
            return [None] * count
        chunk = -(-dim // count)
        last = dim - chunk * (count - 1)
        if last < 0:
            raise ShapeError(f"cannot split dimension {dim} into {count} parts of {chunk}")
        return [chunk] * (count - 1) + [last]
    if dim is None:
        return [None] * count
    if dim % count:
        raise ShapeError(f"cannot split dimension {dim} into {count} equal parts")
    return [dim // count] * count


def pad_widths(rank: int, pads: Sequence[int], axes: Sequence[int] | None) -> list[tuple[int, int]]:
    """(before, after) per axis of the input from Pad's `pads` and optional `axes`."""
    axes = list(range(rank)) if axes is None else normalize_axes(axes, rank)
    if len(pads) != 2 * len(axes):
        raise ShapeError(f"pads {list(pads)} must have 2 * {len(axes)} values")
    widths = [(0, 0)] * rank
    for i, axis in enumerate(axes):
        widths[axis] = (pads[i], pads[i + len(axes)])
    return widths


def shape_range(rank: int, start: int, end: int | None) -> tuple[int, int]:
    """Shape's [start, end) after adding the rank to negatives and clamping to [0, rank]."""

    def clamp(axis: int) -> int:
        return min(max(axis + rank if axis < 0 else axis, 0), rank)

    return clamp(start), clamp(rank if end is None else end)


def reduced_dims(source: Shape, axes: Sequence[int] | None, keepdims: bool, noop_with_empty_axes: bool) -> Shape:
    """ReduceMean's result: the `axes` (all when empty, none if noop_with_empty_axes) reduced."""
    if not axes:
        if noop_with_empty_axes:
            return tuple(source)
        axes = range(len(source))
    reduced = set(normalize_axes(list(axes), len(source)))
    if keepdims:
        return tuple(1 if i in reduced else d for i, d in enumerate(source))
    return tuple(d for i, d in enumerate(source) if i not in reduced)


def unsqueezed_dims(source: Shape, axes: Sequence[int]) -> Shape:
    """Unsqueeze's result: size-1 dims inserted at `axes` (positions in the result)."""
    inserted = set(normalize_axes(axes, len(source) + len(axes)))
    rest = iter(source)
    return tuple(1 if i in inserted else next(rest) for i in range(len(source) + len(axes)))


def squeezed_dims(source: Shape, axes: Sequence[int] | None) -> Shape:
    """Squeeze's result: `axes` (each of size 1) removed, or every size-1 dim when absent or empty."""
    if not axes:
        if any(d is None for d in source):
            raise ShapeError(f"squeezing without axes needs static dims, got {_show(source)}")
        return tuple(d for d in source if d != 1)
    removed = set(normalize_axes(axes, len(source)))
    for axis in sorted(removed):
        if source[axis] not in (1, None):
            raise ShapeError(f"cannot squeeze axis {axis} of size {source[axis]}")
    return tuple(d for i, d in enumerate(source) if i not in removed)


def _show(shape: Shape) -> str:
    return "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"


# -- ONNX data types (Cast) ----------------------------------------------------------------------

_ONNX_TYPE_SPELLINGS = {
    1: "f32",
    10: "f16",
    16: "bf16",
    11: "f64",
    7: "i64",
    6: "i32",
    5: "i16",
    3: "i8",
    2: "ui8",
    4: "ui16",
    12: "ui32",
    13: "ui64",
    9: "i1",
    17: "f8E4M3FN",
    18: "f8E4M3FNUZ",
    19: "f8E5M2",
    20: "f8E5M2FNUZ",
    21: "ui4",
    22: "i4",
    23: "f4E2M1FN",
    24: "f8E8M0FNU",
    25: "ui2",
    26: "i2",
}

#: ONNX TensorProto data type number -> ge element type, for the types ge has.
ONNX_ELEMENT_TYPES: dict[int, Attribute] = {
    number: ELEMENT_TYPES[spelling] for number, spelling in _ONNX_TYPE_SPELLINGS.items() if spelling in ELEMENT_TYPES
}

#: How a cast to f8E8M0FNU rounds (ONNX's `round_mode`): away from zero, toward zero, to nearest.
CAST_ROUND_MODES = ("up", "down", "nearest")

_ONNX_TYPE_NAMES = {
    0: "UNDEFINED",
    1: "FLOAT",
    2: "UINT8",
    3: "INT8",
    4: "UINT16",
    5: "INT16",
    6: "INT32",
    7: "INT64",
    8: "STRING",
    9: "BOOL",
    10: "FLOAT16",
    11: "DOUBLE",
    12: "UINT32",
    13: "UINT64",
    14: "COMPLEX64",
    15: "COMPLEX128",
    16: "BFLOAT16",
    17: "FLOAT8E4M3FN",
    18: "FLOAT8E4M3FNUZ",
    19: "FLOAT8E5M2",
    20: "FLOAT8E5M2FNUZ",
    21: "UINT4",
    22: "INT4",
    23: "FLOAT4E2M1",
    24: "FLOAT8E8M0",
    25: "UINT2",
    26: "INT2",
}


# -- helpers of the shape functions --------------------------------------------------------------


def _static_length(a: InferArgs, name: str) -> int:
    """The number of values of a 1-D shape-like operand; it fixes the rank of the result."""
    shape = a.shape(name)
    if len(shape) != 1:
        raise a.fail(f"operand '{name}' must be 1-D, got rank {len(shape)}")
    if shape[0] is None:
        raise a.fail(f"operand '{name}' needs a static length to give the result a known rank")
    return shape[0]


def _shape_operand(a: InferArgs, name: str, allowed=(i64,)) -> list[int] | None:
    """Checks a 1-D integer shape-like operand; its values if visible, else None."""
    a.expect_dtype(name, allowed)
    _static_length(a, name)
    return a.const_ints(name)


def _optional_axes(a: InferArgs, name: str = "axes", allowed=(i64,)) -> tuple[bool, list[int] | None]:
    """(known, axes) of an optional axes operand: known with None when absent, known with the
    values when constant or empty, unknown otherwise."""
    if not a.has(name):
        return True, None
    values = _shape_operand(a, name, allowed)
    if values is None and _static_length(a, name) == 0:
        values = []
    return values is not None, values


def _axes_count(a: InferArgs, rank: int) -> int:
    """How many axes a runtime `axes` operand names; more than the rank cannot be distinct."""
    count = _static_length(a, "axes")
    if count > rank:
        raise a.fail(f"operand 'axes' has {count} values, but the input has rank {rank}")
    return count


def _format_if_same_rank(a: InferArgs, name: str, rank: int):
    return a.fmt(name) if a.rank(name) == rank else None


# -- ops -----------------------------------------------------------------------------------------


@irdl_op_definition
class TransposeOp(GeOp):
    """Permutes the axes; `perm` defaults to reversing them."""

    name = "ge.transpose"
    ONNX: ClassVar = ("Transpose",)
    DATA_OPERANDS: ClassVar = ("data",)
    data = operand_def(TensorType)
    transposed = result_def(TensorType)
    perm = opt_prop_def(IntsProp)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR), CopiesElements(), MovesData())

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        shape = a.shape("data")
        perm = cls.permutation(a.prop("perm"), len(shape))
        if sorted(perm) != list(range(len(shape))):
            raise a.fail(f"perm {perm} is not a permutation of {len(shape)} axes")
        return [tensor(a.dtype("data"), [shape[p] for p in perm])]

    @staticmethod
    def permutation(perm: list[int] | None, rank: int) -> list[int]:
        return list(range(rank - 1, -1, -1)) if perm is None else perm

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """dy transposed back by the inverse permutation."""
        (dy,) = cotangents
        if dy is None:
            return [None]
        perm = self.permutation(self.p("perm"), len(static_shape(self.data)))
        return [g.transpose(dy, [int(i) for i in np.argsort(perm)])]


@irdl_op_definition
class ReshapeOp(GeOp):
    """Reshape to the `shape` operand: 0 copies the input dim unless allowzero=1, -1 is inferred."""

    name = "ge.reshape"
    ONNX: ClassVar = ("Reshape",)
    DATA_OPERANDS: ClassVar = ("data",)
    data = operand_def(TensorType)
    shape = operand_def(TensorType)
    reshaped = result_def(TensorType)
    allowzero = opt_prop_def(IntProp)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR), CopiesElements(), MovesData(), Reshapes())
    DEFAULTS: ClassVar = {"allowzero": 0}
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"shape"})

    @classmethod
    @_reports_shape_errors
    def infer(cls, a: InferArgs) -> list[TensorType]:
        target = _shape_operand(a, "shape")
        if target is None:
            return [tensor(a.dtype("data"), [None] * _static_length(a, "shape"))]
        return [tensor(a.dtype("data"), reshape_dims(a.shape("data"), target, bool(a.prop("allowzero"))))]

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """dy reshaped back to the data's shape."""
        (dy,) = cotangents
        return [None if dy is None else g.reshape(dy, static_shape(self.data)), None]


@irdl_op_definition
class FlattenOp(GeOp):
    """Flattens to 2-D: the dims before `axis` and the dims from `axis` on."""

    name = "ge.flatten"
    ONNX: ClassVar = ("Flatten",)
    DATA_OPERANDS: ClassVar = ("input",)
    input = operand_def(TensorType)
    output = result_def(TensorType)
    axis = opt_prop_def(IntProp)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR), CopiesElements(), MovesData(), Reshapes())
    DEFAULTS: ClassVar = {"axis": 1}

    @classmethod
    @_reports_shape_errors
    def infer(cls, a: InferArgs) -> list[TensorType]:
        return [tensor(a.dtype("input"), flatten_dims(a.shape("input"), a.prop("axis")))]

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """dy reshaped back to the input's shape."""
        (dy,) = cotangents
        return [None if dy is None else g.reshape(dy, static_shape(self.input))]


@irdl_op_definition
class ConcatOp(GeOp):
    """Joins its inputs along `axis`; all other dims must agree."""

    name = "ge.concat"
    ONNX: ClassVar = ("Concat",)
    DATA_OPERANDS: ClassVar = ("inputs",)
    inputs = var_operand_def(TensorType)
    concat_result = result_def(TensorType)
    axis = opt_prop_def(IntProp)
    traits = traits_def(
        Pure(),
        RunsOn(Engine.VECTOR),
        MovesData(),
        whole_channel_blocks(
            "concat-channels", "inputs", "concat_result", "channel_blocks", "along_concat_axis", all_arrive=True
        ),
    )

    @classmethod
    @_reports_shape_errors
    def infer(cls, a: InferArgs) -> list[TensorType]:
        values = a.values("inputs")
        if not values:
            raise a.fail("needs at least one input")
        if a.prop("axis") is None:
            raise a.fail("property 'axis' is required")
        types = [tensor_type_of(v) for v in values]
        shapes = [shape_of(t) for t in types]
        for i, t in enumerate(types[1:], 1):
            if t.element_type != types[0].element_type:
                raise a.fail(
                    f"concat inputs 0 and {i} have element types {type_name(types[0].element_type)} "
                    f"and {type_name(t.element_type)}"
                )
            if len(shapes[i]) != len(shapes[0]):
                raise a.fail(f"concat inputs 0 and {i} have ranks {len(shapes[0])} and {len(shapes[i])}")
        out = concat_dims(shapes, a.normalize_axis(a.prop("axis"), len(shapes[0])))
        return [tensor(types[0].element_type, out, format_of(types[0]))]

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """dy split back into the inputs' sizes along the axis (one ge.split)."""
        (dy,) = cotangents
        if dy is None:
            return [None] * len(self.inputs)
        shapes = [static_shape(v) for v in self.inputs]
        if len(shapes) == 1:
            return [dy]
        axis = normalize_axes([self.p("axis")], len(shapes[0]))[0]
        sizes = g.ints([shape[axis] for shape in shapes])
        return list(g.emit(SplitOp, {"input": dy, "split": sizes}, {"axis": axis}, num_results=len(shapes)).results)


@irdl_op_definition
class SplitOp(GeOp):
    """Splits along `axis` into as many results as the op has (sizes from `split` or `num_outputs`)."""

    name = "ge.split"
    ONNX: ClassVar = ("Split",)
    DATA_OPERANDS: ClassVar = ("input",)
    input = operand_def(TensorType)
    split = opt_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    axis = opt_prop_def(IntProp)
    num_outputs = opt_prop_def(IntProp)
    traits = traits_def(
        Pure(),
        RunsOn(Engine.VECTOR),
        MovesData(),
        whole_channel_blocks("split-channels", "input", "outputs", "split_channel_blocks", "along_split_axis"),
    )
    DEFAULTS: ClassVar = {"axis": 0}
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"split"})

    @classmethod
    @_reports_shape_errors
    def infer(cls, a: InferArgs) -> list[TensorType]:
        shape = a.shape("input")
        if not shape:  # normalize_axis lets axis 0 through for rank 0 (ops that take scalars); a split has no dim
            raise a.fail("cannot split a rank-0 tensor")
        axis = a.normalize_axis(a.prop("axis"), len(shape))
        count = a.num_results
        if count < 1:
            raise a.fail("needs at least one result")
        if a.has("split"):
            split = _shape_operand(a, "split")
            if split is None:
                if a.prop("num_outputs") is not None:
                    raise a.fail("split and num_outputs must not both be given")
                if _static_length(a, "split") != count:
                    raise a.fail(f"split has {_static_length(a, 'split')} sizes for {count} outputs")
                sizes: list[int | None] = [None] * count
            else:
                sizes = split_sizes(shape[axis], split, a.prop("num_outputs"), count)
        else:
            sizes = split_sizes(shape[axis], None, a.prop("num_outputs"), count)
        fmt = a.fmt("input")
        return [tensor(a.dtype("input"), shape[:axis] + (size,) + shape[axis + 1 :], fmt) for size in sizes]

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """The results' cotangents concatenated along the axis, zeros for a result without one."""
        from ge.ge_dialects.ge.tensor_grad import operand_cotangents

        if all(ct is None for ct in cotangents):
            return operand_cotangents(self)
        parts = [g.zeros(r) if ct is None else ct for ct, r in zip(cotangents, self.outputs)]
        if len(parts) == 1:
            return operand_cotangents(self, input=parts[0])
        axis = normalize_axes([self.p("axis")], len(static_shape(self.input)))[0]
        return operand_cotangents(self, input=g.value(ConcatOp, {"inputs": parts}, {"axis": axis}))


@irdl_op_definition
class SliceOp(GeOp):
    """numpy-style slicing with `starts`, `ends`, optional `axes` and `steps` operands."""

    name = "ge.slice"
    ONNX: ClassVar = ("Slice",)
    DATA_OPERANDS: ClassVar = ("data",)
    data = operand_def(TensorType)
    starts = operand_def(TensorType)
    ends = operand_def(TensorType)
    axes = opt_operand_def(TensorType)
    steps = opt_operand_def(TensorType)
    output = result_def(TensorType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(
        Pure(),
        RunsOn(Engine.VECTOR),
        CopiesElements(),
        MovesData(),
        whole_channel_blocks("slice-channels", "data", "output", "slice_channel_blocks", "same_rank"),
    )
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"starts", "ends", "axes", "steps"})

    @classmethod
    @_reports_shape_errors
    def infer(cls, a: InferArgs) -> list[TensorType]:
        dims = a.shape("data")
        index_type = a.expect_dtype("starts", INDEX_TYPES)
        operands = [n for n in ("starts", "ends", "axes", "steps") if a.has(n)]
        for name in operands:
            a.expect_dtype(name, (index_type,), " (all of starts, ends, axes and steps share one type)")
        lengths = {name: _static_length(a, name) for name in operands}
        if len(set(lengths.values())) > 1:
            shown = ", ".join(f"{n} {k}" for n, k in lengths.items())
            raise a.fail(f"starts, ends, axes and steps must have one length, got {shown}")
        values = {name: a.const_ints(name) for name in operands}
        out: list[int | None] = list(dims)
        if a.has("axes") and values["axes"] is None:
            out = [None] * len(dims)
        elif any(v is None for v in values.values()):
            for axis in normalize_axes(values.get("axes") or range(lengths["starts"]), len(dims)):
                out[axis] = None
        else:
            bounds = slice_bounds(dims, values["starts"], values["ends"], values.get("axes"), values.get("steps"))
            for axis, bound in bounds.items():
                out[axis] = None if bound is None else slice_length(*bound)
        return [tensor(a.dtype("data"), out, a.fmt("data"))]

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """Zeros of the data's shape with dy at the positions the slice read (any steps, negative
        ones included); the bounds must be constants."""
        from ge.ge_dialects.ge.tensor_grad import operand_cotangents, required_constants, strided_scatter

        (dy,) = cotangents
        if dy is None:
            return operand_cotangents(self)
        v = required_constants(self, ["starts", "ends", "axes", "steps"])
        assert v["starts"] is not None and v["ends"] is not None  # required operands
        bounds = slice_bounds(static_shape(self.data), v["starts"], v["ends"], v["axes"], v["steps"])
        return operand_cotangents(self, data=strided_scatter(g, dy, self.data, bounds))


@irdl_op_definition
class GatherOp(GeOp):
    """Takes entries of `data` along `axis` at `indices` (negative indices count from the end)."""

    name = "ge.gather"
    ONNX: ClassVar = ("Gather",)
    DATA_OPERANDS: ClassVar = ("data",)
    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    output = result_def(TensorType)
    axis = opt_prop_def(IntProp)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR), CopiesElements(), MovesData())
    DEFAULTS: ClassVar = {"axis": 0}
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"indices"})

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        shape = a.shape("data")
        if not shape:
            raise a.fail("operand 'data' must have rank 1 or more, got rank 0")
        a.expect_dtype("indices", INDEX_TYPES)
        axis = a.normalize_axis(a.prop("axis"), len(shape))
        out = shape[:axis] + a.shape("indices") + shape[axis + 1 :]
        return [tensor(a.dtype("data"), out, _format_if_same_rank(a, "data", len(out)))]

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """One ge.gather_grad: dy's rows added into zeros of the data's shape at their indices."""
        from ge.ge_dialects.ge.tensor_grad import GatherGradOp

        (dy,) = cotangents
        if dy is None:
            return [None, None]
        props = {"axis": self.p("axis"), "data_shape": static_shape(self.data)}
        return [g.value(GatherGradOp, {"dy": dy, "indices": self.indices}, props), None]


@irdl_op_definition
class UnsqueezeOp(GeOp):
    """Inserts size-1 dims at `axes` (positions in the result)."""

    name = "ge.unsqueeze"
    ONNX: ClassVar = ("Unsqueeze",)
    DATA_OPERANDS: ClassVar = ("data",)
    data = operand_def(TensorType)
    axes = operand_def(TensorType)
    expanded = result_def(TensorType)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR), CopiesElements(), MovesData(), Reshapes())
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"axes"})

    @classmethod
    @_reports_shape_errors
    def infer(cls, a: InferArgs) -> list[TensorType]:
        shape = a.shape("data")
        axes = _shape_operand(a, "axes")
        rank = len(shape) + _static_length(a, "axes")
        if axes is None:
            return [tensor(a.dtype("data"), [None] * rank)]
        return [tensor(a.dtype("data"), unsqueezed_dims(shape, axes))]

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """dy reshaped back to the data's shape."""
        (dy,) = cotangents
        return [None if dy is None else g.reshape(dy, static_shape(self.data)), None]


@irdl_op_definition
class SqueezeOp(GeOp):
    """Removes size-1 dims: those at `axes`, or all of them when `axes` is absent."""

    name = "ge.squeeze"
    ONNX: ClassVar = ("Squeeze",)
    DATA_OPERANDS: ClassVar = ("data",)
    data = operand_def(TensorType)
    axes = opt_operand_def(TensorType)
    squeezed = result_def(TensorType)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR), CopiesElements(), MovesData(), Reshapes())
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"axes"})

    @classmethod
    @_reports_shape_errors
    def infer(cls, a: InferArgs) -> list[TensorType]:
        shape = a.shape("data")
        known, axes = _optional_axes(a)
        if not known:
            return [tensor(a.dtype("data"), [None] * (len(shape) - _axes_count(a, len(shape))))]
        return [tensor(a.dtype("data"), squeezed_dims(shape, axes))]

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """dy reshaped back to the data's shape."""
        from ge.ge_dialects.ge.tensor_grad import operand_cotangents

        (dy,) = cotangents
        return operand_cotangents(self, data=None if dy is None else g.reshape(dy, static_shape(self.data)))


class ReduceOp(GeOp):
    """A reduction over `axes` (all axes when absent or empty, unless noop_with_empty_axes=1),
    ONNX opset 18 style: the axes are an operand."""

    data = operand_def(TensorType)
    axes = opt_operand_def(TensorType)
    reduced = result_def(TensorType)
    keepdims = opt_prop_def(IntProp)
    noop_with_empty_axes = opt_prop_def(IntProp)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR), Reduction())
    DEFAULTS: ClassVar = {"keepdims": 1, "noop_with_empty_axes": 0}
    TYPES: ClassVar[tuple[Attribute, ...]] = NUMERIC_TYPES
    """The element types the data may have."""

    @classmethod
    @_reports_shape_errors
    def infer(cls, a: InferArgs) -> list[TensorType]:
        dtype = a.expect_dtype("data", cls.TYPES)
        shape = a.shape("data")
        keepdims = bool(a.prop("keepdims"))
        known, axes = _optional_axes(a)
        if not known:
            rank = len(shape) if keepdims else len(shape) - _axes_count(a, len(shape))
            return [tensor(dtype, [None] * rank)]
        out = reduced_dims(shape, axes, keepdims, bool(a.prop("noop_with_empty_axes")))
        return [tensor(dtype, out, _format_if_same_rank(a, "data", len(out)))]

    def reduced_row_elements(self) -> int:
        return reduction_ratio(self.data, self.reduced)


REDUCTION_FORMATS = StorageFormats(
    Carries("reduce-spatial", (NC1HWC0,), ("data",), ("reduced",), full_shape="keeps_channels"),
    Carries("reduce-nz", (FRACTAL_NZ,), ("data",), ("reduced",), (("keeps_last_axis",),), "leaves_matrix"),
)
"""A sum or mean keeps each C0 lane apart when it reduces an image's H and W (NC1HWC0) or any axes
of a matrix but the last (FRACTAL_NZ: rows of fractals, or whole fractals, summed)."""


@irdl_op_definition
class ReduceMeanOp(ReduceOp):
    """Mean over `axes`."""

    name = "ge.reduce_mean"
    traits = traits_def(REDUCTION_FORMATS)
    ONNX: ClassVar = ("ReduceMean",)
    PRECISION: ClassVar = "black"  # ReduceMeanD: false (a long sum)
    DATA_OPERANDS: ClassVar = ("data",)
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"axes"})

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """dy over the count of reduced elements, expanded back over the reduced dims."""
        from ge.ge_dialects.ge.tensor_grad import operand_cotangents, reduce_cotangent

        (dy,) = cotangents
        return operand_cotangents(self, data=None if dy is None else reduce_cotangent(g, self, dy, mean=True))


@irdl_op_definition
class ReduceSumOp(ReduceOp):
    """Sum over `axes`; the backward graph's reduction (a broadcast operand's gradient, a bias's)."""

    name = "ge.reduce_sum"
    traits = traits_def(REDUCTION_FORMATS)
    ONNX: ClassVar = ("ReduceSum",)
    PRECISION: ClassVar = "black"  # ReduceSumD: false (a long sum)
    DATA_OPERANDS: ClassVar = ("data",)
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"axes"})

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """dy expanded back over the reduced dims."""
        from ge.ge_dialects.ge.tensor_grad import operand_cotangents, reduce_cotangent

        (dy,) = cotangents
        return operand_cotangents(self, data=None if dy is None else reduce_cotangent(g, self, dy, mean=False))


@irdl_op_definition
class CastOp(GeOp):
    """Converts to the element type `to` (an ONNX TensorProto data type number).

    Any ge element type converts to any other, the narrow storage types (float8, float4, int4,
    int2) included. `saturate` (0 or 1) only matters for float8 results: 1 clamps out-of-range
    values and infinities to the largest finite value, 0 lets them overflow to inf or NaN as the
    format has them. `round_mode` ("up", "down" or "nearest") only matters for f8E8M0FNU results.
    """

    name = "ge.cast"
    ONNX: ClassVar = ("Cast",)
    PRECISION: ClassVar = "keep"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    to = opt_prop_def(IntProp)
    saturate = opt_prop_def(IntProp)
    round_mode = opt_prop_def(StrProp)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR), Elementwise())
    DEFAULTS: ClassVar = {"saturate": 1, "round_mode": "up"}

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        to = a.prop("to")
        if to is None:
            raise a.fail("property 'to' is required")
        if to not in ONNX_ELEMENT_TYPES:
            raise a.fail(f"Cast to data type {to} ({_ONNX_TYPE_NAMES.get(to, 'unknown')}) is not supported")
        if a.prop("saturate") not in (0, 1):
            raise a.fail(f"saturate must be 0 or 1, got {a.prop('saturate')}")
        if a.prop("round_mode") not in CAST_ROUND_MODES:
            raise a.fail(f"round_mode must be one of {', '.join(CAST_ROUND_MODES)}, got '{a.prop('round_mode')}'")
        return [tensor(ONNX_ELEMENT_TYPES[to], a.shape("input"), a.fmt("input"))]

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """dy cast back to the input's type. Nothing flows through an integer end: an integer input
        takes no cotangent, and a float -> integer cast is piecewise constant (zero gradient)."""
        (dy,) = cotangents
        floats = all(is_float(tensor_type_of(v).element_type) for v in (self.input, self.output))
        return [g.cast_like(dy, self.input) if dy is not None and floats else None]


@irdl_op_definition
class WhereOp(GeOp):
    """Picks X where `condition` holds, else Y; all three broadcast."""

    name = "ge.where"
    ONNX: ClassVar = ("Where",)
    DATA_OPERANDS: ClassVar = ("X", "Y")
    condition = operand_def(TensorType)
    X = operand_def(TensorType)
    Y = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR), Elementwise(), Broadcasting())
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"condition"})

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        a.expect_dtype("condition", (i1,))
        dtype = a.expect_same_dtype("X", "Y")
        shape = broadcast_shapes(a, a.shape("condition"), a.shape("X"), a.shape("Y"))
        return [tensor(dtype, shape, _format_if_same_rank(a, "X", len(shape)))]

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """dy where the condition picked X (else 0) for X, the rest for Y, each summed back to its
        operand's shape."""
        (dy,) = cotangents
        if dy is None:
            return [None, None, None]
        zero = g.scalar(0.0, dy)
        picked = g.value(WhereOp, {"condition": self.condition, "X": dy, "Y": zero})
        rest = g.value(WhereOp, {"condition": self.condition, "X": zero, "Y": dy})
        return [None, g.sum_to(picked, static_shape(self.X)), g.sum_to(rest, static_shape(self.Y))]


@irdl_op_definition
class ExpandOp(GeOp):
    """Broadcasts `input` with the `shape` operand (bidirectionally, like numpy)."""

    name = "ge.expand"
    ONNX: ClassVar = ("Expand",)
    DATA_OPERANDS: ClassVar = ("input",)
    input = operand_def(TensorType)
    shape = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR), CopiesElements(), MovesData(), Broadcasting())
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"shape"})

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        source = a.shape("input")
        target = _shape_operand(a, "shape")
        if target is None:
            rank = max(len(source), _static_length(a, "shape"))
            padded = (1,) * (rank - len(source)) + source
            out: Shape = tuple(d if d is not None and d != 1 else None for d in padded)
        else:
            if any(d < 0 for d in target):
                raise a.fail(f"shape {target} has a negative dimension")
            out = broadcast_shapes(a, source, tuple(target))
        return [tensor(a.dtype("input"), out, _format_if_same_rank(a, "input", len(out)))]

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """dy summed back over the dims the broadcast added or stretched."""
        (dy,) = cotangents
        return [None if dy is None else g.sum_to(dy, static_shape(self.input)), None]


@irdl_op_definition
class ShapeOp(GeOp):
    """The input's dims [start, end) as a 1-D i64 tensor."""

    name = "ge.shape"
    ONNX: ClassVar = ("Shape",)
    PRECISION: ClassVar = "keep"
    data = operand_def(TensorType)
    shape = result_def(TensorType)
    start = opt_prop_def(IntProp)
    end = opt_prop_def(IntProp)
    traits = traits_def(Pure(), RunsOn(Engine.AICPU))
    DEFAULTS: ClassVar = {"start": 0}
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"data"})

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        start, end = shape_range(a.rank("data"), a.prop("start"), a.prop("end"))
        return [tensor(i64, [max(0, end - start)])]

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """No gradient flows: the dims do not depend on the data's values (a true zero gradient)."""
        return [None]


@irdl_op_definition
class ConstantOfShapeOp(GeOp):
    """A tensor of the shape given by `input`, filled with the one-element `value` (float32 0)."""

    name = "ge.constant_of_shape"
    ONNX: ClassVar = ("ConstantOfShape",)
    PRECISION: ClassVar = "keep"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    value = opt_prop_def(DenseIntOrFPElementsAttr)
    traits = traits_def(Pure(), RunsOn(Engine.AICPU))
    DEFAULTS: ClassVar = {"value": dense_from_numpy(np.zeros(1, np.float32))}
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"input"})

    @classmethod
    def property_kinds(cls) -> dict[str, str]:
        return {"value": "tensor"}

    @classmethod
    def create(cls, operands=(), props=None, num_results=None, name=None, **generic) -> GeOp:
        """Accepts `value` as a numpy array too (the importer reads ONNX tensors as arrays); with
        xDSL's generic keywords (`clone`) it is `GeOp.create`'s generic form."""
        if generic:
            return super().create(operands, **generic)
        props = dict(props or {})
        value = props.get("value")
        if value is not None and not isinstance(value, Attribute):
            props["value"] = dense_from_numpy(np.asarray(value).reshape(1))
        return super().create(operands, props, num_results, name)

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        value = a.prop("value")
        if math.prod(value.get_shape()) != 1:
            raise a.fail(f"value must hold exactly one element, got {value.type}")
        numpy_dtype(value.get_element_type())
        dims = _shape_operand(a, "input")
        if dims is None:
            return [tensor(value.get_element_type(), [None] * _static_length(a, "input"))]
        if any(d < 0 for d in dims):
            raise a.fail(f"shape {dims} has a negative dimension")
        return [tensor(value.get_element_type(), dims)]

    def fill_value(self) -> np.ndarray:
        """The fill value as a 0-d array of the result's dtype."""
        return numpy_from_dense(self.p("value")).reshape(())

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """No gradient flows: the only operand is an integer shape."""
        return [None]


@irdl_op_definition
class PadOp(GeOp):
    """Pads (or, with negative pads, crops) `data`; modes constant, reflect, edge and wrap."""

    name = "ge.pad"
    ONNX: ClassVar = ("Pad",)
    DATA_OPERANDS: ClassVar = ("data", "constant_value")
    data = operand_def(TensorType)
    pads = operand_def(TensorType)
    constant_value = opt_operand_def(TensorType)
    axes = opt_operand_def(TensorType)
    output = result_def(TensorType)
    mode = opt_prop_def(StrProp)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(
        Pure(),
        RunsOn(Engine.VECTOR),
        StorageFormats(
            Carries(
                "pad-spatial", (NC1HWC0,), ("data",), ("output",), (("pads_spatially",),), full_shape="spatial_only"
            )
        ),
    )
    DEFAULTS: ClassVar = {"mode": "constant"}
    MODES: ClassVar = ("constant", "reflect", "edge", "wrap")
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"pads", "axes"})

    @classmethod
    @_reports_shape_errors
    def infer(cls, a: InferArgs) -> list[TensorType]:
        if a.prop("mode") not in cls.MODES:
            raise a.fail(f'mode "{a.prop("mode")}" is not one of {", ".join(cls.MODES)}')
        dtype, dims, fmt = a.dtype("data"), a.shape("data"), a.fmt("data")
        if a.has("constant_value"):
            a.expect_same_dtype("data", "constant_value")
            if math.prod(d or 0 for d in a.shape("constant_value")) > 1:
                raise a.fail(f"constant_value must be a scalar, got shape {_show(a.shape('constant_value'))}")
        pads = _shape_operand(a, "pads")
        known_axes, axes = _optional_axes(a, allowed=INDEX_TYPES)
        if not known_axes:  # any axis may be padded
            return [tensor(dtype, [None] * len(dims), fmt)]
        padded = range(len(dims)) if axes is None else normalize_axes(axes, len(dims))
        if _static_length(a, "pads") != 2 * len(padded):
            raise a.fail(f"pads has {_static_length(a, 'pads')} values, expected 2 * {len(padded)}")
        if pads is None:
            return [tensor(dtype, [None if i in padded else d for i, d in enumerate(dims)], fmt)]
        out = []
        for i, (d, (before, after)) in enumerate(zip(dims, pad_widths(len(dims), pads, axes))):
            if d is not None and d + before + after < 0:
                raise a.fail(f"pads {pads} make dimension {i} of size {d} negative")
            out.append(None if d is None else d + before + after)
        return [tensor(dtype, out, fmt)]

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """Constant mode: data gets dy with the padding cropped off (the pad with negated widths,
        which also zero-pads back what negative pads cropped); constant_value gets the sum of dy
        over the padded positions. The other modes copy data into the border: refused."""
        from ge.ge_dialects.ge.tensor_grad import operand_cotangents, required_constants

        (dy,) = cotangents
        if dy is None:
            return operand_cotangents(self)
        if self.p("mode") != "constant":
            raise NotDifferentiable(
                f'{describe(self)}: the gradient of mode "{self.p("mode")}" is not built (constant only)'
            )
        v = required_constants(self, ["pads", "axes"])
        assert v["pads"] is not None  # a required operand
        unpad = {"data": dy, "pads": g.ints([-p for p in v["pads"]])}
        if v["axes"] is not None:
            unpad["axes"] = g.ints(v["axes"])
        d_data = g.value(PadOp, unpad)
        if self.constant_value is None:
            return operand_cotangents(self, data=d_data)
        if 0 in static_shape(self.constant_value):  # an empty constant_value pads with 0: it has no effect
            return operand_cotangents(self, data=d_data, constant_value=g.zeros(self.constant_value))
        everything = list(range(len(static_shape(dy))))
        border = g.sub(g.reduce_sum(dy, everything, keepdims=False), g.reduce_sum(d_data, everything, keepdims=False))
        return operand_cotangents(
            self, data=d_data, constant_value=g.reshape(border, static_shape(self.constant_value))
        )


@irdl_op_definition
class RangeOp(GeOp):
    """[start, start + delta, ...) up to `limit` (exclusive); length max(ceil((limit - start) / delta), 0)."""

    name = "ge.range"
    ONNX: ClassVar = ("Range",)
    PRECISION: ClassVar = "keep"
    start = operand_def(TensorType)
    limit = operand_def(TensorType)
    delta = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure(), RunsOn(Engine.AICPU))
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"start", "limit", "delta"})

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        dtype = a.expect_same_dtype("start", "limit", "delta")
        a.expect_dtype("start", NUMERIC_TYPES)
        for n in ("start", "limit", "delta"):
            if a.rank(n) != 0:
                raise a.fail(f"operand '{n}' must be a scalar, got rank {a.rank(n)}")
        values = [a.const(n) for n in ("start", "limit", "delta")]
        known = [v for v in values if v is not None]
        if len(known) < len(values):
            return [tensor(dtype, [None])]
        start, limit, delta = (v.item() for v in known)
        if delta == 0:
            raise a.fail("delta must not be 0")
        return [tensor(dtype, [range_length(start, limit, delta)])]

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """No gradient flows. `limit` only sets the length (piecewise constant). A float range's
        start and delta do move its values, but gradients are built for static shapes and a
        range's length is static only when all three operands are constants, so nothing upstream
        of a range is trainable; a float range of runtime values is refused rather than given a
        silent zero."""
        if cotangents[0] is not None:
            static_shape(self.output)
            if any(constant_value(v) is None for v in self.operands):
                raise NotDifferentiable(
                    f"{describe(self)}: a float range of runtime start, limit or delta has no gradient"
                )
        return [None, None, None]


def range_length(start, limit, delta):
    """The length of [start, limit) in steps of delta; on a symbolic start or limit (an integer
    delta), the expression (Undecided where its sign is)."""
    if isinstance(start, Dim) or isinstance(limit, Dim):
        span = limit - start if delta > 0 else start - limit
        step = abs(int(delta))
        length = span if step == 1 else (span + step - 1) // step
        return length if length >= 0 else 0
    return max(math.ceil((limit - start) / delta), 0)


TENSOR_OPS: list = [
    TransposeOp,
    ReshapeOp,
    FlattenOp,
    ConcatOp,
    SplitOp,
    SliceOp,
    GatherOp,
    UnsqueezeOp,
    SqueezeOp,
    ReduceMeanOp,
    ReduceSumOp,
    CastOp,
    WhereOp,
    ExpandOp,
    ShapeOp,
    ConstantOfShapeOp,
    PadOp,
    RangeOp,
]

#: Per op, the operands whose VALUES decide the result shapes (the importer folds these first).
shape_like_operands: dict[type, tuple[str, ...]] = {
    ReshapeOp: ("shape",),
    SplitOp: ("split",),
    SliceOp: ("starts", "ends", "axes", "steps"),
    UnsqueezeOp: ("axes",),
    SqueezeOp: ("axes",),
    ReduceMeanOp: ("axes",),
    ReduceSumOp: ("axes",),
    ExpandOp: ("shape",),
    ConstantOfShapeOp: ("input",),
    PadOp: ("pads", "axes"),
}

__all__ = [
    "TransposeOp",
    "ReshapeOp",
    "FlattenOp",
    "ConcatOp",
    "SplitOp",
    "SliceOp",
    "GatherOp",
    "UnsqueezeOp",
    "SqueezeOp",
    "ReduceMeanOp",
    "ReduceSumOp",
    "CastOp",
    "WhereOp",
    "ExpandOp",
    "ShapeOp",
    "ConstantOfShapeOp",
    "PadOp",
    "RangeOp",
    "shape_like_operands",
    "ONNX_ELEMENT_TYPES",
    "range_length",
]
