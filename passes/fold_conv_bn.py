"""`fold-conv-bn`: inference BatchNormalization folded into the preceding conv's weights and bias
(rules in `passes/rules/fold_conv_bn.py`). Training-mode BNs, convs with other users and convs
whose weights are not constants are left alone, with a rejected remark."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ge.passes.rewrite import apply_rules
from ge.passes.rules.fold_conv_bn import RULES


@dataclass(frozen=True)
class FoldConvBnPass(ModulePass):
    name = "fold-conv-bn"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_rules(op, RULES, self.name)
