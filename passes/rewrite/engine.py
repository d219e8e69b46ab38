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

Beyond the pattern a rule may `find` values by a function (another user of a matched value), say
what its remark reads (`says`, `shows`), update the root in place (`build` returns `IN_PLACE`, for
rules that annotate) and let later rules of the same root run after it (`final=False`). The walk
is chosen per application (`apply_rules(..., walk=...)`): users first to a fixpoint (xDSL's greedy
driver), program-order sweeps to a fixpoint, or one program-order sweep (for rules whose context
carries state forward, like a dataflow analysis).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

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

from ge.ge_dialects.ge.base import GeOp, describe, location_name, name_after
from ge.ge_dialects.ge.constant import ConstantOp
from ge.ge_dialects.ge.types import Shape, shape_of
from ge.ge_dialects.ge.weights import constant_array, make_constant, module_of
from ge.passes import remarks
from ge.passes.rewrite.pattern import Op, State, match
from ge.passes.tensor_values import tensor_type

_OpT = TypeVar("_OpT", bound=Operation)

_SEGMENTS = (AttrSizedOperandSegments.attribute_name, AttrSizedResultSegments.attribute_name)


class Match:
    """What a rule's checks and builder see: the root op and the values bound by name."""

    def __init__(self, root: GeOp, state: State, context: Any = None):
        self.root = root
        self.values = dict(state.values)
        self.ops = state.ops
        self.context = context
        """What `apply_rules` was given as `context` (pass options, state a walk carries)."""
        self.notes: dict[str, Any] = {}
        """What a builder records for the rule's `says` (e.g. the shape of a folded array)."""
        self._consts: dict[str, np.ndarray | None] = {}
        self.benefit: float | None = None

    def __getitem__(self, name: str) -> SSAValue:
        return self.values[name]

    def __contains__(self, name: str) -> bool:
        return name in self.values

    def op(self, name: str) -> Operation:
        """The op that defines the value bound to `name`."""
        owner = self.values[name].owner
        assert isinstance(owner, Operation), f"'{name}' is bound to a block argument, not an op result"
        return owner

    def root_as(self, cls: type[_OpT]) -> _OpT:
        """The root op, which the rule's pattern made a `cls`."""
        assert isinstance(self.root, cls), f"the root is {self.root.name}, not a {cls.__name__}"
        return self.root

    def op_as(self, name: str, cls: type[_OpT]) -> _OpT:
        """The op that defines the value bound to `name`, which the rule's pattern made a `cls`."""
        op = self.op(name)
        assert isinstance(op, cls), f"'{name}' is bound to {op.name}, not a {cls.__name__}"
        return op

    def const(self, name: str) -> np.ndarray | None:
        """The value bound to `name` if it is a visible constant, else None."""
        if name not in self._consts:
            self._consts[name] = constant_array(self.values[name]) if name in self.values else None
        return self._consts[name]

    def array(self, name: str) -> np.ndarray:
        """The constant bound to `name`, which the pattern (a `Const`) or an earlier check made visible."""
        c = self.const(name)
        assert c is not None, f"'{name}' is bound to no visible constant"
        return c

    def scalar(self, name: str) -> float | None:
        """The constant bound to `name` if it has one element, else None."""
        c = self.const(name)
        return float(c.reshape(-1)[0]) if c is not None and c.size == 1 else None

    def type(self, name: str) -> TensorType:
        return tensor_type(self.values[name])

    def shape(self, name: str) -> Shape:
        return shape_of(self.type(name))

    def matched_ops(self) -> list[Operation]:
        """The matched ops a remark names (constants left out)."""
        return [op for op in self.ops if not isinstance(op, ConstantOp)]


class Builder:
    """Makes the replacement's ops, unattached; the engine inserts them before the root."""

    def __init__(self, match: Match):
        self.match = match
        self.ops: list[Operation] = []

    def op(
        self,
        cls: type[GeOp],
        operands: dict[str, Any],
        props: dict[str, Any] | None = None,
        num_results: int | None = None,
        name: str | None = None,
    ) -> GeOp:
        """A new ge op with inferred types, named after the root unless `name` is given."""
        op = cls.create(operands, props, num_results, name=name or location_name(self.match.root))
        self.ops.append(op)
        return op

    def add(self, op: Operation) -> Operation:
        """An op made elsewhere (unattached) that goes in with the replacement."""
        self.ops.append(op)
        return op

    def const(
        self, array: np.ndarray, hint: str, source: Operation | SSAValue | None = None, role: str | None = None
    ) -> SSAValue:
        """A new constant (inline when small, else a new weight keyed after `hint`), named after
        `source` (the constant it replaces; default: the root) with `/role` (default: `hint`)."""
        op = make_constant(module_of(self.match.root), array, hint)
        name_after(op, self.match.root if source is None else source, hint if role is None else role)
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
    shows: tuple[str, ...] | None = None
    """The bound names whose ops the refusal's remark names (default: the rule's)."""

    def failure(self, m: Match) -> str | None:
        if not self.when(m):
            return None
        return self.reason(m) if callable(self.reason) else self.reason


