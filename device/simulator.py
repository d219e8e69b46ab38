"""Discrete-event simulation of tasks on streams with events, on the cores of a modeled Ascend chip.

- The host issues launches one after another, each costing `[host] launch_s` (per-op mode: one launch
  per task; whole-graph sink: one; subgraph sink: one per launch id, in order of first appearance).
  In dynamic mode (shapes known only at run time) the host also infers each task's shapes and
  computes its tiling before launching it: `shape_infer_s + tiling_s` more per launch.
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

from ge.device.cost import INF, BlockCost, Hardware, Phases, block_cost, hbm_level, task_bound, task_time
from ge.device.work import SimTask, TaskWork

#: Accepted mode names -> canonical mode.
MODES = {
    "op": "op",
    "per-op": "op",
    "single-op": "op",
    "graph": "graph",
    "sink": "graph",
    "graph-sink": "graph",
    "whole-graph": "graph",
    "subgraph": "subgraph",
    "subgraph-sink": "subgraph",
    "dynamic": "dynamic",
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
    if engine == "hccl":
        return "HCCL"
    if not hw.spec.cores.separated_cube_vector or engine == "cube":
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
        return max(
            ("cube", self.cube_s),
            ("vector", self.vector_s),
            ("hbm", self.hbm_s),
            ("launch", self.launch_s),
            key=lambda kv: kv[1],
        )[0]


AICORE_POOLS = ("aicore", "aic", "aiv")
"""The core pools that make up the AI Cores (one pool on a chip with unified cores, Cube and Vector
pools on one that separates them); the AI CPU and DMA engines are not AI Cores."""


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
    def communication_s(self) -> float:
        """Seconds the collectives (hccl tasks) ran."""
        return sum(t.end - t.start for t in self.tasks if t.work.engine == "hccl")

    @property
    def communication_hidden(self) -> float:
        """The share of the collectives' time during which some other task ran (communication the
        computation hides); 1.0 without collectives."""
        total = self.communication_s
        if total <= 0:
            return 1.0
        busy = sorted((t.start, t.end) for t in self.tasks if t.work.engine != "hccl" and t.end > t.start)
        merged: list[list[float]] = []
        for start, end in busy:
            if merged and start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        hidden = 0.0
        for t in self.tasks:
            if t.work.engine != "hccl":
                continue
            for start, end in merged:
                hidden += max(0.0, min(end, t.end) - max(start, t.start))
        return hidden / total

    @property
    def latency_over_bound(self) -> float:
        return self.latency / self.bound.value if self.bound.value > 0 else math.inf

    @property
    def aicore_util(self) -> float:
        """The share of the AI Cores' time spent running tasks (msprof's AI Core utilization): core-
        seconds the tasks' blocks held cores of the AI Core pools (Cube and Vector cores on a chip
        that separates them), over those pools' cores times the latency. A core waiting on HBM inside
        a task counts as busy, as it does in a profile; idle gaps between tasks do not."""
        pools = {p: n for p, n in self.pools.items() if p in AICORE_POOLS}
        available = sum(pools.values()) * self.latency
        held = sum(
            (end - start) * len(ids)
            for t in self.tasks
            for start, end, _, cores in t.groups
            for pool, ids in cores.items()
            if pool in pools
        )
        return held / available if available > 0 else 0.0

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


def _cost(s: _TaskState) -> BlockCost:
    """The block cost of a task that has started (set when its first group dispatches)."""
    assert s.cost is not None
    return s.cost


def _eps(t: float) -> float:
    return 1e-12 * max(1.0, abs(t)) + 1e-18


def simulate(tasks: list[SimTask], target, mode: str = "graph") -> SimResult:
    """Simulate `tasks` (program order) on `target` (a loaded Target, a known name or a Hardware) in `mode`
    ("op" | "graph" | "subgraph", aliases in MODES)."""
    hw = Hardware.of(target)
    if mode not in MODES:
        raise ValueError(f"unknown mode '{mode}' (modes: {', '.join(sorted(MODES))})")
    for t in tasks:
        t.work.check()
    return _Simulator(tasks, hw, MODES[mode]).run()


# --------------------------------------------------------------------------------------------------
# The simulator's parts: host launches, event sources, the event queue, stream cursors, core pools.


def launch_cost(hw: Hardware, mode: str) -> float:
    """Host seconds per launch in `mode` (canonical): the launch, and in dynamic mode the shape
    inference and tiling the host does first."""
    host = hw.spec.host
    return host.launch_s + (host.shape_infer_s + host.tiling_s if mode == "dynamic" else 0.0)


def _launch_indices(tasks: list[SimTask], mode: str) -> list[int]:
    """The host launch (0-based, in issue order) of each task in `mode`."""
    if mode in ("op", "dynamic"):
        return list(range(len(tasks)))
    if mode == "graph":
        return [0] * len(tasks)
    order: dict[int, int] = {}
    return [order.setdefault(t.launch, len(order)) for t in tasks]


def _wait_sources(tasks: list[SimTask]) -> list[list[int]]:
    """For each task, the task whose record each of its waits refers to: the one `wait_from` names,
    else the latest earlier record of the event."""
    latest: dict[int, int] = {}
    wait_src: list[list[int]] = []
    for i, t in enumerate(tasks):
        if t.wait_from is not None and len(t.wait_from) != len(t.waits):
            raise ValueError(f"task '{t.work.name}' (#{i}) has {len(t.waits)} waits but {len(t.wait_from)} sources")
        srcs = []
        for k, e in enumerate(t.waits):
            src = t.wait_from[k] if t.wait_from is not None else latest.get(e)
            if src is None or not src < i or e not in tasks[src].records:
                raise ValueError(f"task '{t.work.name}' (#{i}) waits event {e}, which no earlier task records")
            srcs.append(src)
        wait_src.append(srcs)
        for e in t.records:
            latest[e] = i
    return wait_src


class _EventQueue:
    """Fixed-time events ("ready": a task may dispatch; "body": a group starts its body), by time, then push order."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, str, object]] = []
        self._seq = 0

    def push(self, time: float, kind: str, data) -> None:
        heapq.heappush(self._heap, (time, self._seq, kind, data))
        self._seq += 1

    def next_time(self) -> float:
        return self._heap[0][0] if self._heap else INF

    def pop_due(self, now: float) -> list[tuple[str, object]]:
        """The events due at `now` (within rounding), removed from the queue, in order."""
        due = []
        while self._heap and self._heap[0][0] <= now + _eps(now):
            _, _, kind, data = heapq.heappop(self._heap)
            due.append((kind, data))
        return due


