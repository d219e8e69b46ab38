"""The discrete-event simulator of streams, events and cores (device/simulator.py)."""

from __future__ import annotations

from collections import defaultdict

import pytest
from device_cases import chain, conv_work, raw, vector_task
from hypothesis import given, settings
from hypothesis import strategies as st

from ge.device import ENGINES, Hardware, ScheduleError, SimTask, TaskWork, simulate, task_time
from ge.target import load_target

TARGETS = ["ascend910", "ascend910b"]
REL = 1e-9


# ---------------------------------------------------------------------------------------------
# invariants, checked on every simulation below


def check_schedule(tasks: list[SimTask], res, hw: Hardware) -> None:
    tol = 1e-12
    assert len(res.tasks) == len(tasks)
    # roofline: every task and the graph
    for r in res.tasks:
        assert r.end >= r.start >= r.ready >= r.launch_time - tol
        assert r.duration >= r.bound_s * (1 - REL), r.name
    assert res.latency >= res.bound.value * (1 - REL)
    assert res.hbm_bytes >= res.bound.hbm_bytes
    assert res.hbm_bytes <= res.latency * hw.spec.hbm.bandwidth * (1 + 1e-6)
    # stream order: a stream's task starts after its predecessor and that task's records
    by_stream = defaultdict(list)
    for r in res.tasks:
        by_stream[r.stream].append(r)
    for rs in by_stream.values():
        for a, b in zip(rs, rs[1:]):
            last = a.records[-1][1] if a.records else a.end
            assert b.start >= last - tol
            assert b.start - b.wait == pytest.approx(last, abs=1e-12)
    # events: a waited record precedes the wait, which precedes the start
    for r, t in zip(res.tasks, tasks):
        assert tuple(w.event for w in r.waits) == t.waits
        for w in r.waits:
            src = res.tasks[w.source]
            assert w.source < r.index and w.event in tasks[w.source].records
            assert dict(src.records)[w.event] == w.recorded
            assert src.end <= w.recorded <= w.done - hw.spec.events.wait_s + tol <= r.start
    # cores: never more blocks at once than a pool holds, never one core twice at once
    for pool, size in res.pools.items():
        spans = [(s, e, c) for r in res.tasks for s, e, _, cores in r.groups for c in cores.get(pool, ())]
        assert all(0 <= c < size for _, _, c in spans)
        by_core = defaultdict(list)
        for s, e, c in spans:
            by_core[c].append((s, e))
        for iv in by_core.values():
            iv.sort()
            for (_s1, e1), (s2, _e2) in zip(iv, iv[1:]):
                assert s2 >= e1 - tol
    for r in res.tasks:
        assert 1 <= r.cores <= r.work.block_dim
        assert sum(k for _, _, k, _ in r.groups) == r.work.block_dim
        need = hw.need(r.work.engine)
        assert all(
            {p: len(ids) for p, ids in c.items()} == {p: k * n for p, n in need.items()} for _, _, k, c in r.groups
        )


def run(tasks, target, mode="graph"):
    hw = Hardware.of(target)
    res = simulate(tasks, target, mode)
    check_schedule(tasks, res, hw)
    return res


# ---------------------------------------------------------------------------------------------
# property test: random task lists on random streams with consistent events

SIZES = st.sampled_from([0, 64, 1 << 16, 1 << 20, 12 << 20, 40 << 20])
NAMES = [f"t{k}" for k in range(6)]


@st.composite
def graphs(draw):
    n = draw(st.integers(1, 10))
    tasks: list[SimTask] = []
    recorded: list[int] = []
    launch = 0
    for i in range(n):
        engine = draw(st.sampled_from(ENGINES))
        dtype = draw(st.sampled_from(["f16", "bf16", "f32", "i8"]))
        cube = draw(st.integers(0, 10**9)) if engine in ("cube", "cube+vector", "aicpu") else 0
        vec = draw(st.integers(0, 10**8)) if engine not in ("dma", "hccl") else 0
        trans = draw(st.integers(0, 10**7)) if engine not in ("dma", "hccl") else 0
        ins = tuple(raw(draw(st.sampled_from(NAMES)), draw(SIZES)) for _ in range(draw(st.integers(0, 3))))
        outs = tuple(raw(draw(st.sampled_from(NAMES)), draw(SIZES)) for _ in range(draw(st.integers(0, 2))))
        c2v = draw(SIZES) if engine == "cube+vector" else 0
        replicas = draw(st.integers(2, 16)) if engine == "hccl" else 0
        blocks = 1 if engine == "hccl" else draw(st.integers(1, 64))
        w = TaskWork(f"n{i}", "Op", engine, dtype, cube, vec, trans, ins, outs, c2v, blocks, replicas=replicas)
        waits = tuple(draw(st.lists(st.sampled_from(recorded), max_size=2, unique=True))) if recorded else ()
        records = (i,) if draw(st.booleans()) else ()
        recorded += records
        launch += draw(st.integers(0, 1))
        tasks.append(SimTask(w, draw(st.integers(0, 3)), launch, waits, records))
    return tasks


