"""The fusion engine: turns a table of `FusionRule`s into `fused.group` kernels.

A rule is data: an anchor (op classes), followers (steps along the anchor's consumer chain),
producers (steps back from the anchor's operands), constraints, and a benefit function. For each
rule in table order and each anchor in program order the engine grows a candidate group, then
checks, in this order:
  1. the rule's own constraints (dtypes, formats, shapes, training vs inference);
  2. no cycle: no path leaves the group and comes back into it (the group would depend on itself);
  3. no serialization: the estimated critical path of the graph does not get longer (a group waits
     for all its inputs, so absorbing an op whose other input comes from a long parallel branch
     delays the whole kernel) by more than one cross-stream join (an event record and wait: what
     keeping the op on a parallel branch would cost the path on the device);
  4. the working set of a minimal tile fits the on-chip buffer (UB) of the target;
  5. a positive benefit: the time the members take as separate tasks minus the group's time as one
     task, both by the device model ge-run reports (cost.py), minus what the group adds to the
     critical path (a shared producer's other readers wait for the whole group).
Each candidate that reaches the checks leaves a remark: applied with its benefit, or rejected with
the reason; a rejected candidate is retried without its farthest producer, then its last follower.
Rules are applied by outlining the members into a `fused.group`.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Block, Operation, SSAValue

from ge.ge_dialects import fused
from ge.ge_dialects.ge.base import GeOp
from ge.ge_dialects.ge.types import numpy_dtype
from ge.passes import remarks
from ge.passes.fusion.cost import CostModel

PASS_NAME = "fuse-ops"
TRAINING_ATTR = "ge.training"
"""A module with this unit attribute is a training graph; inference-only rules skip it."""
INCREMENTAL_SCHEDULE = True
"""Update the schedule after each group (False: rebuild it from the block, as a reference)."""


@dataclass(frozen=True)
class Step:
    """One link of a chain: up to `max_count` consecutive ops of the classes in `ops`, each accepted
    by `when` (called with the op and the group value it consumes or produces).

    Producer steps also say where the walk goes and what it may take: `inputs` are the operand
    indices it continues from (or a function of the op giving them: a relu_grad's incoming gradient,
    not the forward output it masks with); `shared` lets a producer's results have readers outside
    the group (the group then writes them out for those readers, as a backward's gradient feeds both
    a bias reduction and the next Cube backprop); `min_count=0` makes the link optional (a layout
    change that may or may not sit between a reduction and its producer)."""

    ops: frozenset[type[Operation]]
    max_count: int = 1
    when: Callable[[Operation, SSAValue], bool] | None = None
    inputs: tuple[int, ...] | Callable[[Operation], Sequence[int]] = (0,)
    shared: bool | Callable[[Operation], bool] = False
    """Or a predicate on the producer: which of the step's ops may be shared."""
    min_count: int = 1

    def next_inputs(self, op: Operation) -> list[SSAValue]:
        indices = self.inputs(op) if callable(self.inputs) else self.inputs
        return [op.operands[i] for i in indices if i < len(op.operands)]


@dataclass(frozen=True)
class Constraint:
    """A named condition on a whole candidate; `check` returns None when met, else the reason."""

    name: str
    check: Callable[[Candidate], str | None]


@dataclass(frozen=True)
class FusionRule:
    name: str
    pattern: str
    """The fused.group pattern class (see ge_dialects/fused.py PATTERN_CLASSES)."""
    anchor: frozenset[type[Operation]]
    followers: tuple[Step, ...] = ()
    producers: tuple[Step, ...] = ()
    """Walked back from the anchor's `anchor_inputs`, up to `max_count` ops per step, through each
    producer's step `inputs`: ops whose results only the chain uses (unless the step is `shared`)."""
    anchor_inputs: tuple[int, ...] | None = None
    """The anchor operands the producer walk starts from (None: all of them)."""
    constraints: tuple[Constraint, ...] = ()
    min_ops: int = 2
    inference_only: bool = False
    multi_output: bool = True
    """Members other than the last may have users outside the group (they become extra results)."""
    shrink: bool = True
    """A rejected candidate is retried without its farthest producer or last follower."""
    from_last: bool = False
    """Anchors are visited from the block's end: a chain of anchors (QuantizeLinear after
    QuantizeLinear) is grown from its last one, which takes the earlier ones as producers."""


