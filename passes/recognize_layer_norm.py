"""`recognize-layer-norm`: the decomposed LayerNorm PyTorch exports before opset 17 (ReduceMean,
Sub, Pow, ReduceMean, Add eps, Sqrt, Div, Mul gamma, Add beta, and variants) becomes one
`ge.layer_norm` (rules in `passes/rules/layer_norm.py`)."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ge.passes.rewrite import apply_rules
from ge.passes.rules.layer_norm import RULES


@dataclass(frozen=True)
class RecognizeLayerNormPass(ModulePass):
    name = "recognize-layer-norm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_rules(op, RULES, self.name)
