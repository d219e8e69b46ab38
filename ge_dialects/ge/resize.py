"""Resize (ONNX Resize, opsets 13-19 semantics): nearest, linear and cubic interpolation."""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import TensorType, i64
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

from ge.ge_dialects.ge.base import FloatProp, GeOp, InferArgs, IntProp, IntsProp, StrProp
from ge.ge_dialects.ge.facts import Carries, Engine, RunsOn, StorageFormats
from ge.ge_dialects.ge.layout import NC1HWC0
from ge.ge_dialects.ge.types import ALL_TYPES, FLOAT_TYPES, NUMERIC_TYPES, Shape, tensor

RESIZE_MODES = ("nearest", "linear", "cubic")
COORDINATE_MODES = (
    "half_pixel",
    "half_pixel_symmetric",
    "pytorch_half_pixel",
    "align_corners",
    "asymmetric",
    "tf_crop_and_resize",
)
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
ASPECT_POLICIES = ("stretch", "not_larger", "not_smaller")

__all__ = ["ResizeOp", "RESIZE_OPS"]


def scaled_length(length: int, scale: float) -> int:
    """Output length of an axis resized by `scale`: floor(length * scale) in float32, as ONNX
    shape inference and the runtimes compute it (the roi does not enter)."""
    return int(np.floor(np.float32(length) * np.float32(scale)))


def round_half_up(x: float) -> int:
    """The spec's `round_int`: nearest integer, halfway cases up."""
    return math.floor(x + 0.5)


def sizes_with_policy(in_sizes: list[int], sizes: list[int], policy: str) -> tuple[list[int], float | None]:
    """Output lengths of the resized axes given `sizes` and `keep_aspect_ratio_policy`, and the one
    scale every axis shares when the policy keeps the aspect ratio (None for "stretch")."""
    if policy == "stretch":
        return list(sizes), None
    ratios = [s / n for s, n in zip(sizes, in_sizes)]
    scale = min(ratios) if policy == "not_larger" else max(ratios)
    return [round_half_up(scale * n) for n in in_sizes], scale


def resized_axes(axes: list[int] | None, rank: int) -> list[int]:
    """`axes` normalized to non-negative values (all axes when not given)."""
    if axes is None:
        return list(range(rank))
    return [a + rank if a < 0 else a for a in axes]


@irdl_op_definition
class ResizeOp(GeOp):
    """Resizes X along `axes` (default all) to the lengths `sizes` gives, or by `scales`; exactly one
    of the two is given. `roi` only matters for coordinate_transformation_mode tf_crop_and_resize."""

    name = "ge.resize"
    ONNX: ClassVar = ("Resize",)
    NO_GRADIENT: ClassVar = "not built yet"
    DATA_OPERANDS: ClassVar = ("X",)

    X = operand_def(TensorType)
    roi = opt_operand_def(TensorType)
    scales = opt_operand_def(TensorType)
    sizes = opt_operand_def(TensorType)
    Y = result_def(TensorType)

    mode = opt_prop_def(StrProp)
    coordinate_transformation_mode = opt_prop_def(StrProp)
    nearest_mode = opt_prop_def(StrProp)
    cubic_coeff_a = opt_prop_def(FloatProp)
    exclude_outside = opt_prop_def(IntProp)
    extrapolation_value = opt_prop_def(FloatProp)
    antialias = opt_prop_def(IntProp)
    axes = opt_prop_def(IntsProp)
    keep_aspect_ratio_policy = opt_prop_def(StrProp)

    traits = traits_def(
        Pure(),
        RunsOn(Engine.VECTOR),
        StorageFormats(
            Carries("resize-spatial", (NC1HWC0,), ("X",), ("Y",), (("resizes_spatially",),), full_shape="spatial_only")
        ),
    )
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    DEFAULTS: ClassVar = {
        "mode": "nearest",
        "coordinate_transformation_mode": "half_pixel",
        "nearest_mode": "round_prefer_floor",
        "cubic_coeff_a": -0.75,
        "exclude_outside": 0,
        "extrapolation_value": 0.0,
        "antialias": 0,
        "axes": None,
        "keep_aspect_ratio_policy": "stretch",
    }

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        _check_choices(a)
        mode = a.prop("mode")
        dtype = a.expect_dtype("X", ALL_TYPES if mode == "nearest" else NUMERIC_TYPES, f" in {mode} mode")
        shape = a.shape("X")
        axes = _checked_axes(a, len(shape))
        scales_given, sizes_given = _given(a, "scales"), _given(a, "sizes")
        if scales_given == sizes_given:
            which = "both" if scales_given else "neither"
            raise a.fail(f"exactly one of 'scales' and 'sizes' must be given, got {which}")
        if a.has("roi"):
            a.expect_dtype("roi", FLOAT_TYPES)
            _expect_length(a, "roi", 2 * len(axes), f"2 * {len(axes)} (start and end per resized axis)")
        if scales_given:
            a.expect_dtype("scales", FLOAT_TYPES)
            _expect_length(a, "scales", len(axes), f"{len(axes)} (one per resized axis)")
            resized = _lengths_from_scales(a, shape, axes)
        else:
            a.expect_dtype("sizes", (i64,))
            _expect_length(a, "sizes", len(axes), f"{len(axes)} (one per resized axis)")
            resized = _lengths_from_sizes(a, shape, axes)
        out = list(shape)
        for axis, length in zip(axes, resized):
            out[axis] = length
        return [tensor(dtype, out, a.fmt("X"))]


