"""Compile time stays linear, pass by pass: two sizes of one module, the same pass, a ratio.

Like test_scaling_ratio.py (4x the ops must cost well under 16x the time, what quadratic work
gives), for passes whose direct implementation grows with the square of the block's length on a
deep model.
Each module is built directly in the ge dialect; only the pass is timed, the fastest of three runs
(the least disturbed by a busy machine).
Event planning's reachability is measured in memory (traced peak), which does not depend on load.
See docs/lowering.md, "Compile time at scale", for the ratios of the code before.
"""

from __future__ import annotations

import gc
import random
import time
import tracemalloc
from collections.abc import Callable

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr, f32
from xdsl.ir import Block, Region

from ge.ge_dialects import ge
from ge.ge_dialects.ge.layout import TransDataOp, with_storage
from ge.ge_dialects.ge.types import tensor
from ge.lowering.streams import Dag, assign_safe_event_ids, insert_events, unenforced_edges
from ge.passes.pipeline import apply_all, parse_passes
from ge.tools.common import make_context

BOUND = 8.0
"""Linear work gives ~4x; quadratic work 16x."""


def twin_conversions(pairs: int) -> ModuleOp:
    """`pairs` values, each converted to FRACTAL_NZ twice (merge-trans-data merges every pair), one block."""
    t = tensor(f32, (32, 64))
    nz = with_storage(t, "FRACTAL_NZ")
    block = Block(arg_types=[t] * pairs)
    results = []
    for x in block.args:
        for unary in (ge.SigmoidOp, ge.ReluOp):
            props = {"src_format": StringAttr("ND"), "dst_format": StringAttr("FRACTAL_NZ")}
            convert = TransDataOp.create(operands=[x], result_types=[nz], properties=props)
            use = unary.create(operands=[convert.results[0]], result_types=[nz])
            block.add_ops([convert, use])
            results.append(use.results[0])
    block.add_op(func.ReturnOp(*results))
    return ModuleOp([func.FuncOp("main", ([t] * pairs, [nz] * len(results)), Region(block))])


def pass_seconds(build: Callable[[int], ModuleOp], size: int, pipeline: str) -> float:
    module = build(size)
    passes = parse_passes(pipeline)
    gc.collect()  # the garbage of the last run is not this one's
    start = time.perf_counter()
    apply_all(make_context(), module, passes)
    return time.perf_counter() - start


def ratio(build: Callable[[int], ModuleOp], small: int, pipeline: str) -> float:
    pass_seconds(build, 50, pipeline)  # imports and first-call costs out of the way
    t_small = min(pass_seconds(build, small, pipeline) for _ in range(3))
    t_large = min(pass_seconds(build, 4 * small, pipeline) for _ in range(3))
    print(f"\n{pipeline}: {small} -> {4 * small}: {t_small:.3f} s -> {t_large:.3f} s, {t_large / t_small:.1f}x")
    return t_large / t_small


def test_merge_trans_data_is_linear_in_the_block():
    r = ratio(twin_conversions, 1_500, "merge-trans-data")
    assert r < BOUND, f"merge-trans-data: 4x the pairs took {r:.1f}x the time (bound {BOUND}x)"


def _two_stream_ladder(n: int) -> tuple[Dag, list[int]]:
    """n tasks on two streams (three by three): edges to the next two tasks and, every third task,
    one up to 40 ahead; a third of the tasks wait for the other stream."""
    rng = random.Random(0)
    edges = [(i, i + 1) for i in range(n - 1)] + [(i, i + 2) for i in range(n - 2)]
    edges += [(i, i + rng.randint(3, 40)) for i in range(0, n - 41, 3)]
    return Dag(n, edges), [(i // 3) % 2 for i in range(n)]


def _event_planning_peak_bytes(n: int) -> int:
    """Peak memory of what lower-to-streams asks of reachability: events, event ids, the check."""
    dag, streams = _two_stream_ladder(n)
    tracemalloc.start()
    try:
        events = insert_events(dag, streams)
        assign_safe_event_ids(events, streams)
        assert unenforced_edges(dag, streams, events) == []
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_event_planning_memory_is_linear_in_the_tasks():
    """Reachability bitsets took n^2 bits (16x the memory for 4x the tasks); per-stream labels n x streams."""
    small, large = _event_planning_peak_bytes(5_000), _event_planning_peak_bytes(20_000)
    r = large / small
    print(
        f"\nevent planning peak memory: 5000 -> 20000 tasks: {small / 2**20:.1f} -> {large / 2**20:.1f} MiB, {r:.1f}x"
    )
    assert r < BOUND, f"4x the tasks took {r:.1f}x the memory (bound {BOUND}x)"
