"""Static memory planning: device-memory offsets for the buffers of a task sequence, with reuse.

Two buffers may share bytes when their live intervals are disjoint. Placing rectangles
(time x bytes) so that the pool is as small as possible is NP-hard (dynamic storage allocation), so
the planner runs a few greedy heuristics, as GE's HybridMemAssigner and XLA's heap simulator do, and
keeps the smallest plan:

- ``size_best_fit``: largest buffer first, each at the lowest offset of the tightest gap between the
  already-placed buffers whose lifetimes intersect its own.
- ``size_first_fit``: largest first, lowest offset that fits (XLA's global decreasing-size).
- ``breadth_best_fit``: TFLite's greedy by breadth: the tasks in decreasing order of live bytes, at
  each the unplaced buffers live there, largest first, best fit.
- ``area_best_fit``: largest size x lifetime first, best fit (long-lived chains such as a residual
  stream get their place before the short, wide temporaries; wins on GPT-2 with in-place).
- ``start_first_fit``: in order of definition, lowest offset that fits (a linear-scan allocator).
- ``size_start_first_fit``: largest first, equal sizes in order of definition, lowest offset that
  fits: equal-size activations then alternate between slots in program order, leaving the gaps
  above them to the smaller ones (reaches the bound on ResNet-50 once its input is sized padded,
  where the longest-first tie order does not).

In-place reuse is decided first: a buffer whose `inplace_of` names a non-pinned buffer that dies at
this buffer's defining task, is at least as large (aligned) and is not taken by another, shares that
buffer's offset. The chain of such buffers is one placement unit whose footprint is a staircase (each
member occupies its own size over its own interval, all at one offset), so sharing never costs bytes.

`keep_apart` pairs of buffers may not share bytes even when their lifetimes are disjoint (nor
overwrite one another in place): a caller that knows a reuse would cost more than its bytes (on
streams, an ordering that serializes concurrent tasks; lowering/streams/reuse_tradeoff.py) gives it up
this way. Each pair becomes one more conflict edge between the two placement units.

All arithmetic is in alignment units; the plan is in bytes. The time-overlap relation between units
is computed once, as arrays (conflicts.py: K overlapping pairs), and every heuristic walks it, so
planning is O(K log K) per heuristic, the inner loops in numpy.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from ge.lowering.memory.conflicts import Conflicts, conflicts, place
from ge.lowering.memory.liveness import Buffer


class PlanError(ValueError):
    """A memory plan that breaks an invariant (overlap, misalignment, missing buffer)."""


@dataclass(frozen=True)
class MemoryPlan:
    """Offsets (bytes, from the pool base) of the non-pinned buffers.

    `peak`: pool size in bytes. `heuristic`: the heuristic whose plan was kept. `lower_bound`: the
    most bytes (aligned) live at one task, a bound no plan can beat (an in-place pair counts once, as
    its larger member, at its hand-over task). `no_reuse_total`: the pool
    without reuse (sum of aligned sizes). `inplace`: buffer -> the buffer whose memory it overwrites.
    `pinned`: buffers left out of the pool. `candidates`: the peak of every heuristic tried.
    `keep_apart`: the pairs that were not allowed to share bytes (sorted names).
    """

    offsets: dict[str, int]
    peak: int
    heuristic: str
    lower_bound: int
    no_reuse_total: int
    inplace: dict[str, str]
    alignment: int
    pinned: tuple[str, ...] = ()
    candidates: dict[str, int] = field(default_factory=dict)
    keep_apart: tuple[tuple[str, str], ...] = ()

    def summary(self) -> str:
        ratio = self.peak / self.lower_bound if self.lower_bound else 1.0
        return (
            f"peak {self.peak} B ({self.heuristic}), lower bound {self.lower_bound} B ({ratio:.4f}x), "
            f"no reuse {self.no_reuse_total} B, {len(self.offsets)} buffers, {len(self.inplace)} in place"
        )


def _units(size: int, alignment: int) -> int:
    return -(-size // alignment)


# ---------------------------------------------------------------------------------------------------
# Placement units: a buffer, or a chain of buffers each overwriting its predecessor in place.


@dataclass
class _Unit:
    members: list[Buffer]
    sizes: list[int]  # aligned, in alignment units
    start: int
    end: int
    size: int  # the largest member


def _inplace_chains(
    pool: list[Buffer], sizes: dict[str, int], apart: frozenset[frozenset[str]] = frozenset()
) -> dict[str, str]:
    """buffer -> the buffer it overwrites: the first legal `inplace_of` candidate of each buffer (not
    one whose chain holds a buffer kept apart from it: a chain shares one offset)."""
    by_name = {b.name: b for b in pool}
    taken: dict[str, str] = {}
    chain_of: dict[str, list[str]] = {}
    for b in sorted(pool, key=lambda b: (b.start, b.end)):
        for cand in b.inplace_of:
            a = by_name.get(cand)
            if (
                a is not None
                and a is not b
                and a.end == b.start
                and a.start < b.start
                and sizes[b.name] <= sizes[a.name]
                and a.name not in taken
                and not any(frozenset((m, b.name)) in apart for m in chain_of.get(a.name, [a.name]))
            ):
                taken[a.name] = b.name
                chain = chain_of.setdefault(a.name, [a.name])
                chain.append(b.name)
                chain_of[b.name] = chain
                break
    return {b: a for a, b in taken.items()}


def _make_units(pool: list[Buffer], sizes: dict[str, int], inplace: dict[str, str]) -> list[_Unit]:
    successor = {a: b for b, a in inplace.items()}
    by_name = {b.name: b for b in pool}
    units = []
    for b in pool:
        if b.name in inplace:
            continue  # not a chain head
        chain = [b]
        while chain[-1].name in successor:
            chain.append(by_name[successor[chain[-1].name]])
        us = [sizes[m.name] for m in chain]
        units.append(_Unit(chain, us, chain[0].start, max(m.end for m in chain), max(us)))
    return units


def _live_profile(units: list[_Unit]) -> tuple[int, list[tuple[int, int]]]:
    """(max over time of the aligned units live at once, [(time, live units)] at every start point).
    A chain counts once at a hand-over task: the larger of the two members."""
    delta: dict[int, int] = {}
    for u in units:
        for i, (m, s) in enumerate(zip(u.members, u.sizes)):
            delta[m.start] = delta.get(m.start, 0) + s
            delta[m.end + 1] = delta.get(m.end + 1, 0) - s
            if i + 1 < len(u.members):  # hand-over at m.end == next.start
                shared = min(s, u.sizes[i + 1])
                delta[m.end] = delta.get(m.end, 0) - shared
                delta[m.end + 1] = delta.get(m.end + 1, 0) + shared
    live, best, profile = 0, 0, []
    for t in sorted(delta):
        live += delta[t]
        best = max(best, live)
        profile.append((t, live))
    return best, profile


def _order_by_size(units: list[_Unit]) -> list[int]:
    return sorted(range(len(units)), key=lambda i: (-units[i].size, units[i].start - units[i].end, units[i].start, i))


def _order_by_size_then_start(units: list[_Unit]) -> list[int]:
    return sorted(range(len(units)), key=lambda i: (-units[i].size, units[i].start, i))


def _order_by_area(units: list[_Unit]) -> list[int]:
    return sorted(
        range(len(units)), key=lambda i: (-units[i].size * (units[i].end - units[i].start + 1), units[i].start, i)
    )


def _order_by_start(units: list[_Unit]) -> list[int]:
    return sorted(range(len(units)), key=lambda i: (units[i].start, -units[i].size, i))


def _order_by_breadth(units: list[_Unit], profile: list[tuple[int, int]]) -> list[int]:
    """Units grouped by the task of largest breadth they are live at, tasks by decreasing breadth,
    largest first within a task (TFLite's greedy by breadth)."""
    times = [t for t, _ in profile]
    breadth = [b for _, b in profile]
    # the largest breadth over each unit's interval: a sparse table for range maximum queries
    table = [list(range(len(times)))]
    k = 1
    while (1 << k) <= len(times):
        prev, half = table[-1], 1 << (k - 1)
        table.append(
            [
                prev[i] if breadth[prev[i]] >= breadth[prev[i + half]] else prev[i + half]
                for i in range(len(times) - (1 << k) + 1)
            ]
        )
        k += 1
    key = []
    for i, u in enumerate(units):
        lo, hi = bisect_left(times, u.start), bisect_right(times, u.end) - 1
        j = (hi - lo + 1).bit_length() - 1
        a, b = table[j][lo], table[j][hi - (1 << j) + 1]
        peak_t = a if breadth[a] >= breadth[b] else b
        key.append((-breadth[peak_t], peak_t, -u.size, u.start - u.end, i))
    return [k[-1] for k in sorted(key)]


#: name -> (order function (units, profile) -> unit order, best fit?)
HEURISTICS: dict[str, tuple[Callable[[list[_Unit], list[tuple[int, int]]], list[int]], bool]] = {
    "size_best_fit": (lambda us, p: _order_by_size(us), True),
    "size_first_fit": (lambda us, p: _order_by_size(us), False),
    "breadth_best_fit": (_order_by_breadth, True),
    "area_best_fit": (lambda us, p: _order_by_area(us), True),
    "start_first_fit": (lambda us, p: _order_by_start(us), False),
    "size_start_first_fit": (lambda us, p: _order_by_size_then_start(us), False),
}


def plan_memory(
    buffers: Sequence[Buffer],
    alignment: int,
    reuse: bool = True,
    *,
    inplace: bool = True,
    heuristics: Sequence[str] | None = None,
    keep_apart: Iterable[tuple[str, str]] = (),
) -> MemoryPlan:
    """Offsets for the non-pinned `buffers` in one pool, each aligned to `alignment` bytes.

    `reuse=False` gives every buffer its own range (GE's ge.exec.disableReuseMemory; no in-place
    either). `inplace=False` keeps reuse but ignores `inplace_of`. `heuristics` restricts the
    heuristics tried (names of `HEURISTICS`); the smallest plan wins, ties to the earlier name.
    `keep_apart`: pairs of pool buffers that must not share a byte (see the module docstring).
    """
    _check_buffers(buffers, alignment)
    pool = [b for b in buffers if not b.pinned]
    pinned = tuple(b.name for b in buffers if b.pinned)
    sizes = {b.name: _units(b.size, alignment) for b in pool}
    no_reuse = sum(sizes.values())
    apart = _apart_pairs(keep_apart, sizes)

    if not reuse:
        return _plan_without_reuse(pool, sizes, alignment, pinned)

    chains = _inplace_chains(pool, sizes, apart) if inplace else {}
    units = _make_units(pool, sizes, chains)
    lower, profile = _live_profile(units)
    graph = conflicts(units, [tuple(sorted(p)) for p in apart])  # type: ignore[misc]
    names = list(HEURISTICS) if heuristics is None else list(heuristics)
    peak, name, unit_offsets, candidates = _best_placement(names, units, profile, graph)
    offsets = {}
    for u, o in zip(units, unit_offsets):
        for m in u.members:
            offsets[m.name] = o * alignment
    offsets = {b.name: offsets[b.name] for b in pool}
    return MemoryPlan(
        offsets,
        peak * alignment,
        name,
        lower * alignment,
        no_reuse * alignment,
        chains,
        alignment,
        pinned,
        {h: p * alignment for h, p in candidates.items()},
        tuple(sorted((min(p), max(p)) for p in apart)),  # each pair: two distinct names
    )


def _check_buffers(buffers: Sequence[Buffer], alignment: int) -> None:
    if not isinstance(alignment, int) or alignment <= 0:
        raise ValueError(f"alignment must be a positive int, got {alignment!r}")
    seen: set[str] = set()
    for b in buffers:
        if b.name in seen:
            raise ValueError(f"two buffers are named {b.name!r}")
        seen.add(b.name)


def _plan_without_reuse(
    pool: list[Buffer], sizes: dict[str, int], alignment: int, pinned: tuple[str, ...]
) -> MemoryPlan:
    """Every buffer its own range, stacked in order of first use."""
    offsets, top = {}, 0
    for b in sorted(pool, key=lambda b: (b.start, b.end)):
        offsets[b.name] = top * alignment
        top += sizes[b.name]
    lower, _ = _live_profile(_make_units(pool, sizes, {}))
    no_reuse = sum(sizes.values())
    return MemoryPlan(
        offsets,
        top * alignment,
        "no_reuse",
        lower * alignment,
        no_reuse * alignment,
        {},
        alignment,
        pinned,
        {"no_reuse": top * alignment},
    )


def _best_placement(
    names: list[str], units: list[_Unit], profile: list[tuple[int, int]], graph: Conflicts
) -> tuple[int, str, list[int], dict[str, int]]:
    """Run each named heuristic; (peak, heuristic, unit offsets) of the smallest plan (ties to the earlier
    name), and the peak of every heuristic (all in alignment units)."""
    if not names:
        raise ValueError("no heuristic to run")
    best: tuple[int, str, list[int]] | None = None
    candidates = {}
    for name in names:
        if name not in HEURISTICS:
            raise ValueError(f"unknown heuristic {name!r} (known: {', '.join(HEURISTICS)})")
        order_fn, best_fit = HEURISTICS[name]
        unit_offsets, peak = place(order_fn(units, profile), [u.size for u in units], graph, best_fit)
        candidates[name] = peak
        if best is None or peak < best[0]:
            best = (peak, name, unit_offsets)
    assert best is not None, "names is not empty"
    peak, name, unit_offsets = best
    return peak, name, unit_offsets, candidates


def _apart_pairs(keep_apart: Iterable[tuple[str, str]], sizes: dict[str, int]) -> frozenset[frozenset[str]]:
    pairs = set()
    for pair in keep_apart:
        x, y = pair
        for n in (x, y):
            if n not in sizes:
                raise ValueError(f"keep_apart names {n!r}, which is not a buffer of the pool")
        if x == y:
            raise ValueError(f"keep_apart pairs {x!r} with itself")
        pairs.add(frozenset((x, y)))
    return frozenset(pairs)


def verify_plan(plan: MemoryPlan, buffers: Sequence[Buffer]) -> None:
    """Raises PlanError when a non-pinned buffer has no offset, is misaligned or out of the pool, two
    buffers live at the same task overlap in memory (an in-place pair sharing one offset excepted) or
    kept apart share bytes, or an in-place pair is not legal (not named in `inplace_of`, input not
    dying at the defining task, output larger than the input)."""
    by_name = {b.name: b for b in buffers}
    pool = [b for b in buffers if not b.pinned]
    _check_offsets(plan, pool, by_name)
    root = _check_inplace_pairs(plan, pool, by_name)
    _check_no_overlap(plan, pool, root)
    _check_kept_apart(plan, by_name)


def _check_offsets(plan: MemoryPlan, pool: list[Buffer], by_name: dict[str, Buffer]) -> None:
    """Every pool buffer has an aligned offset inside the pool, and every offset is of a pool buffer."""
    for b in pool:
        if b.name not in plan.offsets:
            raise PlanError(f"buffer {b.name!r} has no offset")
        o = plan.offsets[b.name]
        if o < 0 or o % plan.alignment:
            raise PlanError(f"buffer {b.name!r}: offset {o} is not a non-negative multiple of {plan.alignment}")
        if o + b.size > plan.peak:
            raise PlanError(f"buffer {b.name!r} at [{o}, {o + b.size}) ends past the pool of {plan.peak} bytes")
    for name in plan.offsets:
        if name not in by_name or by_name[name].pinned:
            raise PlanError(f"offset for {name!r}, which is not a buffer of the pool")


def _check_inplace_pairs(plan: MemoryPlan, pool: list[Buffer], by_name: dict[str, Buffer]) -> Callable[[str], str]:
    """Every in-place pair is legal; the pairs grouped (transitively) so their members may overlap:
    returns the group representative of a buffer name."""
    group = {b.name: b.name for b in pool}

    def root(n: str) -> str:
        while group[n] != n:
            group[n] = group[group[n]]
            n = group[n]
        return n

    align = plan.alignment
    for out, inp in plan.inplace.items():
        b, a = by_name.get(out), by_name.get(inp)
        if b is None or a is None or b.pinned or a.pinned:
            raise PlanError(f"in-place pair {out!r} <- {inp!r} names a missing or pinned buffer")
        if inp not in b.inplace_of:
            raise PlanError(f"{out!r} overwrites {inp!r}, which is not in its inplace_of")
        if a.end != b.start:
            raise PlanError(
                f"{out!r} overwrites {inp!r}, whose last use (task {a.end}) is not its definition (task {b.start})"
            )
        if _units(b.size, align) > _units(a.size, align):
            raise PlanError(f"{out!r} ({b.size} bytes) overwrites the smaller {inp!r} ({a.size} bytes)")
        if plan.offsets[out] != plan.offsets[inp]:
            raise PlanError(f"in-place pair {out!r} <- {inp!r} at different offsets")
        group[root(out)] = root(inp)
    return root


def _check_no_overlap(plan: MemoryPlan, pool: list[Buffer], root: Callable[[str], str]) -> None:
    """Sweep over time: no buffer shares bytes with one live when it starts, unless in the same in-place group."""
    order = sorted((b for b in pool if b.size), key=lambda b: (b.start, b.end))
    active: list[tuple[int, int, Buffer]] = []
    live: dict[int, Buffer] = {}
    for i, b in enumerate(order):
        while active and active[0][0] < b.start:
            del live[heapq.heappop(active)[1]]
        ob = plan.offsets[b.name]
        for c in live.values():
            oc = plan.offsets[c.name]
            if ob < oc + c.size and oc < ob + b.size and root(b.name) != root(c.name):
                raise PlanError(
                    f"buffers {c.name!r} [{oc}, {oc + c.size}) live over tasks {c.start}..{c.end} and "
                    f"{b.name!r} [{ob}, {ob + b.size}) live over tasks {b.start}..{b.end} overlap"
                )
        live[i] = b
        heapq.heappush(active, (b.end, i, b))


def _check_kept_apart(plan: MemoryPlan, by_name: dict[str, Buffer]) -> None:
    for x, y in plan.keep_apart:
        b, c = by_name.get(x), by_name.get(y)
        if b is None or c is None:
            raise PlanError(f"keep-apart pair {x!r}, {y!r} names a missing buffer")
        ob, oc = plan.offsets[x], plan.offsets[y]
        if b.size and c.size and ob < oc + c.size and oc < ob + b.size:
            raise PlanError(
                f"buffers {x!r} [{ob}, {ob + b.size}) and {y!r} [{oc}, {oc + c.size}) are kept apart but share bytes"
            )
