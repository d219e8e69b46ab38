"""The conflict graph of placement units and the greedy placer that walks it, in numpy.

A training step keeps its forward activations alive through the backward, so thousands of buffers
are live at once and the conflict graph has tens of millions of edges (BERT-Large, 24 layers). Built
as Python dicts and walked edge by edge, that would be most of a compile; here the edges are found by
vectorized interval comparison, stored as CSR arrays, and each placement scans its placed
neighbours with array operations. The placement is exactly the plain greedy's (the tests compare
the two on random instances): same candidate gaps, same tie-breaking.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

_PAIR_CHUNK = 1 << 24
"""Interval comparisons per chunk while finding overlapping pairs (bounds the temporary masks)."""
_SMALL_DEGREE = 48
"""Below this many neighbours a plain loop beats the array operations' fixed cost."""


class Member(Protocol):
    name: str
    start: int
    end: int


class Unit(Protocol):
    members: list
    sizes: list[int]
    size: int


@dataclass(frozen=True)
class Conflicts:
    """For unit u, its neighbours `cols[ptr[u]:ptr[u+1]]`; for each such edge (u, v), `a` is the
    largest member of u and `b` the largest of v among their conflicting member pairs. With v at
    offset o, u may not start in the open range (o - a, o + b)."""

    ptr: np.ndarray
    cols: np.ndarray
    a: np.ndarray
    b: np.ndarray

    def neighbours(self, u: int) -> dict[int, tuple[int, int]]:
        """u's edges as {v: (a, b)} (for tests and debugging)."""
        s, e = self.ptr[u], self.ptr[u + 1]
        return {int(v): (int(x), int(y)) for v, x, y in zip(self.cols[s:e], self.a[s:e], self.b[s:e])}


