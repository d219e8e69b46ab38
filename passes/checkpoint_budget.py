"""`checkpoint{policy=budget budget_mib=N}`: the least recompute whose stashed-activation peak fits N MiB.

Solved exactly as a mixed-integer program with scipy's `milp` (HiGHS), as Checkmate (Jain et al.
2020) does, for the model below; when the solver runs out of `time_limit_s`, a stated heuristic
decides instead and a remark says so.

The model (exactly what `_Recomputer` in checkpoint.py does for a given kept set):
- Choice: keep[v] in {0, 1} for each stashed value v (a forward value the backward reads that is
  not always kept). Backward ops are numbered 0..T-1 in block order; first(v) / last(v) are the
  positions of v's first and last backward reader.
- Recompute: a forward op o is copied when one of its stashed results is not kept (at first(v)), or
  when a copied op reads a not-kept result of o (at that reader's copy time). c(o) is the earliest
  such position; r[o, t] = [c(o) <= t] (the copy exists at position t).
- Work: the recomputed work is the sum, over the copied ops, of `macs() + W * (vector_elements() +
  transcendental_elements())`, the device model's two counts combined with one weight W: the Cube
  MACs the target does (f32) in the time its Vector does one f32 element (`vector_weight` of the
  module's target: ascend910b 8, ascend910 16).
- Memory: at backward position t, a stashed value v with last(v) >= t holds its bytes if kept, and
  if not kept, from its copy's creation on (r[op(v), t]). The peak is the largest sum over t; it only
  rises where copies are made, so it is checked at the first(v) positions. Values checkpointing cannot
  choose (graph inputs and outputs, constants, impure results) are not counted, nor the short-lived
  copies of values the backward does not read.

The MILP: keep binary; r and alive continuous in [0, 1], with r[o,t] >= 1 - keep[v] (t >= first(v)),
r[p,t] >= r[q,t] - keep[w] (q reads w, a result of p), alive[v,t] >= r[op(v),t] - keep[v], and per t
sum bytes(v) * (keep[v] + alive[v,t]) <= budget; minimise sum work(o) * r[o, T_last]. A cut
keep[v] + alive[v,t] >= 1 for first(v) <= t <= last(v) (implied for binary keep) tightens the LP
relaxation, which fractional keeps otherwise make weak. For binary keep,
the least r satisfying these lower bounds is the true 0/1 one and any other only costs more, so
relaxing r and alive keeps the optimum exact (the brute-force test checks it).

The heuristic (on timeout): Chen's every-k-th sets for every k (sqrt's, then the other segment
sizes) and the least-work one that fits; if none fits, from the lowest-peak of them, toggle the single value
that lowers the peak most, up to `GREEDY_STEPS` times, until it fits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import coo_array
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from ge.device.cost import Hardware
from ge.ge_dialects import ge
from ge.ge_dialects.ge.types import numpy_dtype
from ge.passes import remarks
from ge.target import Target

PASS = "checkpoint"
MIB = 2**20
GREEDY_STEPS = 64


def vector_weight(target: Target) -> float:
    """MACs the target's Cube does (f32, all Cube cores) per f32 element its Vector does (all cores)."""
    hw = Hardware.of(target)
    cube = target.cube.m * target.cube.k * target.cube.n * target.cube.fp32_ratio * hw.cube_cores
    return cube / (target.vector.fp32_lanes * hw.vector_cores)


def value_bytes(v: SSAValue) -> int:
    assert isinstance(v.type, TensorType)
    return math.prod(v.type.get_shape()) * numpy_dtype(v.type.element_type).itemsize


def op_work(op: Operation, weight: float) -> float:
    if not isinstance(op, ge.GeOp):
        return 0.0
    return op.macs() + weight * (op.vector_elements() + op.transcendental_elements())


@dataclass
class Problem:
    """What the budget choice needs of the graph: the stash, its positions, sizes, and the read edges."""

    stash: list[SSAValue]
    ops: list[Operation]  # forward ops (in order) that a copy could be made of
    first: np.ndarray  # per stashed value, its first backward reader's position
    last: np.ndarray
    nbytes: np.ndarray
    work: np.ndarray  # per op
    owner: list[int]  # per stashed value, the index of its op
    reads: list[tuple[int, int, int | None]]  # (reader op, producer op, stash index of the value or None)
    times: list[int] = field(default_factory=list)  # distinct first() positions, ascending


def build_problem(
    forward: list[Operation], backward: list[Operation], always: set[SSAValue], stash: list[SSAValue], weight: float
) -> Problem:
    """The budget problem; `weight` is the target's `vector_weight`."""
    position = {o: i for i, o in enumerate(backward)}
    readers: dict[SSAValue, list[int]] = {v: [] for v in stash}
    for o in backward:
        for v in o.operands:
            if v in readers:
                readers[v].append(position[o])
    ops = [o for o in forward if any(r not in always for r in o.results)]
    index = {o: i for i, o in enumerate(ops)}
    stash_index = {v: i for i, v in enumerate(stash)}
    reads = [
        (index[o], index[v.owner], stash_index.get(v))
        for o in ops
        for v in o.operands
        if isinstance(v.owner, Operation) and v.owner in index and v not in always
    ]
    first = np.array([min(readers[v]) for v in stash])
    return Problem(
        stash=stash,
        ops=ops,
        first=first,
        last=np.array([max(readers[v]) for v in stash]),
        nbytes=np.array([value_bytes(v) for v in stash], dtype=np.float64),
        work=np.array([op_work(o, weight) for o in ops]),
        owner=[index[v.owner] for v in stash],  # type: ignore[index]
        reads=reads,
        times=sorted(set(first.tolist())),
    )


