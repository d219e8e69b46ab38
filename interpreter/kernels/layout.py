"""Kernel of `ge.trans_data`: the relayout itself, on the stored arrays.

Every other kernel sees logical arrays (`ge.interpreter.kernels.checked` converts around it); this one
reads the operand as stored in `src_format` and writes the result as stored in `dst_format`.
"""

from __future__ import annotations

from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ge.ge_dialects import ge
from ge.ge_dialects.ge.layout import origin_of
from ge.ge_dialects.ge.types import shape_of
from ge.interpreter.kernels.checked import kernel_impl
from ge.interpreter.layouts import from_storage, to_storage


def trans_data(op, ins):
    src_type, dst_type = op.src.type, op.dst.type
    logical = from_storage(
        ins["src"], origin_of(src_type), op.p("src_format"), src_type.element_type, shape_of(src_type)
    )
    return to_storage(logical, origin_of(dst_type), op.p("dst_format"), dst_type.element_type)


@register_impls
class LayoutFunctions(InterpreterFunctions):
    """The interpreter implementation of `ge.trans_data`: runs its kernel above."""

    run_trans_data = impl(ge.TransDataOp)(kernel_impl(trans_data))