def conflicts(units: Sequence[Unit], apart: Iterable[tuple[str, str]] = ()) -> Conflicts:
    """Units conflict when members of theirs are live at a common task (closed intervals) or are
    kept apart; members of size 0 conflict with nothing."""
    unit_of, size_of, starts, ends = [], [], [], []
    where: dict[str, tuple[int, int]] = {}
    for ui, u in enumerate(units):
        for m, s in zip(u.members, u.sizes):
            where[m.name] = (ui, s)
            if s:
                unit_of.append(ui)
                size_of.append(s)
                starts.append(m.start)
                ends.append(m.end)
    order = np.argsort(np.asarray(starts, dtype=np.int64), kind="stable")
    start = np.asarray(starts, dtype=np.int64)[order]
    end = np.asarray(ends, dtype=np.int64)[order]
    unit = np.asarray(unit_of, dtype=np.int64)[order]
    size = np.asarray(size_of, dtype=np.int64)[order]
    first, second = _overlapping_pairs(start, end)
    src, dst = unit[first], unit[second]
    a, b = size[first], size[second]
    extra = [(where[x], where[y]) for x, y in apart]
    if extra:
        src = np.concatenate([src, [p[0][0] for p in extra]])
        dst = np.concatenate([dst, [p[1][0] for p in extra]])
        a = np.concatenate([a, [p[0][1] for p in extra]])
        b = np.concatenate([b, [p[1][1] for p in extra]])
        keep = (a > 0) & (b > 0)
        src, dst, a, b = src[keep], dst[keep], a[keep], b[keep]
    other = src != dst
    src, dst, a, b = src[other], dst[other], a[other], b[other]
    # both directions, then one edge per (u, v) holding the largest sizes of its member pairs
    src, dst, a, b = (
        np.concatenate([src, dst]),
        np.concatenate([dst, src]),
        np.concatenate([a, b]),
        np.concatenate([b, a]),
    )
    n = len(units)
    key = src * n + dst
    order = np.argsort(key, kind="stable")
    key, a, b = key[order], a[order], b[order]
    if len(key):
        starts_at = np.flatnonzero(np.concatenate([[True], key[1:] != key[:-1]]))
        key, a, b = key[starts_at], np.maximum.reduceat(a, starts_at), np.maximum.reduceat(b, starts_at)
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(key // max(n, 1), minlength=n), out=ptr[1:])
    return Conflicts(ptr, key % max(n, 1), a, b)


def _overlapping_pairs(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs (i, j), j < i, of intervals (sorted by start) whose closed ranges intersect:
    with start[j] <= start[i], that is end[j] >= start[i]."""
    n = len(start)
    firsts, seconds = [], []
    i0 = 0
    while i0 < n:
        i1 = min(n, i0 + max(1, _PAIR_CHUNK // n))
        mask = end[None, :i1] >= start[i0:i1, None]
        mask &= np.arange(i1)[None, :] < np.arange(i0, i1)[:, None]
        i, j = np.nonzero(mask)
        firsts.append(i + i0)
        seconds.append(j)
        i0 = i1
    if not firsts:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(firsts).astype(np.int64), np.concatenate(seconds).astype(np.int64)


def place(order: Iterable[int], sizes: Sequence[int], graph: Conflicts, best_fit: bool) -> tuple[list[int], int]:
    """Offsets (in alignment units) for the units in `order`, each at the lowest start of the first
    (first fit) or tightest (best fit) gap between its placed neighbours, or above them all; with
    best fit, above them all also wins when the room left there below the current peak is tighter
    than the best gap. Returns (offsets, peak)."""
    offsets = np.full(len(sizes), -1, dtype=np.int64)
    ptr, cols, a_all, b_all = graph.ptr, graph.cols, graph.a, graph.b
    peak = 0
    for ui in order:
        if offsets[ui] >= 0:
            continue
        size = sizes[ui]
        if size == 0:
            offsets[ui] = 0
            continue
        s, e = int(ptr[ui]), int(ptr[ui + 1])
        if e - s < _SMALL_DEGREE:
            choice = _choose_small(
                offsets, cols[s:e].tolist(), a_all[s:e].tolist(), b_all[s:e].tolist(), size, peak, best_fit
            )
        else:
            choice = _choose(offsets, cols[s:e], a_all[s:e], b_all[s:e], size, peak, best_fit)
        offsets[ui] = choice
        peak = max(peak, choice + size)
    return offsets.tolist(), peak


def _choose_small(
    offsets: np.ndarray, cols: list[int], a: list[int], b: list[int], size: int, peak: int, best_fit: bool
) -> int:
    forbidden = []
    for v, x, y in zip(cols, a, b):
        o = int(offsets[v])
        if o >= 0:
            forbidden.append((max(0, o - x + 1), o + y))
    forbidden.sort()
    choice, slack = 0, None
    lo = 0
    for f_lo, f_hi in forbidden:
        if f_lo > lo:  # free starts [lo, f_lo)
            if not best_fit:
                return lo
            gap = f_lo - 1 - lo
            if slack is None or gap < slack:
                choice, slack = lo, gap
                if gap == 0:
                    return lo
        lo = max(lo, f_hi)
    if slack is None:  # no gap below: the range above every conflicting unit
        return lo
    return _above_if_tighter(choice, slack, lo, size, peak)


def _choose(
    offsets: np.ndarray, cols: np.ndarray, a: np.ndarray, b: np.ndarray, size: int, peak: int, best_fit: bool
) -> int:
    """`_choose_small` with array operations: the free starts below the k-th forbidden range (in
    order) begin at the running maximum of the ranges before it."""
    o = offsets[cols]
    placed = o >= 0
    if not placed.any():
        return 0
    o = o[placed]
    f_lo = np.maximum(0, o - a[placed] + 1)
    f_hi = o + b[placed]
    by = np.lexsort((f_hi, f_lo))
    f_lo, f_hi = f_lo[by], f_hi[by]
    reach = np.maximum.accumulate(f_hi)
    before = np.empty_like(reach)
    before[0] = 0
    np.maximum(reach[:-1], 0, out=before[1:])
    top = max(0, int(reach[-1]))
    free = f_lo > before
    if not free.any():
        return top
    if not best_fit:
        return int(before[int(np.argmax(free))])
    gaps = np.where(free, f_lo - 1 - before, np.iinfo(np.int64).max)
    k = int(np.argmin(gaps))
    return _above_if_tighter(int(before[k]), int(gaps[k]), top, size, peak)


def _above_if_tighter(choice: int, slack: int, top: int, size: int, peak: int) -> int:
    """Best fit's last word: above every neighbour, when the room there below the peak is tighter."""
    if slack > 0 and top + size <= peak and peak - size - top < slack:
        return top
    return choice
