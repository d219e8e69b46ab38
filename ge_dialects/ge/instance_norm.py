"""ONNX InstanceNormalization (GE's InstanceNorm): each (image, channel) row of spatial values
normalized by its own mean and variance, then scaled and shifted per channel. It is a layer norm
over the spatial dims with a per-channel scale, which is how its gradient is built (one
`ge.layer_norm_grad` over axis 2).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, result_def, traits_def
from xdsl.traits import Pure

from ge.ge_dialects.ge.base import FloatProp, GeOp, InferArgs
from ge.ge_dialects.ge.conv_grad import typed_like
from ge.ge_dialects.ge.facts import Carries, Engine, Reduction, RunsOn, StorageFormats
from ge.ge_dialects.ge.grad import GradBuilder, static_shape
from ge.ge_dialects.ge.layout import NC1HWC0
from ge.ge_dialects.ge.nn import _check_channel_vector, _spatial_input
from ge.ge_dialects.ge.norm_grad import LayerNormGradOp
from ge.ge_dialects.ge.types import FLOAT_TYPES, elements, shape_of, tensor, tensor_type_of


@irdl_op_definition
class InstanceNormOp(GeOp):
    """ONNX InstanceNormalization: input (N, C, D...), scale and B (C,); output = scale *
    (input - mean) / sqrt(var + epsilon) + B with the mean and (biased) variance over D..."""

    name = "ge.instance_norm"
    ONNX: ClassVar = ("InstanceNormalization",)
    DATA_OPERANDS: ClassVar = ("input", "scale", "B")
    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    B = operand_def(TensorType)
    output = result_def(TensorType)
    epsilon = opt_prop_def(FloatProp)
    traits = traits_def(
        Pure(),
        RunsOn(Engine.VECTOR),
        Reduction(),
        StorageFormats(Carries("instance-norm-nc1hwc0", (NC1HWC0,), ("input",), ("output",))),
    )
    DEFAULTS: ClassVar = {"epsilon": 1e-5}

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        dtype = a.expect_dtype("input", FLOAT_TYPES)
        x = _spatial_input(a, "input")
        for name in ("scale", "B"):
            _check_channel_vector(a, name, x[1])
        a.expect_same_dtype("input", "scale", "B")
        return [tensor(dtype, x, a.fmt("input"))]

    def reduced_row_elements(self) -> int:
        """One image's channel: the spatial dims."""
        return math.prod(d or 1 for d in shape_of(tensor_type_of(self.input))[2:])

    def vector_elements(self) -> int:
        """Three passes over the input: the mean, the variance, the scale and shift."""
        return 3 * elements(self.output)

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """`ge.layer_norm_grad` over axis 2 with scale seen as (C, 1...), which broadcasts over
        the spatial dims; dscale and dbias come back (C, 1...) and are reshaped to (C,)."""
        (dy,) = cotangents
        if dy is None:
            return [None] * len(self.operands)
        x = static_shape(self.input)
        channels = (x[1], *[1] * (len(x) - 2))
        scale = g.reshape(self.scale, channels)
        props = {"axis": 2, "epsilon": self.p("epsilon")}
        dx, dscale, dbias = g.emit(LayerNormGradOp, {"dy": dy, "x": self.input, "scale": scale}, props).results
        return [typed_like(g, dx, self.input), g.reshape(dscale, (x[1],)), g.reshape(dbias, (x[1],))]


INSTANCE_NORM_OPS = [InstanceNormOp]

__all__ = ["InstanceNormOp", "INSTANCE_NORM_OPS"]
