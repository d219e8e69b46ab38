"""`fuse-ops`: outlines fusible ops into `fused.group` kernels by the rule table in fusion/rules.py."""

from __future__ import annotations

import runpy
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from interpreter.targets import pass_target
from passes.fusion.cost import CostModel
from passes.fusion.engine import FusionEngine, FusionRule
from passes.fusion.rules import RULES


def select_rules(names: tuple[str, ...], rule_file: str | None) -> list[FusionRule]:
    table = list(RULES)
    if rule_file:
        try:
            extra = runpy.run_path(rule_file).get("RULES")
        except OSError as e:
            raise DiagnosticException(f"fuse-ops: rule file {rule_file}: {e.strerror}") from None
        if not isinstance(extra, list) or not all(isinstance(r, FusionRule) for r in extra):
            raise DiagnosticException(f"fuse-ops: rule file {rule_file} must define RULES, a list of FusionRule")
        table = extra + table
    if not names:
        return table
    known = {r.name: r for r in table}
    for n in names:
        if n not in known:
            raise DiagnosticException(f"fuse-ops: unknown rule '{n}' (rules: {', '.join(known)})")
    return [known[n] for n in names]


@dataclass(frozen=True)
class FuseOpsPass(ModulePass):
    """Fuses ops into kernels; `rules` picks rules by name (default: the whole table, in order),
    `rule-file` adds a user's table in front, `target` gives the buffer sizes and rates."""

    name = "fuse-ops"

    target: str = "ascend910b"
    rules: tuple[str, ...] = ()
    rule_file: str | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = pass_target(self.name, self.target)
        engine = FusionEngine(select_rules(self.rules, self.rule_file), CostModel(target), target["buffers"]["ub"])
        engine.run(op)