@settings(max_examples=120, deadline=None)
@given(tasks=graphs(), tname=st.sampled_from(TARGETS), mode=st.sampled_from(["op", "graph", "subgraph"]))
def test_random_graphs_respect_bounds_order_and_events(tasks, tname, mode):
    res = run(tasks, load_target(tname), mode)
    expected = {"op": len(tasks), "graph": 1, "subgraph": len({t.launch for t in tasks})}[mode]
    assert res.launches == expected


# ---------------------------------------------------------------------------------------------
# behaviours


def test_stream_order_and_cross_stream_event():
    t = load_target("ascend910b")
    a = vector_task("a", 8 << 20, 8 << 20, block_dim=8)
    b = vector_task("b", 1 << 20, 1 << 20, block_dim=8)
    c = vector_task("c", 1 << 20, 1 << 20, block_dim=8)
    tasks = [SimTask(a, 0, 0, records=(7,)), SimTask(b, 1, 0), SimTask(c, 1, 0, waits=(7,))]
    res = run(tasks, t)
    ra, rb, rc = res.tasks
    assert ra.start == rb.start  # two streams start together
    hw = Hardware.of(t)
    assert rc.start == pytest.approx(
        ra.end + hw.spec.events.record_s + hw.spec.events.wait_s
    )  # c waited for a's record


def test_a_consumer_starting_before_its_producer_ended_is_a_schedule_error():
    """Without its event, c (stream 1, after a short b) starts while its producer a (stream 0) runs:
    the simulator names both; with the event it does not."""
    a = vector_task("a", 8 << 20, 8 << 20, block_dim=8)
    b = vector_task("b", 1 << 10, 1 << 10)
    c = vector_task("c", 1 << 20, 1 << 20, block_dim=8)
    ordered = [SimTask(a, 0, 0, records=(7,)), SimTask(b, 1, 0), SimTask(c, 1, 0, waits=(7,), inputs_from=(0,))]
    simulate(ordered, "ascend910b", "graph")
    missing = [SimTask(a, 0, 0), SimTask(b, 1, 0), SimTask(c, 1, 0, inputs_from=(0,))]
    with pytest.raises(
        ScheduleError,
        match=r"task 'c' \(#2, stream 1\) started at [0-9.]+ us before its producer 'a' "
        r"\(#0, stream 0\) finished at [0-9.]+ us",
    ):
        simulate(missing, "ascend910b", "graph")
    # the same producer on the consumer's own stream is ordered by the stream
    simulate([SimTask(a, 1, 0), SimTask(b, 1, 0), SimTask(c, 1, 0, inputs_from=(0,))], "ascend910b", "graph")


def test_wait_on_unrecorded_event_is_refused():
    w = vector_task("a", 64, 64)
    with pytest.raises(ValueError, match="waits event 3, which no earlier task records"):
        simulate([SimTask(w, 0, 0, waits=(3,)), SimTask(w, 1, 0, records=(3,))], "ascend910", "graph")
    with pytest.raises(ValueError, match="unknown mode"):
        simulate([SimTask(w, 0, 0)], "ascend910", "eager")


def test_hbm_sharing_two_memory_bound_tasks():
    """Two identical memory-bound tasks on two streams: longer than one alone, shorter than two."""
    t = load_target("ascend910b")
    w1 = vector_task("m1", 64 << 20, 64 << 20, block_dim=24)
    w2 = vector_task("m2", 64 << 20, 64 << 20, block_dim=24)
    alone = run([SimTask(w1, 0, 0)], t).tasks[0]
    both = run([SimTask(w1, 0, 0), SimTask(w2, 1, 0)], t)
    assert both.tasks[0].start == both.tasks[1].start  # 48 AIVs hold both
    span = max(r.end for r in both.tasks) - min(r.start for r in both.tasks)
    assert 1.3 * alone.duration < span < 2 * alone.duration
    # the pair is HBM-bound: its bytes at full bandwidth
    hw = Hardware.of(t)
    assert span >= 4 * (64 << 20) / hw.spec.hbm.bandwidth
    assert both.hbm_util > 0.5


def test_cores_are_waited_for_when_busy():
    """A task whose cores are all taken waits; one that finds some free takes what is free."""
    t = load_target("ascend910")
    big = conv_work("big", n=8, block_dim=32, engine="cube")
    late = conv_work("late", n=8, block_dim=32, engine="cube", x="x2", y="y2")
    res = run([SimTask(big, 0, 0), SimTask(late, 1, 0)], t)
    a, b = res.tasks
    assert a.cores == 32 and b.start == pytest.approx(a.end) and b.cores == 32
    half = conv_work("half", n=8, block_dim=20, engine="cube")
    res = run([SimTask(half, 0, 0), SimTask(late, 1, 0)], t)
    a, b = res.tasks
    assert b.start == a.start and len(b.groups) >= 2  # 12 blocks at once, the rest when 'half' ends
    assert b.groups[0][2] == 12 and len(b.groups[0][3]["aicore"]) == 12