@dataclass
class Candidate:
    rule: FusionRule
    anchor: Operation
    members: list[Operation]
    outputs: list[SSAValue] = field(default_factory=list)

    def shrunk(self) -> Candidate | None:
        """The candidate without its farthest producer (the first in program order), else without its
        last follower: a rejected group retries the part nearer its anchor."""
        if self.members[0] is not self.anchor:
            members = self.members[1:]
        elif self.members[-1] is not self.anchor:
            members = self.members[:-1]
        else:
            return None
        return Candidate(self.rule, self.anchor, members, _outputs(members))

    def member_set(self) -> set[Operation]:
        return set(self.members)

    def external_inputs(self) -> list[SSAValue]:
        inside = self.member_set()
        seen: list[SSAValue] = []
        for op in self.members:
            for v in op.operands:
                if v.owner not in inside and v not in seen:
                    seen.append(v)
        return seen


def ops(*classes: type[Operation]) -> frozenset[type[Operation]]:
    """A set of op classes (`ops(ge.ConvOp, ge.MatMulOp)`), as the rewrite and layout rules name ops."""
    for cls in classes:
        if not (isinstance(cls, type) and issubclass(cls, Operation)):
            raise TypeError(f"ops() takes op classes (e.g. ge.ConvOp), not {cls!r}")
    return frozenset(classes)


def is_one_of(op: Operation, classes: frozenset[type[Operation]]) -> bool:
    return isinstance(op, tuple(classes))


# -- growing a candidate -----------------------------------------------------------------------


def grow(rule: FusionRule, anchor: Operation, position: dict[Operation, int]) -> Candidate:
    members = [anchor]
    tail = anchor.results[0] if anchor.results else None
    for step in rule.followers:
        count = 0
        while tail is not None and count < step.max_count:
            nxt = _next_follower(step, tail, members, position, rule.multi_output)
            if nxt is None:
                break
            members.append(nxt)
            tail = nxt.results[0]
            count += 1
    front: list[Operation] = []
    starts = range(len(anchor.operands)) if rule.anchor_inputs is None else rule.anchor_inputs
    for index in starts:
        if index < len(anchor.operands):
            _walk_producers(rule.producers, anchor.operands[index], anchor, position, front)
    members = sorted(set(front + members), key=position.__getitem__)
    candidate = Candidate(rule, anchor, members)
    candidate.outputs = _outputs(members)
    return candidate


def _walk_producers(
    steps: Sequence[Step], value: SSAValue, consumer: Operation, position: dict[Operation, int], front: list[Operation]
) -> None:
    """Appends to `front` the producers of `value` that fit `steps`, nearest first; a producer with
    several walked inputs branches the walk (each branch continues from the same step)."""
    if not steps:
        return
    step, count = steps[0], 0
    while count < step.max_count:
        owner = value.owner
        if (
            not isinstance(owner, Operation)  # a block argument: never in `position`
            or owner not in position
            or owner in front
            or not is_one_of(owner, step.ops)
            or (not _shares(step, owner) and any(u.operation is not consumer for r in owner.results for u in r.uses))
            or (step.when is not None and not step.when(owner, value))
        ):
            break
        front.append(owner)
        count += 1
        following = step.next_inputs(owner)
        if not following:
            return
        rest = [replace(step, max_count=step.max_count - count, min_count=0)] if count < step.max_count else []
        for extra in following[1:]:
            _walk_producers([*rest, *steps[1:]], extra, owner, position, front)
        consumer, value = owner, following[0]
    if count >= step.min_count:  # steps are links of one chain: a required link that is missing ends it
        _walk_producers(steps[1:], value, consumer, position, front)


def _shares(step: Step, op: Operation) -> bool:
    return step.shared(op) if callable(step.shared) else step.shared


def _next_follower(
    step: Step, tail: SSAValue, members: list[Operation], position: dict[Operation, int], multi_output: bool
) -> Operation | None:
    """The first op (program order) that consumes `tail` and fits `step`; with other users of
    `tail` outside the group only when the rule allows extra outputs."""
    users = {u.operation for u in tail.uses} - set(members)
    if len(users) > 1 and not multi_output:
        return None
    fitting = [
        u for u in users if u in position and is_one_of(u, step.ops) and (step.when is None or step.when(u, tail))
    ]
    return min(fitting, key=position.__getitem__) if fitting else None


def _outputs(members: list[Operation]) -> list[SSAValue]:
    inside = set(members)
    out: list[SSAValue] = []
    for op in members:
        for r in op.results:
            if any(u.operation not in inside for u in r.uses):
                out.append(r)
    return out


# -- legality ----------------------------------------------------------------------------------