@dataclass(frozen=True)
class Plan:
    keep: tuple[bool, ...]
    work: float
    peak_bytes: float


def evaluate(p: Problem, keep: list[bool] | tuple[bool, ...]) -> Plan:
    """The model's recompute work and peak for one kept set, by direct simulation (not the MILP)."""
    created = np.full(len(p.ops), np.inf)
    for i, k in enumerate(keep):
        if not k:
            created[p.owner[i]] = min(created[p.owner[i]], p.first[i])
    for reader, producer, s in sorted(p.reads, key=lambda r: -r[0]):  # readers after producers
        if s is None or not keep[s]:
            created[producer] = min(created[producer], created[reader])
    start = np.where(np.array(keep, dtype=bool), -1.0, created[p.owner])
    times = np.array(p.times)
    alive = (start[:, None] <= times[None, :]) & (times[None, :] <= p.last[:, None])
    peak = float((p.nbytes[:, None] * alive).sum(axis=0).max()) if len(times) else 0.0
    return Plan(tuple(bool(k) for k in keep), float(p.work[np.isfinite(created)].sum()), peak)


class _Program:
    """The MILP's variables (keep, r, alive) and constraint rows, built once per problem."""

    def __init__(self, p: Problem):
        self.p = p
        n, m, nt = len(p.stash), len(p.ops), len(p.times)
        self.r0 = n
        self.alive = {(v, j): 0 for v in range(n) for j, t in enumerate(p.times) if t <= p.last[v]}
        for k, key in enumerate(self.alive):
            self.alive[key] = n + m * nt + k
        self.size = n + m * nt + len(self.alive)
        self.unit = max(float(p.nbytes.max()), 1.0)  # memory rows in units of the largest value: coefficients <= 1
        self.rows: list[tuple[dict[int, float], float]] = []  # (coefficients, lower bound); all rows are >=
        self._recompute_rows()

    def r(self, op: int, j: int) -> int:
        return self.r0 + op * len(self.p.times) + j

    def _recompute_rows(self) -> None:
        p = self.p
        for v, owner in enumerate(p.owner):
            for j, t in enumerate(p.times):
                if t >= p.first[v]:
                    self.rows.append(({self.r(owner, j): 1.0, v: 1.0}, 1.0))
        for reader, producer, s in p.reads:
            for j in range(len(p.times)):
                row = {self.r(producer, j): 1.0, self.r(reader, j): -1.0}
                if s is not None:
                    row[s] = 1.0
                self.rows.append((row, 0.0))
        for (v, j), a in self.alive.items():
            self.rows.append(({a: 1.0, self.r(p.owner[v], j): -1.0, v: 1.0}, 0.0))
            if p.times[j] >= p.first[v]:  # a cut: in its own backward window, v is held either way
                self.rows.append(({a: 1.0, v: 1.0}, 1.0))

    def memory_rows(self) -> list[dict[int, float]]:
        """Per time, the stashed values alive, in `unit`s (to be bounded above)."""
        p = self.p
        rows: list[dict[int, float]] = []
        for j, t in enumerate(p.times):
            row: dict[int, float] = {}
            for v in range(len(p.stash)):
                if p.last[v] >= t:
                    row[v] = p.nbytes[v] / self.unit
                    row[self.alive[(v, j)]] = p.nbytes[v] / self.unit
            rows.append(row)
        return rows

    def solve(self, objective: np.ndarray, extra: list[tuple[dict[int, float], float, float]], time_limit: float):
        """milp over the rows plus `extra` (coefficients, lower, upper); returns scipy's result."""
        all_rows = [(c, lo, np.inf) for c, lo in self.rows] + extra
        size = len(objective)
        data, ri, ci = [], [], []
        for i, (coefs, _, _) in enumerate(all_rows):
            for col, val in coefs.items():
                ri.append(i)
                ci.append(col)
                data.append(val)
        matrix = coo_array((data, (ri, ci)), shape=(len(all_rows), size)).tocsr()
        constraint = LinearConstraint(matrix, [r[1] for r in all_rows], [r[2] for r in all_rows])
        integrality = np.zeros(size)
        integrality[: len(self.p.stash)] = 1
        upper = np.ones(size)
        upper[self.size :] = np.inf  # the peak variable of solve_min_peak
        return milp(
            objective,
            constraints=constraint,
            integrality=integrality,
            bounds=Bounds(np.zeros(size), upper),
            options={"time_limit": time_limit},
        )

    def keep_of(self, x: np.ndarray) -> tuple[bool, ...]:
        return tuple(bool(round(x[v])) for v in range(len(self.p.stash)))

    def work_objective(self, size: int) -> np.ndarray:
        c = np.zeros(size)
        last = len(self.p.times) - 1
        for o, w in enumerate(self.p.work):
            c[self.r(o, last)] = w
        return c


