"""fold-trans-data: a TransData of a constant is done at compile time.

A `ge.trans_data` whose operand is a `ge.constant` (inline, or a weight in the sidecar) becomes a
constant of the result type holding the converted (PHYSICAL) array, e.g. a conv weight stored in
FRACTAL_Z. Such constants are always sidecar weights: an inline `dense<...>` has the logical shape.
Before:

    %w = ge.constant #ge.weight<"conv1.weight"> : tensor<64x3x7x7xf32>
    %wz = ge.trans_data %w {src_format = "ND", dst_format = "FRACTAL_Z"}
        : (tensor<64x3x7x7xf32>) -> tensor<64x3x7x7xf32, #ge.fmt<NCHW, FRACTAL_Z>>

after (the sidecar holds `conv1.weight.FRACTAL_Z`, an array of shape [49, 4, 16, 8]):

    %wz = ge.constant #ge.weight<"conv1.weight.FRACTAL_Z"> : tensor<64x3x7x7xf32, #ge.fmt<NCHW, FRACTAL_Z>>

The old constant goes when nothing else reads it. A constant whose weight is not loaded (no
sidecar attached) is kept, with a `rejected` remark.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass

from ge.ge_dialects import ge
from ge.ge_dialects.ge.base import describe, location_name
from ge.ge_dialects.ge.layout import TransDataOp
from ge.ge_dialects.ge.types import format_of
from ge.ge_dialects.ge.weights import constant_array, make_constant, module_of
from ge.interpreter.ge import folding_interpreter
from ge.passes.rewrite import Builder, Match, Op, Reject, Rule, apply_rules
from ge.passes.tensor_values import tensor_type

PASS = "fold-trans-data"


def _folded(m: Match, b: Builder) -> SSAValue:
    """The constant of the result type holding the converted array."""
    op, const = m.root_as(TransDataOp), m.op_as("const", ge.ConstantOp)
    module = module_of(op)
    value = constant_array(const)
    assert value is not None  # the rule's "not loaded" Reject refused the others
    (stored,) = m.context.run_op(op, (value,))  # the folding interpreter of this run
    hint = f"{const.weight_key or location_name(const) or 'const'}.{op.p('dst_format')}"
    t = tensor_type(op.dst)
    if format_of(t) is None:  # stored as its logical self: small values may stay inline
        new = make_constant(module, stored, hint)
    else:  # a weight of the storage-format type holding the physical array
        key = make_constant(module, stored, hint, inline_limit=-1).weight_key
        assert key is not None  # inline_limit=-1 makes every constant a weight
        new = ge.ConstantOp.weight(key, t)
    new.location = const.location
    m.notes["shapes"] = (list(value.shape), list(stored.shape))
    return b.add(new).results[0]


def _done(m: Match) -> str:
    before, after = m.notes["shapes"]
    return f"{m.root.p('src_format')} -> {m.root.p('dst_format')} done at compile time: {before} stored as {after}"


def _not_loaded(m: Match) -> str:
    key = m.op_as("const", ge.ConstantOp).weight_key
    return f"{describe(m.root)}: the value of weight '{key}' is not loaded"


RULES: list[Rule] = [
    Rule(
        "fold",
        Op(TransDataOp, Op(ge.ConstantOp, name="const", any_block=True), name="trans"),
        _folded,
        rejects=[
            Reject(
                _not_loaded,
                lambda m: m.const("const") is None,
                shows=("const", "trans"),
            )
        ],
        says=_done,
        shows=("const",),
        doc="trans_data(constant) -> a constant of the result type",
    ),
]


def fold_constants(module: ModuleOp, rules: Sequence[Rule] = RULES) -> None:
    apply_rules(module, rules, PASS, walk="program-order", context=folding_interpreter(module))


@dataclass(frozen=True)
class FoldTransDataPass(ModulePass):
    """Evaluates TransData of constants at compile time."""

    name = "fold-trans-data"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fold_constants(op)
