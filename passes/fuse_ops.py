"""`fuse-ops`: outlines fusible ops into `fused.group` kernels by the rule table in fusion/rules.py.

A user's rules come from a Python file that defines `RULES`; running it runs the user's code, so it
is loaded only when the user names it on the command line (`ge-opt --load-fusion-rules FILE`, as
MLIR's `--load-pass-plugin`), never from a pipeline string. The loaded rules apply inside
`user_fusion_rules(...)`, in front of the built-in table.
"""

from __future__ import annotations

import runpy
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ge.ge_dialects.ge.target_attr import module_pass_target
from ge.passes.fusion.cost import CostModel
from ge.passes.fusion.engine import FusionEngine, FusionRule
from ge.passes.fusion.rules import RULES
from ge.passes.pipeline import require_graph_level

_USER_RULES: list[FusionRule] = []


class RuleFileError(Exception):
    """A rule file that cannot be read or does not define a valid `RULES`."""


def load_rule_file(path: str) -> list[FusionRule]:
    """The `RULES` a user's Python file defines (the file runs: call this only for a file the user named)."""
    try:
        extra = runpy.run_path(path).get("RULES")
    except OSError as e:
        raise RuleFileError(f"rule file {path}: {e.strerror}") from None
    except Exception as e:  # the user's code failed: its own error, in one line
        text = str(e).strip().splitlines()
        detail = f": {text[0]}" if text else ""
        raise RuleFileError(f"rule file {path}: {type(e).__name__}{detail}") from None
    if not isinstance(extra, list) or not all(isinstance(r, FusionRule) for r in extra):
        raise RuleFileError(f"rule file {path} must define RULES, a list of FusionRule")
    return extra


def merged_table(extra: Sequence[FusionRule]) -> list[FusionRule]:
    """`extra` in front of the built-in rules; a name may be defined once."""
    table = [*extra, *RULES]
    seen: set[str] = set()
    for rule in table:
        if rule.name in seen:
            raise RuleFileError(f"fusion rule '{rule.name}' is defined twice")
        seen.add(rule.name)
    return table


@contextmanager
def user_fusion_rules(rules: Sequence[FusionRule]) -> Iterator[None]:
    """fuse-ops uses `rules` (in front of the built-in table) while the block runs."""
    merged_table([*_USER_RULES, *rules])
    saved = list(_USER_RULES)
    _USER_RULES[:0] = rules
    try:
        yield
    finally:
        _USER_RULES[:] = saved


def select_rules(names: tuple[str, ...]) -> list[FusionRule]:
    table = merged_table(_USER_RULES)
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
    `target` gives the buffer sizes and rates."""

    name = "fuse-ops"

    target: str | None = None  # None: the module's ge.target, else the default (ge_dialects/ge/target_attr.py)
    rules: tuple[str, ...] = ()

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_graph_level(self.name, op)
        target = module_pass_target(self.name, op, self.target)
        engine = FusionEngine(select_rules(self.rules), CostModel(target))
        engine.run(op)
