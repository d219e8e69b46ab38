"""Declarative rewrites: rules are data (pattern, constraints, benefit, builder), one engine
applies them. See docs/rewrites.md.

    from ge.passes.rewrite import ABSENT, Const, Either, Op, Reject, Rule, apply_rules

A pass applies a table with `apply_rules(module, RULES, pass_name)`; a user adds a rule by
appending a `Rule` to a table in `passes/rules/`, or passes a table of their own.
"""

from ge.passes.rewrite.engine import (
    IN_PLACE,
    Builder,
    Check,
    Match,
    Reject,
    Rule,
    Walk,
    apply_rules,
    copy_props,
    rewrite_patterns,
    try_rule,
)
from ge.passes.rewrite.pattern import ABSENT, Const, Either, Op

__all__ = [
    "ABSENT",
    "IN_PLACE",
    "Builder",
    "Check",
    "Const",
    "Either",
    "Match",
    "Op",
    "Reject",
    "Rule",
    "Walk",
    "apply_rules",
    "copy_props",
    "rewrite_patterns",
    "try_rule",
]
