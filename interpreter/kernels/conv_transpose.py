"""The kernel of ge.conv_transpose (ge_dialects/ge/conv_transpose.py): the input gradient of the
convolution the op's geometry names, computed by conv_backprop_input's arithmetic
(`transposed_conv`), plus the bias. f16/bf16 compute in f32 and round once, as conv does."""

from __future__ import annotations

from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ge.ge_dialects import ge
from ge.ge_dialects.ge.conv_transpose import explicit_window
from ge.interpreter.kernels import check_alloc
from ge.interpreter.kernels.checked import kernel_impl
from ge.interpreter.kernels.conv_grad import transposed_conv
from ge.interpreter.kernels.nn import _compute


def conv_transpose(op, ins):
    x, w, b = _compute(ins["X"]), _compute(ins["W"]), ins["B"]
    groups = op.p("group")
    window, sizes = explicit_window(op.p, x.shape[2:], w.shape[2:])
    shape = (x.shape[0], w.shape[1] * groups, *sizes)
    check_alloc(shape, x.dtype)
    y = transposed_conv(x, w, shape, window, groups)
    if b is not None:
        y += _compute(b).reshape(-1, *[1] * len(sizes))
    return y.astype(ins["X"].dtype)


@register_impls
class ConvTransposeFunctions(InterpreterFunctions):
    """The interpreter implementation of ge.conv_transpose."""

    run_conv_transpose = impl(ge.ConvTransposeOp)(kernel_impl(conv_transpose))
