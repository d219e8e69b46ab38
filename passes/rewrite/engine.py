"""The rewrite engine: a table of declarative rules becomes xDSL rewrite patterns.

A `Rule` is data: a name, a pattern (`pattern.py`), the cases it refuses (`Reject`), an optional
benefit, and a replacement builder. For each root op class the engine makes one RewritePattern
that tries the class's rules in table order. For a rule it enumerates the pattern's bindings; the
first binding that passes the checks is rewritten:

1. no `Reject` of the rule fires;
2. no intermediate result is used outside the match (the matched ops other than the root must die
   with it; constants are exempt), unless the rule sets `private=False`;
3. the benefit, when the rule has one, is positive;
4. the builder's replacement verifies and keeps the root's result types.

The root's results are replaced, the ops the rewrite left dead (matched ops and their producers,
e.g. the constants of a folded BN) are erased, and a remark records the rewrite. When bindings
exist but all fail, one "rejected" remark per rule and root op gives the first binding's reason.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.irdl import AttrSizedOperandSegments, AttrSizedResultSegments
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.traits import is_side_effect_free
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from ge.ge_dialects.ge.base import GeOp, describe, location_name
from ge.ge_dialects.ge.constant import ConstantOp
from ge.ge_dialects.ge.types import Shape, shape_of
from ge.ge_dialects.ge.weights import constant_array, make_constant, module_of
from ge.passes import remarks
from ge.passes.rewrite.pattern import Op, State, match

_SEGMENTS = (AttrSizedOperandSegments.attribute_name, AttrSizedResultSegments.attribute_name)


class Match:
    """What a rule's checks and builder see: the root op and the values bound by name."""

    def __init__(self, root: Operation, state: State):
        self.root = root
        self.values = dict(state.values)
        self.ops = state.ops
        self._consts: dict[str, np.ndarray | None] = {}
        self.benefit: float | None = None

    def __getitem__(self, name: str) -> SSAValue:
        return self.values[name]

    def __contains__(self, name: str) -> bool:
        return name in self.values

    def op(self, name: str) -> Operation:
        """The op that defines the value bound to `name`."""
        return self.values[name].owner

    def const(self, name: str) -> np.ndarray | None:
        """The value bound to `name` if it is a visible constant, else None."""
        if name not in self._consts:
            self._consts[name] = constant_array(self.values[name]) if name in self.values else None
        return self._consts[name]

    def scalar(self, name: str) -> float | None:
        """The constant bound to `name` if it has one element, else None."""
        c = self.const(name)
        return float(c.reshape(-1)[0]) if c is not None and c.size == 1 else None

    def type(self, name: str) -> TensorType:
        return self.values[name].type

    def shape(self, name: str) -> Shape:
        return shape_of(self.values[name].type)

    def matched_ops(self) -> list[Operation]:
        """The matched ops a remark names (constants left out)."""
        return [op for op in self.ops if not isinstance(op, ConstantOp)]


class Builder:
    """Makes the replacement's ops, unattached; the engine inserts them before the root."""

    def __init__(self, match: Match):
        self.match = match
        self.ops: list[Operation] = []

    def op(self, cls: type[GeOp], operands: dict[str, Any], props: dict[str, Any] | None = None,
           num_results: int | None = None, name: str | None = None) -> GeOp:
        """A new ge op with inferred types, named after the root unless `name` is given."""
        op = cls.create(operands, props, num_results, name=name or location_name(self.match.root))
        self.ops.append(op)
        return op

    def const(self, array: np.ndarray, hint: str) -> SSAValue:
        """A new constant (inline when small, else a new weight keyed after `hint`)."""
        op = make_constant(module_of(self.match.root), array, hint)
        self.ops.append(op)
        return op.output

    def discard(self) -> None:
        for op in reversed(self.ops):
            op.erase(safe_erase=False)
        self.ops.clear()


def copy_props(op: Operation, **changes: Any) -> dict[str, Any]:
    """An op's properties (segment sizes left out) with `changes` applied; None removes one."""
    props: dict[str, Any] = {k: v for k, v in op.properties.items() if k not in _SEGMENTS}
    props.update(changes)
    return {k: v for k, v in props.items() if v is not None}


@dataclass(frozen=True)
class Reject:
    """A constraint: the rewrite is refused, with `reason`, when `when(match)` is true."""

    reason: str | Callable[[Match], str]
    when: Callable[[Match], Any]


Replacement = SSAValue | Sequence[SSAValue | None]


@dataclass(frozen=True)
class Rule:
    name: str
    pattern: Op
    build: Callable[[Match, Builder], Replacement]
    """Returns the values replacing the root's results (trailing unused results may be left out)."""
    rejects: Sequence[Reject] = ()
    benefit: float | Callable[[Match], float] | None = None
    private: bool = True
    """Intermediate results may be used only inside the match."""
    doc: str = ""


