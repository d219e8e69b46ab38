"""Memory reuse against stream parallelism: which reuses to give up, and what that costs.

A reuse (plan-memory putting a later result on bytes of an earlier one) orders every access of the
earlier result before the writer of the later one. `lower-to-streams` adds those *reuse edges* to
the DAG it assigns streams on, so a reuse between tasks that could run concurrently either costs
an event or, more often, makes the path cover put the two on one stream: they serialize. Giving the
reuse up (the two buffers kept apart in memory) costs bytes instead.

`schedule` is what `lower-to-streams` does with a plan: the reuse edges read from the offsets,
streams on data + reuse edges, events, and the makespan estimate (`assign.stream_times`, the
same task costs). `trade_reuse` searches around a plan:

1. The *reference* is the schedule of the data edges alone (the streams the graph would get with
   no reuse ordering; racy with the plan, but the time to aim for).
2. A reuse pair (earlier buffer A, later buffer B) is *costly* when, in the reference schedule, an
   access of A finishes after B's writer starts (`delay` > 0): keeping the reuse would hold B's
   writer back, or serialize the two.
3. Round by round, the costly pairs of the current plan are kept apart (`plan_memory(keep_apart=)`)
   and memory re-planned; when the new pool exceeds the budget, only the costliest half of the
   round's pairs is tried, then a quarter, ... Each re-plan is scheduled and scored.
4. The best plan by (score, pool) under the budget wins; the plan it started from is a candidate,
   so the result is never worse by the score. The score is the estimated makespan unless the
   caller gives another (`relax-reuse` gives the device simulator's latency: it also charges the
   events, and the engines and HBM bandwidth the streams share, which the estimate leaves out).

The rounds are bounded (a re-plan can create new costly pairs, which the next round sees).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.ir import SSAValue

from ge.lowering.memory.liveness import Buffer
from ge.lowering.memory.plan import MemoryPlan, plan_memory
from ge.lowering.memory.state import war_edges
from ge.lowering.streams import StreamPlan, plan_streams
from ge.lowering.streams.assign import assign_streams, stream_times
from ge.lowering.streams.events import insert_events
from ge.lowering.streams.graph import Dag
from ge.lowering.streams.reuse import overlapping_pairs, placed_buffers, reuse_edges

REUSE_HISTORY = 8
"""Reuse edges go from a buffer to the next this many occupants of its bytes (`reuse.reuse_edges`):
the first one orders everything; the others are implied, but are links the path cover may put on one
stream. All overlapping pairs are quadratic in how often a region is reused; this many keep the
stream assignment of the test models (docs/lowering.md, "Compile time at scale")."""


@dataclass(frozen=True)
class Schedule:
    """What `lower-to-streams` makes of one memory plan."""

    dag: Dag
    """Data + write-after-read + reuse edges."""
    plan: StreamPlan
    reuse_events: int
    """Events that exist only because of reuse (all events minus those the data and write-after-read
    edges need)."""
    makespan: float
    """Estimated finish of the last task (seconds, from the task costs; events free)."""


def dedicated_streams(kernels: Sequence, hcom_parallel: bool = False) -> list[list[int]]:
    """The task groups that run on streams of their own: the collectives (HCCL's stream) and, with
    `hcom_parallel` (GE's `ge.hcomParallel`), the tasks that read their results (one more stream),
    so neither waits behind the compute streams' program order."""
    collectives = [i for i, k in enumerate(kernels) if k.engine.data == "hccl"]
    if not collectives:
        return []
    groups = [collectives]
    if hcom_parallel:
        produced = {r for i in collectives for r in kernels[i].outputs}
        readers = [i for i, k in enumerate(kernels) if i not in collectives and any(v in produced for v in k.inputs)]
        if readers:
            groups.append(readers)
    return groups


def schedule(
    kernels: Sequence, data_dag: Dag, limit: int | None, costs: Sequence[float], hcom_parallel: bool = False
) -> Schedule:
    """Streams and events for the kernels' current offsets and in-place state writes (raises
    ReuseError on a wrong plan, StateError on a wrong `state_alias`). The write-after-read edges of
    the in-place writes (lowering/memory/state.py) are as necessary as the data edges."""
    needed = Dag(data_dag.n, [*data_dag.edges, *((e.src, e.dst) for e in war_edges(kernels))])
    dag = Dag(data_dag.n, [*needed.edges, *((e.src, e.dst) for e in reuse_edges(kernels, history=REUSE_HISTORY))])
    plan = plan_streams(dag, limit, costs, dedicated_streams(kernels, hcom_parallel))
    data_events = len(insert_events(needed, plan.streams))
    makespan = max(stream_times(dag, plan.streams, costs)[1], default=0.0)
    return Schedule(dag, plan, len(plan.events) - data_events, makespan)


@dataclass(frozen=True)
class CostlyReuse:
    earlier: str
    later: str
    delay: float
    """How long the reuse would hold the later buffer's writer back in the reference schedule."""


def costly_reuses(
    kernels: Sequence, names: dict[SSAValue, str], start: Sequence[float], finish: Sequence[float]
) -> list[CostlyReuse]:
    """The overlapping buffer pairs of the kernels' offsets whose ordering delays the reference
    schedule (`start`/`finish` per task), costliest first."""
    found: dict[tuple[str, str], float] = {}
    for a, b in overlapping_pairs(placed_buffers(kernels)):
        if a.value not in names or b.value not in names:
            continue
        delay = 0.0
        for x in a.accesses:
            if x == b.writer and a.offset == b.offset and b.size <= a.size:
                continue  # in place
            delay = max(delay, finish[x] - start[b.writer])
        if delay > 0:
            key = (names[a.value], names[b.value])
            found[key] = max(found.get(key, 0.0), delay)
    return sorted((CostlyReuse(x, y, d) for (x, y), d in found.items()), key=lambda c: (-c.delay, c.earlier, c.later))


@dataclass
class Tradeoff:
    """The chosen plan and what it gave up (`plan` None: the starting plan is kept)."""

    plan: MemoryPlan | None
    schedule: Schedule
    score: float
    base_pool: int
    base_schedule: Schedule
    base_score: float
    given_up: tuple[tuple[str, str], ...] = ()
    tried: list[tuple[int, float, int]] = field(default_factory=list)
    """(pool, score, pairs kept apart) of every plan scored, the starting one first."""

    @property
    def pool(self) -> int:
        return self.base_pool if self.plan is None else self.plan.peak

    @property
    def extra_bytes(self) -> int:
        return self.pool - self.base_pool


def trade_reuse(
    kernels: Sequence,
    buffers: Sequence[Buffer],
    names: dict[SSAValue, str],
    write_offsets,
    data_dag: Dag,
    limit: int | None,
    costs: Sequence[float],
    *,
    base_pool: int,
    budget: int,
    alignment: int,
    rounds: int = 4,
    score: Callable[[Schedule], float] | None = None,
) -> Tradeoff:
    """Searches plans that keep costly reuse pairs apart (module docstring). `write_offsets(plan)`
    puts a plan's offsets on the kernels; on return the kernels hold the chosen plan's offsets.
    `budget`: bytes the pool may grow by over `base_pool`. `score`: lower is better (default: the
    estimated makespan)."""
    score = score or (lambda sched: sched.makespan)
    saved = [k.offsets for k in kernels]
    base = schedule(kernels, data_dag, limit, costs)
    base_score = score(base)
    result = Tradeoff(None, base, base_score, base_pool, base, base_score, tried=[(base_pool, base_score, 0)])
    if limit == 1 or not kernels:
        return result
    streams = assign_streams(data_dag, limit, costs, dedicated=dedicated_streams(kernels))
    start, finish = stream_times(data_dag, streams, costs)
    kept: list[tuple[str, str]] = []
    costly = costly_reuses(kernels, names, start, finish)
    for _ in range(rounds):
        already = set(kept)
        new = [(c.earlier, c.later) for c in costly if (c.earlier, c.later) not in already]
        plan = None
        while new:
            candidate = plan_memory(buffers, alignment=alignment, keep_apart=[*kept, *new])
            if candidate.peak <= base_pool + budget:
                plan = candidate
                break
            new = new[: len(new) // 2]
        if plan is None:
            break
        kept.extend(new)
        write_offsets(plan)
        scheduled = schedule(kernels, data_dag, limit, costs)
        value = score(scheduled)
        result.tried.append((plan.peak, value, len(kept)))
        if better((value, plan.peak), (result.score, result.pool)):
            result.plan, result.schedule, result.score, result.given_up = plan, scheduled, value, tuple(kept)
        costly = costly_reuses(kernels, names, start, finish)
    if result.plan is None:
        for k, offsets in zip(kernels, saved):
            k.offsets = offsets
    else:
        write_offsets(result.plan)
    return result


def better(a: tuple[float, int], b: tuple[float, int]) -> bool:
    """(score, pool) `a` beats `b`: faster (beyond rounding), or as fast and smaller."""
    if a[0] < b[0] * (1 - 1e-9):
        return True
    return a[0] <= b[0] * (1 + 1e-9) and a[1] < b[1]
