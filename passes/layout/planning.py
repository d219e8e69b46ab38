"""The two kinds of layout rule as rewrite-engine rules, and the state they share along the walk.

`assign-formats` applies its table (`rules.py`) with the rewrite engine in one program-order sweep
(`walk="single-pass"`): the rules annotate ops in place (`ge.storage`, built by `IN_PLACE`
rules) and read the formats earlier ops were given, so a format flows forward along a chain.

- `anchor(...)`: an op that wants a format. Its listed operands are converted to `storage` (a
  TransData goes in front when the producer stores the value otherwise) and its listed results are
  produced in it. An op may have several anchor rules (Conv: activations and weights); each adds
  its annotation (`final=False`) and its remark.
- `follow(...)`: a format-agnostic op. When one of its full-shape operands arrives in a format the
  rule carries, all its full-shape operands and its listed results take that format; operands
  that broadcast must be scalars or vectors the format keeps whole (`Planner.broadcasts`). An op
  with no operand arriving in another format matches nothing (no remark).

A layout check is `fn(op, options) -> None | reason`; the rule turns it into an engine `Check`
whose remark says which values the rule would have placed. Besides its own checks, every rule
checks that the values it would relayout can have the format (`ge.ge_dialects.ge.layout.cannot_store`).
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping, Sequence
from dataclasses import dataclass, field

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from ge.ge_dialects.ge.base import GeOp, describe
from ge.ge_dialects.ge.layout import c0_of, cannot_store, is_trivial, origin_of, storage_of
from ge.ge_dialects.ge.types import Shape, shape_of
from ge.passes.layout.insert_trans_data import annotate
from ge.passes.rewrite import IN_PLACE, Builder, Check, Match, Op, Rule
from ge.passes.rewrite.engine import Replacement
from ge.passes.tensor_values import tensor_type


@dataclass(frozen=True)
class Options:
    """The pass options the checks read."""

    nz: bool
    nz_min_dim: int


LayoutCheck = Callable[[GeOp, Options], "str | None"]


@dataclass(frozen=True)
class Broadcast:
    """How a format reads an operand that broadcasts: `read_as_is` (result shape given) for a
    logical operand (`what` names them in a remark), `in_storage` for one stored in the format."""

    what: str
    read_as_is: Callable[[Shape, Shape], bool]
    in_storage: Callable[[Shape, Shape], bool]


Broadcasts = dict[str, Broadcast]


@dataclass(frozen=True)
class Decision:
    """The whole-graph choice for a format-agnostic op (`format_choice.py`): compute in `storage`,
    or in its origin format (None) for the reason `why`."""

    storage: str | None
    why: str = ""


@dataclass
class Planner:
    """What the rules share along the walk: the options, the storage format planned for each value
    so far (initially the one its type has), and the whole-graph choice where one was made."""

    options: Options
    broadcasts: Broadcasts
    planned: MutableMapping[SSAValue, str] = field(default_factory=dict)
    refused: dict[Operation, str] = field(default_factory=dict)
    """Why a follow rule did not carry a format through an op (its first refusal)."""
    decided: dict[Operation, Decision] = field(default_factory=dict)
    """Follower ops whose format the whole-graph choice fixed; the others follow greedily."""

    def storage(self, value: SSAValue) -> str:
        return self.planned.get(value, storage_of(value.type) if isinstance(value.type, TensorType) else "ND")

    def stored_otherwise(self, value: SSAValue) -> str | None:
        """The value's planned storage format when it is a relayout (not its origin), else None."""
        t = value.type
        if not isinstance(t, TensorType):
            return None
        storage = self.storage(value)
        return None if is_trivial(origin_of(t), storage, len(t.get_shape())) else storage

    def assign(self, op: GeOp, formats: dict[str, str], results: list[str]) -> None:
        annotate(op, formats)
        for name in results:
            for value in values_of(op, name):
                self.planned[value] = formats[name]


def values_of(op: GeOp, name: str) -> list[SSAValue]:
    """The values of an operand or result definition: one, or a variadic one's (`ge.custom`'s
    `inputs`, which share one annotation)."""
    value = getattr(op, name)
    return [value] if isinstance(value, SSAValue) else list(value)


def names_present(op: GeOp, names: Sequence[str]) -> list[str]:
    """The listed operand/result definitions the op has (optional ones may be absent, variadic ones
    empty)."""
    return [n for n in names if getattr(op, n, None) is not None and values_of(op, n)]


def _cannot_store(op: GeOp, names: list[str], storage: str) -> str | None:
    """Why one of the named values cannot be stored in `storage` (None: all can)."""
    for name in names:
        for value in values_of(op, name):
            t = value.type
            if not isinstance(t, TensorType):
                return f"'{name}' is not a tensor"
            reason = cannot_store(t, storage)
            if reason is not None:
                return f"'{name}': {reason}"
    return None


# -- anchor rules ----------------------------------------------------------------------------------