def _first_failure(rule: Rule, m: Match) -> str | None:
    for check in rule.rejects:
        if check.when(m):
            return check.reason(m) if callable(check.reason) else check.reason
    if rule.private:
        inside = set(m.ops)
        for op in m.ops[1:]:
            if isinstance(op, ConstantOp):
                continue
            for result in op.results:
                outside = next((u.operation for u in result.uses if u.operation not in inside), None)
                if outside is not None:
                    return f"{describe(op)} has a user outside the pattern ({describe(outside)})"
    if rule.benefit is not None:
        m.benefit = rule.benefit(m) if callable(rule.benefit) else float(rule.benefit)
        if m.benefit <= 0:
            return f"benefit {m.benefit:.3g} is not positive"
    return None


def _replace(rule: Rule, m: Match, rewriter: PatternRewriter) -> tuple[str, str | None]:
    """Builds and installs the replacement: ("applied", description) or ("rejected", reason)."""
    b = Builder(m)
    try:
        out = rule.build(m, b)
    except (VerifyException, DiagnosticException) as e:
        b.discard()
        return "rejected", f"the replacement does not verify: {str(e).splitlines()[0]}"
    new = [out] if isinstance(out, SSAValue) else list(out)
    root = m.root
    for i, old in enumerate(root.results):
        value = new[i] if i < len(new) else None
        if value is None and old.uses:
            b.discard()
            return "rejected", f"result #{i} of {describe(root)} is used but the rewrite does not replace it"
        if value is not None and value.type != old.type:
            b.discard()
            return "rejected", f"the replacement has type {value.type}, the root has {old.type}"
    producers = [v.owner for op in m.ops for v in op.operands if isinstance(v.owner, Operation)]
    rewriter.insert(b.ops, InsertPoint.before(root))
    rewriter.replace(root, [], [new[i] if i < len(new) else None for i in range(len(root.results))])
    _erase_dead([*m.ops[1:], *producers], rewriter)
    made = [op.name for op in b.ops if not isinstance(op, ConstantOp)]
    return "applied", f"replaced by {', '.join(made)}" if made else "replaced by an existing value"


def _erase_dead(ops: Iterable[Operation], rewriter: PatternRewriter) -> None:
    """Erases the ops among `ops` (and, transitively, their producers) that are pure and unused."""
    work = list(ops)
    while work:
        op = work.pop()
        if op.parent is None or not is_side_effect_free(op) or any(r.uses for r in op.results):
            continue
        work.extend(v.owner for v in op.operands if isinstance(v.owner, Operation))
        rewriter.erase(op)


class RulePattern(RewritePattern):
    """The rules of one root op class, tried in table order."""

    def __init__(self, root: type[Operation], rules: Sequence[Rule], pass_name: str,
                 refused: set[tuple[str, Operation]]):
        self.root, self.rules, self.pass_name, self.refused = root, tuple(rules), pass_name, refused

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, self.root):
            return
        for rule in self.rules:
            if self._try(rule, op, rewriter):
                return

    def _try(self, rule: Rule, root: Operation, rewriter: PatternRewriter) -> bool:
        refusal: tuple[Match, str] | None = None
        for state in match(rule.pattern, root):
            m = Match(root, state)
            reason = _first_failure(rule, m)
            if reason is None:
                shown = m.matched_ops()
                kind, reason = _replace(rule, m, rewriter)
                if kind == "applied":
                    remarks.emit(self.pass_name, "applied", rule.name, shown, reason, m.benefit)
                    return True
            refusal = refusal or (m, reason)
        if refusal is not None and (rule.name, root) not in self.refused:
            self.refused.add((rule.name, root))
            m, reason = refusal
            remarks.emit(self.pass_name, "rejected", rule.name, m.matched_ops(), reason, m.benefit)
        return False


def rewrite_patterns(rules: Sequence[Rule], pass_name: str) -> list[RewritePattern]:
    """One RewritePattern per root op class, each trying its rules in table order."""
    by_root: dict[type[Operation], list[Rule]] = {}
    for rule in rules:
        for cls in rule.pattern.classes:
            by_root.setdefault(cls, []).append(rule)
    refused: set[tuple[str, Operation]] = set()
    return [RulePattern(cls, rs, pass_name, refused) for cls, rs in by_root.items()]


def apply_rules(module: ModuleOp, rules: Sequence[Rule], pass_name: str) -> None:
    """Rewrites `module` with `rules` to a fixpoint. Users are visited before their operands, so a
    rule rooted at the last op of a chain sees the whole chain before a smaller rule inside it."""
    applier = GreedyRewritePatternApplier(rewrite_patterns(rules, pass_name), dce_enabled=False)
    PatternRewriteWalker(applier, walk_reverse=True).rewrite_module(module)
