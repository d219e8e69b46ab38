"""The kernel of ge.col2im (ge_dialects/ge/col2im.py): one strided add of every column of a
block offset into a padded image, offset by offset, then the padding cut away."""

from __future__ import annotations

import numpy as np
from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ge.ge_dialects import ge
from ge.interpreter.kernels.checked import kernel_impl


def col2im(op, ins):
    x = ins["input"]
    image = [int(v) for v in ins["image_shape"]]
    block = [int(v) for v in ins["block_shape"]]
    strides, pads, dilations = ge.window_attributes(op.p, len(image))
    grid = ge.block_grid(image, block, strides, pads, dilations)
    n = len(image)
    columns = x.reshape(x.shape[0], -1, *block, *grid)
    padded = np.zeros((x.shape[0], columns.shape[1], *(image[d] + pads[d] + pads[n + d] for d in range(n))), x.dtype)
    for offset in np.ndindex(*block):
        window = tuple(
            slice(offset[d] * dilations[d], offset[d] * dilations[d] + strides[d] * (grid[d] - 1) + 1, strides[d])
            for d in range(n)
        )
        padded[(slice(None), slice(None), *window)] += columns[(slice(None), slice(None), *offset)]
    return padded[(slice(None), slice(None), *(slice(pads[d], pads[d] + image[d]) for d in range(n)))]


@register_impls
class Col2ImFunctions(InterpreterFunctions):
    run_col2im = impl(ge.Col2ImOp)(kernel_impl(col2im))
