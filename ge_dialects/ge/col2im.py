"""ONNX Col2Im (GE's Col2im, PyTorch's fold): column blocks summed back into an image, the adjoint
of unfolding an image into its sliding blocks. The image and block shapes are operands: they
must be constants for the result to have static dims, as every exporter writes them."""

from __future__ import annotations

import math
from typing import ClassVar

from xdsl.dialects.builtin import TensorType
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, result_def, traits_def
from xdsl.traits import Pure

from ge.ge_dialects.ge.base import GeOp, InferArgs, IntsProp
from ge.ge_dialects.ge.facts import Engine, RunsOn
from ge.ge_dialects.ge.types import NUMERIC_TYPES, elements, tensor


def block_grid(image: list[int], block: list[int], strides, pads, dilations) -> list[int]:
    """How many block positions fit along each image dim (the unfold's output length per dim)."""
    n = len(image)
    return [(image[d] + pads[d] + pads[n + d] - dilations[d] * (block[d] - 1) - 1) // strides[d] + 1 for d in range(n)]


@irdl_op_definition
class Col2ImOp(GeOp):
    """input (N, C * prod(block_shape), L) -> (N, C, *image_shape): each column is one block's
    values, added at its position; L must be the number of positions (strides, pads, dilations
    as a convolution's)."""

    name = "ge.col2im"
    ONNX: ClassVar = ("Col2Im",)
    DATA_OPERANDS: ClassVar = ("input",)
    IMMEDIATE_OPERANDS: ClassVar = ("image_shape", "block_shape")
    input = operand_def(TensorType)
    image_shape = operand_def(TensorType)
    block_shape = operand_def(TensorType)
    output = result_def(TensorType)
    dilations = opt_prop_def(IntsProp)
    pads = opt_prop_def(IntsProp)
    strides = opt_prop_def(IntsProp)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR))
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"image_shape", "block_shape"})
    NO_GRADIENT: ClassVar = "its gradient unfolds the image into blocks (Im2Col), which ge has no op for"

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        dtype = a.expect_dtype("input", NUMERIC_TYPES)
        shape = a.shape("input")
        if len(shape) != 3:
            raise a.fail(f"input must be (N, C * prod(block_shape), L), got rank {len(shape)}")
        image, block = a.const_ints("image_shape"), a.const_ints("block_shape")
        if image is None or block is None:
            raise a.fail("image_shape and block_shape must be constants (they give the result's dims)")
        if len(image) != len(block) or not image:
            raise a.fail(f"image_shape {image} and block_shape {block} must name the same dims")
        if any(d < 1 for d in image + block):
            raise a.fail(f"image_shape {image} and block_shape {block} must be positive")
        strides, pads, dilations = window_attributes(a.prop, len(image))
        grid = block_grid(image, block, strides, pads, dilations)
        if any(g < 1 for g in grid):
            raise a.fail(f"block_shape {block} does not fit image_shape {image} with these pads and dilations")
        per_block = math.prod(block)
        channels, positions = shape[1], shape[2]
        if channels is not None and channels % per_block:
            raise a.fail(f"input dim 1 ({channels}) is not a multiple of the block's {per_block} elements")
        if positions is not None and positions != math.prod(grid):
            raise a.fail(f"input dim 2 ({positions}) must be the {math.prod(grid)} block positions {grid}")
        return [tensor(dtype, [shape[0], None if channels is None else channels // per_block, *image])]

    def vector_elements(self) -> int:
        """Each column value is added once."""
        return elements(self.input)


def window_attributes(prop, rank: int) -> tuple[list[int], list[int], list[int]]:
    """strides, pads (begins then ends) and dilations, ONNX's defaults filled in."""
    return (
        list(prop("strides") or [1] * rank),
        list(prop("pads") or [0] * (2 * rank)),
        list(prop("dilations") or [1] * rank),
    )


COL2IM_OPS = [Col2ImOp]

__all__ = ["Col2ImOp", "COL2IM_OPS", "block_grid", "window_attributes"]
