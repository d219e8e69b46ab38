"""`fold-bias-add`: a constant bias Add after a conv or gemm folded into its bias operand (rules in
`passes/rules/fold_bias_add.py`). MatMul + Add is left to the fusion passes."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ge.passes.rewrite import apply_rules
from ge.passes.rules.fold_bias_add import RULES


@dataclass(frozen=True)
class FoldBiasAddPass(ModulePass):
    name = "fold-bias-add"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_rules(op, RULES, self.name)
