"""Discrete-event simulation of tasks on streams with events, on the cores of a modeled Ascend chip.

- The host issues launches one after another, each costing `[host] launch_s` (per-op mode: one launch
  per task; whole-graph sink: one; subgraph sink: one per launch id, in order of first appearance).
  Launches are asynchronous: the host does not wait for the device.
- Each stream runs its tasks in program order. Before a task: its launch must be issued, the
  previous task of its stream (and that task's event records) done, and each waited event recorded;
  a wait then costs `[events] wait_s` on the stream. After a task, each record costs `record_s`.
- A ready task's blocks are dispatched to free cores of its engine's pool(s), first-ready first;
  a task takes as many blocks as there are free cores (at least one), and its remaining blocks
  start as cores free up (the hardware block dispatcher). The first group pays the per-task device
  overhead while holding its cores.
- HBM is a fluid resource: whenever a group of blocks starts or ends, every running block is
  allotted the same cap λ (cost.hbm_level) and progresses at 1 / body(λ).
- L2 is an LRU of the L2 capacity over tensor names: inputs read (at task start) and outputs written
  (at task end) become most recent; an input resident at task start is read at the L2 rate.
"""

from __future__ import annotations

import heapq
import math
from collections import OrderedDict, defaultdict
from dataclasses import dataclass, field

from interpreter.device.cost import INF, BlockCost, Hardware, Phases, block_cost, hbm_level, task_bound, task_time
from interpreter.device.work import SimTask, TaskWork

#: Accepted mode names -> canonical mode.
MODES = {
    "op": "op", "per-op": "op", "single-op": "op",
    "graph": "graph", "sink": "graph", "graph-sink": "graph", "whole-graph": "graph",
    "subgraph": "subgraph", "subgraph-sink": "subgraph",
}


class ScheduleError(RuntimeError):
    """A task started before a task whose result it reads had ended: the streams and events do not
    order a data dependence (a compiler bug, not a user error)."""


def task_type(engine: str, hw: Hardware) -> str:
    """msprof's task type of a task on `engine`."""
    if engine == "aicpu":
        return "AI_CPU"
    if engine == "dma":
        return "DMA"
    if not hw.separated or engine == "cube":
        return "AI_CORE"
    return "AI_VECTOR_CORE" if engine == "vector" else "MIX_AIC"


@dataclass(frozen=True)
class EventWait:
    event: int
    source: int  # index of the task whose record is waited
    recorded: float  # when the record completed
    done: float  # when the wait completed on the waiting stream


@dataclass
class TaskResult:
    index: int
    work: TaskWork
    stream: int
    launch: int  # host launch index (0-based, in issue order)
    task_type: str
    launch_time: float  # when its host launch was issued
    ready: float  # launch issued, stream free, events waited
    start: float  # first blocks dispatched
    end: float  # last block done
    wait: float  # start minus the end of the stream's previous task (its records included), or minus 0
    cores: int  # most blocks running at once
    groups: list[tuple[float, float, int, dict[str, tuple[int, ...]]]]  # (start, end, blocks, core ids per pool)
    block_s: float  # block-seconds occupied (blocks x time, overhead included)
    cube_s: float  # Cube busy block-seconds
    vector_s: float  # Vector busy block-seconds
    mte2_s: float
    mte3_s: float
    hbm_read_bytes: int
    hbm_write_bytes: int
    l2_read_bytes: int
    l2_hits: tuple[str, ...]
    bound_s: float  # roofline of the task on the whole chip (with its L2 hits)
    standalone: Phases  # the same task alone on its cores with all of HBM
    waits: tuple[EventWait, ...]
    records: tuple[tuple[int, float], ...]  # (event, time recorded)

    @property
    def name(self) -> str:
        return self.work.name

    @property
    def duration(self) -> float:
        return self.end - self.start

    def _ratio(self, busy: float) -> float:
        return min(1.0, busy / self.block_s) if self.block_s > 0 else 0.0

    @property
    def cube_ratio(self) -> float:
        return self._ratio(self.cube_s)

    @property
    def vector_ratio(self) -> float:
        return self._ratio(self.vector_s)

    @property
    def mte2_ratio(self) -> float:
        return self._ratio(self.mte2_s)

    @property
    def mte3_ratio(self) -> float:
        return self._ratio(self.mte3_s)

    @property
    def mte_ratio(self) -> float:
        """The busier of the load and store pipes."""
        return max(self.mte2_ratio, self.mte3_ratio)


