"""cancel-trans-data: removes symmetric TransData pairs (A -> B -> A).

A `ge.trans_data` whose operand comes from another `ge.trans_data` and whose result has the type
that first one started from converts the value back: its users read the original value instead,
and the first TransData goes too when nothing else reads it. Before:

    %a = ge.trans_data %x {src_format = "NCHW", dst_format = "NC1HWC0"}
        : (tensor<1x8x4x4xf32, #ge.fmt<NCHW>>) -> tensor<1x8x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>
    %b = ge.trans_data %a {src_format = "NC1HWC0", dst_format = "NCHW"}
        : (tensor<1x8x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x8x4x4xf32, #ge.fmt<NCHW>>
    %r = ge.relu %b : ...

after: `%r = ge.relu %x : ...`. A pair that returns to the same layout under another type (an
unencoded tensor that comes back as `#ge.fmt<NCHW>`) is kept, with a `rejected` remark: its users'
types would change.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from ge.ge_dialects.ge.base import describe
from ge.ge_dialects.ge.layout import TransDataOp, is_stored_logically, storage_of
from ge.passes.rewrite import Match, Op, Reject, Rule, apply_rules
from ge.passes.tensor_values import tensor_type

PASS = "cancel-trans-data"


def same_layout(a: TensorType, b: TensorType) -> bool:
    """Whether values of types `a` and `b` (one logical shape) are stored alike."""
    return storage_of(a) == storage_of(b) or (is_stored_logically(a) and is_stored_logically(b))


def _returns_to_layout(second: Operation) -> bool:
    first = second.operands[0].owner
    return isinstance(first, TransDataOp) and same_layout(tensor_type(first.src), tensor_type(second.results[0]))


def _other_type(m: Match) -> str:
    first, second = m.op("first"), m.root_as(TransDataOp)
    return (
        f"{describe(first)} and {describe(second)} return to the layout of {m['source'].type} "
        f"but as {second.dst.type}: their users would see another type"
    )


def _cancelled(m: Match) -> str:
    first, second = m.op_as("first", TransDataOp), m.root
    return f"{first.p('src_format')} -> {first.p('dst_format')} -> {second.p('dst_format')} cancelled"


RULES: list[Rule] = [
    Rule(
        "cancel-pair",
        Op(
            TransDataOp,
            Op(TransDataOp, "source", name="first", any_block=True),
            name="second",
            where=_returns_to_layout,
        ),
        lambda m, b: m["source"],
        rejects=[Reject(_other_type, lambda m: m["source"].type != m.root_as(TransDataOp).dst.type)],
        says=_cancelled,
        shows=("first", "second"),
        private=False,
        doc="trans_data(trans_data(x: A -> B): B -> A) -> x; the first stays while others read it",
    ),
]


def cancel_pairs(module: ModuleOp) -> None:
    apply_rules(module, RULES, PASS, walk="program-order")


@dataclass(frozen=True)
class CancelTransDataPass(ModulePass):
    """Removes A -> B -> A TransData pairs."""

    name = "cancel-trans-data"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        cancel_pairs(op)
