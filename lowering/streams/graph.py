"""A small DAG type for stream assignment and event insertion.

Nodes are the integers ``0 .. n-1`` and their numbering IS the program order: it must be a
topological order, i.e. every edge ``(u, v)`` has ``u < v``. Keeping that invariant makes every
graph algorithm here a single sweep over the nodes (forwards or backwards), with no sort and no
cycle check.

Reachability sets are Python ints used as bitsets (bit ``v`` of ``reach[u]`` says that ``v`` is
reachable from ``u``). A node set of a ~1000-task model is a 1000-bit int, and one OR of two
of them costs about as much as one Python addition, so the transitive closure of a graph with
``e`` edges takes ``e`` big-int ORs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

Edge = tuple[int, int]


class Dag:
    """A DAG over nodes ``0..n-1`` numbered in program (topological) order.

    ``edges`` are ``(u, v)`` pairs with ``0 <= u < v < n``; duplicates are dropped and the stored
    ``edges`` tuple is sorted. ``costs`` (one float per node, e.g. an estimated run time) default
    to 1.0. ``succ[u]`` / ``pred[v]`` are sorted adjacency lists.
    """

    __slots__ = ("n", "edges", "costs", "succ", "pred", "_reach")

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

    def reaches(self, u: int, v: int) -> bool:
        """Whether a path of >= 1 edge leads from ``u`` to ``v``."""
        return bool(self.closure()[u] >> v & 1)

    def transitive_reduction(self) -> Dag:
        """The unique smallest DAG with the same reachability (same costs)."""
        return Dag(self.n, transitive_reduction(self.n, self.succ, self.closure()), self.costs)


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


def transitive_reduction(n: int, succ: Sequence[Sequence[int]], reach: Sequence[int] | None = None) -> list[Edge]:
    """The edges of the transitive reduction, sorted.

    Edge ``(u, v)`` is redundant iff another path ``u -> ... -> v`` exists; such a path starts
    with an edge ``(u, w)``, ``w != v``, and continues inside ``reach[w]``. So with
    ``covered[u] = OR over successors w of reach[w]`` the edge is kept iff bit ``v`` of
    ``covered[u]`` is clear (``reach[v]`` never contains ``v``, so ``w = v`` adds nothing).
    """
    if reach is None:
        reach = transitive_closure(n, succ)
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