def _check_choices(a: InferArgs) -> None:
    for prop, choices in (
        ("mode", RESIZE_MODES),
        ("coordinate_transformation_mode", COORDINATE_MODES),
        ("nearest_mode", NEAREST_MODES),
        ("keep_aspect_ratio_policy", ASPECT_POLICIES),
    ):
        if a.prop(prop) not in choices:
            raise a.fail(f'{prop} must be one of {", ".join(choices)}, got "{a.prop(prop)}"')
    for prop in ("exclude_outside", "antialias"):
        if a.prop(prop) not in (0, 1):
            raise a.fail(f"{prop} must be 0 or 1, got {a.prop(prop)}")


def _checked_axes(a: InferArgs, rank: int) -> list[int]:
    raw = a.prop("axes")
    if raw is None:
        return list(range(rank))
    axes = [a.normalize_axis(x, rank, "axes value") for x in raw]
    if len(set(axes)) != len(axes):
        raise a.fail(f"axes {raw} repeat an axis")
    return axes


def _given(a: InferArgs, name: str) -> bool:
    """Whether a scales/sizes operand is given; a static empty tensor stands for "not given" (what
    opset 11/12 exporters emit for the unused one)."""
    return a.has(name) and a.shape(name) != (0,)


def _expect_length(a: InferArgs, name: str, length: int, what: str) -> None:
    shape = a.shape(name)
    if len(shape) != 1:
        raise a.fail(f"operand '{name}' must have rank 1, got rank {len(shape)}")
    if shape[0] is not None and shape[0] != length:
        raise a.fail(f"operand '{name}' has {shape[0]} elements; expected {what}")


def _lengths_from_scales(a: InferArgs, shape: Shape, axes: list[int]) -> list[int | None]:
    scales_array = a.const("scales")
    if scales_array is None:
        return [None] * len(axes)
    scales = [float(s) for s in np.asarray(scales_array).reshape(-1)]
    if any(not s > 0 for s in scales):
        raise a.fail(f"scales must be positive, got {scales}")
    lengths = [shape[d] for d in axes]
    return [None if n is None else scaled_length(n, s) for n, s in zip(lengths, scales)]


def _lengths_from_sizes(a: InferArgs, shape: Shape, axes: list[int]) -> list[int | None]:
    sizes = a.const_ints("sizes")
    if sizes is None:
        return [None] * len(axes)
    if any(s <= 0 for s in sizes):
        raise a.fail(f"sizes must be positive, got {sizes}")
    policy = a.prop("keep_aspect_ratio_policy")
    out: list[int | None]
    if policy == "stretch":
        out = list(sizes)
        return out
    in_sizes = [n for n in (shape[d] for d in axes) if n is not None]
    if len(in_sizes) < len(axes):  # an unknown input length
        return [None] * len(axes)
    out = list(sizes_with_policy(in_sizes, sizes, policy)[0])
    return out


RESIZE_OPS: list = [ResizeOp]
