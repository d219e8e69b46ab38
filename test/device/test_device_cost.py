"""The timing model of one task (device/cost.py)."""

from __future__ import annotations

import math

import pytest
from device_cases import conv_work, raw, vector_task
from hypothesis import given, settings
from hypothesis import strategies as st

from ge.device import ENGINES, Hardware, TaskWork, block_cost, task_bound, task_time
from ge.target import load_target

TARGETS = ["ascend910", "ascend910b"]


@pytest.fixture(params=TARGETS)
def target(request):
    return load_target(request.param)


def test_hardware_pools():
    a, b = Hardware.of("ascend910"), Hardware.of("ascend910b")
    assert a.pools["aicore"] == 32 and "aic" not in a.pools and not a.spec.cores.separated_cube_vector
    assert b.pools["aic"] == 24 and b.pools["aiv"] == 48 and b.spec.cores.separated_cube_vector and b.vec_per_block == 2
    assert a.need("cube+vector") == {"aicore": 1}
    assert b.need("cube+vector") == {"aic": 1, "aiv": 2}
    assert b.need("vector") == {"aiv": 1} and b.need("cube") == {"aic": 1}


def test_cube_dtype_rates(target):
    hw = Hardware.of(target)
    f16 = task_time(conv_work(engine="cube", dtype="f16"), target, 32).cube_s
    f32 = task_time(conv_work(engine="cube", dtype="f32"), target, 32).cube_s
    i8 = task_time(conv_work(engine="cube", dtype="i8"), target, 32).cube_s
    assert f32 == pytest.approx(f16 / hw.spec.cube.fp32_ratio)
    assert i8 == pytest.approx(f16 / 2)
    # one block: MACs / (16*16*16 per cycle at the sustained share of it) / clock
    w = conv_work(engine="cube", block_dim=1)
    rate = 4096 * hw.spec.cube.sustained
    assert task_time(w, target, 1).cube_s == pytest.approx(w.cube_macs / rate / hw.spec.cores.clock_hz)


def test_vector_rates(target):
    hw = Hardware.of(target)
    plain = vector_task("v", 1 << 10, 1 << 10, elems=1 << 20)
    trans = vector_task("v", 1 << 10, 1 << 10, transcendental=1 << 20)
    f32 = vector_task("v", 1 << 10, 1 << 10, elems=1 << 20, dtype="f32")
    t0 = task_time(plain, target, 1).vector_s
    assert t0 == pytest.approx((1 << 20) / 128 / hw.spec.cores.clock_hz)
    assert task_time(trans, target, 1).vector_s == pytest.approx(t0 * hw.spec.vector.transcendental_cost)
    assert task_time(f32, target, 1).vector_s == pytest.approx(2 * t0)


def test_double_buffering_balanced_task_takes_max_not_sum():
    """A balanced task (load = compute = store) with many tiles takes about one stage, not three."""
    t = load_target("ascend910")
    hw = Hardware.of(t)
    # block_dim 1 on the 910: loads 32 B/cycle, stores 64 B/cycle, 128 fp16 lanes, 1 GHz
    stage = 1e-3
    in_b = int(stage * hw.ddr_rate)
    out_b = int(stage * hw.store_rate)
    elems = int(stage * hw.spec.vector.fp16_lanes * hw.spec.cores.clock_hz)
    ph = task_time(vector_task("balanced", in_b, out_b, elems=elems), t, 1)
    assert ph.mte2_s == pytest.approx(stage, rel=1e-6)
    assert ph.mte3_s == pytest.approx(stage, rel=1e-6)
    assert ph.vector_s == pytest.approx(stage, rel=1e-6)
    assert ph.tiles > 100
    assert stage <= ph.body_s <= stage * (1 + 3 / ph.tiles)
    assert ph.body_s < 0.4 * (ph.mte2_s + ph.vector_s + ph.mte3_s)
    assert ph.fill_s == pytest.approx(ph.body_s - stage, rel=1e-6)


