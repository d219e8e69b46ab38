"""Compile time stays linear: the fusion engine and the lowering on a Relu chain, 5k against 20k ops.

A ratio of two sizes in the same process, not a wall-clock limit: 4x the ops must cost well under
16x the time (what quadratic work would give). Each stage is timed on a module built directly in
the ge dialect (no ONNX import), median of two runs. A fusion schedule rebuilt after every group,
or reuse edges between all pairs of a byte's occupants, put the ratio above the bound (see
docs/lowering.md, "Compile time at scale").
"""

from __future__ import annotations

import statistics
import time

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, f32
from xdsl.ir import Block, Region

from ge.ge_dialects import ge
from ge.ge_dialects.ge.types import tensor
from ge.passes.pipeline import apply_all, parse_passes
from ge.tools.common import make_context

SMALL, LARGE = 5_000, 20_000
BOUND = 8.0
"""Linear work gives ~4x; quadratic work 16x."""
STAGES = ("fuse-ops", "lower-to-tasks,plan-memory,lower-to-streams{streams=2}")


def relu_chain(length: int) -> ModuleOp:
    t = tensor(f32, (1, 64))
    block = Block(arg_types=[t])
    value = block.args[0]
    for _ in range(length):
        op = ge.ReluOp.create(operands=[value], result_types=[t])
        block.add_op(op)
        value = op.results[0]
    block.add_op(func.ReturnOp(value))
    fn = func.FuncOp("main", ([t], [t]), Region(block))
    return ModuleOp([fn])


def seconds(length: int) -> float:
    module = relu_chain(length)
    start = time.perf_counter()
    for stage in STAGES:
        apply_all(make_context(), module, parse_passes(stage))
    return time.perf_counter() - start


def test_four_times_the_ops_cost_well_under_sixteen_times_the_time():
    seconds(200)  # imports and first-call costs out of the way
    small = statistics.median(seconds(SMALL) for _ in range(2))
    large = statistics.median(seconds(LARGE) for _ in range(2))
    ratio = large / small
    print(f"\n{SMALL} ops {small:.2f} s, {LARGE} ops {large:.2f} s: {ratio:.1f}x")
    assert ratio < BOUND, f"{LARGE} ops took {ratio:.1f}x the time of {SMALL} (bound {BOUND}x)"
