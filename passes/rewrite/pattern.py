"""The pattern language of the rewrite engine: DAG patterns over ge ops, as Python data.

    Op(ge.AddOp, Op(ge.MulOp, Op(ge.DivOp, "centered", "std"), "gamma"), Const("beta"))

A pattern element is one of

- ``"name"``: any SSA value, bound to ``name``. A name used twice must bind the same value (that is
  how a shared subexpression such as LayerNorm's ``x - mean`` is matched); ``"_"`` matches anything
  and binds nothing.
- ``Op(classes, *operands, name=..., **named_operands)``: a value defined by an op of one of
  ``classes`` (a class or a tuple: op-class alternatives) in the root's block. Positional operand
  patterns match the op's operand definitions in order, keyword ones match a definition by name;
  definitions left out are unconstrained and ``ABSENT`` requires an optional operand to be missing.
  Commutative ops (xDSL's ``Commutative`` trait: ge.add, ge.mul) also try their operands swapped.
  ``props={"axis": -1}`` and ``where=lambda op: ...`` filter the op; ``one_use=True`` requires the
  value to have a single use; ``name`` binds the value (and, through it, the op); ``any_block=True``
  lets the op sit in an enclosing block of the root's (a value defined outside a region).
- ``Const(name, value=..., tol=..., scalar=..., where=...)``: a value defined by a ``ge.constant``
  whose array is visible (inline or in the weights sidecar); ``value`` requires every element to be
  within ``tol`` of it, ``scalar`` a single element, ``where`` a predicate on the array.
- ``Either(p1, p2, ...)``: any of the alternatives, tried in order.

Matching is a backtracking search: `match(pattern, root_op)` yields every way the pattern binds,
so constraints checked later can reject one binding and the engine moves on to the next.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Union

import numpy as np
from xdsl.ir import Block, Operation, OpResult, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.traits import Commutative

from ge.ge_dialects.ge.base import GeOp
from ge.ge_dialects.ge.constant import ConstantOp
from ge.ge_dialects.ge.weights import constant_array

Pattern = Union[str, "Op", "Const", "Either"]

ABSENT = None
"""As an operand pattern: the optional operand must be absent."""


@dataclass(frozen=True)
class State:
    """One partial match: the names bound so far and the ops matched (root first)."""

    values: Mapping[str, SSAValue] = field(default_factory=dict)
    ops: tuple[Operation, ...] = ()

    def bind(self, name: str | None, value: SSAValue) -> State | None:
        if name is None or name == "_":
            return self
        bound = self.values.get(name)
        if bound is not None:
            return self if bound is value else None
        return State({**self.values, name: value}, self.ops)

    def add(self, op: Operation) -> State:
        return self if op in self.ops else State(self.values, (*self.ops, op))


@dataclass(frozen=True, init=False)
class Op:
    classes: tuple[type[GeOp], ...]
    operands: tuple[Pattern | None, ...]
    named: Mapping[str, Pattern | None]
    name: str | None
    result: int
    one_use: bool
    props: Mapping[str, Any]
    where: Callable[[Any], bool] | None
    """Takes an op of one of `classes` (typed Any: a predicate may be written for the specific class)."""
    any_block: bool

    def __init__(
        self,
        classes,
        *operands: Pattern | None,
        name: str | None = None,
        result: int = 0,
        one_use: bool = False,
        props: Mapping[str, Any] | None = None,
        where: Callable[[Any], bool] | None = None,
        any_block: bool = False,
        **named: Pattern | None,
    ):
        set_ = object.__setattr__
        set_(self, "classes", classes if isinstance(classes, tuple) else (classes,))
        set_(self, "operands", operands)
        set_(self, "named", named)
        set_(self, "name", name)
        set_(self, "result", result)
        set_(self, "one_use", one_use)
        set_(self, "props", props or {})
        set_(self, "where", where)
        set_(self, "any_block", any_block)

    def operand_pairs(self, op: IRDLOperation) -> list[tuple[Pattern | None, SSAValue | None]] | None:
        """(pattern, operand value) per constrained operand definition; None if they cannot fit."""
        defs = [n for n, _ in op.get_irdl_definition().operands]
        if len(self.operands) > len(defs) or any(k not in defs for k in self.named):
            return None
        wanted = {**dict(zip(defs, self.operands)), **self.named}
        return [(wanted[n], getattr(op, n)) for n in defs if n in wanted]


@dataclass(frozen=True)
class Const:
    name: str | None = None
    value: float | None = None
    tol: float = 1e-6
    scalar: bool = False
    where: Callable[[np.ndarray], bool] | None = None

    def accepts(self, array: np.ndarray) -> bool:
        if self.scalar and array.size != 1:
            return False
        if self.value is not None:
            if array.size == 0 or array.dtype.kind not in "fiub":
                return False
            if not np.all(np.abs(array.astype(np.float64) - self.value) <= self.tol):
                return False
        return self.where is None or bool(self.where(array))


@dataclass(frozen=True, init=False)
class Either:
    alternatives: tuple[Pattern, ...]

    def __init__(self, *alternatives: Pattern):
        object.__setattr__(self, "alternatives", alternatives)


def match(pattern: Op, root: Operation) -> Iterator[State]:
    """Every binding of `pattern` with `root` as the op of its top node."""
    if pattern.result >= len(root.results):
        return iter(())
    return _match(pattern, root.results[pattern.result], State(), root.parent_block())


def _match(p: Pattern | None, value: SSAValue | None, s: State, block: Block | None) -> Iterator[State]:
    if p is None:  # ABSENT
        if value is None:
            yield s
        return
    if value is None:
        return
    if isinstance(p, str):
        bound = s.bind(p, value)
        if bound is not None:
            yield bound
    elif isinstance(p, Either):
        for alternative in p.alternatives:
            yield from _match(alternative, value, s, block)
    elif isinstance(p, Const):
        owner = value.owner
        if isinstance(owner, ConstantOp):
            array = constant_array(owner)
            if array is not None and p.accepts(array):
                bound = s.bind(p.name, value)
                if bound is not None:
                    yield bound.add(owner)
    else:
        yield from _match_op(p, value, s, block)


def _match_op(p: Op, value: SSAValue, s: State, block: Block | None) -> Iterator[State]:
    op = value.owner
    if not (isinstance(value, OpResult) and isinstance(op, p.classes) and value.index == p.result):
        return
    if (op.parent_block() is not block and not p.any_block) or (p.one_use and not value.has_one_use()):
        return
    if any(op.p(k) != v for k, v in p.props.items()) or (p.where is not None and not p.where(op)):
        return
    pairs = p.operand_pairs(op)
    bound = s.bind(p.name, value)
    if pairs is None or bound is None:
        return
    bound = bound.add(op)
    orders = [pairs]
    if len(pairs) == 2 and op.has_trait(Commutative):
        orders.append([(pairs[0][0], pairs[1][1]), (pairs[1][0], pairs[0][1])])
    for order in orders:
        yield from _match_all(order, bound, block)


def _match_all(pairs: list[tuple[Pattern | None, SSAValue | None]], s: State, block: Block | None) -> Iterator[State]:
    if not pairs:
        yield s
        return
    (p, value), rest = pairs[0], pairs[1:]
    for bound in _match(p, value, s, block):
        yield from _match_all(rest, bound, block)