@dataclass(frozen=True)
class Outcome:
    plan: Plan | None  # None: nothing fits
    exact: bool  # the MILP proved it (else: the heuristic's, after a timeout)
    smallest_peak_bytes: float | None = None  # when nothing fits: the least peak found
    smallest_proven: bool = True  # that least peak is the MILP's optimum (else the best found in time)


def solve_budget(p: Problem, budget_bytes: float, time_limit: float, drop_memory: bool = False) -> Outcome:
    """The least-work kept set whose peak fits; `drop_memory` (tests only) omits the memory rows."""
    prog = _Program(p)
    memory = [] if drop_memory else [(row, -np.inf, budget_bytes / prog.unit) for row in prog.memory_rows()]
    res = prog.solve(prog.work_objective(prog.size), memory, time_limit)
    if res.status == 0:
        plan = evaluate(p, prog.keep_of(res.x))
        if plan.peak_bytes <= budget_bytes or drop_memory:  # else over by the solver's tolerance only
            return Outcome(plan, exact=True)
    elif res.status == 2:  # infeasible: proven, so say how low the peak can go
        smallest, proven = solve_min_peak(p, prog, time_limit)
        return Outcome(None, exact=True, smallest_peak_bytes=smallest, smallest_proven=proven)
    return heuristic(p, budget_bytes)


def solve_min_peak(p: Problem, prog: _Program, time_limit: float) -> tuple[float, bool]:
    """The least peak any kept set reaches (MILP: minimise P with each time's memory <= P), and whether
    it is proven; past the time limit, the better of the solver's incumbent and the heuristic's sets."""
    size = prog.size + 1
    rows = [({**row, prog.size: -1.0}, -np.inf, 0.0) for row in prog.memory_rows()]
    objective = np.zeros(size)
    objective[prog.size] = 1.0
    res = prog.solve(objective, rows, time_limit)
    if res.status == 0:
        return evaluate(p, prog.keep_of(res.x)).peak_bytes, True
    found = [plan.peak_bytes for plan in _segment_plans(p)]
    if res.x is not None:
        found.append(evaluate(p, prog.keep_of(res.x)).peak_bytes)
    return min(found), False


def _segment_plans(p: Problem) -> list[Plan]:
    n = len(p.stash)
    sqrt_step = math.ceil(math.sqrt(n))
    steps = [sqrt_step] + [k for k in range(1, n + 1) if k != sqrt_step]
    return [evaluate(p, [(i + 1) % k == 0 for i in range(n)]) for k in steps]


def heuristic(p: Problem, budget_bytes: float) -> Outcome:
    """Every-k-th sets, the least work that fits; else greedy single toggles from the lowest-peak one."""
    plans = _segment_plans(p)
    fitting = [plan for plan in plans if plan.peak_bytes <= budget_bytes]
    if fitting:
        return Outcome(min(fitting, key=lambda plan: plan.work), exact=False)
    current = min(plans, key=lambda plan: (plan.peak_bytes, plan.work))
    for _ in range(GREEDY_STEPS):
        toggles = [evaluate(p, [k != (i == j) for i, k in enumerate(current.keep)]) for j in range(len(p.stash))]
        best = min(toggles, key=lambda plan: (plan.peak_bytes, plan.work))
        if best.peak_bytes >= current.peak_bytes:
            break
        current = best
        if current.peak_bytes <= budget_bytes:
            return Outcome(current, exact=False)
    least = min(current.peak_bytes, *(q.peak_bytes for q in plans))
    return Outcome(None, exact=False, smallest_peak_bytes=least, smallest_proven=False)


def choose_budget(
    forward: list[Operation],
    backward: list[Operation],
    always: set[SSAValue],
    stash: list[SSAValue],
    budget_mib: float,
    time_limit: float,
    target: Target,
) -> set[SSAValue]:
    """The kept stashed values under the budget, or the one-line error when no kept set fits."""
    p = build_problem(forward, backward, always, stash, vector_weight(target))
    outcome = solve_budget(p, budget_mib * MIB, time_limit)
    if not outcome.exact:
        remarks.emit(
            PASS,
            "note",
            "budget",
            [],
            f"the MILP found no optimum in {time_limit:g} s; the segment/greedy heuristic chose the kept set",
        )
    if outcome.plan is None:
        assert outcome.smallest_peak_bytes is not None
        smallest = f"{outcome.smallest_peak_bytes / MIB:.3f}"
        if outcome.smallest_proven:
            raise DiagnosticException(
                f"{PASS}: budget_mib={budget_mib:g} is below the smallest peak any checkpointing reaches "
                f"({smallest} MiB)"
            )
        raise DiagnosticException(
            f"{PASS}: budget_mib={budget_mib:g}: no kept set found under it in time_limit_s={time_limit:g} "
            f"(the least peak found: {smallest} MiB; a longer time limit may find one)"
        )
    return {v for v, k in zip(p.stash, outcome.plan.keep) if k}
