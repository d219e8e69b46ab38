"""Stream assignment and event insertion (lowering/streams): properties on random DAGs checked
against brute-force references, hand cases, and the op DAG of BERT-base."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ge.lowering.streams import (
    Dag,
    assign_event_ids,
    assign_streams,
    dag_from_ops,
    estimate_makespan,
    graph,
    insert_events,
    path_cover,
    plan_streams,
    unenforced_edges,
)
from ge.lowering.streams.assign import asap_times
from ge.lowering.streams.graph import Reachability

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------- generators and references


@st.composite
def dags(draw, max_nodes=40, max_edges=120):
    n = draw(st.integers(0, max_nodes))
    if n < 2:
        return Dag(n, [])
    pairs = draw(
        st.lists(
            st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)).filter(lambda p: p[0] != p[1]),
            max_size=max_edges,
        )
    )
    return Dag(n, [(min(p), max(p)) for p in pairs])


@st.composite
def dags_with_costs(draw, max_nodes=40):
    dag = draw(dags(max_nodes))
    cost = st.sampled_from([0.0, 0.5, 1.0, 2.0, 7.0])
    costs = draw(st.lists(cost, min_size=dag.n, max_size=dag.n))
    return dag.with_costs(costs)


budgets = st.one_of(st.none(), st.integers(1, 6))


def reachable(n, edges, u, v, skip=None):
    """Whether a path of >= 1 edge leads u -> v (DFS), optionally without the edge `skip`."""
    succ = [[] for _ in range(n)]
    for e in edges:
        if e != skip:
            succ[e[0]].append(e[1])
    stack, seen = list(succ[u]), set()
    while stack:
        w = stack.pop()
        if w == v:
            return True
        if w not in seen:
            seen.add(w)
            stack.extend(succ[w])
    return False


def consecutive_pairs(streams):
    """Stream-order edges, computed independently of the library."""
    by_stream = {}
    for v, s in enumerate(streams):
        by_stream.setdefault(s, []).append(v)
    return {(a, b) for nodes in by_stream.values() for a, b in zip(nodes, nodes[1:])}


def reference_events(dag, streams):
    """Cross-stream edges of the transitive reduction of data + stream edges, by definition:
    an edge is redundant iff another path joins its ends."""
    union = set(dag.edges) | consecutive_pairs(streams)
    reduction = {e for e in union if not reachable(dag.n, union, e[0], e[1], skip=e)}
    return {(u, v) for u, v in reduction if streams[u] != streams[v]}


def kuhn_matching_size(dag):
    """Maximum bipartite matching (left u -> right v per edge) by simple augmenting paths."""
    match_right = [-1] * dag.n

    def augment(u, seen):
        for v in dag.succ[u]:
            if v not in seen:
                seen.add(v)
                if match_right[v] < 0 or augment(match_right[v], seen):
                    match_right[v] = u
                    return True
        return False

    return sum(augment(u, set()) for u in range(dag.n))


def brute_force_min_paths(dag):
    """The fewest paths (along edges) partitioning the nodes: all path partitions enumerated
    by putting each node (in program order) at the end of an open path or starting a new one."""
    best = [dag.n]
    edges = set(dag.edges)

    def go(v, tails):
        if len(tails) >= best[0]:
            return
        if v == dag.n:
            best[0] = len(tails)
            return
        for i, t in enumerate(tails):
            if (t, v) in edges:
                go(v + 1, tails[:i] + (v,) + tails[i + 1 :])
        go(v + 1, tails + (v,))

    go(0, ())
    return best[0] if dag.n else 0


def max_live(events, order):
    """Largest number of events live at one issue position ([pos src, pos dst) live ranges)."""
    pos = {v: i for i, v in enumerate(order)}
    return max((sum(pos[s] <= p < pos[d] for s, d in events) for p in range(len(order))), default=0)


def check_event_ids(events, order, ids):
    assert set(ids) == set(events)
    pos = {v: i for i, v in enumerate(order)}
    by_id = {}
    for e, i in ids.items():
        by_id.setdefault(i, []).append(e)
    for group in by_id.values():
        spans = sorted((pos[s], pos[d]) for s, d in group)
        for (_, d1), (s2, _) in zip(spans, spans[1:]):
            assert d1 <= s2, f"events live at once share an id: {group}"
    assert sorted(by_id) == list(range(len(by_id)))
    assert len(by_id) == max_live(events, order)  # minimal for the order


# ---------------------------------------------------------------- graph helpers


@SETTINGS
@given(dags(max_nodes=25, max_edges=60))
def test_closure_and_reduction_match_definition(dag):
    reach = dag.closure()
    for u in range(dag.n):
        for v in range(dag.n):
            assert bool(reach[u] >> v & 1) == reachable(dag.n, dag.edges, u, v)
    expected = {e for e in dag.edges if not reachable(dag.n, dag.edges, *e, skip=e)}
    reduced = dag.transitive_reduction()
    assert set(reduced.edges) == expected
    assert reduced.closure() == reach


@SETTINGS
@given(dags(max_nodes=30, max_edges=80), st.data())
def test_chain_labels_answer_as_the_bitsets(dag, data):
    """graph.Reachability's two forms (large graphs use the labels): the same reachability and
    reduction, on the data graph (greedy chains) and with stream-order edges (streams as chains)."""
    streams = data.draw(st.lists(st.integers(0, 3), min_size=dag.n, max_size=dag.n))
    succ_with_streams = [list(s) for s in dag.succ]
    last: dict[int, int] = {}
    for v, s in enumerate(streams):
        if s in last:
            succ_with_streams[last[s]].append(v)
        last[s] = v
    for succ, chains in ((dag.succ, None), (succ_with_streams, streams)):
        bits = Reachability(dag.n, succ, chains, method="bitsets")
        labels = Reachability(dag.n, succ, chains, method="labels")
        assert labels.method == "labels"
        for u in range(dag.n):
            for v in range(dag.n):
                assert labels.reaches(u, v) == bits.reaches(u, v)
        assert labels.reduction() == bits.reduction()


@SETTINGS
@given(dags_with_costs(max_nodes=30), budgets)
def test_plan_streams_alike_with_chain_labels(dag, budget):
    """Streams, events and event ids do not depend on which form of reachability computed them."""
    before = plan_streams(dag, budget)
    try:
        graph.METHOD = "labels"
        after = plan_streams(dag.with_costs(dag.costs), budget)  # a fresh Dag: nothing cached
    finally:
        graph.METHOD = None
    assert (after.streams, after.events, after.event_ids) == (before.streams, before.events, before.event_ids)


def test_dag_rejects_bad_edges_and_costs():
    with pytest.raises(ValueError, match="against the program order"):
        Dag(3, [(2, 1)])
    with pytest.raises(ValueError, match="against the program order"):
        Dag(3, [(1, 1)])
    with pytest.raises(ValueError, match="outside"):
        Dag(3, [(0, 3)])
    with pytest.raises(ValueError, match="costs"):
        Dag(3, [], costs=[1.0])
    assert Dag(3, [(0, 1), (0, 1)]).edges == ((0, 1),)


# ---------------------------------------------------------------- stream assignment


@SETTINGS
@given(dags(), st.booleans())
def test_cover_is_paths_along_edges_and_minimum(dag, fewest_events):
    streams = assign_streams(dag, fewest_events=fewest_events)
    edges = set(dag.edges)
    assert all(e in edges for e in consecutive_pairs(streams)), "a stream is not a path along edges"
    assert max(streams, default=-1) + 1 == dag.n - kuhn_matching_size(dag)
    paths = path_cover(dag, fewest_events)
    assert sorted(v for p in paths for v in p) == list(range(dag.n))
    assert [p[0] for p in paths] == sorted(p[0] for p in paths)


@SETTINGS
@given(dags(max_nodes=8, max_edges=20))
def test_cover_minimum_against_brute_force(dag):
    expected = brute_force_min_paths(dag)
    assert dag.n - kuhn_matching_size(dag) == expected
    for fewest_events in (False, True):
        assert len(path_cover(dag, fewest_events)) == expected


@SETTINGS
@given(dags(max_nodes=20, max_edges=50))
def test_fewest_events_cover_is_optimal_among_minimum_covers(dag):
    """Without merging, events = reduction edges not on a stream; the weighted matching
    uses as many reduction edges as any maximum matching (checked against the plain one)."""
    weighted = insert_events(dag, assign_streams(dag))
    plain = insert_events(dag, assign_streams(dag, fewest_events=False))
    assert len(weighted) <= len(plain)
    reduction = set(dag.transitive_reduction().edges)
    streams = assign_streams(dag)
    assert set(weighted) == reduction - consecutive_pairs(streams)


@SETTINGS
@given(dags_with_costs(), budgets, st.sampled_from(["best", "interval", "least_loaded"]))
def test_max_streams_respected(dag, max_streams, merge):
    streams = assign_streams(dag, max_streams, merge=merge)
    assert len(streams) == dag.n
    k = max(streams, default=-1) + 1
    assert sorted(set(streams)) == list(range(k))
    unlimited = len(path_cover(dag))
    assert k <= (unlimited if max_streams is None else min(max_streams, unlimited))
    if max_streams is None or max_streams >= unlimited:
        assert k == unlimited
    firsts = [streams.index(s) for s in range(k)]
    assert firsts == sorted(firsts), "streams are numbered by their first task"
    if max_streams == 1:
        assert set(streams) <= {0}


@SETTINGS
@given(dags_with_costs(), budgets)
def test_makespan_bounds(dag, max_streams):
    streams = assign_streams(dag, max_streams)
    span = estimate_makespan(dag, streams)
    critical = max(asap_times(dag)[1], default=0.0)
    assert critical - 1e-9 <= span <= sum(dag.costs) + 1e-9
    if max_streams is None:
        assert span == pytest.approx(critical)  # streams along edges keep all parallelism
    if max_streams == 1:
        assert span == pytest.approx(sum(dag.costs))


def test_assign_streams_argument_errors():
    dag = Dag(2, [(0, 1)])
    with pytest.raises(ValueError, match="max_streams"):
        assign_streams(dag, 0)
    with pytest.raises(ValueError, match="merge"):
        assign_streams(dag, 2, merge="random")
    with pytest.raises(ValueError, match="costs"):
        assign_streams(dag, 2, costs=[1.0])
    assert assign_streams(Dag(0, [])) == []


# ---------------------------------------------------------------- events


@SETTINGS
@given(dags_with_costs(), budgets)
def test_events_enforce_every_data_edge(dag, max_streams):
    streams = assign_streams(dag, max_streams)
    events = insert_events(dag, streams)
    assert all(streams[u] != streams[v] for u, v in events)
    sync = consecutive_pairs(streams) | set(events)
    for u, v in dag.edges:
        assert u == v or reachable(dag.n, sync, u, v), f"data edge {(u, v)} not enforced"
    assert unenforced_edges(dag, streams, events) == []
    # and no event is implied by the others plus the stream order
    for e in events:
        assert not reachable(dag.n, sync, *e, skip=e)


@SETTINGS
@given(dags_with_costs(), budgets)
def test_events_equal_brute_force_reduction(dag, max_streams):
    streams = assign_streams(dag, max_streams)
    assert set(insert_events(dag, streams)) == reference_events(dag, streams)


@SETTINGS
@given(dags(max_nodes=25, max_edges=60), st.data())
def test_events_for_arbitrary_stream_maps(dag, data):
    """insert_events does not rely on the streams coming from assign_streams."""
    streams = data.draw(st.lists(st.integers(0, 3), min_size=dag.n, max_size=dag.n))
    events = insert_events(dag, streams)
    assert set(events) == reference_events(dag, streams)
    assert unenforced_edges(dag, streams, events) == []


def test_diamond_on_two_streams_needs_two_events():
    #   0 -> 1 -> 3,  0 -> 2 -> 3: the minimum covers have 2 paths; each needs 2 events
    dag = Dag(4, [(0, 1), (0, 2), (1, 3), (2, 3)])
    streams = assign_streams(dag, 2)
    assert max(streams) == 1 and len(path_cover(dag)) == 2
    assert len(insert_events(dag, streams)) == 2
    expected = {
        (0, 0, 1, 0): [(0, 2), (2, 3)],  # 0 1 3 | 2
        (0, 1, 0, 0): [(0, 1), (1, 3)],  # 0 2 3 | 1
        (0, 0, 1, 1): [(0, 2), (1, 3)],  # 0 1 | 2 3
    }
    for streams, events in expected.items():
        assert insert_events(dag, streams) == events
    # the side branch's two events do not overlap: one id; the crossing pair does: two ids
    assert assign_event_ids([(0, 2), (2, 3)], range(4)) == {(0, 2): 0, (2, 3): 0}
    assert assign_event_ids([(0, 2), (1, 3)], range(4)) == {(0, 2): 0, (1, 3): 1}
    assert insert_events(dag, assign_streams(dag, 1)) == []


def test_chain_is_one_stream_without_events():
    dag = Dag(5, [(i, i + 1) for i in range(4)])
    assert assign_streams(dag) == [0] * 5
    assert insert_events(dag, [0] * 5) == []


def test_event_implied_by_stream_order_is_dropped():
    # stream 0: 0, 1   stream 1: 2, 3;  0 -> 2 makes 0 -> 3 redundant (2 precedes 3 on stream 1),
    # 1 -> 3 makes 0 -> 3 redundant too; 1 -> 3 is still needed.
    dag = Dag(4, [(0, 1), (2, 3), (0, 2), (1, 3), (0, 3)])
    streams = [0, 0, 1, 1]
    assert insert_events(dag, streams) == [(0, 2), (1, 3)]
    # a wait for a later task of the producer's stream implies the earlier ones:
    # 0 -> 3 and 1 -> 3 with 0, 1 consecutive on stream 0: only 1 -> 3 is kept.
    dag = Dag(4, [(0, 1), (0, 3), (1, 3), (2, 3)])
    assert insert_events(dag, [0, 0, 1, 1]) == [(1, 3)]


def test_same_stream_edges_never_need_events():
    dag = Dag(4, [(0, 2), (1, 3), (0, 3)])
    # 0 and 3 share a stream with 1 in between, 2 elsewhere: 0 -> 3 is enforced by stream order
    assert insert_events(dag, [0, 0, 1, 0]) == [(0, 2)]


def test_event_ids_reuse_and_overlap():
    # live ranges: (0,2) [0,2)  (1,3) [1,3)  (2,4) [2,4)  (3,5) [3,5)
    events = [(0, 2), (1, 3), (2, 4), (3, 5)]
    ids = assign_event_ids(events, range(6))
    assert ids == {(0, 2): 0, (1, 3): 1, (2, 4): 0, (3, 5): 1}
    check_event_ids(events, list(range(6)), ids)
    # same events, different issue order: each id is reused when its wait has been issued
    order = [0, 2, 1, 4, 3, 5]
    ids = assign_event_ids(events, order)
    check_event_ids(events, order, ids)
    assert assign_event_ids([], range(3)) == {}
    with pytest.raises(ValueError, match="wait is issued before its record"):
        assign_event_ids([(0, 1)], [1, 0])
    with pytest.raises(ValueError, match="missing"):
        assign_event_ids([(0, 5)], range(3))


@SETTINGS
@given(dags_with_costs(), budgets)
def test_event_ids_program_order(dag, max_streams):
    streams = assign_streams(dag, max_streams)
    events = insert_events(dag, streams)
    order = list(range(dag.n))
    check_event_ids(events, order, assign_event_ids(events, order))


@st.composite
def orders_and_events(draw):
    n = draw(st.integers(2, 30))
    order = draw(st.permutations(range(n)))
    pos = {v: i for i, v in enumerate(order)}
    pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=60))
    events = [tuple(sorted(p, key=pos.get)) for p in pairs if p[0] != p[1]]
    return order, list(dict.fromkeys(events))


@SETTINGS
@given(orders_and_events())
def test_event_ids_any_order(case):
    order, events = case
    check_event_ids(events, order, assign_event_ids(events, order))


def test_plan_streams_bundles_the_three():
    dag = Dag(4, [(0, 1), (0, 2), (1, 3), (2, 3)])
    plan = plan_streams(dag, 2)
    assert plan.events == insert_events(dag, plan.streams)
    assert plan.event_ids == assign_event_ids(plan.events, range(4))
    assert (plan.num_streams, len(plan.events)) == (2, 2)
    assert plan_streams(dag, 1).num_event_ids == 0


# ---------------------------------------------------------------- performance and a real model


def test_large_random_dag_plans_within_every_budget():
    """(Planning time at scale is bench.scaling's: a wall-clock limit would flake on a shared machine.)"""
    rng = random.Random(0)
    n, edges = 1000, set()
    while len(edges) < 5000:
        u = rng.randrange(n - 1)
        edges.add((u, min(n - 1, u + rng.randint(1, 60))))
    dag = Dag(n, edges, costs=[rng.choice([1.0, 2.0, 5.0]) for _ in range(n)])
    for max_streams in (None, 1, 4, 16):
        plan = plan_streams(dag, max_streams)
        assert plan.num_streams <= (max_streams or n)
        assert unenforced_edges(dag, plan.streams, plan.events) == []


def bert_dag(references):
    from xdsl.dialects import func

    from ge.ge_dialects import ge

    module = references.module("bert_base", "full")
    body = next(op for op in module.ops if isinstance(op, func.FuncOp)).body.block
    dag, _ = dag_from_ops(list(body.ops), skip=lambda op: isinstance(op, (ge.ConstantOp, func.ReturnOp)))
    return dag


def test_bert_base_streams_and_events(references):
    """Full size: 12 layers give the stream planner its widest real DAG."""
    dag = bert_dag(references)
    assert dag.n > 300 and len(dag.edges) > dag.n
    rows = []
    unlimited = len(path_cover(dag))
    for max_streams in (None, 1, 2, 4, 8, 16):
        plan = plan_streams(dag, max_streams)
        assert plan.num_streams <= (max_streams or unlimited)
        assert unenforced_edges(dag, plan.streams, plan.events) == []
        assert all(plan.streams[u] != plan.streams[v] for u, v in plan.events)
        check_event_ids(plan.events, list(range(dag.n)), plan.event_ids)
        span = estimate_makespan(dag, plan.streams)
        counts = (plan.num_streams, len(plan.events), plan.num_event_ids)
        rows.append((max_streams, *counts, span))
    by_budget = {r[0]: r for r in rows}
    assert by_budget[1][1:4] == (1, 0, 0)
    assert by_budget[None][1] == unlimited > 16
    assert by_budget[2][1] == 2 and by_budget[2][2] > 0
    # more streams never lengthen the estimated makespan here, and reach the critical path
    spans = [by_budget[k][4] for k in (1, 2, 4, 8, 16)]
    assert spans == sorted(spans, reverse=True)
    assert by_budget[16][4] == pytest.approx(by_budget[None][4])
    print(f"\nBERT-base: {dag.n} tasks, {len(dag.edges)} edges")
    for r in rows:
        print(f"max_streams={r[0]!s:<4} streams={r[1]:<3} events={r[2]:<3} event_ids={r[3]} makespan={r[4]:.0f}")
