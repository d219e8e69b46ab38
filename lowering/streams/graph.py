"""A small DAG type for stream assignment and event insertion.

Nodes are the integers ``0 .. n-1`` and their numbering IS the program order: it must be a
topological order, i.e. every edge ``(u, v)`` has ``u < v``. Keeping that invariant makes every
graph algorithm here a single sweep over the nodes (forwards or backwards), with no sort and no
cycle check.

Reachability (``Reachability``) comes in two forms with the same answers. Small graphs: Python
ints used as bitsets (bit ``v`` of ``reach[u]`` says that ``v`` is reachable from ``u``); one OR
of two ~1000-bit ints costs about as much as one Python addition, so the closure of a graph with
``e`` edges takes ``e`` big-int ORs, but its memory is ``n^2`` bits (2.2 GB at 80k tasks). Large
graphs: chain labels. The nodes are split into chains, each a sequence of nodes joined by paths
(the streams, when the stream-order edges are in the graph; otherwise a greedy cover along the
edges); a node that reaches a node of a chain reaches everything after it on that chain, so
``first[u][c]``, the earliest node of chain ``c`` reachable from ``u``, says it all:
``u`` reaches ``v`` iff ``first[u][chain(v)] <= v``. Memory ``n x chains``; one backwards sweep,
an elementwise minimum per edge.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

Edge = tuple[int, int]


class Dag:
    """A DAG over nodes ``0..n-1`` numbered in program (topological) order.

    ``edges`` are ``(u, v)`` pairs with ``0 <= u < v < n``; duplicates are dropped and the stored
    ``edges`` tuple is sorted. ``costs`` (one float per node, e.g. an estimated run time) default
    to 1.0. ``succ[u]`` / ``pred[v]`` are sorted adjacency lists.
    """

    __slots__ = ("n", "edges", "costs", "succ", "pred", "_reach", "_reachability")

    def __init__(self, n: int, edges: Iterable[Edge] = (), costs: Sequence[float] | None = None):
        if n < 0:
            raise ValueError(f"node count must be >= 0, got {n}")
        unique = set()
        for u, v in edges:
            u, v = int(u), int(v)
            if not (0 <= u < n and 0 <= v < n):
                raise ValueError(f"edge ({u}, {v}) has a node outside 0..{n - 1}")
            if u >= v:
                raise ValueError(f"edge ({u}, {v}) goes against the program order (edges need u < v)")
            unique.add((u, v))
        self.n = n
        self.edges: tuple[Edge, ...] = tuple(sorted(unique))
        if costs is None:
            self.costs: tuple[float, ...] = (1.0,) * n
        else:
            if len(costs) != n:
                raise ValueError(f"{len(costs)} costs given for {n} nodes")
            self.costs = tuple(float(c) for c in costs)
            if any(c < 0 for c in self.costs):
                raise ValueError("node costs must be >= 0")
        self.succ: list[list[int]] = [[] for _ in range(n)]
        self.pred: list[list[int]] = [[] for _ in range(n)]
        for u, v in self.edges:  # sorted, so the adjacency lists come out sorted
            self.succ[u].append(v)
            self.pred[v].append(u)
        self._reach: list[int] | None = None
        self._reachability: Reachability | None = None

    def __repr__(self) -> str:
        return f"Dag(n={self.n}, edges={list(self.edges)})"

    def with_costs(self, costs: Sequence[float] | None) -> Dag:
        """The same graph with other node costs."""
        return Dag(self.n, self.edges, costs)

    def closure(self) -> list[int]:
        """``reach[u]``: bitset of the nodes reachable from ``u`` by a path of >= 1 edge.

        (Cached; ``u`` itself is never in ``reach[u]`` since the graph is acyclic.)
        """
        if self._reach is None:
            self._reach = transitive_closure(self.n, self.succ)
        return self._reach

    def reachability(self) -> Reachability:
        """Reachability queries (cached; bitsets or chain labels by size, see the module docstring)."""
        if self._reachability is None:
            self._reachability = Reachability(self.n, self.succ)
        return self._reachability

    def reaches(self, u: int, v: int) -> bool:
        """Whether a path of >= 1 edge leads from ``u`` to ``v``."""
        return self.reachability().reaches(u, v)

    def transitive_reduction(self) -> Dag:
        """The unique smallest DAG with the same reachability (same costs)."""
        return Dag(self.n, self.reachability().reduction(), self.costs)


BITSET_LIMIT = 2048
"""Graphs of up to this many nodes use bitsets (n^2 bits: 0.5 MB here), larger ones chain labels
unless their chains are so many that the labels would take more memory than the bitsets."""


METHOD: str | None = None
"""Which form every ``Reachability`` without a ``method`` takes: None chooses by size (tests set it
to compare the two on whole plans)."""


class Reachability:
    """Which nodes a path of >= 1 edge leads to, for a DAG whose edges go from lower to higher
    node numbers (``succ[u]``: the successors of ``u``; duplicates allowed).

    ``chains`` (optional): a chain id per node such that each node is joined by a path to the next
    node of its chain (e.g. stream ids when ``succ`` holds the stream-order edges); without them a
    greedy cover along the edges is used. ``method`` forces "bitsets" or "labels" (tests); by
    default bitsets up to ``BITSET_LIMIT`` nodes. Both give the same answers."""

    def __init__(
        self, n: int, succ: Sequence[Sequence[int]], chains: Sequence[int] | None = None, method: str | None = None
    ):
        self.n = n
        self.succ = succ
        self._bits: list[int] | None = None
        self._first: np.ndarray | None = None
        self.chain = np.zeros(0, dtype=np.int64)
        method = method or METHOD
        if method is None and n <= BITSET_LIMIT:
            method = "bitsets"
        if method != "bitsets":
            if chains is None:
                chains = greedy_chains(n, succ)
            chain_ids = {c: i for i, c in enumerate(dict.fromkeys(chains))}
            self.chain = np.fromiter((chain_ids[c] for c in chains), dtype=np.int64, count=n)
            if method is None:
                method = "bitsets" if 32 * len(chain_ids) >= n else "labels"
        if method == "bitsets":
            self._bits = transitive_closure(n, succ)
        elif method == "labels":
            self._first = _chain_labels(n, succ, self.chain, int(self.chain.max(initial=-1)) + 1)
        else:
            raise ValueError(f"unknown reachability method {method!r}")

    @property
    def method(self) -> str:
        return "bitsets" if self._bits is not None else "labels"

    def reaches(self, u: int, v: int) -> bool:
        if self._bits is not None:
            return bool(self._bits[u] >> v & 1)
        assert self._first is not None
        return bool(self._first[u, self.chain[v]] <= v)

    def reduction(self) -> list[Edge]:
        """The edges of the transitive reduction, sorted (see ``transitive_reduction``)."""
        if self._bits is not None:
            return transitive_reduction(self.n, self.succ, self._bits)
        # Edge (u, v) is redundant iff a successor w of u reaches v: the minimum of first[w] over
        # the successors, at v's chain, is <= v (v never reaches itself, so w = v adds nothing).
        first, chain = self._first, self.chain
        assert first is not None
        kept: list[Edge] = []
        for u in range(self.n):
            s = self.succ[u]
            if not s:
                continue
            row = first[s[0]] if len(s) == 1 else first[list(s)].min(axis=0)
            kept.extend((u, v) for v in sorted(set(s)) if row[chain[v]] > v)
        return kept


def greedy_chains(n: int, succ: Sequence[Sequence[int]]) -> list[int]:
    """A chain id per node: each node continues the chain of its first predecessor that still ends
    a chain (joined to it by an edge), or starts a new one."""
    chain = list(range(n))
    open_tail = [True] * n  # whether node u still ends its chain
    taken = [False] * n  # whether node v already continues a chain
    for u in range(n):
        for v in succ[u]:
            if open_tail[u] and not taken[v]:
                chain[v] = chain[u]
                open_tail[u] = False
                taken[v] = True
                break
    return chain


def _chain_labels(n: int, succ: Sequence[Sequence[int]], chain: np.ndarray, chains: int) -> np.ndarray:
    """``first[u][c]``: the earliest node of chain ``c`` reachable from ``u`` (``n`` for none).

    Backwards: ``first[u]`` is the minimum over the successors ``w`` of ``first[w]`` and of ``w``
    itself on its chain."""
    first = np.full((n, chains), n, dtype=np.int32 if n < 2**31 else np.int64)
    for u in range(n - 1, -1, -1):
        s = succ[u]
        if not s:
            continue
        row = first[s[0]].copy() if len(s) == 1 else first[list(s)].min(axis=0)
        for w in s:
            c = chain[w]
            if w < row[c]:
                row[c] = w
        first[u] = row
    return first


def transitive_closure(n: int, succ: Sequence[Sequence[int]]) -> list[int]:
    """Reachability bitsets of a DAG whose edges all go from lower to higher node numbers.

    A backwards sweep: when ``u`` is visited, all its successors (higher numbers) are done, and
    ``reach[u] = OR over successors v of ({v} | reach[v])``.
    """
    reach = [0] * n
    for u in range(n - 1, -1, -1):
        r = 0
        for v in succ[u]:
            r |= reach[v] | (1 << v)
        reach[u] = r
    return reach


def transitive_reduction(
    n: int, succ: Sequence[Sequence[int]], reach: Sequence[int] | None = None, chains: Sequence[int] | None = None
) -> list[Edge]:
    """The edges of the transitive reduction, sorted.

    Edge ``(u, v)`` is redundant iff another path ``u -> ... -> v`` exists; such a path starts
    with an edge ``(u, w)``, ``w != v``, and continues inside ``reach[w]``. So with
    ``covered[u] = OR over successors w of reach[w]`` the edge is kept iff bit ``v`` of
    ``covered[u]`` is clear (``reach[v]`` never contains ``v``, so ``w = v`` adds nothing).
    """
    if reach is None:
        return Reachability(n, succ, chains).reduction()
    kept: list[Edge] = []
    for u in range(n):
        covered = 0
        for w in succ[u]:
            covered |= reach[w]
        kept.extend((u, v) for v in sorted(set(succ[u])) if not covered >> v & 1)
    return kept


def dag_from_ops(ops: Sequence, skip=None) -> tuple[Dag, list]:
    """A DAG over a sequence of IR operations (e.g. the ops of one block, in order).

    Nodes are the ops kept (``skip(op)`` true drops an op, e.g. constants or the terminator),
    numbered in their order in ``ops``; an edge ``(u, v)`` means an operand of ``v`` is a result
    of ``u`` (an SSA use). Uses of values defined outside ``ops`` (block arguments, dropped ops)
    give no edge. Returns the DAG and the list of kept ops (node ``i`` is ``kept[i]``).

    Works on anything with xDSL's shape (``op.operands`` of values with an ``.owner``); the
    block order must be a topological order, which SSA dominance guarantees inside a block.
    """
    kept = [op for op in ops if skip is None or not skip(op)]
    index = {id(op): i for i, op in enumerate(kept)}
    edges = set()
    for v, op in enumerate(kept):
        for operand in op.operands:
            u = index.get(id(getattr(operand, "owner", None)))
            if u is not None:
                if u >= v:
                    raise ValueError(f"op #{v} uses a result of op #{u} defined after it")
                edges.add((u, v))
    return Dag(len(kept), edges), kept
