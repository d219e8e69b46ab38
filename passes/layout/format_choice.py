"""The whole-graph format choice of assign-formats: which format-agnostic ops compute in a storage
format, chosen per component so that the modeled time of the conversions is least.

The anchor rules have placed their ops first (Conv in NC1HWC0, MatMul in FRACTAL_NZ, ...). The ops
with a follow rule then form components: ops joined by the values they pass each other and by the
values from other ops they read together (one TransData of a value serves all its readers). A
component's boundary is fixed: the values it reads from other ops are stored as planned, and the
ops outside that read its values need them as they ask (an anchor its format, the graph's outputs
their declared type, any other op its origin; a conversion one of them makes anyway is free to the
component). Inside, each op has modes: its origin format, or a
format F that arrives at or is asked on the boundary, in which its follow rule reads the full-shape
operands in F (converting them where they are stored otherwise), writes its results in F and reads
its broadcast operands as they are stored. Which modes an op has is the rule's own verdict on a
hypothetical plan (`try_rule`; the broadcast operands once stored in F, once as they are).

The choice is a 0-1 program, solved by scipy's HiGHS:

    minimize    sum of y[v, S, G] * time(TransData of v from S to G)
    subject to  one mode per op
                y[v, S, G] >= reads[v, G] + stored[v, S] - 1
                a mode reading a broadcast operand <= the modes storing it as the mode reads it

where stored[v, S] is the sum of the modes of v's producer that write it in S (1 on the boundary)
and reads[v, G] a reader's mode that reads it in G (1 for a reader outside). A TransData's time is
the device cost model's (`CostModel`, the figures ge-run reports) as fuse-trans-data will leave it:
beside a copy kernel (a transpose, reshape, concat ... reading or writing the value alone), or
between NCHW and NC1HWC0 beside a Vector op that converts it in its UB (TransDataTo5HD, for the
widths the target takes; only at a kernel's edge, never between a Cube op and its epilogue or inside
a chain of Vector ops, which fuse-ops would join), only what it adds to that kernel's time, else a
kernel's time of its own; nothing where no kernel is left: a constant's (fold-trans-data converts
it at compile time), a view, and ND <-> FRACTAL_NZ where the MTE converts on the move (it joins the
neighbouring kernel). The device model times a kernel by its logical bytes, so a kernel's own time
does not depend on its format and only the conversions are weighed. Ties: a conversion also costs
a thousandth of a microsecond (one op fewer is better), and a mode in a carried format gains a
millionth (the format flows on, as GE's propagation does).

The decisions go to the planner (`Planner.decided`) and the follow rules apply them in their usual
sweep, with their remarks. A component of more than `max_ops` ops keeps the greedy sweep.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import LinearConstraint, milp
from scipy.sparse import coo_array
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.test_value import create_ssa_value

from ge.device.engines import engine_of
from ge.ge_dialects import ge
from ge.ge_dialects.ge.base import GeOp, describe
from ge.ge_dialects.ge.facts import Engine, MovesData
from ge.ge_dialects.ge.layout import TransDataOp, is_stored_logically, storage_of, with_storage
from ge.ge_dialects.ge.types import shape_of
from ge.passes import remarks
from ge.passes.fuse_trans_data import element_bits, is_copy, is_vector_kernel
from ge.passes.fusion.cost import CostModel
from ge.passes.layout.insert_trans_data import annotation, operand_names
from ge.passes.layout.planning import Decision, Planner, arrival_of, values_of
from ge.passes.rewrite import Match, Rule, try_rule

Followers = dict[type[Operation], tuple[Rule, ...]]
"""The follow rules of each op class, in table order (one per format it carries)."""

MAX_COMPONENT_OPS = 2000
"""Components up to this many ops get the 0-1 program; larger ones are placed greedily."""
CONVERSION_US = 1e-3
"""What a conversion costs beyond its time: one op more in the graph (a tie-breaker)."""
CARRY_US = 1e-6
"""What computing in a carried format gains: the format flows on (a tie-breaker)."""
UNCONVERTIBLE_US = 1e3
"""A conversion the TransData op cannot do (its verifier refuses): effectively never chosen."""


@dataclass
class Mode:
    """One way to compute an op: in `storage` (None: its origin format), reading `reads` as the given
    types (converted where stored otherwise), `held` only as stored in one of the given types (the
    broadcast operands) and writing `writes`."""

    storage: str | None
    reads: dict[SSAValue, Attribute]
    held: dict[SSAValue, frozenset[Attribute]]
    writes: dict[SSAValue, Attribute]


@dataclass
class Component:
    """Format-agnostic ops joined by the values they pass each other, in program order."""

    ops: list[GeOp]
    modes: dict[GeOp, list[Mode]] = field(default_factory=dict)


class ConversionCost:
    """Microseconds of a TransData of a value from one stored type to another, on one target, as
    fuse-trans-data will leave it: a kernel of its own, or part of a neighbouring kernel."""

    def __init__(self, cost: CostModel):
        self.cost = cost
        self.on_the_move = cost.target.mte.nd_nz_on_the_move
        self._alone: dict[tuple[Attribute, Attribute], float] = {}
        self._conversions: dict[tuple[Attribute, Attribute], TransDataOp | None] = {}

    def __call__(self, value: SSAValue, source: Attribute, target: Attribute) -> float:
        if isinstance(value.owner, ge.ConstantOp):
            return 0.0  # fold-trans-data converts it once, at compile time
        conversion = self._conversion(source, target)
        if conversion is None:
            return UNCONVERTIBLE_US
        if conversion.is_view() or (conversion.converts_nd_nz() and self.on_the_move):
            return CONVERSION_US
        kernels = beside_copies(value) or self._beside_vector(conversion, value)
        if kernels:
            return sum(self._in_kernel(conversion, value, kernel) for kernel in kernels) + CONVERSION_US
        key = (source, target)
        if key not in self._alone:
            self._alone[key] = self.cost.op_time(conversion) * 1e6 + CONVERSION_US
        return self._alone[key]

    def _conversion(self, source: Attribute, target: Attribute) -> TransDataOp | None:
        """A detached TransData from `source` to `target` (None: its verifier refuses), one per pair."""
        key = (source, target)
        if key not in self._conversions:
            assert isinstance(target, TensorType)
            conversion = TransDataOp.to(create_ssa_value(source), target)
            try:
                conversion.verify()
                self._conversions[key] = conversion
            except VerifyException:
                self._conversions[key] = None
        return self._conversions[key]

    def _beside_vector(self, conversion: TransDataOp, value: SSAValue) -> list[GeOp]:
        """The Vector ops a conversion of `value` joins in fuse-trans-data (`join_vector`: NCHW <->
        NC1HWC0 in the UB, for the element widths the target's TransDataTo5HD takes): its readers
        if each runs on the Vector, else its producer if that does; none otherwise. Only at a
        kernel's edge: a conversion between two ops that compute on the AI Core (a Cube op and its
        epilogue, a chain of Vector ops) would split what fuse-ops fuses, which the choice does not
        see, so there it is weighed as a kernel of its own."""
        if not conversion.converts_5hd() or element_bits(conversion) > self.cost.target.vector.transdata_5hd_bits:
            return []
        producer = value.owner
        readers = _readers(value)
        if readers and not _computes(producer) and all(is_vector_kernel(r) for r in readers):
            return [r for r in readers if isinstance(r, GeOp)]
        if isinstance(producer, GeOp) and is_vector_kernel(producer) and not any(map(_on_vector, readers)):
            return [producer]
        return []

    def _in_kernel(self, conversion: TransDataOp, value: SSAValue, kernel: GeOp) -> float:
        """What the conversion adds to the kernel it joins (a copy, or a Vector op: its Vector work;
        the kernel reads and writes the same logical bytes either way)."""
        engine = engine_of(kernel)
        alone = self.cost.kernel_time([kernel], list(kernel.operands), list(kernel.results), engine)
        if value.owner is kernel:  # an epilogue: the kernel stores the converted value
            outputs = [conversion.dst if r is value else r for r in kernel.results]
            joined = self.cost.kernel_time([kernel, conversion], list(kernel.operands), outputs, engine)
        else:  # a prologue: the kernel loads the value as it is stored
            inputs = [conversion.src if v is value else v for v in kernel.operands]
            joined = self.cost.kernel_time([conversion, kernel], inputs, list(kernel.results), engine)
        return max(0.0, joined - alone) * 1e6


def beside_copies(value: SSAValue) -> list[GeOp]:
    """The copy kernels a conversion of `value` joins in fuse-trans-data (`join_copy`): its readers
    if each is a lone copy (a transpose, reshape, slice, concat ...), else its producer if that is
    one; none otherwise."""
    readers = _readers(value)
    if readers and all(is_copy(r) for r in readers):
        return [r for r in readers if isinstance(r, GeOp)]
    producer = value.owner
    return [producer] if isinstance(producer, GeOp) and is_copy(producer) else []


def _on_vector(op: Operation | Block) -> bool:
    """An op that computes on the Vector (no copy; a custom op too): fuse-ops may chain it."""
    return isinstance(op, GeOp) and op.engine() is Engine.VECTOR and not op.has_trait(MovesData)


def _computes(op: Operation | Block) -> bool:
    """An op whose kernel computes on the AI Core: a Cube op, or one `_on_vector`."""
    return isinstance(op, GeOp) and (op.engine_class().uses_cube or _on_vector(op))


def _readers(value: SSAValue) -> list[Operation]:
    """The ops that read `value`, through the TransData that convert it (in a materialized graph,
    the readers a conversion of it serves)."""
    found: list[Operation] = []
    for use in value.uses:
        op = use.operation
        found += _readers(op.results[0]) if isinstance(op, TransDataOp) else [op]
    return list(dict.fromkeys(found))


def components(module: ModuleOp, followers: Followers) -> list[Component]:
    """The ops with a follow rule, grouped by the values they pass each other and the values from
    other ops they read together (one TransData of such a value serves all its readers: their
    choices are one problem); constants aside (their conversions are folded). Union-find, linear."""
    ops = [op for op in module.walk() if type(op) in followers]
    index = {op: i for i, op in enumerate(ops)}
    parent = list(range(len(ops)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first_reader: dict[SSAValue, int] = {}
    for i, op in enumerate(ops):
        for value in op.operands:
            j = index.get(value.owner) if isinstance(value.owner, Operation) else None
            if j is None and not isinstance(value.owner, ge.ConstantOp):
                j = first_reader.setdefault(value, i)
            if j is not None:
                parent[root(i)] = root(j)
    groups: dict[int, list[GeOp]] = {}
    for i, op in enumerate(ops):
        assert isinstance(op, GeOp)
        groups.setdefault(root(i), []).append(op)
    return [Component(group) for group in groups.values()]


class FormatChoice:
    """Chooses the modes of the format-agnostic ops of a module, component by component."""

    def __init__(self, planner: Planner, followers: Followers, cost: ConversionCost, max_ops: int):
        self.planner, self.followers, self.cost, self.max_ops = planner, followers, cost, max_ops
        self._needed: dict[SSAValue, list[Attribute]] = {}

    def run(self, module: ModuleOp, pass_name: str) -> None:
        for component in components(module, self.followers):
            inside = set(component.ops)
            self._needed.clear()  # readers outside: per component
            formats = self._formats(component, inside)
            if not formats:
                continue  # nothing arrives, nothing is asked: every op stays in its origin format
            if len(component.ops) > self.max_ops:
                why = (
                    f"{len(component.ops)} format-agnostic ops joined to {describe(component.ops[0])} are more "
                    f"than max-component-ops={self.max_ops}: their formats are chosen op by op"
                )
                remarks.emit(pass_name, "rejected", "whole-graph", component.ops[:1], why)
                continue
            for op in component.ops:
                component.modes[op] = self._modes(op, formats)
            if not any(m.storage for modes in component.modes.values() for m in modes):
                continue  # no op can take a format: the follow rules say why
            self._decide(component, inside, pass_name)

    # -- the boundary ------------------------------------------------------------------------------

    def stored(self, value: SSAValue) -> Attribute:
        """The type a value outside the component is stored as (its planned storage)."""
        storage = self.planner.stored_otherwise(value)
        return value.type if storage is None else with_storage(_tensor(value), storage)

    def _needs(self, value: SSAValue, inside: set[GeOp]) -> list[Attribute]:
        """The types the readers outside the component need `value` in (asked once per value)."""
        if value not in self._needed:
            self._needed[value] = self._outside_needs(value, inside)
        return self._needed[value]

    def _outside_needs(self, value: SSAValue, inside: set[GeOp]) -> list[Attribute]:
        needs = []
        for use in value.uses:
            reader = use.operation
            if reader in inside:
                continue
            if isinstance(reader, func.ReturnOp):
                fn = reader.parent_op()
                if isinstance(fn, func.FuncOp):
                    needs.append(fn.function_type.outputs.data[use.index])
                    continue
            names = operand_names(reader)
            asked = annotation(reader).get(names[use.index]) if use.index < len(names) else None
            needs.append(value.type if asked is None else with_storage(_tensor(value), asked))
        return needs

    def _formats(self, component: Component, inside: set[GeOp]) -> list[str]:
        """The formats arriving at the component or asked of it, in the order first seen."""
        found: dict[str, None] = {}
        for op in component.ops:
            for value in op.operands:
                if not _is_inside(value, inside) and isinstance(value.type, TensorType):
                    storage = self.planner.stored_otherwise(value)
                    if storage is not None:
                        found[storage] = None
            for result in op.results:
                if isinstance(result.type, TensorType):
                    for need in self._needs(result, inside):
                        storage = _stored_otherwise(need)
                        if storage is not None:
                            found[storage] = None
        return list(found)

    # -- the modes of one op -----------------------------------------------------------------------

    def _modes(self, op: GeOp, formats: Sequence[str]) -> list[Mode]:
        """The op's origin mode, then one per format one of its follow rules allows (the rule's refusals
        are its remarks in the sweep)."""
        tensors = [v for v in op.operands if isinstance(v.type, TensorType)]
        results: list[SSAValue] = [r for r in op.results if isinstance(r.type, TensorType)]
        modes = [Mode(None, {v: v.type for v in tensors}, {}, {r: r.type for r in results})]
        for storage in formats:
            for rule in self.followers[type(op)]:
                mode = self._mode_in(op, rule, storage, tensors, results)
                if mode is not None:
                    modes.append(mode)
                    break
        return modes

    def _trial(self, op: GeOp, rule: Rule, planned: dict[SSAValue, str]) -> tuple[Match, str | None] | None:
        """The rule's verdict on `op` were `planned` the storage of those values."""
        trial = Planner(self.planner.options, self.planner.broadcasts, ChainMap(planned, self.planner.planned))
        return try_rule(rule, op, trial)

    def _mode_in(
        self, op: GeOp, rule: Rule, storage: str, tensors: list[SSAValue], results: list[SSAValue]
    ) -> Mode | None:
        """The op's mode in `storage`, if its rule allows one (broadcast operands stored in it, or
        as they are)."""
        first = self._trial(op, rule, {v: storage for v in tensors})
        if first is None:
            return None
        m, stored_refusal = first
        arrival = arrival_of(m)
        if arrival is None or arrival.storage != storage:
            return None
        full = [v for n in arrival.full for v in values_of(op, n)]
        broadcast = [
            v for n in arrival.broadcast for v in values_of(op, n) if not all(d == 1 for d in shape_of(_tensor(v)))
        ]
        as_is_refusal = stored_refusal
        if broadcast:
            origin = {v: _origin_storage(v) for v in broadcast}
            second = self._trial(op, rule, {**{v: storage for v in full}, **origin})
            as_is_refusal = None if second is None else second[1]
        if stored_refusal is not None and as_is_refusal is not None:
            return None
        held = {
            v: frozenset(
                ([with_storage(_tensor(v), storage)] if stored_refusal is None else [])
                + ([v.type] if as_is_refusal is None else [])
            )
            for v in broadcast
        }
        reads = {v: v.type for v in tensors if v not in held and not _is_scalar(v)}
        reads.update({v: with_storage(_tensor(v), storage) for v in full})
        written = {v for n in arrival.results for v in values_of(op, n)}
        writes = {r: with_storage(_tensor(r), storage) if r in written else r.type for r in results}
        return Mode(storage, reads, held, writes)

    # -- the program -------------------------------------------------------------------------------

    def _decide(self, component: Component, inside: set[GeOp], pass_name: str) -> None:
        program = _Program()
        choice: dict[GeOp, list[int]] = {}
        writers: dict[SSAValue, dict[Attribute, list[int]]] = {}
        for op in component.ops:
            modes = [m for m in component.modes[op] if self._holdable(m, inside)]
            component.modes[op] = modes
            choice[op] = [program.variable(-CARRY_US if m.storage else 0.0, integer=True) for m in modes]
            program.row({x: 1.0 for x in choice[op]}, 1.0, 1.0)
            for mode, x in zip(modes, choice[op]):
                for value, stored in mode.writes.items():
                    writers.setdefault(value, {}).setdefault(stored, []).append(x)

        def stored_as(value: SSAValue) -> dict[Attribute, list[int] | None]:
            """The types `value` may be stored as, each with the modes that store it so (None: fixed)."""
            if value in writers:
                return dict(writers[value])
            return {self.stored(value): None}

        conversions: dict[tuple[SSAValue, Attribute, Attribute], int] = {}

        def read(value: SSAValue, want: Attribute, trigger: int | None) -> None:
            if (
                value not in writers
                and not isinstance(value.owner, ge.ConstantOp)
                and want in self._needs(value, inside)
            ):
                return  # a boundary value an op outside reads so too: its TransData is made anyway
            # (a constant's conversion is folded: free, and its readers, possibly thousands, go unasked)
            for source, by in stored_as(value).items():
                if source == want:
                    continue
                key = (value, source, want)
                if key not in conversions:
                    conversions[key] = program.variable(self.cost(value, source, want))
                row = {conversions[key]: 1.0}
                for x in by or ():
                    row[x] = row.get(x, 0.0) - 1.0
                if trigger is not None:
                    row[trigger] = row.get(trigger, 0.0) - 1.0
                # y >= reads + stored - 1, a reader outside or a boundary value counting 1
                program.row(row, (trigger is None) + (by is None) - 1.0, np.inf)

        for op in component.ops:
            for mode, x in zip(component.modes[op], choice[op]):
                for value, want in mode.reads.items():
                    read(value, want, x)
                for value, allowed in mode.held.items():
                    if value in writers:  # (a boundary value was checked by _holdable)
                        row = {x: 1.0}
                        for stored, xs in writers[value].items():
                            if stored in allowed:
                                for w in xs:
                                    row[w] = row.get(w, 0.0) - 1.0
                        program.row(row, -np.inf, 0.0)
            for result in op.results:
                if isinstance(result.type, TensorType):
                    for need in self._needs(result, inside):
                        read(result, need, None)
        solution = program.solve()
        if solution is None:
            why = (
                f"the 0-1 program of {len(component.ops)} ops joined to {describe(component.ops[0])} found no solution"
            )
            remarks.emit(pass_name, "rejected", "whole-graph", component.ops[:1], why)
            return
        for op in component.ops:
            modes = component.modes[op]
            chosen = modes[int(np.argmax([solution[x] for x in choice[op]]))]
            if chosen.storage is not None:
                self.planner.decided[op] = Decision(chosen.storage)
            elif len(modes) > 1:
                carried = ", ".join(m.storage for m in modes if m.storage)
                self.planner.decided[op] = Decision(
                    None,
                    f"the whole-graph choice computes it in its origin format: in {carried} its "
                    "component's conversions take longer",
                )

    def _holdable(self, mode: Mode, inside: set[GeOp]) -> bool:
        """Whether each broadcast operand from outside the component is stored as the mode reads it."""
        return all(_is_inside(v, inside) or self.stored(v) in allowed for v, allowed in mode.held.items())