def creates_cycle(candidate: Candidate, position: dict[Operation, int]) -> bool:
    """True when a path leaves the group and re-enters it (only ops before the last member can)."""
    inside = candidate.member_set()
    last = max(position[op] for op in candidate.members)
    stack = [u.operation for v in candidate.outputs for u in v.uses if u.operation not in inside]
    seen: set[Operation] = set()
    while stack:
        op = stack.pop()
        if op in seen or position.get(op, last + 1) > last:
            continue
        if op in inside:
            return True
        seen.add(op)
        stack.extend(u.operation for r in op.results for u in r.uses)
    return False


class Schedule:
    """Earliest finish (with unlimited parallelism) and longest remaining path of every op of a
    block, each op's position, and the critical-path length. Groups are isolated from above, so
    every user of a top-level value is a top-level op.

    Kept up to date after each group the engine makes (`grouped`) at a cost near the group's size,
    not the block's: a group changes the finish times of the ops after its first member and the
    remaining paths of the ops up to its last one, so `finish` is kept valid on a prefix of the
    positions and `tail` on a suffix, and each is extended on demand as the engine walks on in
    program order. Positions are slots of the first build: a group takes its last member's slot
    (it is placed right after it) and the members' slots are left empty, so the order is the
    block's. The length is read at a cut `c` where both are valid: a longest path lies before `c`
    (the largest finish there), from `c` on (the largest remaining path there), or crosses `c` by
    one edge `(u, w)` (`finish[u] + tail[w]`); `live` holds the ops before the cut whose results
    are read after it (not the sources that finish at 0, constants: their paths start after the cut)."""

    def __init__(self, block: Block, time: Callable[[Operation], float]):
        self.time = time
        order = list(block.ops)
        self.slots: list[Operation | None] = list(order)
        self.position: dict[Operation, int] = {op: i for i, op in enumerate(order)}
        n = len(self.slots)
        self.finish: dict[Operation | Block, float] = {}  # looked up by owners, block arguments' too
        self.tail: dict[Operation, float] = {}
        self._done = 0  # finish is valid at positions < _done
        self._todo = n  # tail is valid at positions >= _todo
        self._prefix_max = [0.0] * (n + 1)  # [i]: the largest finish at positions < i (i <= _done)
        self._suffix_max = [0.0] * (n + 1)  # [i]: the largest tail at positions >= i (i >= _todo)
        self._cut = 0
        self._live: dict[Operation, None] = {}  # superset of the ops before _cut read at or after it
        self._length: float | None = None
        self.stale = False

    def _extend_finish(self, upto: int) -> None:
        # plain loops, not max() over generators: this is the engine's inner loop
        finish, prefix, slots, time = self.finish, self._prefix_max, self.slots, self.time
        for i in range(self._done, upto):
            op = slots[i]
            if op is None:
                prefix[i + 1] = prefix[i]
                continue
            start = 0.0
            for v in op.operands:
                f = finish.get(v.owner, 0.0)
                if f > start:
                    start = f
            finish[op] = f = start + time(op)
            prefix[i + 1] = f if f > prefix[i] else prefix[i]
        self._done = max(self._done, upto)

    def _extend_tail(self, downto: int) -> None:
        tail, suffix, slots, time = self.tail, self._suffix_max, self.slots, self.time
        for i in range(self._todo - 1, downto - 1, -1):
            op = slots[i]
            if op is None:
                suffix[i] = suffix[i + 1]
                continue
            after = 0.0
            for r in op.results:
                for u in r.uses:
                    t = tail.get(u.operation, 0.0)
                    if t > after:
                        after = t
            tail[op] = t = time(op) + after
            suffix[i] = t if t > suffix[i + 1] else suffix[i + 1]
        self._todo = min(self._todo, downto)

    def _move_cut(self, cut: int) -> None:
        live, slots, position = self._live, self.slots, self.position
        finish = self.finish
        if cut > self._cut:
            for i in range(self._cut, cut):
                op = slots[i]
                # a source finishing at 0 (a constant) adds nothing to the paths after the cut
                if op is not None and (op.operands or finish[op] > 0) and any(r.uses for r in op.results):
                    live[op] = None
        elif cut < self._cut:
            for i in range(cut, self._cut):
                op = slots[i]
                if op is None:
                    continue
                live.pop(op, None)
                for v in op.operands:
                    owner = v.owner
                    if (
                        isinstance(owner, Operation)
                        and position.get(owner, cut) < cut
                        and (owner.operands or finish[owner] > 0)
                    ):
                        live[owner] = None
        self._cut = cut

    def ensure(self, first: int, last: int) -> None:
        """Makes finish valid up to position `last` and tail from position `first` on."""
        if self._done <= last:
            self._extend_finish(last + 1)
        if self._todo > first:
            self._extend_tail(first)

    @property
    def length(self) -> float:
        """The critical path: the largest finish of the block."""
        if self._length is None:
            cut = self._done
            if self._todo > cut:
                self._extend_tail(cut)
            self._move_cut(cut)
            length = max(self._prefix_max[cut], self._suffix_max[cut])
            finish, tail, position = self.finish, self.tail, self.position
            for u in list(self._live):
                fu = finish.get(u, 0.0)
                read_after = False
                for r in u.results:
                    for use in r.uses:
                        w = use.operation
                        if position.get(w, -1) >= cut:
                            read_after = True
                            if fu + tail[w] > length:
                                length = fu + tail[w]
                if not read_after:
                    del self._live[u]
            self._length = length
        return self._length

    def grouped(self, members: Sequence[Operation], group: Operation) -> None:
        """Records that `members` are now `group`, placed right after the last of them."""
        position = self.position
        slots = [position[op] for op in members]
        first, last = min(slots), max(slots)
        self._move_cut(min(self._cut, first))  # members are then all after the cut, none live
        for op, i in zip(members, slots):
            del position[op]
            self.slots[i] = None
            self.finish.pop(op, None)
            self.tail.pop(op, None)
        self.slots[last] = group
        position[group] = last
        self._done = min(self._done, first)
        self._todo = max(self._todo, last + 1)
        self._length = None

    def path_through(self, candidate: Candidate, group_time: float) -> float:
        """Longest path through the group once its members run as one kernel."""
        slots = [self.position[op] for op in candidate.members]
        self.ensure(min(slots), max(slots))
        inside = candidate.member_set()
        ready = max((self.finish.get(v.owner, 0.0) for v in candidate.external_inputs()), default=0.0)
        after = max(
            (self.tail.get(u.operation, 0.0) for v in candidate.outputs for u in v.uses if u.operation not in inside),
            default=0.0,
        )
        return ready + group_time + after


