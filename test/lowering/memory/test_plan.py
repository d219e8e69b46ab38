"""Tests of the memory planner: properties on random interval sets, hand cases, real models."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ge.lowering.memory import (
    HEURISTICS,
    Buffer,
    PlanError,
    intervals_from_schedule,
    verify_plan,
)
from ge.lowering.memory import MemoryPlan as _MemoryPlan
from ge.lowering.memory import plan_memory as _plan_memory
from ge.target import DEFAULT_TARGET, load_target

KB = 1024
ALIGNMENT = load_target(DEFAULT_TARGET).hbm.alignment
"""The planner's alignment in these cases where none is given: the default target's (GE's 512)."""


def plan_memory(buffers, **options):
    return _plan_memory(buffers, **{"alignment": ALIGNMENT, **options})


def MemoryPlan(*fields, **named):
    if len(fields) < 7 and "alignment" not in named:
        named["alignment"] = ALIGNMENT
    return _MemoryPlan(*fields, **named)


def aligned(size: int, alignment: int) -> int:
    return -(-size // alignment) * alignment


def brute_lower_bound(buffers: list[Buffer], alignment: int) -> int:
    """Max over tasks of the aligned bytes live there (no in-place)."""
    pool = [b for b in buffers if not b.pinned]
    times = {b.start for b in pool}
    return max((sum(aligned(b.size, alignment) for b in pool if b.start <= t <= b.end) for t in times), default=0)


def legal_inplace(a: Buffer | None, b: Buffer, alignment: int) -> bool:
    return (
        a is not None
        and a is not b
        and not a.pinned
        and a.end == b.start
        and a.start < b.start
        and aligned(b.size, alignment) <= aligned(a.size, alignment)
    )


def check_inplace(plan: MemoryPlan, buffers: list[Buffer]):
    """In-place pairs are legal and share an offset; each input is taken once; a buffer is left out of
    place only when each of its legal candidates was taken by another buffer."""
    by_name = {b.name: b for b in buffers}
    taken = list(plan.inplace.values())
    assert len(taken) == len(set(taken))
    for out, inp in plan.inplace.items():
        b, a = by_name[out], by_name[inp]
        assert inp in b.inplace_of and not b.pinned
        assert legal_inplace(a, b, plan.alignment)
        assert plan.offsets[out] == plan.offsets[inp]
    for b in buffers:
        if b.pinned or b.name in plan.inplace:
            continue
        for cand in b.inplace_of:
            if legal_inplace(by_name.get(cand), b, plan.alignment):
                assert cand in taken, f"{b.name} could overwrite {cand} in place"


# ---------------------------------------------------------------------------------------------------
# Properties on random interval sets


@st.composite
def buffer_sets(draw, max_buffers=40):
    n = draw(st.integers(0, max_buffers))
    buffers = []
    for i in range(n):
        start = draw(st.integers(0, 30))
        end = start + draw(st.integers(0, 8))
        size = draw(st.one_of(st.integers(0, 2 * KB), st.integers(0, 200 * KB)))
        # in-place candidates among earlier buffers: some legal (dying at `start`), most not
        earlier = [b.name for b in buffers]
        dying = [b.name for b in buffers if b.end == start]
        cands = draw(st.lists(st.sampled_from(dying + earlier), max_size=2, unique=True)) if earlier else []
        pinned = draw(st.integers(0, 9)) == 0
        buffers.append(Buffer(f"b{i}", size, start, end, tuple(cands), pinned))
    return buffers


settings.register_profile("memplan", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@settings(settings.get_profile("memplan"))
@given(buffer_sets(), st.sampled_from([1, 32, 512]))
def test_random_plans_are_valid(buffers, alignment):
    plan = plan_memory(buffers, alignment=alignment)
    verify_plan(plan, buffers)
    pool = [b for b in buffers if not b.pinned]
    assert set(plan.offsets) == {b.name for b in pool}
    assert set(plan.pinned) == {b.name for b in buffers if b.pinned}
    assert plan.no_reuse_total == sum(aligned(b.size, alignment) for b in pool)
    assert plan.lower_bound <= plan.peak <= plan.no_reuse_total
    assert plan.lower_bound <= brute_lower_bound(buffers, alignment)
    assert plan.heuristic in HEURISTICS and plan.peak == min(plan.candidates.values())
    assert all(o % alignment == 0 for o in plan.offsets.values())
    check_inplace(plan, buffers)


@settings(settings.get_profile("memplan"))
@given(buffer_sets(), st.sampled_from([32, 512]))
def test_every_heuristic_is_valid_without_inplace(buffers, alignment):
    for name in HEURISTICS:
        plan = plan_memory(buffers, alignment=alignment, inplace=False, heuristics=[name])
        verify_plan(plan, buffers)
        assert plan.heuristic == name and plan.inplace == {}
        assert plan.lower_bound == brute_lower_bound(buffers, alignment)
        assert plan.lower_bound <= plan.peak <= plan.no_reuse_total


@settings(settings.get_profile("memplan"))
@given(buffer_sets(), st.sampled_from([1, 512]))
def test_no_reuse_gives_every_buffer_its_own_range(buffers, alignment):
    plan = plan_memory(buffers, alignment=alignment, reuse=False)
    verify_plan(plan, buffers)
    assert plan.peak == plan.no_reuse_total and plan.inplace == {}
    assert plan.heuristic == "no_reuse"
    ranges = sorted((plan.offsets[b.name], aligned(b.size, alignment)) for b in buffers if not b.pinned)
    for (o1, s1), (o2, _) in zip(ranges, ranges[1:]):
        assert o1 + s1 <= o2


@pytest.mark.mutation
@settings(settings.get_profile("memplan"))
@given(buffer_sets(max_buffers=25), st.data())
def test_verify_catches_a_moved_buffer(buffers, data):
    """Moving a buffer onto another that is live at the same time (and not its in-place partner) is
    an overlap verify_plan reports."""
    plan = plan_memory(buffers, alignment=32)
    pool = [b for b in buffers if not b.pinned and b.size]
    pairs = [
        (a, b)
        for a in pool
        for b in pool
        if a is not b
        and a.overlaps(b)
        and plan.inplace.get(a.name) != b.name
        and plan.inplace.get(b.name) != a.name
        and a.name not in plan.inplace
        and a.name not in plan.inplace.values()
    ]
    if not pairs:
        return
    a, b = data.draw(st.sampled_from(pairs))
    moved = dict(plan.offsets, **{a.name: plan.offsets[b.name]})
    bad = MemoryPlan(
        moved,
        max(plan.peak, plan.offsets[b.name] + aligned(a.size, 32)),
        plan.heuristic,
        plan.lower_bound,
        plan.no_reuse_total,
        plan.inplace,
        plan.alignment,
    )
    with pytest.raises(PlanError, match="overlap"):
        verify_plan(bad, buffers)


# ---------------------------------------------------------------------------------------------------
# Hand cases


def chain_tasks(n: int) -> list:
    return [("t0", [], ["x0"])] + [(f"t{i}", [f"x{i - 1}"], [f"x{i}"]) for i in range(1, n)]


def test_chain_reuses_two_slots():
    tasks = chain_tasks(6)
    buffers = intervals_from_schedule(tasks, {f"x{i}": 1000 for i in range(6)})
    assert [(b.start, b.end) for b in buffers] == [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 5)]
    plan = plan_memory(buffers)
    verify_plan(plan, buffers)
    assert plan.peak == plan.lower_bound == 2 * 1024
    assert plan.no_reuse_total == 6 * 1024
    assert len(set(plan.offsets.values())) == 2


def test_chain_in_place_uses_one_slot():
    tasks = chain_tasks(6)
    inplace = {f"x{i}": [f"x{i - 1}"] for i in range(1, 6)}
    buffers = intervals_from_schedule(tasks, {f"x{i}": 1000 for i in range(6)}, inplace=inplace)
    plan = plan_memory(buffers)
    verify_plan(plan, buffers)
    assert plan.inplace == {f"x{i}": f"x{i - 1}" for i in range(1, 6)}
    assert plan.peak == plan.lower_bound == 1024
    assert set(plan.offsets.values()) == {0}
    assert plan_memory(buffers, inplace=False).peak == 2 * 1024


def test_fork_keeps_both_branches():
    # x feeds two branches joined at the end: x stays live until the second branch reads it
    tasks = [("a", [], ["x"]), ("b1", ["x"], ["y"]), ("b2", ["x"], ["z"]), ("join", ["y", "z"], ["w"])]
    buffers = intervals_from_schedule(tasks, {"x": 1000, "y": 1000, "z": 1000, "w": 1000})
    spans = {b.name: (b.start, b.end) for b in buffers}
    assert spans == {"x": (0, 2), "y": (1, 3), "z": (2, 3), "w": (3, 3)}
    plan = plan_memory(buffers)
    verify_plan(plan, buffers)
    assert plan.peak == plan.lower_bound == 3 * 1024
    assert len({plan.offsets[n] for n in "xyz"}) == 3
    assert plan.offsets["w"] == plan.offsets["x"]  # the only slot free at the join


def test_fork_input_is_not_overwritten_in_place():
    # y may overwrite x only if x dies at y's task; x is still read by b2
    tasks = [("a", [], ["x"]), ("b1", ["x"], ["y"]), ("b2", ["x"], ["z"]), ("join", ["y", "z"], ["w"])]
    sizes = {n: 1000 for n in "xyzw"}
    buffers = intervals_from_schedule(tasks, sizes, inplace={"y": ["x"], "z": ["x"], "w": ["y", "z"]})
    plan = plan_memory(buffers)
    verify_plan(plan, buffers)
    assert plan.inplace == {"z": "x", "w": "y"}
    assert plan.peak == 2 * 1024


def test_inplace_rules():
    a = Buffer("a", 1000, 0, 1)
    # larger than its input: not in place
    big = Buffer("big", 2000, 1, 2, ("a",))
    assert plan_memory([a, big]).inplace == {}
    # smaller: in place, same offset, the pair counts once at the hand-over task
    small = Buffer("small", 100, 1, 2, ("a",))
    plan = plan_memory([a, small])
    assert plan.inplace == {"small": "a"} and plan.peak == plan.lower_bound == 1024
    # input pinned (a graph input): not in place
    assert plan_memory([Buffer("a", 1000, 0, 1, pinned=True), small]).inplace == {}
    # input read after the output's task: not in place
    assert plan_memory([Buffer("a", 1000, 0, 2), small]).inplace == {}
    # two outputs want the same dead input: the first one gets it
    other = Buffer("other", 100, 1, 3, ("a",))
    plan = plan_memory([a, small, other])
    assert list(plan.inplace.values()) == ["a"]
    verify_plan(plan, [a, small, other])
    # unknown candidates are ignored; reuse=False turns in-place off
    assert plan_memory([a, Buffer("s", 10, 1, 1, ("nope", "a"))]).inplace == {"s": "a"}
    assert plan_memory([a, small], reuse=False).inplace == {}


def test_pinned_buffers_are_not_planned():
    buffers = [Buffer("in", 4096, 0, 3, pinned=True), Buffer("t", 4096, 0, 1), Buffer("out", 4096, 1, 3, pinned=True)]
    plan = plan_memory(buffers)
    assert plan.offsets == {"t": 0} and plan.pinned == ("in", "out")
    assert plan.peak == plan.no_reuse_total == plan.lower_bound == 4096


def test_zero_size_and_empty():
    plan = plan_memory([])
    assert (plan.peak, plan.lower_bound, plan.no_reuse_total, plan.offsets) == (0, 0, 0, {})
    buffers = [Buffer("z", 0, 0, 5), Buffer("x", 10, 0, 5)]
    plan = plan_memory(buffers)
    verify_plan(plan, buffers)
    assert plan.peak == 512 and plan.offsets["z"] == 0


def test_alignment():
    buffers = [Buffer("a", 1, 0, 1), Buffer("b", 513, 0, 1), Buffer("c", 512, 1, 2)]
    plan = plan_memory(buffers)
    verify_plan(plan, buffers)
    assert plan.no_reuse_total == 512 + 1024 + 512
    assert plan.peak == plan.lower_bound == 512 + 1024 + 512  # all three live at task 1
    assert plan_memory(buffers, alignment=1).peak == 1 + 513 + 512
    with pytest.raises(ValueError, match="alignment"):
        plan_memory(buffers, alignment=0)


def test_best_fit_picks_the_tightest_gap():
    # sizes in 512-byte units. By decreasing size: a at 0, b above a, e above both (peak 10).
    # d (3, tasks 3..4) only meets b [4, 7): first fit takes [0, 3) of the 4-unit gap below b, best
    # fit the exact 3-unit gap [7, 10) under the peak, which leaves [0, 4) to c (2, tasks 2..3).
    u = 512
    buffers = [
        Buffer("a", 4 * u, 1, 1),
        Buffer("b", 3 * u, 1, 3),
        Buffer("c", 2 * u, 2, 3),
        Buffer("d", 3 * u, 3, 4),
        Buffer("e", 3 * u, 1, 2),
    ]
    best = plan_memory(buffers, heuristics=["size_best_fit"])
    first = plan_memory(buffers, heuristics=["size_first_fit"])
    verify_plan(best, buffers)
    verify_plan(first, buffers)
    assert {k: v // u for k, v in best.offsets.items()} == {"a": 0, "b": 4, "c": 0, "d": 7, "e": 7}
    assert {k: v // u for k, v in first.offsets.items()} == {"a": 0, "b": 4, "c": 10, "d": 0, "e": 7}
    assert (best.peak // u, first.peak // u, best.lower_bound // u) == (10, 12, 10)
    assert plan_memory(buffers).peak == 10 * u


def test_errors():
    with pytest.raises(ValueError, match="ends before it starts"):
        Buffer("a", 1, 3, 2)
    with pytest.raises(ValueError, match="non-negative"):
        Buffer("a", -1, 0, 0)
    with pytest.raises(ValueError, match="two buffers"):
        plan_memory([Buffer("a", 1, 0, 0), Buffer("a", 1, 1, 1)])
    with pytest.raises(ValueError, match="unknown heuristic"):
        plan_memory([Buffer("a", 1, 0, 0)], heuristics=["magic"])
    buffers = [Buffer("a", 1000, 0, 1), Buffer("b", 1000, 1, 2)]
    plan = plan_memory(buffers)
    with pytest.raises(PlanError, match="no offset"):
        verify_plan(MemoryPlan({"a": 0}, plan.peak, "x", 0, 0, {}), buffers)
    with pytest.raises(PlanError, match="not a non-negative multiple"):
        verify_plan(MemoryPlan({"a": 0, "b": 1000}, 4096, "x", 0, 0, {}), buffers)
    with pytest.raises(PlanError, match="overlap"):
        verify_plan(MemoryPlan({"a": 0, "b": 512}, 4096, "x", 0, 0, {}), buffers)
    with pytest.raises(PlanError, match="not in its inplace_of"):
        verify_plan(MemoryPlan({"a": 0, "b": 0}, 4096, "x", 0, 0, {"b": "a"}), buffers)
    with pytest.raises(PlanError, match="past the pool"):
        verify_plan(MemoryPlan({"a": 0, "b": 1024}, 1024, "x", 0, 0, {}), buffers)


def test_intervals_from_schedule():
    tasks = [
        ("t0", ["in"], ["a"]),
        ("t1", ["a", "w"], ["b", "dead"]),
        ("t2", ["b"], ["c"]),
        ("t3", ["c", "in"], ["out"]),
    ]
    sizes = {"in": 8, "a": 16, "b": 16, "dead": 4, "c": 16, "out": 8}
    buffers = intervals_from_schedule(tasks, sizes, keep_alive={"b"}, pinned={"out"}, inplace={"c": ["b"]})
    got = {b.name: (b.start, b.end, b.pinned, b.inplace_of) for b in buffers}
    assert got == {
        "in": (0, 3, True, ()),  # read-only with a size: a pinned input; "w" has no size: skipped
        "a": (0, 1, False, ()),
        "b": (1, 3, False, ()),  # kept alive to the last task
        "dead": (1, 1, False, ()),  # never read: live at its own task
        "c": (2, 3, False, ("b",)),
        "out": (3, 3, True, ()),
    }
    with pytest.raises(ValueError, match="has no size"):
        intervals_from_schedule([("t", [], ["x"])], {})
    with pytest.raises(ValueError, match="read by task 't0' before task 't1' writes it"):
        intervals_from_schedule([("t0", ["x"], []), ("t1", [], ["x"])], {"x": 1})


def test_thousand_random_buffers_plan_near_the_lower_bound():
    """(Planning time at scale is bench.scaling's: a wall-clock limit would flake on a shared machine.)"""
    rng = random.Random(0)
    buffers = []
    for i in range(1000):
        start = rng.randrange(1000)
        end = start + int(rng.expovariate(1 / 4)) + (rng.randint(0, 300) if rng.random() < 0.05 else 0)
        buffers.append(Buffer(f"b{i}", rng.randint(1, 4 << 20), start, end, (f"b{i - 1}",)))
    plan = plan_memory(buffers)
    verify_plan(plan, buffers)
    print(f"\n1000 random buffers: {plan.summary()}")
    assert plan.peak <= 1.1 * plan.lower_bound


# ---------------------------------------------------------------------------------------------------
# Real models: the top-level op sequence of the imported func


def model_buffers(module, inplace_hints: bool) -> list[Buffer]:
    """One buffer per result of each non-constant op, live in program order; graph inputs and
    outputs pinned, constants (weights) excluded. With `inplace_hints`, elementwise ops may overwrite
    a non-constant operand of their result's type."""
    from xdsl.dialects import func

    from ge.ge_dialects.ge.constant import ConstantOp
    from ge.ge_dialects.ge.elementwise import BinaryElementwiseOp, UnaryElementwiseOp
    from ge.ge_dialects.ge.types import numpy_dtype, shape_of

    f = next(op for op in module.walk() if isinstance(op, func.FuncOp))
    names: dict = {}

    def name(v):
        return names.setdefault(v, f"%{len(names)}")

    def nbytes(t):
        return math.prod(shape_of(t)) * numpy_dtype(t.element_type).itemsize

    sizes, tasks, pinned, inplace = {}, [], set(), {}
    for arg in f.body.block.args:
        sizes[name(arg)] = nbytes(arg.type)
        pinned.add(name(arg))
    for op in f.body.block.ops:
        if isinstance(op, ConstantOp):
            continue
        reads = [name(v) for v in op.operands if not isinstance(v.owner, ConstantOp)]
        writes = [name(r) for r in op.results]
        for r in op.results:
            sizes[name(r)] = nbytes(r.type)
        if isinstance(op, func.ReturnOp):
            pinned.update(reads)
        elif inplace_hints and isinstance(op, (UnaryElementwiseOp, BinaryElementwiseOp)):
            res = op.results[0].type
            inplace[writes[0]] = tuple(
                name(v) for v in op.operands if not isinstance(v.owner, ConstantOp) and v.type == res
            )
        tasks.append((op.name, reads, writes))
    return intervals_from_schedule(tasks, sizes, pinned=pinned, inplace=inplace)


@pytest.mark.parametrize("inplace_hints", [False, True], ids=["no-inplace", "inplace"])
@pytest.mark.parametrize("model", ["resnet50", "bert_base"])
def test_real_model_peak_near_lower_bound(references, model, inplace_hints):
    """Full size: how close the plan comes to its bound depends on the real buffer sizes."""
    buffers = model_buffers(references.module(model, "full"), inplace_hints)
    plan = plan_memory(buffers)
    verify_plan(plan, buffers)
    check_inplace(plan, buffers)
    pool = sum(not b.pinned for b in buffers)
    cands = ", ".join(f"{k} {v}" for k, v in plan.candidates.items())
    print(
        f"\n{model} ({'in-place hints' if inplace_hints else 'no in-place'}): {pool} buffers, peak {plan.peak} B "
        f"({plan.peak / 2**20:.2f} MiB, {plan.heuristic}), lower bound {plan.lower_bound} B, no reuse "
        f"{plan.no_reuse_total} B ({plan.no_reuse_total / 2**20:.1f} MiB), {len(plan.inplace)} in place"
        f"\n  candidates: {cands}"
    )
    assert plan.peak <= 1.05 * plan.lower_bound
    assert plan.peak < plan.no_reuse_total / 10
    if inplace_hints:
        assert plan.inplace
        assert plan.peak <= plan_memory(buffers, inplace=False).peak


def test_gpt2_needs_the_area_heuristic(references):
    """GPT-2's residual stream, overwritten in place layer after layer, is one long chain; placed
    after the MLP's wide temporaries (by size) it ends above them. By area it goes first."""
    buffers = model_buffers(references.module("gpt2", "full", vocab=1000), inplace_hints=True)
    plan = plan_memory(buffers)
    verify_plan(plan, buffers)
    print(f"\ngpt2 (2 layers, in-place hints): {plan.summary()}\n  candidates: {plan.candidates}")
    assert plan.heuristic == "area_best_fit"
    assert plan.peak == plan.lower_bound < plan.candidates["size_best_fit"]


# ---------------------------------------------------------------------------------------------------
# Pairs kept apart (lowering/streams/reuse_tradeoff.py gives up reuses this way)


@settings(settings.get_profile("memplan"))
@given(buffer_sets(max_buffers=25), st.data(), st.sampled_from([32, 512]))
def test_kept_apart_pairs_never_share_bytes(buffers, data, alignment):
    pool = [b.name for b in buffers if not b.pinned and b.size]
    pairs = (
        data.draw(
            st.lists(st.tuples(st.sampled_from(pool), st.sampled_from(pool)).filter(lambda p: p[0] != p[1]), max_size=8)
        )
        if len(pool) >= 2
        else []
    )
    plan = plan_memory(buffers, alignment=alignment, keep_apart=pairs)
    verify_plan(plan, buffers)
    by_name = {b.name: b for b in buffers}
    for x, y in pairs:
        ox, oy = plan.offsets[x], plan.offsets[y]
        assert ox + by_name[x].size <= oy or oy + by_name[y].size <= ox, (x, y)
        assert plan.inplace.get(x) != y and plan.inplace.get(y) != x
    assert plan.lower_bound <= plan.peak <= plan.no_reuse_total


def test_keeping_a_chain_pair_apart_costs_a_slot():
    tasks = chain_tasks(6)
    buffers = intervals_from_schedule(tasks, {f"x{i}": 1000 for i in range(6)})
    assert plan_memory(buffers).peak == 2 * 1024
    plan = plan_memory(buffers, keep_apart=[("x0", "x2"), ("x0", "x4"), ("x2", "x4")])
    verify_plan(plan, buffers)
    assert len({plan.offsets[n] for n in ("x0", "x2", "x4")}) == 3 and plan.peak == 3 * 1024
    assert plan.keep_apart == (("x0", "x2"), ("x0", "x4"), ("x2", "x4"))


def test_a_pair_kept_apart_is_not_written_in_place_not_even_down_a_chain():
    tasks = chain_tasks(4)
    inplace = {f"x{i}": [f"x{i - 1}"] for i in range(1, 4)}
    buffers = intervals_from_schedule(tasks, {f"x{i}": 1000 for i in range(4)}, inplace=inplace)
    plan = plan_memory(buffers, keep_apart=[("x0", "x2")])
    verify_plan(plan, buffers)
    assert plan.inplace.get("x2") != "x1" and plan.offsets["x0"] != plan.offsets["x2"]


@pytest.mark.mutation
def test_verify_catches_a_kept_apart_pair_moved_together():
    buffers = intervals_from_schedule(chain_tasks(3), {f"x{i}": 1000 for i in range(3)})
    plan = plan_memory(buffers, keep_apart=[("x0", "x2")])
    assert plan.peak == 3 * 1024
    moved = MemoryPlan(
        {**plan.offsets, "x2": plan.offsets["x0"]},
        plan.peak,
        plan.heuristic,
        plan.lower_bound,
        plan.no_reuse_total,
        plan.inplace,
        plan.alignment,
        plan.pinned,
        plan.candidates,
        plan.keep_apart,
    )
    with pytest.raises(PlanError, match="'x0' .* and 'x2' .* are kept apart but share bytes"):
        verify_plan(moved, buffers)


def test_keep_apart_errors():
    buffers = intervals_from_schedule(chain_tasks(3), {f"x{i}": 1000 for i in range(3)})
    with pytest.raises(ValueError, match="keep_apart names 'nope', which is not a buffer of the pool"):
        plan_memory(buffers, keep_apart=[("x0", "nope")])
    with pytest.raises(ValueError, match="keep_apart pairs 'x0' with itself"):
        plan_memory(buffers, keep_apart=[("x0", "x0")])