def test_one_tile_does_not_overlap():
    """A block whose data fits one tile cannot overlap its stages: time is their sum."""
    t = load_target("ascend910")
    ph = task_time(vector_task("tiny", 4096, 4096, elems=4096), t, 1)
    assert ph.tiles == 1
    assert ph.body_s == pytest.approx(ph.mte2_s + ph.vector_s + ph.mte3_s)
    assert ph.total_s == pytest.approx(ph.body_s + ph.overhead_s)


def test_l2_hits_read_faster(target):
    w = vector_task("v", 8 << 20, 1 << 10, block_dim=8, inputs=("a",))
    miss = task_time(w, target, 8)
    hit = task_time(w, target, 8, l2_hits={"a"})
    assert hit.l2_read_bytes == 8 << 20 and hit.hbm_read_bytes == 0
    assert miss.l2_read_bytes == 0 and miss.hbm_read_bytes == 8 << 20
    assert hit.mte2_s < miss.mte2_s / 2
    assert hit.total_s < miss.total_s


def test_hbm_share_slows_a_memory_bound_task(target):
    w = vector_task("v", 64 << 20, 64 << 20, block_dim=24)
    full, half = task_time(w, target, 24, 1.0), task_time(w, target, 24, 0.5)
    assert half.total_s > full.total_s
    assert half.body_s >= (128 << 20) / (0.5 * Hardware.of(target).spec.hbm.bandwidth) * (1 - 1e-9)


def test_waves_and_block_cap(target):
    """block_dim 48 on 24 cores runs two waves; more cores than blocks do not help."""
    w = conv_work(engine="cube", block_dim=48)
    assert task_time(w, target, 24).waves == 2
    one = conv_work(engine="cube", block_dim=1)
    assert task_time(one, target, 32).cores == 1
    assert task_time(one, target, 32).total_s == task_time(one, target, 1).total_s


def test_910b_cube_to_vector_goes_through_l2():
    a, b = load_target("ascend910"), load_target("ascend910b")
    ha, hb = Hardware.of(a), Hardware.of(b)
    w = conv_work(n=8, block_dim=24)
    pa, pb = task_time(w, a, 24), task_time(w, b, 24)
    per_block = w.cube_to_vector_bytes / 24
    assert pa.c2v_s == pytest.approx(per_block / ha.l0c_to_ub_rate)
    assert pb.c2v_s == pytest.approx(per_block / hb.l2_write_rate + per_block / (2 * hb.l2_read_rate))
    assert pb.c2v_s > pa.c2v_s * 2
    # the 910B's Cube is faster: 24 AIC x 1.85 GHz vs 32 cores x 1 GHz, each at its sustained share
    wa, wb = conv_work(n=8, block_dim=32, engine="cube"), conv_work(n=8, block_dim=24, engine="cube")
    sustained = b.cube.sustained / a.cube.sustained
    assert task_bound(wa, a) / task_bound(wb, b) == pytest.approx(24 * 1.85 / 32 * sustained, rel=0.02)
    # and a fused block's epilogue runs on two AIVs
    assert pb.vector_s == pytest.approx(w.vector_elems / 24 / 128 / hb.spec.cores.clock_hz / 2)


def test_inconsistent_records_are_refused():
    with pytest.raises(ValueError, match="vector task has cube_macs"):
        TaskWork("n", "X", "vector", "f16", 5, 0, 0, (), ()).check()
    with pytest.raises(ValueError, match="unknown engine"):
        TaskWork("n", "X", "npu", "f16", 0, 0, 0, (), ()).check()
    with pytest.raises(ValueError, match="block_dim"):
        TaskWork("n", "X", "cube", "f16", 0, 0, 0, (), (), block_dim=0).check()
    with pytest.raises(ValueError, match="unknown dtype"):
        TaskWork("n", "X", "cube", "f17", 0, 0, 0, (), ()).check()
    with pytest.raises(ValueError, match="hbm_share"):
        task_time(conv_work(), "ascend910", 1, 0.0)


