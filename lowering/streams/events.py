"""Event insertion between streams, redundant-event removal, and event-id reuse.

A stream runs its tasks in program order, so the execution order the device guarantees is the
graph ``S`` of *stream edges*: ``(u, v)`` for consecutive tasks ``u``, ``v`` of the same
stream. A data edge ``(u, v)`` across streams needs synchronization: an *event* recorded on
``u``'s stream right after ``u`` and waited on ``v``'s stream right before ``v``. The ordering
the device then enforces is the reachability of ``S + events``.

**Which events.** Let ``U`` be the union of the data edges and the stream edges (a DAG: both
kinds go forward in program order) and ``TR(U)`` its transitive reduction. The events are
exactly the cross-stream edges of ``TR(U)``:

- *enough*: every edge of ``U`` is implied by the paths of ``TR(U)``, whose edges are stream
  edges (enforced by the stream order) or cross-stream edges (events). A same-stream edge of
  ``TR(U)`` is always a stream edge: a same-stream data edge between non-consecutive tasks is
  implied by the stream's chain. So every data edge is enforced.
- *none redundant*: an edge of ``TR(U)`` is implied by no other path of ``U``, let alone by
  the other events and the stream order, so dropping any event loses a dependency.

This is GE's redundant-event optimization done exactly: an event ``u -> v`` is dropped when
the stream order and the other dependencies already order ``u`` before ``v`` (e.g. ``u`` sends
an event to an earlier task of ``v``'s stream, or ``v``'s stream already waits for a later
task of ``u``'s stream). The transitive reduction is computed with ``graph.Reachability``:
bitsets on small graphs, on large ones labels per stream (the streams are chains of ``U``), memory
``O(n x streams)``.

**Event ids.** Hardware has a limited number of event ids, so ids are reused. Given an *issue
order* of the tasks (usually the program order), the event ``(src, dst)`` is issued as a record
right after ``src`` and a wait right before ``dst``; it is *live* from its record to its wait.
An id is reused once the event holding it has been waited: a new event may take it if its
record is issued at or after that wait, i.e. ``pos[src_new] >= pos[dst_old]``. Live ranges are
intervals over issue positions, and the greedy colouring of intervals by increasing start
(take the smallest free id, free an id when its interval has ended) uses exactly the maximum
number of simultaneously live events, which is the minimum for that order (interval graphs are
perfect). This reuse rule assumes that a wait binds to the latest record of its id issued
before it in that order (CUDA's ``cudaStreamWaitEvent`` snapshot semantics, and a runtime that
issues record/wait tasks in this order); on hardware where a wait consumes whichever record
arrives first at run time, an id may only be reused across events ordered by the dependency
graph itself.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence

from ge.lowering.streams.graph import Dag, Edge, Reachability, transitive_reduction


def stream_edges(streams: Sequence[int]) -> list[Edge]:
    """``(u, v)`` for consecutive tasks ``u < v`` of the same stream (program order)."""
    last: dict[int, int] = {}
    edges = []
    for v, s in enumerate(streams):
        u = last.get(s)
        if u is not None:
            edges.append((u, v))
        last[s] = v
    return edges


def _union_succ(dag: Dag, streams: Sequence[int]) -> list[list[int]]:
    if len(streams) != dag.n:
        raise ValueError(f"{len(streams)} stream ids given for {dag.n} nodes")
    succ = [list(s) for s in dag.succ]
    for u, v in stream_edges(streams):
        succ[u].append(v)  # a duplicate of a data edge is harmless (deduplicated later)
    return succ


def insert_events(dag: Dag, streams: Sequence[int]) -> list[Edge]:
    """The synchronization edges ``(src, dst)``, sorted: record after ``src`` on its stream,
    wait before ``dst`` on its stream. Exactly the cross-stream edges of the transitive
    reduction of data edges + stream edges (see the module docstring)."""
    succ = _union_succ(dag, streams)
    return [(u, v) for u, v in transitive_reduction(dag.n, succ, chains=streams) if streams[u] != streams[v]]


def unenforced_edges(dag: Dag, streams: Sequence[int], events: Iterable[Edge]) -> list[Edge]:
    """The data edges NOT implied by the stream order plus ``events`` (empty when correct)."""
    if len(streams) != dag.n:
        raise ValueError(f"{len(streams)} stream ids given for {dag.n} nodes")
    succ: list[list[int]] = [[] for _ in range(dag.n)]
    for u, v in stream_edges(streams):
        succ[u].append(v)
    for u, v in events:
        if not 0 <= u < v < dag.n:
            raise ValueError(f"event ({u}, {v}) goes against the program order")
        succ[u].append(v)
    reach = Reachability(dag.n, succ, chains=streams)
    return [(u, v) for u, v in dag.edges if not reach.reaches(u, v)]


def assign_event_ids(events: Iterable[Edge], order: Sequence[int]) -> dict[Edge, int]:
    """An event id per event, reusing an id once its event has been waited.

    ``order`` is the issue order of the tasks (a sequence of node ids, e.g. ``range(n)`` for
    program order); every event's ``src`` must come before its ``dst`` in it. The event
    ``(src, dst)`` is live over issue positions ``[pos[src], pos[dst])`` (record after ``src``,
    wait before ``dst``); two events may share an id iff these ranges are disjoint. Greedy
    interval colouring by increasing record position, smallest free id first: the number of
    ids used is the maximum number of events live at once (the minimum possible).
    """
    pos = {node: i for i, node in enumerate(order)}
    if len(pos) != len(order):
        raise ValueError("the issue order lists a node twice")
    spans = []
    for e in dict.fromkeys(events):  # dedup, keep order
        src, dst = e
        if src not in pos or dst not in pos:
            raise ValueError(f"event {e} has a node missing from the issue order")
        if pos[src] >= pos[dst]:
            raise ValueError(f"event {e}: its wait is issued before its record")
        spans.append((pos[src], pos[dst], e))
    spans.sort()
    ids: dict[Edge, int] = {}
    live: list[tuple[int, int]] = []  # (wait position, id)
    free: list[int] = []
    next_id = 0
    for start, end, e in spans:
        while live and live[0][0] <= start:
            heapq.heappush(free, heapq.heappop(live)[1])
        if free:
            i = heapq.heappop(free)
        else:
            i, next_id = next_id, next_id + 1
        ids[e] = i
        heapq.heappush(live, (end, i))
    return ids


def assign_safe_event_ids(events: Iterable[Edge], streams: Sequence[int]) -> dict[Edge, int]:
    """An event id per event, reused only where safe under both wait semantics.

    Records are issued right after their ``src`` and waits right before their ``dst`` (program
    order). Whether a wait binds to the latest record of its id issued before it (CUDA) or a
    record sets a flag that the first wait to see it consumes, a new event ``(u2, v2)`` may take
    the id of ``(u1, v1)`` when the wait before ``v1`` has *completed* before the record after
    ``u2`` fires, i.e. when ``v1 == u2`` or ``v1`` happens-before ``u2`` under the stream order
    plus all the events. (That also puts the old wait before the new record in program order.)
    Greedy by record position, smallest usable id first.
    """
    events = sorted(dict.fromkeys(events))
    n = len(streams)
    succ: list[list[int]] = [[] for _ in range(n)]
    for u, v in stream_edges(streams) + events:
        if not 0 <= u < v < n:
            raise ValueError(f"event ({u}, {v}) goes against the program order")
        succ[u].append(v)
    reach = Reachability(n, succ, chains=streams)
    holder: list[Edge] = []  # id -> the latest event that took it
    ids: dict[Edge, int] = {}
    for e in events:
        u2 = e[0]
        for i, (_, v1) in enumerate(holder):
            if v1 == u2 or reach.reaches(v1, u2):
                holder[i] = e
                ids[e] = i
                break
        else:
            ids[e] = len(holder)
            holder.append(e)
    return ids
