"""`cancel-casts`: removes casts that do nothing and pairs of casts that undo each other.

The rules (`noop`, `symmetric-pair`, `compose`, `dequantize-to`, `quantize-from`) are the table in
`passes/rules/casts.py`; the rewrite engine applies them in program-order sweeps until none
matches. One remark per rewrite, and one per refused pair.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ge.passes.rewrite import apply_rules
from ge.passes.rules.casts import ONNX_NUMBER, RULES, changes_meaning, composable, elem, is_exact, make_cast

PASS = "cancel-casts"

__all__ = [
    "ONNX_NUMBER",
    "CancelCastsPass",
    "cancel_casts",
    "changes_meaning",
    "composable",
    "elem",
    "is_exact",
    "make_cast",
]


def cancel_casts(module: ModuleOp) -> None:
    """Applies the rules to every `ge.cast` until none matches (other ops are left alone)."""
    apply_rules(module, RULES, PASS, walk="program-order")


@dataclass(frozen=True)
class CancelCastsPass(ModulePass):
    name = "cancel-casts"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        cancel_casts(op)
