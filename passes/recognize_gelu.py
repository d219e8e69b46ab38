"""`recognize-gelu`: GELU written out in elementwise ops, erf form (F.gelu as exported) or tanh
form (HF NewGELU), becomes one `ge.gelu` (rules in `passes/rules/gelu.py`)."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ge.passes.rewrite import apply_rules
from ge.passes.rules.gelu import RULES


@dataclass(frozen=True)
class RecognizeGeluPass(ModulePass):
    name = "recognize-gelu"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_rules(op, RULES, self.name)