def anchor(
    name: str,
    ops: tuple[type[GeOp], ...],
    storage: str,
    operands: tuple[str, ...],
    results: tuple[str, ...],
    checks: tuple[LayoutCheck, ...] = (),
    benefit: Callable[[GeOp], float] | None = None,
) -> Rule:
    """A rule putting `operands` and `results` of `ops` in `storage` when every check passes;
    `benefit` is what its remark reports (e.g. the Cube MACs a matmul runs in NZ)."""

    def placed(m: Match) -> list[str]:
        return names_present(m.root, operands) + names_present(m.root, results)

    def refusal(reason: Callable[[Match], str | None]) -> Check:
        def why_not(m: Match) -> str | None:
            found = reason(m)
            return None if found is None else (f"{describe(m.root)}: {', '.join(placed(m))} not in {storage}: {found}")

        return Check(why_not)

    def build(m: Match, b: Builder) -> Replacement:
        m.context.assign(m.root, {n: storage for n in placed(m)}, names_present(m.root, results))
        return IN_PLACE

    rejects = [refusal(_on_root(check)) for check in checks]
    rejects.append(refusal(lambda m: _cannot_store(m.root, placed(m), storage)))
    return Rule(
        name,
        Op(ops),
        build,
        rejects=rejects,
        final=False,
        benefit=None if benefit is None else (lambda m: benefit(m.root)),
        says=lambda m: f"{describe(m.root)}: {', '.join(placed(m))} in {storage}",
        doc=f"{', '.join(operands + results)} of {', '.join(c.name for c in ops)} in {storage}",
    )


# -- follow rules ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Arrival:
    """A follow rule's view of one op: the operand that brings a format, and the op's values."""

    operand: str
    storage: str
    full: list[str]
    broadcast: list[str]
    results: list[str]
    out_shape: Shape


ShapeMatch = Callable[[GeOp, Shape, Shape], bool]
"""Whether an operand of shape `a` is a full-shape operand of an op whose result has shape `b`."""


def same_shape(op: GeOp, a: Shape, b: Shape) -> bool:
    return a == b


def _arrival(
    m: Match, operands: tuple[str, ...], results: tuple[str, ...], full_shape: ShapeMatch = same_shape
) -> _Arrival | None:
    if "arrival" not in m.notes:
        op, planner = m.root, m.context
        present = names_present(op, results)
        out_shape = shape_of(tensor_type(values_of(op, present[0])[0]))
        candidates = names_present(op, operands)
        full = [
            n for n in candidates if all(full_shape(op, shape_of(tensor_type(v)), out_shape) for v in values_of(op, n))
        ]
        broadcast = [n for n in candidates if n not in full]
        arriving = [(n, s) for n in full for v in values_of(op, n) if (s := planner.stored_otherwise(v)) is not None]
        decision = planner.decided.get(op)
        if decision is not None and decision.storage is not None and full:
            # chosen for the graph: from an operand stored in it, else for the op's readers
            arriving = [(n, s) for n, s in arriving if s == decision.storage] or [(full[0], decision.storage)]
        m.notes["arrival"] = (
            None if not arriving else _Arrival(arriving[0][0], arriving[0][1], full, broadcast, present, out_shape)
        )
    return m.notes["arrival"]


def arrival_of(m: Match) -> _Arrival | None:
    """What a follow rule saw arrive at its root (bound once its `finds` ran, e.g. by `try_rule`)."""
    return m.notes.get("arrival")


def _c0_mismatch(op: GeOp, names: list[str]) -> str | None:
    c0s = [(n, c0_of(tensor_type(v).element_type)) for n in names for v in values_of(op, n)]
    if len({c for _, c in c0s}) > 1:
        shown = ", ".join(f"'{n}' C0={c}" for n, c in c0s)
        return f"its values have different C0 ({shown}): not a pure elementwise map in storage"
    return None


def _not_arriving(op: GeOp, a: _Arrival, planner: Planner) -> str | None:
    if op in planner.decided:
        return None  # the whole-graph choice weighed the conversions
    for name in a.full:
        for value in values_of(op, name):
            if planner.storage(value) != a.storage:
                return f"operand '{name}' is stored in {planner.storage(value)} (converting it would add a TransData)"
    return None


def _bad_broadcast(op: GeOp, a: _Arrival, planner: Planner) -> str | None:
    rule = planner.broadcasts.get(a.storage)
    for n in a.broadcast:
        for value in values_of(op, n):
            shape = shape_of(tensor_type(value))
            if all(d == 1 for d in shape):
                continue  # a scalar broadcasts in every format
            stored = planner.stored_otherwise(value)
            if stored is not None:
                if stored != a.storage:
                    return f"broadcast operand '{n}' is stored in {stored}"
                if rule is None or not rule.in_storage(shape, a.out_shape):
                    return (
                        f"broadcast operand '{n}' of shape {list(shape)}, stored in {stored}, broadcasts to "
                        f"{list(a.out_shape)} inside its blocks"
                    )
                continue
            if rule is None or not rule.read_as_is(shape, a.out_shape):
                what = rule.what if rule is not None else "nothing else"
                return (
                    f"operand '{n}' of shape {list(shape)} broadcasts to {list(a.out_shape)} in a way "
                    f"{a.storage} cannot (only scalars and {what})"
                )
    return None