SIZES = st.sampled_from([0, 32, 4096, 1 << 20, 24 << 20, 300 << 20])


@st.composite
def works(draw) -> TaskWork:
    engine = draw(st.sampled_from(ENGINES))
    dtype = draw(st.sampled_from(["f16", "bf16", "f32", "i8", "i4", "f64"]))
    cube = draw(st.integers(0, 10**10)) if engine in ("cube", "cube+vector", "aicpu") else 0
    vec = draw(st.integers(0, 10**9)) if engine not in ("dma", "hccl") else 0
    trans = draw(st.integers(0, 10**8)) if engine not in ("dma", "hccl") else 0
    ins = tuple(raw(f"i{k}", draw(SIZES)) for k in range(draw(st.integers(0, 3))))
    outs = tuple(raw(f"o{k}", draw(SIZES)) for k in range(draw(st.integers(0, 2))))
    c2v = draw(SIZES) if engine == "cube+vector" else 0
    replicas = draw(st.integers(2, 16)) if engine == "hccl" else 0
    blocks = 1 if engine == "hccl" else draw(st.integers(1, 100))
    return TaskWork("w", "Op", engine, dtype, cube, vec, trans, ins, outs, c2v, blocks, replicas=replicas)


@settings(max_examples=150, deadline=None)
@given(
    w=works(), tname=st.sampled_from(TARGETS), cores=st.integers(1, 100), share=st.floats(0.01, 1.0), hit=st.booleans()
)
def test_task_time_never_below_roofline(w, tname, cores, share, hit):
    t = load_target(tname)
    hits = {"i0"} if hit else set()
    ph = task_time(w, t, cores, share, hits)
    assert ph.total_s >= ph.bound_s * (1 - 1e-9)
    assert ph.body_s >= ph.hbm_s * share * (1 - 1e-9)  # all HBM bytes at full bandwidth
    assert ph.fill_s >= 0 and ph.total_s >= ph.overhead_s
    bc = block_cost(w, t, hits)
    for b in (1e6, 1e9, 1e11, math.inf):
        assert bc.consumption(b) <= b * (1 + 1e-9)


@settings(max_examples=150, deadline=None)
@given(
    w=works(),
    tname=st.sampled_from(TARGETS),
    cores=st.integers(1, 100),
    more=st.sampled_from(["scale", "vector", "cube"]),
    extra=st.integers(1, 1 << 26),
)
def test_more_work_never_takes_less_time(w, tname, cores, more, extra):
    """More compute, or all of a task's work scaled up, never takes less time. (More bytes alone
    may: the same compute split over more tiles shortens the fill; see docs/device_model.md.)"""
    t = load_target(tname)
    if more == "scale":
        k = 1 + extra / (1 << 20)

        def scale(ts):
            return tuple(type(x)(x.name, int(x.nbytes * k), x.shape, x.dtype, x.fmt) for x in ts)

        bigger = TaskWork(
            **{
                **w.__dict__,
                "inputs": scale(w.inputs),
                "outputs": scale(w.outputs),
                "cube_macs": int(w.cube_macs * k),
                "vector_elems": int(w.vector_elems * k),
                "transcendental_elems": int(w.transcendental_elems * k),
                "cube_to_vector_bytes": int(w.cube_to_vector_bytes * k),
            }
        )
    elif more == "vector" and w.engine not in ("dma", "hccl"):
        bigger = TaskWork(**{**w.__dict__, "vector_elems": w.vector_elems + extra})
    elif more == "cube" and w.engine in ("cube", "cube+vector", "aicpu"):
        bigger = TaskWork(**{**w.__dict__, "cube_macs": w.cube_macs + extra})
    else:
        return
    assert task_time(bigger, t, cores).total_s >= task_time(w, t, cores).total_s * (1 - 1e-9)