class _Program:
    """A 0-1 program built row by row: minimize c.x subject to lower <= A x <= upper."""

    def __init__(self) -> None:
        self.costs: list[float] = []
        self.integer: list[int] = []
        self.entries: tuple[list[int], list[int], list[float]] = ([], [], [])
        self.lower_rows: list[float] = []
        self.upper_rows: list[float] = []

    def variable(self, cost: float, integer: bool = False) -> int:
        """A new variable in [0, 1] (a 0-1 one if `integer`) of the given cost; its index."""
        self.costs.append(cost)
        self.integer.append(1 if integer else 0)
        return len(self.costs) - 1

    def row(self, coefficients: dict[int, float], lower: float, upper: float) -> None:
        r = len(self.lower_rows)
        rows, cols, data = self.entries
        for col, coefficient in coefficients.items():
            rows.append(r)
            cols.append(col)
            data.append(coefficient)
        self.lower_rows.append(lower)
        self.upper_rows.append(upper)

    def solve(self) -> np.ndarray | None:
        rows, cols, data = self.entries
        matrix = coo_array((data, (rows, cols)), shape=(len(self.lower_rows), len(self.costs))).tocsr()
        result = milp(
            np.array(self.costs),
            integrality=np.array(self.integer),
            bounds=(0.0, 1.0),
            constraints=LinearConstraint(matrix, np.array(self.lower_rows), np.array(self.upper_rows)),
        )
        return result.x if result.success else None


def _tensor(value: SSAValue) -> TensorType:
    assert isinstance(value.type, TensorType)
    return value.type


def _is_inside(value: SSAValue, inside: set[GeOp]) -> bool:
    return isinstance(value.owner, Operation) and value.owner in inside


def _is_scalar(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType) and all(d == 1 for d in shape_of(value.type))


def _origin_storage(value: SSAValue) -> str:
    return storage_of(_tensor(value))


def _stored_otherwise(t: Attribute) -> str | None:
    return None if not isinstance(t, TensorType) or is_stored_logically(t) else storage_of(t)


def follow_rules(rules: Iterable[Rule]) -> Followers:
    """The follow rules of each op class (a follow rule binds what arrives: `finds`), in table order."""
    found: Followers = {}
    for rule in rules:
        if rule.finds:
            for cls in rule.pattern.classes:
                found[cls] = (*found.get(cls, ()), rule)
    return found
