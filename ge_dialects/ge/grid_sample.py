"""GridSample (GE's GridSampler2D / GridSampler3D): the input sampled at the normalized
coordinates of a grid, in N spatial dims (ONNX opset 20's form; opset 16's 2-D "bilinear" and
"bicubic" are the same as "linear" and "cubic")."""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import TensorType
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, result_def, traits_def
from xdsl.traits import Pure

from ge.ge_dialects.ge.base import GeOp, InferArgs, IntProp, StrProp
from ge.ge_dialects.ge.facts import Engine, RunsOn
from ge.ge_dialects.ge.types import FLOAT_TYPES, tensor

GRID_SAMPLE_MODES = ("linear", "nearest", "cubic")
PADDING_MODES = ("zeros", "border", "reflection")


@irdl_op_definition
class GridSampleOp(GeOp):
    """Y[n, c, o...] = X[n, c] interpolated at grid[n, o...] (x first: the last spatial dim), -1
    and 1 being the outer pixels' centres (align_corners = 1) or edges (0); `padding_mode` says
    what lies outside."""

    name = "ge.grid_sample"
    ONNX: ClassVar = ("GridSample",)
    DATA_OPERANDS: ClassVar = ("X", "grid")
    X = operand_def(TensorType)
    grid = operand_def(TensorType)
    Y = result_def(TensorType)
    mode = opt_prop_def(StrProp)
    padding_mode = opt_prop_def(StrProp)
    align_corners = opt_prop_def(IntProp)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR))
    DEFAULTS: ClassVar = {"mode": "linear", "padding_mode": "zeros", "align_corners": 0}
    NO_GRADIENT: ClassVar = "not built yet"

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        dtype = a.expect_dtype("X", FLOAT_TYPES)
        a.expect_dtype("grid", FLOAT_TYPES)
        if a.prop("mode") not in GRID_SAMPLE_MODES:
            raise a.fail(f"mode must be one of {', '.join(GRID_SAMPLE_MODES)}, got '{a.prop('mode')}'")
        if a.prop("padding_mode") not in PADDING_MODES:
            raise a.fail(f"padding_mode must be one of {', '.join(PADDING_MODES)}, got '{a.prop('padding_mode')}'")
        x, grid = a.shape("X"), a.shape("grid")
        spatial = len(x) - 2
        if spatial < 1 or len(grid) != len(x) or grid[-1] not in (None, spatial):
            raise a.fail(f"grid {list(grid)} does not fit X {list(x)}: it must be [N, out..., {spatial}]")
        if None not in (x[0], grid[0]) and x[0] != grid[0]:
            raise a.fail(f"X has batch {x[0]} and grid {grid[0]}")
        return [tensor(dtype, (x[0], x[1], *grid[1:-1]))]


GRID_SAMPLE_OPS = [GridSampleOp]

__all__ = ["GridSampleOp", "GRID_SAMPLE_OPS"]
