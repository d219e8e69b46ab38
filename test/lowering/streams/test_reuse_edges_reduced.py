"""Reuse edges between consecutive occupants of a byte order everything all overlapping pairs did.

`reuse_edges` (lowering/streams/reuse.py) now orders only buffers that hold some byte one after
the other. The reference below is the previous rule, every overlapping pair. On random plans
(buffers of random offsets, sizes, writers and readers, in-place pairs included) both raise on
the same plans, the new edges are a subset of the old, and every old edge is implied by a path of
new ones. The lowered models are race-free by the independent checker (test_reuse_races.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import StringAttr

from ge.lowering.streams.graph import transitive_closure
from ge.lowering.streams.reuse import PlacedBuffer, ReuseError, reuse_edges


@dataclass(frozen=True)
class Value:
    writer: int
    index: int


def all_pairs_edges(buffers: list[PlacedBuffer]) -> set[tuple[int, int]]:
    """The previous rule: every access of the earlier of two overlapping buffers before the later
    one's writer (raises ReuseError like reuse_edges)."""
    edges = set()
    for a in buffers:
        for b in buffers:
            if (a.writer, a.value.index) >= (b.writer, b.value.index) or b.offset >= a.end or a.offset >= b.end:
                continue
            if a.writer == b.writer:
                raise ReuseError("same writer")
            for x in a.accesses:
                if x == b.writer and a.offset == b.offset and b.size <= a.size:
                    continue
                if x >= b.writer:
                    raise ReuseError("late access")
                edges.add((x, b.writer))
    return edges


@st.composite
def plans(draw):
    tasks = draw(st.integers(2, 14))
    buffers = []
    for writer in range(tasks):
        for index in range(draw(st.integers(0, 2))):
            offset = draw(st.sampled_from([0, 0, 32, 64, 96, 128])) + draw(st.sampled_from([0, 0, 16]))
            size = draw(st.sampled_from([16, 32, 64, 96]))
            # readers mostly after the writer; sometimes one before the next occupant's writer is not
            readers = draw(st.sets(st.integers(writer + 1, tasks - 1), max_size=3)) if writer + 1 < tasks else set()
            value = Value(writer, index)
            buffers.append(PlacedBuffer(value, writer, offset, size, tuple(sorted(readers | {writer}))))  # type: ignore[arg-type]
    return tasks, buffers


@settings(max_examples=400, deadline=None)
@given(plans(), st.sampled_from([1, 2, 3, 1000]))
def test_consecutive_occupants_imply_every_overlapping_pair(plan, history):
    tasks, buffers = plan
    kernels = [SimpleNamespace(properties={"name": StringAttr(f"t{i}")}) for i in range(tasks)]
    try:
        old = all_pairs_edges(buffers)
    except ReuseError:
        old = None
    try:
        new = {(e.src, e.dst) for e in reuse_edges(kernels, buffers, history)}  # type: ignore[arg-type]
    except ReuseError:
        new = None
    assert (old is None) == (new is None)
    if old is None or new is None:
        return
    assert new <= old
    if history == 1000:  # more than the occupants: every overlapping pair, the previous rule
        assert new == old
    succ: list[list[int]] = [[] for _ in range(tasks)]
    for u, v in new:
        succ[u].append(v)
    reach = transitive_closure(tasks, succ)
    assert all(reach[u] >> v & 1 for u, v in old)
