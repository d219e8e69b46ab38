"""Compile work stays linear where it does not depend on the machine's load: event planning's
reachability, two sizes, a ratio of traced peak memory (4x the tasks must cost well under 16x, what
n^2 bits give). Time ratios are benchmarks (`python -m bench.compile_ratio`)."""

from __future__ import annotations

import random
import tracemalloc

from ge.lowering.streams import Dag, assign_safe_event_ids, insert_events, unenforced_edges

BOUND = 8.0
"""Linear work gives ~4x; quadratic work 16x."""


def _two_stream_ladder(n: int) -> tuple[Dag, list[int]]:
    """n tasks on two streams (three by three): edges to the next two tasks and, every third task,
    one up to 40 ahead; a third of the tasks wait for the other stream."""
    rng = random.Random(0)
    edges = [(i, i + 1) for i in range(n - 1)] + [(i, i + 2) for i in range(n - 2)]
    edges += [(i, i + rng.randint(3, 40)) for i in range(0, n - 41, 3)]
    return Dag(n, edges), [(i // 3) % 2 for i in range(n)]


def _event_planning_peak_bytes(n: int) -> int:
    """Peak memory of what lower-to-streams asks of reachability: events, event ids, the check."""
    dag, streams = _two_stream_ladder(n)
    tracemalloc.start()
    try:
        events = insert_events(dag, streams)
        assign_safe_event_ids(events, streams)
        assert unenforced_edges(dag, streams, events) == []
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_event_planning_memory_is_linear_in_the_tasks():
    """Reachability bitsets took n^2 bits (16x the memory for 4x the tasks); per-stream labels n x streams."""
    small, large = _event_planning_peak_bytes(5_000), _event_planning_peak_bytes(20_000)
    r = large / small
    print(
        f"\nevent planning peak memory: 5000 -> 20000 tasks: {small / 2**20:.1f} -> {large / 2**20:.1f} MiB, {r:.1f}x"
    )
    assert r < BOUND, f"4x the tasks took {r:.1f}x the memory (bound {BOUND}x)"
