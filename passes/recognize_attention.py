"""`recognize-attention`: MatMul -> scale -> mask -> Softmax -> MatMul becomes one `ge.attention`
(rules in `passes/rules/attention.py`)."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ge.passes.rewrite import apply_rules
from ge.passes.rules.attention import RULES


@dataclass(frozen=True)
class RecognizeAttentionPass(ModulePass):
    name = "recognize-attention"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_rules(op, RULES, self.name)