@dataclass(frozen=True)
class Bound:
    """Roofline of the whole graph: nothing can finish before any of these."""

    cube_s: float  # all Cube work at peak on all Cube units
    vector_s: float  # all Vector work at peak on all Vector units
    hbm_s: float  # compulsory HBM bytes at full bandwidth
    launch_s: float  # host launches, issued one after another
    hbm_bytes: int  # compulsory HBM bytes: every write, plus the first read of every tensor no task writes

    @property
    def value(self) -> float:
        return max(self.cube_s, self.vector_s, self.hbm_s, self.launch_s)

    @property
    def limiter(self) -> str:
        return max(("cube", self.cube_s), ("vector", self.vector_s), ("hbm", self.hbm_s),
                   ("launch", self.launch_s), key=lambda kv: kv[1])[0]


@dataclass
class SimResult:
    target: str
    mode: str
    tasks: list[TaskResult]
    latency: float
    cube_util: float
    vector_util: float
    hbm_util: float
    launches: int
    launch_times: list[float]  # issue time of each launch
    bound: Bound
    hbm_bytes: int  # HBM bytes actually moved
    l2_read_bytes: int
    pools: dict[str, int]
    hbm_trace: list[tuple[float, float]] = field(default_factory=list)  # (time, bytes/s moved from then)
    launch_s: float = 0.0  # host cost of one launch
    wait_s: float = 0.0  # cost of one event wait
    hbm_bandwidth: float = 0.0

    @property
    def latency_over_bound(self) -> float:
        return self.latency / self.bound.value if self.bound.value > 0 else math.inf

    def summary(self) -> str:
        b = self.bound
        return (
            f"{self.target} mode={self.mode}: {len(self.tasks)} tasks, {self.launches} launches, "
            f"latency {self.latency * 1e6:.1f} us; bound {b.value * 1e6:.1f} us ({b.limiter}: cube "
            f"{b.cube_s * 1e6:.1f}, vector {b.vector_s * 1e6:.1f}, hbm {b.hbm_s * 1e6:.1f}, launch "
            f"{b.launch_s * 1e6:.1f}); latency/bound {self.latency_over_bound:.2f}; cube util "
            f"{self.cube_util:.1%}, vector util {self.vector_util:.1%}, hbm util {self.hbm_util:.1%}"
        )


# --------------------------------------------------------------------------------------------------


