"""`fold-qdq`: DequantizeLinear -> Conv / MatMul -> QuantizeLinear folded into QLinearConv /
QLinearMatMul, as onnxruntime's QDQ transformer does (rules in `passes/rules/fold_qdq.py`).
Candidates whose scales or zero points are not constants, whose types or scale axes the integer
ops cannot take, or whose conv bias is not on the grid of x_scale * w_scale stay float, with a
rejected remark."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ge.passes.rewrite import apply_rules
from ge.passes.rules.fold_qdq import RULES


@dataclass(frozen=True)
class FoldQdqPass(ModulePass):
    name = "fold-qdq"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_rules(op, RULES, self.name)