@dataclass(frozen=True)
class Check:
    """A constraint written as one function: None when it holds, else the reason it does not."""

    why_not: Callable[[Match], str | None]
    shows: tuple[str, ...] | None = None

    def failure(self, m: Match) -> str | None:
        return self.why_not(m)


class _InPlace:
    def __repr__(self) -> str:
        return "IN_PLACE"


IN_PLACE: Any = _InPlace()
"""What `build` returns when it updated the root in place (e.g. annotated it): nothing is replaced."""

Replacement = SSAValue | Sequence[SSAValue | None]
Walk = Literal["users-first", "program-order", "single-pass"]


@dataclass(frozen=True)
class Rule:
    name: str
    pattern: Op
    build: Callable[[Match, Builder], Replacement]
    """Returns the values replacing the root's results (trailing unused results may be left out),
    or `IN_PLACE`."""
    rejects: Sequence[Reject | Check] = ()
    benefit: float | Callable[[Match], float] | None = None
    private: bool = True
    """Intermediate results may be used only inside the match."""
    doc: str = ""
    finds: Mapping[str, Callable[[Match], SSAValue | None]] = field(default_factory=dict, hash=False)
    """Values bound by a function rather than the pattern (e.g. an earlier twin of the root); a
    None means no match, silently (no remark)."""
    says: Callable[[Match], str] | None = None
    """The reason an `applied` remark gives (default: what replaced the root); runs after `build`."""
    shows: tuple[str, ...] | None = None
    """The bound names whose ops the remarks name, in order (default: the matched ops, root first)."""
    final: bool = True
    """Once applied, the root's later rules are not tried; False lets annotation rules add up."""


@dataclass(frozen=True)
class _Refusal:
    reason: str
    shows: tuple[str, ...] | None


def _first_failure(rule: Rule, m: Match) -> _Refusal | None:
    for check in rule.rejects:
        reason = check.failure(m)
        if reason is not None:
            return _Refusal(reason, check.shows or rule.shows)
    if rule.private:
        inside = set(m.ops)
        for op in m.ops[1:]:
            if isinstance(op, ConstantOp):
                continue
            for result in op.results:
                outside = next((u.operation for u in result.uses if u.operation not in inside), None)
                if outside is not None:
                    reason = f"{describe(op)} has a user outside the pattern ({describe(outside)})"
                    return _Refusal(reason, rule.shows)
    if rule.benefit is not None:
        m.benefit = rule.benefit(m) if callable(rule.benefit) else float(rule.benefit)
        if m.benefit <= 0:
            return _Refusal(f"benefit {m.benefit:.3g} is not positive", rule.shows)
    return None


def _found(rule: Rule, m: Match) -> bool:
    """Binds the rule's `finds`; False when one finds nothing."""
    for name, find in rule.finds.items():
        value = find(m)
        if value is None:
            return False
        m.values[name] = value
    return True


def try_rule(rule: Rule, root: GeOp, context: Any = None) -> tuple[Match, str | None] | None:
    """Whether `rule` would apply to `root` with `context`, without rewriting or remarking: the first
    binding that passes and None, else the first binding and its refusal; None when nothing binds
    (e.g. a `finds` that finds nothing). For planners that weigh a rule on hypothetical states."""
    refusal: tuple[Match, str | None] | None = None
    for state in match(rule.pattern, root):
        m = Match(root, state, context)
        if not _found(rule, m):
            continue
        failure = _first_failure(rule, m)
        if failure is None:
            return m, None
        refusal = refusal or (m, failure.reason)
    return refusal


def _shown(m: Match, names: tuple[str, ...] | None) -> list[Operation]:
    """The ops a remark names: the named bindings' ops in order, else the matched ops."""
    return m.matched_ops() if names is None else [m.op(n) for n in names]


