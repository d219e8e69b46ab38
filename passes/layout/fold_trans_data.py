"""fold-trans-data: a TransData of a constant is done at compile time.

A `ge.trans_data` whose operand is a `ge.constant` (inline, or a weight in the sidecar) becomes a
constant of the result type holding the converted (PHYSICAL) array, e.g. a conv weight stored in
FRACTAL_Z. Such constants are always sidecar weights: an inline `dense<...>` has the logical shape.
Before:

    %w = ge.constant #ge.weight<"conv1.weight"> : tensor<64x3x7x7xf32>
    %wz = ge.trans_data %w {src_format = "ND", dst_format = "FRACTAL_Z"} : (tensor<64x3x7x7xf32>) -> tensor<64x3x7x7xf32, #ge.fmt<NCHW, FRACTAL_Z>>

after (the sidecar holds `conv1.weight.FRACTAL_Z`, an array of shape [49, 4, 16, 8]):

    %wz = ge.constant #ge.weight<"conv1.weight.FRACTAL_Z"> : tensor<64x3x7x7xf32, #ge.fmt<NCHW, FRACTAL_Z>>

The old constant goes when nothing else reads it. A constant whose weight is not loaded (no
sidecar attached) is kept, with a `rejected` remark.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from ge.ge_dialects import ge
from ge.ge_dialects.ge.base import describe, location_name
from ge.ge_dialects.ge.layout import TransDataOp
from ge.ge_dialects.ge.types import format_of
from ge.ge_dialects.ge.weights import constant_array, make_constant
from ge.interpreter.ge import folding_interpreter
from ge.passes import remarks

PASS = "fold-trans-data"


def fold_constants(module: ModuleOp) -> int:
    folded = 0
    interpreter = folding_interpreter(module)
    for op in list(module.walk()):
        if not isinstance(op, TransDataOp) or not isinstance(op.src.owner, ge.ConstantOp):
            continue
        const = op.src.owner
        value = constant_array(const)
        if value is None:
            remarks.emit(PASS, "rejected", "fold", [const, op],
                         f"{describe(op)}: the value of weight '{const.weight_key}' is not loaded")
            continue
        (stored,) = interpreter.run_op(op, (value,))
        hint = f"{const.weight_key or location_name(const) or 'const'}.{op.p('dst_format')}"
        t = op.dst.type
        if format_of(t) is None:  # stored as its logical self: small values may stay inline
            new = make_constant(module, stored, hint)
        else:  # a weight of the storage-format type holding the physical array
            new = ge.ConstantOp.weight(make_constant(module, stored, hint, inline_limit=-1).weight_key, t)
        new.location = const.location
        Rewriter.insert_op(new, InsertPoint.before(op))
        op.dst.replace_all_uses_with(new.output)
        Rewriter.erase_op(op)
        if not const.output.uses:
            Rewriter.erase_op(const)
        folded += 1
        remarks.emit(PASS, "applied", "fold", [const],
                     f"{op.p('src_format')} -> {op.p('dst_format')} done at compile time: "
                     f"{list(value.shape)} stored as {list(stored.shape)}")
    return folded


@dataclass(frozen=True)
class FoldTransDataPass(ModulePass):
    """Evaluates TransData of constants at compile time."""

    name = "fold-trans-data"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fold_constants(op)