@dataclass
class _Stream:
    """One stream's cursor: its tasks in program order, the next one to issue, and when the stream is free."""

    tasks: list[int] = field(default_factory=list)
    next: int = 0
    free_at: float = 0.0  # end of its last task, records included
    busy: bool = False  # a task of the stream is issued and not yet ended

    def pending(self) -> int | None:
        """The next task to issue, or None while one runs or when all are issued."""
        if self.busy or self.next == len(self.tasks):
            return None
        return self.tasks[self.next]


class _CorePools:
    """The free cores of each pool, as heaps of core ids (the lowest free id is taken first)."""

    def __init__(self, pools: dict[str, int]) -> None:
        self.free = {p: list(range(c)) for p, c in pools.items()}
        for h in self.free.values():
            heapq.heapify(h)

    def blocks_free(self, need: dict[str, int]) -> int:
        """How many blocks needing `need` cores per pool fit in the free cores."""
        return min(len(self.free[p]) // c for p, c in need.items())

    def take(self, need: dict[str, int], blocks: int) -> dict[str, tuple[int, ...]]:
        return {p: tuple(heapq.heappop(self.free[p]) for _ in range(c * blocks)) for p, c in need.items()}

    def release(self, cores: dict[str, tuple[int, ...]]) -> None:
        for p, ids in cores.items():
            for c in ids:
                heapq.heappush(self.free[p], c)


# --------------------------------------------------------------------------------------------------


class _Simulator:
    """One simulation run. Its state: the host launches, the fixed-time event queue, the cursor of each stream,
    the free cores of each pool, the groups of blocks running (which share HBM), L2, and each task's progress."""

    def __init__(self, tasks: list[SimTask], hw: Hardware, mode: str) -> None:
        self.tasks = tasks
        self.works = [t.work for t in tasks]
        self.hw = hw
        self.mode = mode
        # host
        self.launch_of = _launch_indices(tasks, mode)
        self.launches = (max(self.launch_of) + 1) if tasks else 0
        self.launch_times = [(k + 1) * launch_cost(hw, mode) for k in range(self.launches)]
        # streams and events
        self.wait_src = _wait_sources(tasks)
        self.streams: dict[int, _Stream] = {}
        for i, t in enumerate(tasks):
            self.streams.setdefault(t.stream, _Stream()).tasks.append(i)
        self.blocked_on: dict[int, list[int]] = defaultdict(list)  # task -> streams waiting for its records
        self.rec_time: dict[tuple[int, int], float] = {}  # (task, event) -> when recorded
        self.events = _EventQueue()
        # tasks, cores, memory
        self.st = [_TaskState(launch_time=self.launch_times[self.launch_of[i]]) for i in range(len(tasks))]
        self.cores = _CorePools(hw.pools)
        self.l2 = _L2(hw.spec.buffers.l2)
        self.queue: list[int] = []  # ready tasks with blocks left to dispatch
        self.running: list[_Group] = []  # groups of blocks on cores
        self.early: list[tuple[int, int]] = []  # (task, producer) pairs where the task started first
        self.hbm_trace: list[tuple[float, float]] = []
        self.now = 0.0

    def run(self) -> SimResult:
        for s in self.streams:
            self._advance_stream(s)
        self._rerate()
        while self._step():
            pass
        self._check_finished()
        return self._result()

    # ---- streams

    def _advance_stream(self, s: int) -> None:
        """Issue the stream's next task if it may: its waited events recorded; it becomes ready after the waits."""
        stream = self.streams[s]
        j = stream.pending()
        if j is None:
            return
        for src in self.wait_src[j]:
            if self.st[src].end is None:
                self.blocked_on[src].append(s)
                return
        t = max(stream.free_at, self.st[j].launch_time)
        details = []
        for e, src in zip(self.tasks[j].waits, self.wait_src[j]):
            rt = self.rec_time[(src, e)]
            t = max(t, rt) + self.hw.spec.events.wait_s
            details.append(EventWait(e, src, rt, t))
        self.st[j].waits = tuple(details)
        self.st[j].prev_end = stream.free_at
        stream.busy = True
        stream.next += 1
        self.events.push(t, "ready", j)

    def _finish_task(self, j: int) -> None:
        """Task `j`'s last block ended: its outputs enter L2, its records run, its stream (and waiters) go on."""
        s = self.st[j]
        s.end = self.now
        for x in self.works[j].outputs:
            self.l2.touch(x.name, x.nbytes)
        t = self.now
        recs = []
        for e in self.tasks[j].records:
            t += self.hw.spec.events.record_s
            self.rec_time[(j, e)] = t
            recs.append((e, t))
        s.records = tuple(recs)
        sid = self.tasks[j].stream
        self.streams[sid].free_at = t
        self.streams[sid].busy = False
        self._advance_stream(sid)
        for s2 in self.blocked_on.pop(j, []):
            self._advance_stream(s2)

    # ---- cores

    def _dispatch(self) -> None:
        """Give each queued task (first ready first, then program order) as many blocks as fit in the free cores."""
        now = self.now
        for j in sorted(self.queue, key=lambda j: (self.st[j].ready, j)):
            w = self.works[j]
            need = self.hw.need(w.engine)
            k = min(w.block_dim - self.st[j].dispatched, self.cores.blocks_free(need))
            if k < 1:
                continue
            s = self.st[j]
            if s.start is None:
                self._start_task(j)
            g = _Group(j, k, self.cores.take(need, k), now, max(now, s.body_from))
            s.dispatched += k
            s.running += k
            s.cores = max(s.cores, s.running)
            self.running.append(g)
            if g.body_start > now:
                self.events.push(g.body_start, "body", g)
            if s.dispatched == w.block_dim:
                self.queue.remove(j)

    def _start_task(self, j: int) -> None:
        """Task `j`'s first blocks start: note producers not yet ended, find its L2 hits, cost its blocks."""
        s, w, now = self.st[j], self.works[j], self.now
        s.start = now
        self.early.extend((j, p) for p in self.tasks[j].inputs_from if self.st[p].end is None)
        sizes: dict[str, int] = {}
        for x in w.inputs:
            sizes[x.name] = max(sizes.get(x.name, 0), x.nbytes)
        hits = {name for name, nb in sizes.items() if self.l2.holds(name, nb)}
        s.l2_hits = tuple(sorted(hits))
        s.cost = block_cost(w, self.hw, hits)
        for x in w.inputs:
            self.l2.touch(x.name, x.nbytes)
        s.body_from = now + s.cost.overhead_s

    # ---- HBM sharing

    def _in_body(self, g: _Group) -> bool:
        return g.body_start <= self.now + _eps(self.now)

    def _rerate(self) -> None:
        """Share HBM among the groups in their body: one allotment λ each, and the rate it gives them."""
        body = [g for g in self.running if self._in_body(g)]
        lam = hbm_level([(_cost(self.st[g.task]), g.k) for g in body], self.hw.spec.hbm.bandwidth)
        total = 0.0
        for g in body:
            c = _cost(self.st[g.task])
            t = c.body(lam)
            g.b = lam
            g.rate = INF if t <= 0 else 1.0 / t
            total += g.k * c.consumption(lam)
        if not self.hbm_trace or self.hbm_trace[-1][1] != total:
            self.hbm_trace.append((self.now, total))

    # ---- time

    def _step(self) -> bool:
        """Advance to the next group end or fixed-time event and handle what happens then; False when none is left."""
        fin: dict[int, float] = {}  # id(group) -> finish time at current rates
        for g in self.running:
            if self._in_body(g):
                fin[id(g)] = self.now if g.rate == INF else self.now + g.remaining / g.rate
        t_next = min(self.events.next_time(), min(fin.values(), default=INF))
        if t_next == INF:
            return False
        dt = t_next - self.now
        if dt > 0:
            self._progress(fin, dt)
        self.now = t_next
        changed = self._end_groups(fin)
        for kind, data in self.events.pop_due(self.now):
            changed = True
            if kind == "ready":
                assert isinstance(data, int)  # "ready" events carry a task index
                self.st[data].ready = self.now
                self.queue.append(data)
        if changed:
            self._dispatch()
            self._rerate()
        return True

    def _progress(self, fin: dict[int, float], dt: float) -> None:
        """Run the groups in their body for `dt` at their rates, counting their MTE busy time."""
        for g in self.running:
            if id(g) in fin and g.rate != INF:
                s = self.st[g.task]
                stg = _cost(s).stages(g.b)
                frac = min(g.remaining, g.rate * dt)
                s.mte2_s += g.k * stg["mte2"] * frac
                s.mte3_s += g.k * stg["mte3"] * frac
                g.remaining -= frac

    def _end_groups(self, fin: dict[int, float]) -> bool:
        """End the groups whose finish time is now (within rounding), freeing their cores; True if any ended."""
        now = self.now
        ended = [g for g in self.running if fin.get(id(g), INF) <= now + _eps(now)]
        for g in ended:
            self.running.remove(g)
            self.cores.release(g.cores)
            s = self.st[g.task]
            s.groups.append((g.start, now, g.k, g.cores))
            s.block_s += g.k * (now - g.start)
            s.running -= g.k
            s.done += g.k
            if s.done == self.works[g.task].block_dim:
                self._finish_task(g.task)
        return bool(ended)

    # ---- results

    def _check_finished(self) -> None:
        """Every task ended, and none started before a producer of its inputs ended (ScheduleError)."""
        st, works, tasks = self.st, self.works, self.tasks
        if self.early:
            j, p = self.early[0]
            producer_end, early_start = st[p].end, st[j].start
            assert early_start is not None  # j is recorded as early when it starts
            ended = f"finished at {producer_end * 1e6:.1f} us" if producer_end is not None else "never finished"
            raise ScheduleError(
                f"task '{works[j].name}' (#{j}, stream {tasks[j].stream}) started at "
                f"{early_start * 1e6:.1f} us before its producer '{works[p].name}' (#{p}, stream "
                f"{tasks[p].stream}) {ended}"
            )
        unfinished = [works[i].name for i in range(len(tasks)) if st[i].end is None]
        if unfinished:  # cannot happen when waits refer to earlier tasks; kept as a guard
            raise RuntimeError(f"simulation stalled; unfinished tasks: {', '.join(unfinished[:5])}")

    def _task_result(self, i: int) -> TaskResult:
        s, w, c, hw = self.st[i], self.works[i], _cost(self.st[i]), self.hw
        # _check_finished ran first: every task was made ready, started and ended
        assert s.ready is not None and s.start is not None and s.end is not None
        return TaskResult(
            index=i,
            work=w,
            stream=self.tasks[i].stream,
            launch=self.launch_of[i],
            task_type=task_type(w.engine, hw),
            launch_time=s.launch_time,
            ready=s.ready,
            start=s.start,
            end=s.end,
            wait=s.start - s.prev_end,
            cores=s.cores,
            groups=s.groups,
            block_s=s.block_s,
            cube_s=c.cube_s * w.block_dim,
            vector_s=c.vector_s * w.block_dim,
            mte2_s=s.mte2_s,
            mte3_s=s.mte3_s,
            hbm_read_bytes=c.hbm_read_bytes,
            hbm_write_bytes=c.hbm_write_bytes,
            l2_read_bytes=c.l2_read_bytes,
            l2_hits=s.l2_hits,
            bound_s=task_bound(w, hw, c.hbm_read_bytes + c.hbm_write_bytes),
            standalone=task_time(w, hw, s.cores, 1.0, set(s.l2_hits)),
            waits=s.waits,
            records=s.records,
        )

    def _result(self) -> SimResult:
        hw, works = self.hw, self.works
        results = [self._task_result(i) for i in range(len(self.tasks))]
        latency = max((x.end for x in results), default=0.0)
        core_work = [w for w in works if w.engine in ("cube", "vector", "cube+vector")]
        cube_core_s = sum(hw.cube_cycles(w) for w in core_work) / hw.spec.cores.clock_hz
        vector_core_s = sum(hw.vector_cycles(w) for w in core_work) / hw.spec.cores.clock_hz
        hbm_moved = sum(x.hbm_read_bytes + x.hbm_write_bytes for x in results)
        compulsory = _compulsory_hbm_bytes(works)
        bound = Bound(
            cube_s=cube_core_s / hw.cube_cores,
            vector_s=vector_core_s / hw.vector_cores,
            hbm_s=compulsory / hw.spec.hbm.bandwidth,
            launch_s=self.launches * launch_cost(hw, self.mode),
            hbm_bytes=compulsory,
        )
        div = latency if latency > 0 else math.inf
        return SimResult(
            target=hw.spec.name,
            mode=self.mode,
            tasks=results,
            latency=latency,
            cube_util=cube_core_s / (hw.cube_cores * div),
            vector_util=vector_core_s / (hw.vector_cores * div),
            hbm_util=hbm_moved / (hw.spec.hbm.bandwidth * div),
            launches=self.launches,
            launch_times=self.launch_times,
            bound=bound,
            hbm_bytes=hbm_moved,
            l2_read_bytes=sum(x.l2_read_bytes for x in results),
            pools=dict(hw.pools),
            hbm_trace=self.hbm_trace,
            launch_s=launch_cost(hw, self.mode),
            wait_s=hw.spec.events.wait_s,
            hbm_bandwidth=hw.spec.hbm.bandwidth,
        )


def _compulsory_hbm_bytes(works: list[TaskWork]) -> int:
    """Every tensor written, plus the first read of every tensor no task writes (each at its largest size)."""
    written = {x.name for w in works for x in w.outputs}
    compulsory = sum(sum({x.name: x.nbytes for x in w.outputs}.values()) for w in works)
    first_reads: dict[str, int] = {}
    for w in works:
        for x in w.inputs:
            if x.name not in written:
                first_reads[x.name] = max(first_reads.get(x.name, 0), x.nbytes)
    return compulsory + sum(first_reads.values())
