"""Compile time stays linear, pass by pass: two sizes of one module, the same pass, a ratio.

Like test_scaling_ratio.py (4x the ops must cost well under 16x the time, what quadratic work
gives), for passes whose cost on a deep model used to grow with the square of the block's length.
Each module is built directly in the ge dialect; only the pass is timed, median of three runs.
See docs/lowering.md, "Compile time at scale", for the ratios of the code before.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr, f32
from xdsl.ir import Block, Region

from ge.ge_dialects import ge
from ge.ge_dialects.ge.layout import TransDataOp, with_storage
from ge.ge_dialects.ge.types import tensor
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
    start = time.perf_counter()
    apply_all(make_context(), module, passes)
    return time.perf_counter() - start


def ratio(build: Callable[[int], ModuleOp], small: int, pipeline: str) -> float:
    pass_seconds(build, 50, pipeline)  # imports and first-call costs out of the way
    t_small = statistics.median(pass_seconds(build, small, pipeline) for _ in range(3))
    t_large = statistics.median(pass_seconds(build, 4 * small, pipeline) for _ in range(3))
    print(f"\n{pipeline}: {small} -> {4 * small}: {t_small:.3f} s -> {t_large:.3f} s, {t_large / t_small:.1f}x")
    return t_large / t_small


def test_merge_trans_data_is_linear_in_the_block():
    r = ratio(twin_conversions, 1_000, "merge-trans-data")
    assert r < BOUND, f"merge-trans-data: 4x the pairs took {r:.1f}x the time (bound {BOUND}x)"
