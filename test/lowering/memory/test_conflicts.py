"""The array-based conflict graph and placer (lowering/memory/conflicts.py) against the plain
greedy they replaced: the same edges and the same offsets for every heuristic, on random buffer sets
with in-place chains and kept-apart pairs, through both the small-degree loop and the array path."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ge.lowering.memory import conflicts as conflicts_module
from ge.lowering.memory.conflicts import conflicts, place
from ge.lowering.memory.liveness import Buffer
from ge.lowering.memory.plan import HEURISTICS, _inplace_chains, _live_profile, _make_units


def reference_conflicts(units, apart):
    """Every pair of members compared directly (closed intervals intersect), as dicts."""
    adj = [{} for _ in units]

    def add(ui, vi, s, t):
        if ui == vi or not s or not t:
            return
        a, b = adj[ui].get(vi, (0, 0))
        adj[ui][vi] = (max(a, s), max(b, t))
        b2, a2 = adj[vi].get(ui, (0, 0))
        adj[vi][ui] = (max(b2, t), max(a2, s))

    members = [(ui, m, s) for ui, u in enumerate(units) for m, s in zip(u.members, u.sizes)]
    for i, (ui, m, s) in enumerate(members):
        for vi, n, t in members[:i]:
            if m.start <= n.end and n.start <= m.end:
                add(ui, vi, s, t)
    where = {m.name: (ui, s) for ui, m, s in members}
    for x, y in apart:
        add(*where[x][:1], *where[y][:1], where[x][1], where[y][1])
    return adj


def reference_place(order, units, adj, best_fit):
    offsets, peak = [-1] * len(units), 0
    for ui in order:
        size = units[ui].size
        if size == 0:
            offsets[ui] = 0
            continue
        forbidden = sorted(
            (max(0, offsets[v] - a + 1), offsets[v] + b) for v, (a, b) in adj[ui].items() if offsets[v] >= 0
        )
        lo, gaps = 0, []
        for f_lo, f_hi in forbidden:
            if f_lo > lo:
                gaps.append((f_lo - 1 - lo, lo))
            lo = max(lo, f_hi)
        if not gaps:
            choice = lo
        elif not best_fit:
            choice = gaps[0][1]
        else:
            slack, choice = min(gaps, key=lambda g: g[0])  # the first of the tightest
            if slack > 0 and lo + size <= peak and peak - size - lo < slack:
                choice = lo
        offsets[ui] = choice
        peak = max(peak, choice + size)
    return offsets, peak


@st.composite
def instances(draw):
    n = draw(st.integers(1, 60))
    buffers = []
    for i in range(n):
        start = draw(st.integers(0, 30))
        end = start + draw(st.integers(0, 12))
        size = draw(st.sampled_from([0, 1, 2, 3, 5, 8, 13]))
        earlier = [b.name for b in buffers if b.end == start and b.start < start]
        inplace = tuple(draw(st.lists(st.sampled_from(earlier), max_size=2))) if earlier else ()
        buffers.append(Buffer(f"b{i}", size, start, end, inplace_of=inplace))
    names = [b.name for b in buffers]
    apart = draw(st.lists(st.tuples(st.sampled_from(names), st.sampled_from(names)), max_size=6))
    return buffers, [(x, y) for x, y in apart if x != y]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(), st.sampled_from([0, 1000]))
def test_same_edges_and_offsets_as_the_plain_greedy(monkeypatch_degree, small_degree):
    buffers, apart = monkeypatch_degree
    sizes = {b.name: b.size for b in buffers}
    frozen = frozenset(frozenset(p) for p in apart)
    units = _make_units(buffers, sizes, _inplace_chains(buffers, sizes, frozen))
    apart_pairs = [tuple(sorted(p)) for p in frozen]
    # a chain shares one offset: pairs inside one unit cannot be kept apart (plan_memory refuses them)
    unit_of = {m.name: i for i, u in enumerate(units) for m in u.members}
    apart_pairs = [p for p in apart_pairs if unit_of[p[0]] != unit_of[p[1]]]
    graph = conflicts(units, apart_pairs)
    want = reference_conflicts(units, apart_pairs)
    assert [graph.neighbours(u) for u in range(len(units))] == want
    _, profile = _live_profile(units)
    saved = conflicts_module._SMALL_DEGREE
    conflicts_module._SMALL_DEGREE = small_degree  # 0: always the array path; 1000: always the loop
    try:
        for name, (order_fn, best_fit) in HEURISTICS.items():
            order = order_fn(units, profile)
            assert place(order, [u.size for u in units], graph, best_fit) == reference_place(
                order, units, want, best_fit
            ), name
    finally:
        conflicts_module._SMALL_DEGREE = saved