def _reduced_row_elements(op: Operation) -> int:
    assert isinstance(op, GeOp)  # fusion rules group ge ops only
    return op.reduced_row_elements()


def group_time(candidate: Candidate, cost: CostModel) -> float:
    """The candidate's time as the task it would become (ge-run's device model, cost.py)."""
    return cost.group_time(candidate.rule.pattern, candidate.members, candidate.outputs)


def working_set_bytes(candidate: Candidate, block: int) -> int:
    """Bytes a minimal tile of the group holds on chip, double-buffered.

    A tile is one UB block (`block` bytes, the target's `[buffers] ub_block`) per tensor, except
    that a reduction needs its whole reduced row
    (each op's `reduced_row_elements()`: softmax and layer_norm over the trailing axes, attention
    over a row of scores)."""
    row_elems = max([1, *(_reduced_row_elements(op) for op in candidate.members)])
    tensors = len(candidate.external_inputs()) + sum(len(op.results) for op in candidate.members)
    itemsize = max(
        numpy_dtype(v.type.element_type).itemsize
        for op in candidate.members
        for v in op.results
        if isinstance(v.type, TensorType)
    )
    tile = max(row_elems * itemsize, block)
    return 2 * tensors * math.ceil(tile / block) * block


# -- applying ----------------------------------------------------------------------------------


