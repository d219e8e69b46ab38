"""`simplify`: algebraic simplification with the declarative rules of `passes/rules/simplify.py`.

Removes ops that do nothing (identity, casts and shape ops that keep the type, identity
transposes, inference-mode dropout, x*1, x/1, x+0, x-0 when broadcasting keeps the type) and
collapses transpose pairs and reshape chains.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ge.passes.rewrite import apply_rules
from ge.passes.rules.simplify import RULES


@dataclass(frozen=True)
class SimplifyPass(ModulePass):
    name = "simplify"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_rules(op, RULES, self.name)
