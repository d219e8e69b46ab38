"""The kernel of ge.instance_norm (ge_dialects/ge/instance_norm.py): per (image, channel) row, the
mean and biased variance over the spatial dims, then one multiply-add per element; f16/bf16
widened to f32 and rounded once, as the other normalizations do."""

from __future__ import annotations

import numpy as np
from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ge.ge_dialects import ge
from ge.interpreter.kernels.checked import kernel_impl
from ge.interpreter.kernels.nn import _compute


def instance_norm(op, ins):
    x = _compute(ins["input"])
    axes = tuple(range(2, x.ndim))
    channel = (-1, *[1] * (x.ndim - 2))
    centered = x - x.mean(axis=axes, keepdims=True)
    var = (centered * centered).mean(axis=axes, keepdims=True)
    factor = _compute(ins["scale"]).reshape(channel) / np.sqrt(var + x.dtype.type(op.p("epsilon")))
    y = centered * factor + _compute(ins["B"]).reshape(channel)
    return y.astype(ins["input"].dtype, copy=False)


@register_impls
class InstanceNormFunctions(InterpreterFunctions):
    """The interpreter implementation of ge.instance_norm."""

    run_instance_norm = impl(ge.InstanceNormOp)(kernel_impl(instance_norm))
