"""Stream assignment: a minimum path cover of the task DAG, merged down to a stream budget.

The model (GE's DAG stream allocation, Nimble's stream assignment): a *stream* is a queue that
runs its tasks one after the other in program order; tasks on different streams may run
concurrently, and a dependency between tasks on different streams costs one event
(record/wait, see ``events.py``).

1. **Minimum path cover along edges.** Every stream is made a path of the DAG along its data
   edges: consecutive tasks of a stream are a producer and one of its consumers. The cover with
   the fewest paths comes from a maximum matching of the bipartite graph with a left copy
   ``u`` and a right copy ``v'`` of each node and an edge ``u -> v'`` per data edge: a matched
   ``(u, v')`` means "``v`` follows ``u`` on its stream"; each node gets at most one successor
   and one predecessor, so the matched edges form vertex-disjoint paths, and
   ``#paths = n - |matching|``, minimal when the matching is maximum.
   ``scipy.sparse.csgraph.maximum_bipartite_matching`` (Hopcroft-Karp) computes one
   (``fewest_events=False``). By default (``fewest_events=True``) a min-weight matching picks,
   among the maximum matchings, one using the most edges of the transitive reduction: same
   number of streams, and each such matched edge is a dependency that needs no event (a matched
   redundant edge saves nothing, its dependency was implied anyway); ~7% fewer events on
   random DAGs, same on BERT.

   *Edges, not the transitive closure.* Matching over the closure (``u -> v'`` whenever ``v``
   is reachable from ``u``) gives a minimum *chain* cover (Dilworth: as many streams as the
   widest antichain), which can be fewer streams, but consecutive tasks of a chain need not
   exchange data: the stream order then serializes tasks that are only ordered through other
   streams, and every chain link costs the events of the path that implies it. Along edges
   (as GE and Nimble do) every consecutive pair on a stream is a real producer->consumer pair,
   so the stream order adds no ordering that the data edges do not already impose: with
   unlimited streams the assignment keeps all the graph's parallelism (the estimated makespan
   is the critical path) and each matched edge is a dependency that needs no event. The
   stream budget is then met by merging (step 2), which is where any parallelism is traded.

2. **Merging to ``max_streams``.** When the cover has more paths than the budget, whole paths
   are packed onto ``max_streams`` streams; a merged stream runs the union of its paths' tasks
   in program order. Two packings are computed and the one with the smaller estimated makespan
   (``estimate_makespan``) is kept (``merge="best"``, the default; ties go to "interval"):

   - ``"interval"``: each path occupies the time interval ``[ASAP start of its first task,
     ASAP finish of its last task]`` (ASAP times with unlimited streams and the node costs).
     Paths are taken by increasing start; a path goes to the stream that became free last
     before it starts (best fit), else to a new stream while the budget allows, else to the
     stream that frees up first (its interval is then shifted by the wait). Paths that do not
     overlap in time share a stream at no cost, and overlapping ones are spread out.
   - ``"least_loaded"``: repeatedly merge the two streams with the smallest total cost.

   ``max_streams=1`` (GE's ``ge.enableSingleStream``) puts every task on stream 0.

Stream ids are ``0..k-1``, numbered by the program position of each stream's first task (node
0, if any, is on stream 0).
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import (
    maximum_bipartite_matching,
    min_weight_full_bipartite_matching,
)

from ge.lowering.streams.graph import Dag

MERGE_STRATEGIES = ("best", "interval", "least_loaded")


def path_cover(dag: Dag, fewest_events: bool = True) -> list[list[int]]:
    """A minimum cover of the nodes by vertex-disjoint paths along the DAG's edges.

    Each path is a list of nodes in program order, consecutive nodes joined by an edge; the
    paths are ordered by their first node. With ``fewest_events`` the matching, among the
    maximum ones, uses as many edges of the transitive reduction as possible (see
    ``_matching``); otherwise it is scipy's Hopcroft-Karp maximum matching as is.
    """
    n = dag.n
    if n == 0:
        return []
    nxt = _matching(dag, fewest_events)
    nxt = nxt.tolist()
    has_pred = [False] * n
    for v in nxt:
        if v >= 0:
            has_pred[v] = True
    paths = []
    for head in range(n):
        if has_pred[head]:
            continue
        path, u = [], head
        while u >= 0:
            path.append(u)
            u = nxt[u]
        paths.append(path)
    return paths


def _matching(dag: Dag, fewest_events: bool) -> np.ndarray:
    """``nxt[u]``: the node following ``u`` on its path, or -1 (a maximum matching of the
    bipartite graph "left u -> right v per edge (u, v)").

    Both variants give a maximum matching, hence the same (minimum) number of paths. Plain:
    ``maximum_bipartite_matching``. ``fewest_events``: ``min_weight_full_bipartite_matching``
    on the same edges plus one private "no successor" column per node; weights: an edge of the
    transitive reduction 1, a redundant edge 2, "no successor" ``n + 3``. A matching with
    ``K`` real edges costs at most ``(n-K)(n+3) + 2K``, one with ``k < K`` at least
    ``(n-k)(n+3) + k``, which is more since ``(K-k)(n+3) > K + (K-k) >= 2K - k``; so the result
    is a maximum matching, and among those it has the most reduction edges. This matters
    because without merging the stream edges are matched data edges, the union graph of
    ``events.py`` is the data graph itself, and the events are exactly the reduction edges
    left unmatched: a matched redundant edge saves no event (its dependency was implied).
    """
    n = dag.n
    if not dag.edges:
        return np.full(n, -1, dtype=np.int64)
    e = np.asarray(dag.edges, dtype=np.int64)
    if not fewest_events:
        g = sp.csr_matrix((np.ones(len(e), dtype=np.int8), (e[:, 0], e[:, 1])), shape=(n, n))
        return maximum_bipartite_matching(g, perm_type="column").astype(np.int64)
    reduced = set(dag.transitive_reduction().edges)
    weights = [1.0 if edge in reduced else 2.0 for edge in dag.edges]
    rows = np.concatenate([e[:, 0], np.arange(n)])
    cols = np.concatenate([e[:, 1], np.arange(n, 2 * n)])
    w = np.concatenate([np.asarray(weights), np.full(n, float(n + 3))])
    g = sp.csr_matrix((w, (rows, cols)), shape=(n, 2 * n))
    row_ind, col_ind = min_weight_full_bipartite_matching(g)
    nxt = np.full(n, -1, dtype=np.int64)
    real = col_ind < n
    nxt[row_ind[real]] = col_ind[real]
    return nxt


def asap_times(dag: Dag, costs: Sequence[float] | None = None) -> tuple[list[float], list[float]]:
    """Earliest start and finish of every task with unlimited streams (the critical-path times)."""
    c = dag.costs if costs is None else costs
    start = [0.0] * dag.n
    finish = [0.0] * dag.n
    for v in range(dag.n):
        s = 0.0
        for u in dag.pred[v]:
            if finish[u] > s:
                s = finish[u]
        start[v] = s
        finish[v] = s + c[v]
    return start, finish


def stream_times(
    dag: Dag, streams: Sequence[int], costs: Sequence[float] | None = None
) -> tuple[list[float], list[float]]:
    """Start and finish of every task when each stream runs its tasks in program order.

    A task starts when its stream's previous task and all its producers have finished (events
    are free, launch overheads ignored); task ``v`` takes ``costs[v]`` (default: the DAG's).
    """
    c = dag.costs if costs is None else costs
    if len(streams) != dag.n:
        raise ValueError(f"{len(streams)} stream ids given for {dag.n} nodes")
    stream_free: dict[int, float] = {}
    start = [0.0] * dag.n
    finish = [0.0] * dag.n
    for v in range(dag.n):
        s = stream_free.get(streams[v], 0.0)
        for u in dag.pred[v]:
            if finish[u] > s:
                s = finish[u]
        start[v] = s
        finish[v] = f = s + c[v]
        stream_free[streams[v]] = f
    return start, finish


def estimate_makespan(dag: Dag, streams: Sequence[int], costs: Sequence[float] | None = None) -> float:
    """Finish time of the last task when each stream runs its tasks in program order
    (``stream_times``)."""
    return max(stream_times(dag, streams, costs)[1], default=0.0)


def assign_streams(
    dag: Dag,
    max_streams: int | None = None,
    costs: Sequence[float] | None = None,
    merge: str = "best",
    fewest_events: bool = True,
    dedicated: Sequence[Sequence[int]] = (),
) -> list[int]:
    """The stream id (``0..k-1``) of every node; ``k <= max_streams`` when a budget is given.

    ``costs`` (per node) override the DAG's costs for the merge decisions. See the module
    docstring for the algorithm and ``merge`` strategies, and ``path_cover`` for
    ``fewest_events``. Each group of ``dedicated`` nodes runs on a stream of its own, numbered
    after the others' (the collectives on HCCL's stream); the budget counts the other streams.
    """
    if max_streams is not None and max_streams < 1:
        raise ValueError(f"max_streams must be >= 1, got {max_streams}")
    if merge not in MERGE_STRATEGIES:
        raise ValueError(f"unknown merge strategy '{merge}' (expected one of {MERGE_STRATEGIES})")
    if costs is not None:
        if len(costs) != dag.n:
            raise ValueError(f"{len(costs)} costs given for {dag.n} nodes")
        costs = [float(x) for x in costs]
    else:
        costs = list(dag.costs)
    if dag.n == 0:
        return []
    if max_streams == 1:
        return [0] * dag.n
    if dedicated:
        return _with_dedicated(dag, max_streams, costs, merge, fewest_events, dedicated)
    paths = path_cover(dag, fewest_events)
    if max_streams is None or len(paths) <= max_streams:
        return _stream_ids(dag.n, [[p] for p in paths])
    candidates = []
    if merge in ("best", "interval"):
        start, finish = asap_times(dag, costs)
        candidates.append(_stream_ids(dag.n, _pack_by_interval(paths, max_streams, start, finish)))
    if merge in ("best", "least_loaded"):
        candidates.append(_stream_ids(dag.n, _pack_least_loaded(paths, max_streams, costs)))
    if len(candidates) == 1:
        return candidates[0]
    spans = [estimate_makespan(dag, ids, costs) for ids in candidates]
    return candidates[spans.index(min(spans))]


def _with_dedicated(
    dag: Dag,
    max_streams: int | None,
    costs: list[float],
    merge: str,
    fewest_events: bool,
    dedicated: Sequence[Sequence[int]],
) -> list[int]:
    """The other nodes assigned as a DAG of their own (a dedicated node's predecessors joined to its
    successors, so the estimates keep the order it imposes), then each group on its own stream."""
    group_of = {v: g for g, nodes in enumerate(dedicated) for v in nodes}
    rest = [v for v in range(dag.n) if v not in group_of]
    index = {v: i for i, v in enumerate(rest)}
    edges = {(index[u], index[v]) for u, v in dag.edges if u in index and v in index}
    for c in group_of:  # u -> c -> w becomes u -> w
        for u in _nearest_outside(dag.pred, c, group_of):
            for w in _nearest_outside(dag.succ, c, group_of):
                edges.add((index[u], index[w]))
    ids_rest = assign_streams(Dag(len(rest), edges), max_streams, [costs[v] for v in rest], merge, fewest_events)
    first = max(ids_rest, default=-1) + 1
    ids = [first + group_of[v] if v in group_of else -1 for v in range(dag.n)]
    for v, sid in zip(rest, ids_rest):
        ids[v] = sid
    return ids


def _nearest_outside(adjacent: list[list[int]], v: int, inside: dict[int, int]) -> set[int]:
    """The nodes outside `inside` reached from `v` along `adjacent` (predecessors or successors)
    through nodes inside only."""
    found, todo = set(), list(adjacent[v])
    while todo:
        u = todo.pop()
        if u in inside:
            todo.extend(adjacent[u])
        else:
            found.add(u)
    return found


def _pack_by_interval(paths: list[list[int]], k: int, start: list[float], finish: list[float]) -> list[list[list[int]]]:
    """Packs paths onto ``k`` streams by their ASAP time intervals (see the module docstring)."""
    order = sorted(range(len(paths)), key=lambda i: (start[paths[i][0]], paths[i][0]))
    groups: list[list[list[int]]] = []
    ends: list[float] = []
    for i in order:
        path = paths[i]
        s, f = start[path[0]], finish[path[-1]]
        best = -1
        for g, end in enumerate(ends):  # best fit: the stream free latest but in time
            if end <= s and (best < 0 or end > ends[best]):
                best = g
        if best < 0 and len(groups) < k:
            groups.append([path])
            ends.append(f)
            continue
        if best < 0:  # all streams busy: wait for the one that frees up first
            best = min(range(len(ends)), key=lambda g: (ends[g], g))
            f += ends[best] - s
        groups[best].append(path)
        ends[best] = f
    return groups


def _pack_least_loaded(paths: list[list[int]], k: int, costs: list[float]) -> list[list[list[int]]]:
    """Merges the two streams with the least total cost until ``k`` streams are left."""
    heap = [(sum(costs[v] for v in p), p[0], i) for i, p in enumerate(paths)]
    groups: dict[int, list[list[int]]] = {i: [p] for i, p in enumerate(paths)}
    heapq.heapify(heap)
    while len(heap) > k:
        la, fa, a = heapq.heappop(heap)
        lb, fb, b = heapq.heappop(heap)
        groups[a].extend(groups.pop(b))
        heapq.heappush(heap, (la + lb, min(fa, fb), a))
    return list(groups.values())


def _stream_ids(n: int, groups: list[list[list[int]]]) -> list[int]:
    """Stream id per node, streams numbered by their first task in program order."""
    ids = [-1] * n
    firsts = sorted((min(p[0] for p in g), gi) for gi, g in enumerate(groups))
    for sid, (_, gi) in enumerate(firsts):
        for path in groups[gi]:
            for v in path:
                ids[v] = sid
    return ids