def _replace(rule: Rule, m: Match, rewriter: PatternRewriter) -> tuple[str, str]:
    """Builds and installs the replacement: ("applied", description) or ("rejected", reason)."""
    b = Builder(m)
    try:
        out = rule.build(m, b)
    except (VerifyException, DiagnosticException) as e:
        b.discard()
        return "rejected", f"the replacement does not verify: {str(e).splitlines()[0]}"
    root = m.root
    if out is IN_PLACE:
        if b.ops:
            rewriter.insert(b.ops, InsertPoint.before(root))
        rewriter.handle_operation_modification(root)
        rewriter.has_done_action = True
        return "applied", "updated in place"
    new = [out] if isinstance(out, SSAValue) else list(out)
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

    def __init__(
        self,
        root: type[GeOp],
        rules: Sequence[Rule],
        pass_name: str,
        refused: set[tuple[str, Operation]],
        context: Any = None,
    ):
        self.root, self.rules, self.pass_name, self.refused = root, tuple(rules), pass_name, refused
        self.context = context

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, self.root):
            return
        for rule in self.rules:
            if self._try(rule, op, rewriter) and (rule.final or op.parent is None):
                return

    def _try(self, rule: Rule, root: GeOp, rewriter: PatternRewriter) -> bool:
        refusal: tuple[Match, _Refusal] | None = None
        for state in match(rule.pattern, root):
            m = Match(root, state, self.context)
            if not _found(rule, m):
                continue
            failure = _first_failure(rule, m)
            if failure is None:
                shown = _shown(m, rule.shows)
                kind, reason = _replace(rule, m, rewriter)
                if kind == "applied":
                    reason = rule.says(m) if rule.says is not None else reason
                    remarks.emit(self.pass_name, "applied", rule.name, shown, reason, m.benefit)
                    return True
                failure = _Refusal(reason, rule.shows)
            refusal = refusal or (m, failure)
        if refusal is not None and (rule.name, root) not in self.refused:
            self.refused.add((rule.name, root))
            m, failure = refusal
            remarks.emit(self.pass_name, "rejected", rule.name, _shown(m, failure.shows), failure.reason, m.benefit)
        return False


def rewrite_patterns(rules: Sequence[Rule], pass_name: str, context: Any = None) -> list[RulePattern]:
    """One RewritePattern per root op class, each trying its rules in table order."""
    by_root: dict[type[GeOp], list[Rule]] = {}
    for rule in rules:
        for cls in rule.pattern.classes:
            by_root.setdefault(cls, []).append(rule)
    refused: set[tuple[str, Operation]] = set()
    return [RulePattern(cls, rs, pass_name, refused, context) for cls, rs in by_root.items()]


class ByOpClass(RewritePattern):
    """The patterns in order, each asked only of the ops of its root class: one lookup per op instead
    of a type test per pattern (assign-formats has 34 root classes; on a 40k-op chain the tests were
    a fifth of the pass). Stops at the first pattern that acts, like xDSL's greedy applier."""

    def __init__(self, patterns: Sequence[RulePattern]):
        self.patterns = tuple(patterns)
        self._for_class: dict[type[Operation], tuple[RulePattern, ...]] = {}

    def patterns_for(self, cls: type[Operation]) -> tuple[RulePattern, ...]:
        found = self._for_class.get(cls)
        if found is None:
            found = self._for_class[cls] = tuple(p for p in self.patterns if issubclass(cls, p.root))
        return found

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        for pattern in self.patterns_for(type(op)):
            pattern.match_and_rewrite(op, rewriter)
            if rewriter.has_done_action:
                return


def apply_rules(
    module: ModuleOp, rules: Sequence[Rule], pass_name: str, *, walk: Walk = "users-first", context: Any = None
) -> None:
    """Rewrites `module` with `rules`; `context` is what the rules' functions see as `m.context`.

    walk="users-first" (the default) repeats until nothing changes, visiting users before their
    operands, so a rule rooted at the last op of a chain sees the whole chain before a smaller rule
    inside it. "program-order" sweeps the ops in program order, again and again until a sweep
    changes nothing. "single-pass" is one such sweep: for rules that annotate ops in place and read
    what earlier ops were given (a forward dataflow)."""
    patterns = ByOpClass(rewrite_patterns(rules, pass_name, context))
    if walk == "users-first":
        applier = GreedyRewritePatternApplier([patterns], dce_enabled=False)
        PatternRewriteWalker(applier, walk_reverse=True).rewrite_module(module)
    elif walk in ("program-order", "single-pass"):
        while _sweep(module, patterns) and walk == "program-order":
            pass
    else:
        raise ValueError(f"unknown walk '{walk}'; expected users-first, program-order or single-pass")


def _sweep(module: ModuleOp, patterns: ByOpClass) -> bool:
    """Tries the patterns on each op present at the start, in program order; whether any applied."""
    changed = False
    for op in list(module.walk()):
        if op.parent is None:
            continue  # the module, or erased by an earlier rewrite of this sweep
        if not patterns.patterns_for(type(op)):
            continue
        rewriter = PatternRewriter(op)
        patterns.match_and_rewrite(op, rewriter)
        changed = changed or rewriter.has_done_action
    return changed