def test_l2_residency_consumer_after_producer():
    t = load_target("ascend910")  # L2 32 MiB

    def pair(size: int, between: int = 0):
        prod = vector_task("prod", 1 << 10, size, block_dim=32, output="y")
        cons = vector_task("cons", size, 1 << 10, block_dim=32, inputs=("y",))
        mid = [vector_task("mid", 1 << 10, between, block_dim=32, output="z")] if between else []
        return run(chain([prod, *mid, cons]), t).tasks[-1], cons

    fits, cons = pair(8 << 20)
    assert fits.l2_hits == ("y",) and fits.l2_read_bytes == 8 << 20 and fits.hbm_read_bytes == 0
    miss = task_time(cons, t, 32)
    assert fits.duration < miss.total_s
    big, cons = pair(64 << 20)  # larger than L2: streams through HBM
    assert big.l2_hits == () and big.hbm_read_bytes == 64 << 20
    assert big.duration == pytest.approx(task_time(cons, t, 32).total_s)
    evicted, _ = pair(8 << 20, between=30 << 20)  # a 30 MiB write in between evicts it (LRU)
    assert evicted.l2_hits == ()
    # per byte, the L2 hit reads faster
    assert fits.duration / (8 << 20) < big.duration / (64 << 20)


def test_per_op_launch_vs_graph_sink():
    t = load_target("ascend910b")
    hw = Hardware.of(t)
    works = [
        vector_task(f"v{i}", 1 << 16, 1 << 16, elems=1 << 16, block_dim=8, inputs=(f"t{i}",), output=f"t{i + 1}")
        for i in range(10)
    ]
    op = run(chain(works), t, "op")
    sink = run(chain(works), t, "graph")
    sub = run([SimTask(w, 0, i // 4) for i, w in enumerate(works)], t, "subgraph")
    assert (op.launches, sink.launches, sub.launches) == (10, 1, 3)
    assert op.latency >= 10 * hw.spec.host.launch_s
    assert op.bound.launch_s == 10 * hw.spec.host.launch_s and sink.bound.launch_s == hw.spec.host.launch_s
    assert [r.launch_time for r in op.tasks] == pytest.approx([(i + 1) * hw.spec.host.launch_s for i in range(10)])
    busy = sum(r.duration for r in sink.tasks)
    assert sink.latency == pytest.approx(hw.spec.host.launch_s + busy)
    assert op.latency - sink.latency > 5 * hw.spec.host.launch_s  # small tasks: per-op is launch-bound
    assert sink.latency <= sub.latency < op.latency and sub.latency >= 3 * hw.spec.host.launch_s


def test_910_vs_910b_cube_and_vector_overlap():
    """On the 910B a Cube task and a Vector task run on different cores; on the 910 they share."""
    for tname, cube_bd, vec_bd, overlap in [("ascend910", 32, 32, False), ("ascend910b", 24, 48, True)]:
        t = load_target(tname)
        c = conv_work("conv", n=8, block_dim=cube_bd, engine="cube")
        v = vector_task("gelu", 16 << 20, 16 << 20, transcendental=8 << 20, block_dim=vec_bd)
        res = run([SimTask(c, 0, 0), SimTask(v, 1, 0)], t)
        rc, rv = res.tasks
        assert (rv.start == rc.start) is overlap
        if not overlap:
            assert rv.start == pytest.approx(rc.end)
        assert rc.task_type == "AI_CORE"
        assert rv.task_type == ("AI_VECTOR_CORE" if overlap else "AI_CORE")


def test_910b_fused_kernel_takes_both_core_kinds():
    t = load_target("ascend910b")
    res = run([SimTask(conv_work(n=8, block_dim=24), 0, 0)], t)
    r = res.tasks[0]
    assert r.task_type == "MIX_AIC"
    _, _, _, cores = r.groups[0]
    assert len(cores["aic"]) == 24 and len(cores["aiv"]) == 48


def test_resnet_conv_figures():
    """A ResNet-50 3x3 conv (64->64, 56x56, batch 32, fp16, ReLU epilogue) on each chip."""
    a = run([SimTask(conv_work(n=32, block_dim=32), 0, 0)], load_target("ascend910")).tasks[0]
    b = run([SimTask(conv_work(n=32, block_dim=24), 0, 0)], load_target("ascend910b")).tasks[0]
    assert a.bound_s <= a.duration < 2 * a.bound_s
    assert b.bound_s <= b.duration < 2 * b.bound_s
    assert b.duration < a.duration
    assert a.cube_ratio > 0.6 and b.cube_ratio > 0.6