@dataclass
class FusionEngine:
    rules: Sequence[FusionRule]
    cost: CostModel
    applied: int = 0
    _times: dict[Operation, float] = field(default_factory=dict)
    _last_group: Operation | None = None

    def time(self, op: Operation) -> float:
        """The op's (or group's) estimated kernel time, computed once per op."""
        t = self._times.get(op)
        if t is None:
            t = self._times[op] = self.cost.op_time(op)
        return t

    def run(self, module: ModuleOp) -> None:
        training = TRAINING_ATTR in module.attributes
        for fn in module.walk():
            if isinstance(fn, func.FuncOp) and fn.body.blocks:
                self.run_block(fn.body.block, training)

    def run_block(self, block: Block, training: bool) -> None:
        for rule in self.rules:
            if rule.inference_only and training:
                remarks.emit(PASS_NAME, "note", rule.name, [], "skipped: inference-only rule on a training graph")
                continue
            schedule = Schedule(block, self.time)
            anchors = list(block.ops)
            if rule.from_last:
                anchors.reverse()
            for op in anchors:
                if op.parent_block() is not block or not is_one_of(op, rule.anchor):
                    continue
                candidate: Candidate | None = grow(rule, op, schedule.position)
                while candidate is not None and len(candidate.members) >= rule.min_ops:
                    if self.try_apply(candidate, schedule):
                        # the incremental schedule extends itself in program order only
                        incremental = INCREMENTAL_SCHEDULE and not rule.from_last
                        if incremental and not schedule.stale and self._last_group is not None:
                            schedule.grouped(candidate.members, self._last_group)
                        else:
                            schedule = Schedule(block, self.time)
                        break
                    candidate = candidate.shrunk() if rule.shrink else None

    def try_apply(self, c: Candidate, schedule: Schedule) -> bool:
        rule = c.rule
        for constraint in rule.constraints:
            reason = constraint.check(c)
            if reason is not None:
                return self._reject(c, f"constraint {constraint.name}: {reason}")
        if creates_cycle(c, schedule.position):
            return self._reject(c, "would create a cycle (a path leaves the group and re-enters it)")
        fused_time = group_time(c, self.cost)
        benefit = sum(self.time(op) for op in c.members) - fused_time
        through = schedule.path_through(c, fused_time)
        if through > schedule.length + self.cost.join_s * (1 + 1e-9):
            return self._reject(
                c,
                f"would serialize a parallel branch on the critical path "
                f"({schedule.length * 1e6:.2f} us -> {through * 1e6:.2f} us)",
                benefit,
            )
        buffers = self.cost.target.buffers
        ws = working_set_bytes(c, buffers.ub_block)
        if ws > buffers.ub:
            return self._reject(c, f"working set {ws} B exceeds the UB ({buffers.ub} B)", benefit)
        # The critical path a group lengthens (within the join allowance above) is time the step
        # loses: a shared producer's other readers now wait for the whole group. Charged, so that
        # many small lengthenings do not add up to a slower step.
        growth = self.path_growth(through, schedule.length)
        benefit -= growth
        if benefit <= 0:
            why = f" (critical path +{growth * 1e6:.2f} us charged)" if growth > 0 else ""
            return self._reject(c, f"no benefit by the cost estimate{why}", benefit)
        # the group goes after its last member: only an outside user placed before that needs a re-sort
        inside, last = c.member_set(), max(schedule.position[op] for op in c.members)
        early_user = any(
            u.operation not in inside and schedule.position.get(u.operation, last) < last
            for v in c.outputs
            for u in v.uses
        )
        group = fused.outline(rule.pattern, rule.name, c.members, c.outputs, c.anchor)
        block = group.parent_block()
        assert block is not None  # outlined in place of the members
        self._last_group = group
        if early_user and restore_order(block):
            schedule.stale = True  # the block was re-sorted: its positions are the old order
        self.applied += 1
        remarks.emit(
            PASS_NAME, "applied", rule.name, c.members, f"fused {len(c.members)} ops into one kernel", benefit * 1e6
        )
        return True

    @staticmethod
    def path_growth(through: float, length: float) -> float:
        """How much longer the critical path gets (0 when the group's path stays within it)."""
        return max(0.0, through - length)

    def _reject(self, c: Candidate, reason: str, benefit: float | None = None) -> bool:
        remarks.emit(PASS_NAME, "rejected", c.rule.name, c.members, reason, None if benefit is None else benefit * 1e6)
        return False


def restore_order(block: Block) -> bool:
    """Re-sorts the block topologically (stable) if an op now comes before a value it uses; whether
    it did.

    Groups are isolated from above, so every producer of a top-level op is a top-level op."""
    position = {op: i for i, op in enumerate(block.ops)}

    def producers(op: Operation) -> set[Operation]:
        return {owner for v in op.operands if isinstance(owner := v.owner, Operation) and owner in position}

    if all(position[p] < i for op, i in position.items() for p in producers(op)):
        return False
    pending = {op: len(producers(op)) for op in position}
    ready = [(i, id(op), op) for op, i in position.items() if pending[op] == 0]
    heapq.heapify(ready)
    order: list[Operation] = []
    while ready:
        _, _, op = heapq.heappop(ready)
        order.append(op)
        for user in {u.operation for r in op.results for u in r.uses}:
            if user in pending:
                pending[user] -= 1
                if pending[user] == 0:
                    heapq.heappush(ready, (position[user], id(user), user))
    terminator = block.last_op
    assert terminator is not None  # the block holds the ops of `order`
    for op in order:
        if op is not terminator:
            op.detach()
            block.insert_op_before(op, terminator)
    return True