class _L2:
    """LRU of tensor names within the L2 capacity; a tensor larger than L2 streams through."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self.used = 0
        self.lines: OrderedDict[str, int] = OrderedDict()

    def holds(self, name: str, nbytes: int) -> bool:
        """`name` is resident with at least `nbytes` bytes."""
        return self.lines.get(name, -1) >= nbytes

    def touch(self, name: str, nbytes: int) -> None:
        if name in self.lines:
            self.used -= self.lines.pop(name)
        if nbytes > self.capacity:
            return
        self.lines[name] = nbytes
        self.used += nbytes
        while self.used > self.capacity:
            _, n = self.lines.popitem(last=False)
            self.used -= n


@dataclass
class _Group:
    task: int
    k: int
    cores: dict[str, tuple[int, ...]]
    start: float
    body_start: float
    remaining: float = 1.0  # fraction of one block's body still to do
    rate: float = 0.0  # fraction per second
    b: float = INF  # HBM allotment per block


@dataclass
class _TaskState:
    launch_time: float = 0.0
    ready: float | None = None
    start: float | None = None
    end: float | None = None
    prev_end: float = 0.0
    cost: BlockCost | None = None
    l2_hits: tuple[str, ...] = ()
    dispatched: int = 0
    done: int = 0
    running: int = 0
    cores: int = 0
    body_from: float = 0.0
    groups: list = field(default_factory=list)
    block_s: float = 0.0
    mte2_s: float = 0.0
    mte3_s: float = 0.0
    waits: tuple[EventWait, ...] = ()
    records: tuple[tuple[int, float], ...] = ()


def _eps(t: float) -> float:
    return 1e-12 * max(1.0, abs(t)) + 1e-18


def simulate(tasks: list[SimTask], target, mode: str = "graph") -> SimResult:
    """Simulate `tasks` (program order) on `target` (a loaded Target, a known name or a Hardware) in `mode`
    ("op" | "graph" | "subgraph", aliases in MODES)."""
    hw = Hardware.of(target)
    if mode not in MODES:
        raise ValueError(f"unknown mode '{mode}' (modes: {', '.join(sorted(MODES))})")
    mode = MODES[mode]
    n = len(tasks)
    for t in tasks:
        t.work.check()
    works = [t.work for t in tasks]

    # host launches
    if mode == "op":
        launch_of = list(range(n))
    elif mode == "graph":
        launch_of = [0] * n
    else:
        order: dict[int, int] = {}
        launch_of = [order.setdefault(t.launch, len(order)) for t in tasks]
    launches = (max(launch_of) + 1) if n else 0
    launch_times = [(k + 1) * hw.launch_s for k in range(launches)]

    # each wait refers to the latest record of its event by an earlier task
    latest: dict[int, int] = {}
    wait_src: list[list[int]] = []
    for i, t in enumerate(tasks):
        srcs = []
        for e in t.waits:
            if e not in latest:
                raise ValueError(f"task '{t.work.name}' (#{i}) waits event {e}, which no earlier task records")
            srcs.append(latest[e])
        wait_src.append(srcs)
        for e in t.records:
            latest[e] = i

    streams: dict[int, list[int]] = defaultdict(list)
    for i, t in enumerate(tasks):
        streams[t.stream].append(i)
    pos = {s: 0 for s in streams}
    stream_free = {s: 0.0 for s in streams}
    stream_busy = {s: False for s in streams}
    blocked_on: dict[int, list[int]] = defaultdict(list)
    rec_time: dict[tuple[int, int], float] = {}

    st = [_TaskState(launch_time=launch_times[launch_of[i]]) for i in range(n)]
    free = {p: list(range(c)) for p, c in hw.pools.items()}  # heaps of free core ids
    for h in free.values():
        heapq.heapify(h)
    l2 = _L2(hw.l2)
    heap: list[tuple[float, int, str, object]] = []
    seq = 0
    queue: list[int] = []  # ready tasks with blocks left to dispatch
    groups: list[_Group] = []
    early: list[tuple[int, int]] = []  # (task, producer) pairs where the task started first
    hbm_trace: list[tuple[float, float]] = []

    def push(time: float, kind: str, data) -> None:
        nonlocal seq
        heapq.heappush(heap, (time, seq, kind, data))
        seq += 1

    def advance_stream(s: int) -> None:
        if stream_busy[s] or pos[s] == len(streams[s]):
            return
        j = streams[s][pos[s]]
        for src in wait_src[j]:
            if st[src].end is None:
                blocked_on[src].append(s)
                return
        t = max(stream_free[s], st[j].launch_time)
        details = []
        for e, src in zip(tasks[j].waits, wait_src[j]):
            rt = rec_time[(src, e)]
            t = max(t, rt) + hw.wait_s
            details.append(EventWait(e, src, rt, t))
        st[j].waits = tuple(details)
        st[j].prev_end = stream_free[s]
        stream_busy[s] = True
        pos[s] += 1
        push(t, "ready", j)

    def dispatch(now: float) -> None:
        for j in sorted(queue, key=lambda j: (st[j].ready, j)):  # first ready first, then program order
            w = works[j]
            need = hw.need(w.engine)
            k = min(w.block_dim - st[j].dispatched, min(len(free[p]) // c for p, c in need.items()))
            if k < 1:
                continue
            s = st[j]
            if s.start is None:
                s.start = now
                early.extend((j, p) for p in tasks[j].inputs_from if st[p].end is None)
                sizes: dict[str, int] = {}
                for x in w.inputs:
                    sizes[x.name] = max(sizes.get(x.name, 0), x.nbytes)
                hits = {name for name, nb in sizes.items() if l2.holds(name, nb)}
                s.l2_hits = tuple(sorted(hits))
                s.cost = block_cost(w, hw, hits)
                for x in w.inputs:
                    l2.touch(x.name, x.nbytes)
                s.body_from = now + s.cost.overhead_s
            cores = {p: tuple(heapq.heappop(free[p]) for _ in range(c * k)) for p, c in need.items()}
            g = _Group(j, k, cores, now, max(now, s.body_from))
            s.dispatched += k
            s.running += k
            s.cores = max(s.cores, s.running)
            groups.append(g)
            if g.body_start > now:
                push(g.body_start, "body", g)
            if s.dispatched == w.block_dim:
                queue.remove(j)

    def in_body(g: _Group, now: float) -> bool:
        return g.body_start <= now + _eps(now)

    def rerate(now: float) -> None:
        body = [g for g in groups if in_body(g, now)]
        lam = hbm_level([(st[g.task].cost, g.k) for g in body], hw.hbm_bw)
        total = 0.0
        for g in body:
            c = st[g.task].cost
            t = c.body(lam)
            g.b = lam
            g.rate = INF if t <= 0 else 1.0 / t
            total += g.k * c.consumption(lam)
        if not hbm_trace or hbm_trace[-1][1] != total:
            hbm_trace.append((now, total))

    def finish_task(j: int, now: float) -> None:
        s = st[j]
        s.end = now
        w = works[j]
        for x in w.outputs:
            l2.touch(x.name, x.nbytes)
        t = now
        recs = []
        for e in tasks[j].records:
            t += hw.record_s
            rec_time[(j, e)] = t
            recs.append((e, t))
        s.records = tuple(recs)
        sid = tasks[j].stream
        stream_free[sid] = t
        stream_busy[sid] = False
        advance_stream(sid)
        for s2 in blocked_on.pop(j, []):
            advance_stream(s2)

    for s in streams:
        advance_stream(s)

    now = 0.0
    rerate(now)
    while True:
        t_heap = heap[0][0] if heap else INF
        fin: dict[int, float] = {}  # id(group) -> finish time at current rates
        for g in groups:
            if in_body(g, now):
                fin[id(g)] = now if g.rate == INF else now + g.remaining / g.rate
        t_next = min(t_heap, min(fin.values(), default=INF))
        if t_next == INF:
            break
        dt = t_next - now
        if dt > 0:
            for g in groups:
                if id(g) in fin and g.rate != INF:
                    s = st[g.task]
                    stg = s.cost.stages(g.b)
                    frac = min(g.remaining, g.rate * dt)
                    s.mte2_s += g.k * stg["mte2"] * frac
                    s.mte3_s += g.k * stg["mte3"] * frac
                    g.remaining -= frac
        now = t_next
        changed = False
        # groups done (finish times within rounding of now)
        for g in [g for g in groups if fin.get(id(g), INF) <= now + _eps(now)]:
            groups.remove(g)
            s = st[g.task]
            for p, ids in g.cores.items():
                for c in ids:
                    heapq.heappush(free[p], c)
            s.groups.append((g.start, now, g.k, g.cores))
            s.block_s += g.k * (now - g.start)
            s.running -= g.k
            s.done += g.k
            changed = True
            if s.done == works[g.task].block_dim:
                finish_task(g.task, now)
        # fixed-time events due
        while heap and heap[0][0] <= now + _eps(now):
            _, _, kind, data = heapq.heappop(heap)
            changed = True
            if kind == "ready":
                st[data].ready = now
                queue.append(data)
        if changed:
            dispatch(now)
            rerate(now)

    if early:
        j, p = early[0]
        ended = f"finished at {st[p].end * 1e6:.1f} us" if st[p].end is not None else "never finished"
        raise ScheduleError(f"task '{works[j].name}' (#{j}, stream {tasks[j].stream}) started at "
                            f"{st[j].start * 1e6:.1f} us before its producer '{works[p].name}' (#{p}, stream "
                            f"{tasks[p].stream}) {ended}")
    unfinished = [works[i].name for i in range(n) if st[i].end is None]
    if unfinished:  # cannot happen when waits refer to earlier tasks; kept as a guard
        raise RuntimeError(f"simulation stalled; unfinished tasks: {', '.join(unfinished[:5])}")

    # results
    results: list[TaskResult] = []
    for i, t in enumerate(tasks):
        s, w, c = st[i], works[i], st[i].cost
        results.append(TaskResult(
            index=i, work=w, stream=t.stream, launch=launch_of[i], task_type=task_type(w.engine, hw),
            launch_time=s.launch_time, ready=s.ready, start=s.start, end=s.end,
            wait=s.start - s.prev_end, cores=s.cores, groups=s.groups, block_s=s.block_s,
            cube_s=c.cube_s * w.block_dim, vector_s=c.vector_s * w.block_dim,
            mte2_s=s.mte2_s, mte3_s=s.mte3_s,
            hbm_read_bytes=c.hbm_read_bytes, hbm_write_bytes=c.hbm_write_bytes, l2_read_bytes=c.l2_read_bytes,
            l2_hits=s.l2_hits, bound_s=task_bound(w, hw, c.hbm_read_bytes + c.hbm_write_bytes),
            standalone=task_time(w, hw, s.cores, 1.0, set(s.l2_hits)),
            waits=s.waits, records=s.records,
        ))

    latency = max((x.end for x in results), default=0.0)
    core_work = [w for w in works if w.engine in ("cube", "vector", "cube+vector")]
    cube_core_s = sum(hw.cube_cycles(w) for w in core_work) / hw.clock
    vector_core_s = sum(hw.vector_cycles(w) for w in core_work) / hw.clock
    hbm_moved = sum(x.hbm_read_bytes + x.hbm_write_bytes for x in results)
    written = {x.name for w in works for x in w.outputs}
    compulsory = sum(sum({x.name: x.nbytes for x in w.outputs}.values()) for w in works)
    first_reads: dict[str, int] = {}
    for w in works:
        for x in w.inputs:
            if x.name not in written:
                first_reads[x.name] = max(first_reads.get(x.name, 0), x.nbytes)
    compulsory += sum(first_reads.values())
    bound = Bound(
        cube_s=cube_core_s / hw.cube_cores,
        vector_s=vector_core_s / hw.vector_cores,
        hbm_s=compulsory / hw.hbm_bw,
        launch_s=launches * hw.launch_s,
        hbm_bytes=compulsory,
    )
    div = latency if latency > 0 else math.inf
    return SimResult(
        target=hw.name, mode=mode, tasks=results, latency=latency,
        cube_util=cube_core_s / (hw.cube_cores * div),
        vector_util=vector_core_s / (hw.vector_cores * div),
        hbm_util=hbm_moved / (hw.hbm_bw * div),
        launches=launches, launch_times=launch_times, bound=bound, hbm_bytes=hbm_moved,
        l2_read_bytes=sum(x.l2_read_bytes for x in results), pools=dict(hw.pools),
        hbm_trace=hbm_trace, launch_s=hw.launch_s, wait_s=hw.wait_s, hbm_bandwidth=hw.hbm_bw,
    )
