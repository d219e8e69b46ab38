"""Stream assignment and event synchronization over task DAGs (see docs/streams.md).

- ``graph``: ``Dag`` (nodes ``0..n-1`` in program order, edges ``u < v``, node costs),
  bitset transitive closure and reduction, ``dag_from_ops`` for a block's SSA uses.
- ``assign``: ``assign_streams`` (minimum path cover by bipartite matching, merged down to a
  stream budget), ``estimate_makespan``.
- ``events``: ``insert_events`` (cross-stream edges of the transitive reduction of data +
  stream-order edges), ``assign_event_ids`` (event-id reuse by interval colouring, latest-record semantics only),
  ``assign_safe_event_ids`` (reuse safe under flag semantics too; what ``plan_streams`` uses).
- ``plan_streams`` here runs the three for one DAG.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ge.lowering.streams.assign import assign_streams, estimate_makespan, path_cover, stream_times
from ge.lowering.streams.events import (
    assign_event_ids,
    assign_safe_event_ids,
    insert_events,
    stream_edges,
    unenforced_edges,
)
from ge.lowering.streams.graph import Dag, Edge, dag_from_ops, transitive_closure, transitive_reduction

__all__ = [
    "Dag",
    "Edge",
    "StreamPlan",
    "assign_event_ids",
    "assign_safe_event_ids",
    "assign_streams",
    "dag_from_ops",
    "estimate_makespan",
    "insert_events",
    "path_cover",
    "plan_streams",
    "stream_edges",
    "stream_times",
    "transitive_closure",
    "transitive_reduction",
    "unenforced_edges",
]


@dataclass(frozen=True)
class StreamPlan:
    """Streams, events and event ids of one DAG (issue order = program order)."""

    streams: list[int]
    """Stream id per node, ``0..num_streams-1``."""
    events: list[Edge]
    """``(src, dst)``: record after ``src`` on its stream, wait before ``dst`` on its stream."""
    event_ids: dict[Edge, int]
    """Hardware event id per event, ``0..num_event_ids-1``, reused once its previous wait is
    ordered before the new record (safe under latest-record and flag semantics)."""

    @property
    def num_streams(self) -> int:
        return max(self.streams, default=-1) + 1

    @property
    def num_event_ids(self) -> int:
        return max(self.event_ids.values(), default=-1) + 1


def plan_streams(
    dag: Dag,
    max_streams: int | None = None,
    costs: Sequence[float] | None = None,
    dedicated: Sequence[Sequence[int]] = (),
) -> StreamPlan:
    """Assigns streams (each `dedicated` group on one of its own), inserts the events and gives
    them ids (program order = issue order)."""
    streams = assign_streams(dag, max_streams, costs, dedicated=dedicated)
    events = insert_events(dag, streams)
    return StreamPlan(streams, events, assign_safe_event_ids(events, streams))
