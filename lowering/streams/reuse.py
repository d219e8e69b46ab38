"""The ordering that memory reuse needs, read from the planned offsets of a task sequence.

`plan-memory` gives each intermediate result of a `task.kernel` a byte range `[offset, offset +
size)` in the pool (size: its bytes in its storage format, ge_dialects/ge/sizes.py) (offset -1: a
graph output, not in the pool). Two results whose ranges overlap
share bytes, which is only sound when every *access* of the earlier one (its writer and all its
readers) has finished before the later one's writer starts. Each such requirement is a *reuse
edge* `access -> writer`; on one stream the stream order enforces it, across streams an event
must. An in-place pair (the writer of B reads A and writes B at A's offset, element by element)
needs no edge for that task.

The earlier of two overlapping results is the one whose writer comes first in program order, so
every reuse edge goes forward in program order unless the plan itself is wrong (an access of A
after B overwrote it): that is reported as an error naming both tasks.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import DenseArrayBase, StringAttr
from xdsl.ir import Operation, OpResult

from ge.ge_dialects.ge.sizes import device_bytes


class ReuseError(ValueError):
    """The planned offsets make a task read or write bytes another live result holds."""


@dataclass(frozen=True)
class PlacedBuffer:
    value: OpResult
    writer: int
    """Index of the task that writes it."""
    offset: int
    size: int
    accesses: tuple[int, ...]
    """The writer and every reader (task indices), sorted."""

    @property
    def end(self) -> int:
        return self.offset + self.size


@dataclass(frozen=True)
class ReuseEdge:
    src: int
    """A task accessing the earlier buffer."""
    dst: int
    """The task writing the later buffer over (some of) its bytes."""
    earlier: PlacedBuffer
    later: PlacedBuffer


def task_name(op: Operation) -> str:
    name = op.properties["name"]
    assert isinstance(name, StringAttr), "task.kernel declares its name a StringAttr"
    return name.data


def buffer_label(kernels: Sequence[Operation], b: PlacedBuffer) -> str:
    return f"'{task_name(kernels[b.writer])}' result {b.value.index} (bytes {b.offset}..{b.end})"


def placed_buffers(kernels: Sequence[Operation]) -> list[PlacedBuffer]:
    """The pool buffers of the kernels (results with an offset >= 0 and a non-zero size)."""
    index = {k: i for i, k in enumerate(kernels)}
    buffers = []
    for i, k in enumerate(kernels):
        offsets = k.properties.get("offsets")
        if offsets is None:
            continue
        assert isinstance(offsets, DenseArrayBase), "task.kernel declares its offsets a DenseArrayBase"
        for r, offset in zip(k.results, offsets.get_values()):
            size = device_bytes(r)
            if offset < 0 or size == 0:
                continue
            readers = {index[u.operation] for u in r.uses if u.operation in index}
            buffers.append(PlacedBuffer(r, i, offset, size, tuple(sorted(readers | {i}))))
    return buffers


def overlapping_pairs(buffers: Sequence[PlacedBuffer]) -> list[tuple[PlacedBuffer, PlacedBuffer]]:
    """Pairs of buffers sharing at least one byte, (earlier writer, later writer)."""
    by_offset = sorted(buffers, key=lambda b: (b.offset, b.writer))
    pairs = []
    for i, a in enumerate(by_offset):
        for b in by_offset[i + 1 :]:
            if b.offset >= a.end:
                break
            pairs.append((a, b) if (a.writer, a.value.index) < (b.writer, b.value.index) else (b, a))
    return pairs


def reuse_edges(
    kernels: Sequence[Operation], buffers: Sequence[PlacedBuffer] | None = None, history: int = 1
) -> list[ReuseEdge]:
    """Every `access of the earlier buffer -> writer of the later one` for buffers that hold some
    byte at most `history` occupants apart (1: *consecutive occupants*), one per (src, dst) task
    pair. Raises ReuseError when the plan is wrong in program order.

    Consecutive occupants are enough: if A, B, C hold a byte one after the other, the accesses of A
    come before B's writer and B's writer (an access of B) before C's writer, so A's accesses come
    before C's writer too. (An in-place writer of B is itself that access of A; a later reader of A
    would be at or after B's writer, which is reported.) Ordering every overlapping pair instead
    gives as many edges as pairs of a byte's occupants: quadratic in how often a region is reused.
    A `history` above 1 adds some of those implied edges back, as links the stream assignment may
    use (`reuse_tradeoff.schedule`). The occupants are found by painting: buffers in program order,
    each painted over its bytes on a sorted list of disjoint intervals that names the last
    `history` occupants. `buffers`: the kernels' placed buffers (default: read from their offsets)."""
    if history < 1:
        raise ValueError(f"history must be >= 1, got {history}")
    edges: dict[tuple[int, int], ReuseEdge] = {}
    # the painted intervals, sorted and disjoint: [starts[i], ends[i]) last held by owners[i] (latest first)
    starts: list[int] = []
    ends: list[int] = []
    owners: list[tuple[PlacedBuffer, ...]] = []
    if buffers is None:
        buffers = placed_buffers(kernels)
    for b in sorted(buffers, key=lambda b: (b.writer, b.value.index)):
        lo, hi = bisect_right(ends, b.offset), bisect_left(starts, b.end)
        earlier = {id(a): a for i in range(lo, hi) for a in owners[i]}
        for a in earlier.values():  # distinct, in byte order
            _order_pair(kernels, a, b, edges)
        pieces: list[tuple[int, int, tuple[PlacedBuffer, ...]]] = []
        cursor = b.offset
        for i in range(lo, hi):
            s, e, held = starts[i], ends[i], owners[i]
            if s < b.offset:
                pieces.append((s, b.offset, held))
                s = b.offset
            if s > cursor:
                pieces.append((cursor, s, (b,)))
            pieces.append((s, min(e, b.end), (b, *held[: history - 1])))
            if e > b.end:
                pieces.append((b.end, e, held))
            cursor = min(e, b.end)
        if cursor < b.end:
            pieces.append((cursor, b.end, (b,)))
        merged: list[tuple[int, int, tuple[PlacedBuffer, ...]]] = []
        for piece in pieces:  # adjacent pieces with the same occupants are one interval
            if merged and merged[-1][1] == piece[0] and _same(merged[-1][2], piece[2]):
                merged[-1] = (merged[-1][0], piece[1], piece[2])
            else:
                merged.append(piece)
        starts[lo:hi] = [p[0] for p in merged]
        ends[lo:hi] = [p[1] for p in merged]
        owners[lo:hi] = [p[2] for p in merged]
    return [edges[key] for key in sorted(edges)]


def _same(x: tuple[PlacedBuffer, ...], y: tuple[PlacedBuffer, ...]) -> bool:
    return len(x) == len(y) and all(a is b for a, b in zip(x, y))


def _order_pair(
    kernels: Sequence[Operation], a: PlacedBuffer, b: PlacedBuffer, edges: dict[tuple[int, int], ReuseEdge]
) -> None:
    """The edges ordering every access of `a` before `b`'s writer (`a` written first)."""
    if a.writer == b.writer:
        raise ReuseError(
            f"task '{task_name(kernels[a.writer])}' writes results {a.value.index} and "
            f"{b.value.index} over the same bytes ({a.offset}..{a.end} and {b.offset}..{b.end})"
        )
    for x in a.accesses:
        if x == b.writer and a.offset == b.offset and b.size <= a.size:
            continue  # in place: the writer of b reads a's elements before it overwrites them
        if x >= b.writer:
            raise ReuseError(
                f"task '{task_name(kernels[x])}' reads {buffer_label(kernels, a)} at or after "
                f"'{task_name(kernels[b.writer])}' overwrites it with {buffer_label(kernels, b)}"
            )
        edges.setdefault((x, b.writer), ReuseEdge(x, b.writer, a, b))