def _says(m: Match, a: _Arrival) -> str:
    """What an applied follow rule did: carry an arriving format, or compute in the format the
    whole-graph choice gave it where none arrives (its readers ask for it)."""
    if any(m.context.stored_otherwise(v) == a.storage for n in a.full for v in values_of(m.root, n)):
        return f"{describe(m.root)} carries {a.storage} from '{a.operand}'"
    return f"{describe(m.root)} computes in {a.storage} for its readers, the whole-graph choice"


def _kept_in_origin(op: GeOp, planner: Planner) -> str | None:
    decision = planner.decided.get(op)
    return decision.why if decision is not None and decision.storage is None else None


def _stored_broadcasts(op: GeOp, a: _Arrival, planner: Planner) -> list[str]:
    """The broadcast operands already stored in the arriving format (they are read in it)."""
    return [n for n in a.broadcast if all(planner.storage(v) == a.storage for v in values_of(op, n))]


def _on_root(check: LayoutCheck) -> Callable[[Match], str | None]:
    """`check` run on a rule's root with the options of the run."""
    return lambda m: check(m.root, m.context.options)


def _on_root_arriving(check: LayoutCheck) -> Callable[[Match, _Arrival], str | None]:
    """`check` run on a rule's root with the options of the run (the arrival does not matter)."""
    return lambda m, a: check(m.root, m.context.options)


def follow(
    name: str,
    ops: tuple[type[GeOp], ...],
    formats: tuple[str, ...] | Callable[[GeOp], tuple[str, ...]],
    operands: tuple[str, ...],
    results: tuple[str, ...],
    checks: tuple[LayoutCheck, ...] = (),
    changes_c0: bool = False,
    full_shape: ShapeMatch = same_shape,
    all_arrive: bool = False,
) -> Rule:
    """A rule letting `ops` compute in a format among `formats` that one of their full-shape
    `operands` arrives in; `operands` of another shape broadcast; `formats` may be a function of
    the op (a custom op's: its registration's). With `changes_c0` the op's kernel may read and
    write blocks of different C0 (a type change that re-blocks the channels, as GE's AscendQuant
    reads f16 NC1HWC0 with C0 = 16 and writes int8 with C0 = 32); otherwise its values share one
    C0, so that it maps storage element to storage element. `full_shape` says which operands
    count as full-shape (default: the result's shape; a concat's: all but the concatenated axis).
    With `all_arrive`, every full-shape operand must already be stored in the format: a rule that
    would convert one to join adds a TransData for what it saves."""

    def carried(op: GeOp) -> tuple[str, ...]:
        return formats(op) if callable(formats) else formats

    def seen(m: Match) -> _Arrival:
        arrival = _arrival(m, operands, results, full_shape)
        assert arrival is not None  # `finds` bound it
        return arrival

    def refusal(reason: Callable[[Match, _Arrival], str | None]) -> Check:
        def why_not(m: Match) -> str | None:
            a = seen(m)
            found = reason(m, a)
            if found is None:
                return None
            why = f"{describe(m.root)} does not carry {a.storage} from '{a.operand}': {found}"
            m.context.refused.setdefault(m.root, why)
            return why

        return Check(why_not)

    def arriving(m: Match) -> SSAValue | None:
        a = _arrival(m, operands, results, full_shape)
        return None if a is None else getattr(m.root, a.operand)

    def build(m: Match, b: Builder) -> Replacement:
        a = seen(m)
        stored = _stored_broadcasts(m.root, a, m.context)
        m.context.assign(m.root, {n: a.storage for n in a.full + stored + a.results}, a.results)
        return IN_PLACE

    rejects = [
        refusal(lambda m, a: _kept_in_origin(m.root, m.context)),
        refusal(
            lambda m, a: (
                None
                if a.storage in carried(m.root)
                else f"{name} does not carry {a.storage} (operand '{a.operand}')"
                + (f"; it declares {', '.join(carried(m.root)) or 'no formats'}" if callable(formats) else "")
            )
        ),
    ]
    rejects += [refusal(_on_root_arriving(check)) for check in checks]
    if not changes_c0:
        rejects.append(
            refusal(lambda m, a: _c0_mismatch(m.root, a.full + _stored_broadcasts(m.root, a, m.context) + a.results))
        )
    if all_arrive:
        rejects.append(refusal(lambda m, a: _not_arriving(m.root, a, m.context)))
    rejects += [
        refusal(lambda m, a: _bad_broadcast(m.root, a, m.context)),
        refusal(lambda m, a: _cannot_store(m.root, a.full + a.results, a.storage)),
    ]
    return Rule(
        name,
        Op(ops),
        build,
        rejects=rejects,
        finds={"arriving": arriving},
        says=lambda m: _says(m, seen(m)),
        doc=f"{', '.join(c.name for c in ops)} carry "
        + ("the formats they declare" if callable(formats) else " or ".join(formats)),
    )
