"""Compile time stays linear: two sizes of one module, the same passes, a time ratio, a verdict.

    python -m bench.compile_ratio          # the Relu chain (fusion, lowering) 5k -> 20k ops,
                                           # merge-trans-data 1.5k -> 6k twin conversions,
                                           # fuse-trans-data on a 1k -> 4k matmul-transpose chain,
                                           # fuse-views on a 2k -> 8k matmul-reshape chain,
                                           # assign-formats (whole-graph and greedy) on the Relu chain
                                           # 25k -> 100k and on GPT stacks of 48 -> 192 blocks

4x the ops must cost well under 16x the time (what quadratic work gives): the verdict is "linear"
below 8x. Timing is a benchmark, not a test: on a machine that runs other work (the test suite runs
on every core) a ratio of wall-clock times can flake, so the suite checks only that these modules
build and the passes run; the ratios are read here, on a quiet machine. Each module is built
directly in the ge dialect (no ONNX import); each size's time is the fastest of `--repeat` runs,
with the garbage collector's thresholds the tools set (`tools.common.collect_garbage_less_often`).
"""

from __future__ import annotations

import argparse
import functools
import gc
import time
from collections.abc import Callable

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, StringAttr, f32, i64
from xdsl.ir import Block, Region

from ge.ge_dialects import ge
from ge.ge_dialects.ge.layout import TransDataOp, with_storage
from ge.ge_dialects.ge.types import tensor
from ge.passes.pipeline import apply_all, parse_passes
from ge.tools.common import collect_garbage_less_often, make_context

_PERM = DenseArrayBase.from_list(i64, [1, 0])
BOUND = 8.0
"""Linear work gives ~4x; quadratic work 16x."""


def relu_chain(length: int) -> ModuleOp:
    """`length` Relus in a row on a [1, 64] tensor."""
    t = tensor(f32, (1, 64))
    block = Block(arg_types=[t])
    value = block.args[0]
    for _ in range(length):
        op = ge.ReluOp.create(operands=[value], result_types=[t])
        block.add_op(op)
        value = op.results[0]
    block.add_op(func.ReturnOp(value))
    return ModuleOp([func.FuncOp("main", ([t], [t]), Region(block))])


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


def matmul_transpose_chain(length: int) -> ModuleOp:
    """`length` MatMul -> Transpose links on [32, 32]: assign-formats puts each matmul in FRACTAL_NZ
    and a TransData on each side of each transpose, which fuse-trans-data joins to the kernels."""
    t = tensor(f32, (32, 32))
    block = Block(arg_types=[t, t])
    value, weight = block.args
    for _ in range(length):
        product = ge.MatMulOp.create(operands=[value, weight], result_types=[t])
        flip = ge.TransposeOp.create(operands=[product.results[0]], result_types=[t], properties={"perm": _PERM})
        block.add_ops([product, flip])
        value = flip.results[0]
    block.add_op(func.ReturnOp(value))
    return ModuleOp([func.FuncOp("main", ([t, t], [t]), Region(block))])


def matmul_reshape_chain(length: int) -> ModuleOp:
    """`length` MatMul -> Reshape -> Reshape links on [32, 32] (to [4, 8, 32] and back): each
    reshape is a view, which fuse-views joins to the matmul before or after it."""
    t, split = tensor(f32, (32, 32)), tensor(f32, (4, 8, 32))
    block = Block(arg_types=[t, t])
    value, weight = block.args
    shapes = [ge.ConstantOp.inline(np.asarray(dims, np.int64)) for dims in ((4, 8, 32), (32, 32))]
    block.add_ops(shapes)
    for _ in range(length):
        product = ge.MatMulOp.create(operands=[value, weight], result_types=[t])
        apart = ge.ReshapeOp.create(operands=[product.results[0], shapes[0].results[0]], result_types=[split])
        back = ge.ReshapeOp.create(operands=[apart.results[0], shapes[1].results[0]], result_types=[t])
        block.add_ops([product, apart, back])
        value = back.results[0]
    block.add_op(func.ReturnOp(value))
    return ModuleOp([func.FuncOp("main", ([t, t], [t]), Region(block))])


def gpt_blocks(blocks: int) -> ModuleOp:
    """bench.scaling's GPT stack of `blocks` blocks, imported and through O3's stages before the
    layout (shapes, cleanup, graph fusion: LayerNorm, GELU and attention recognized); a fresh copy
    of one build per size."""
    from ge.ge_dialects.ge.weights import clone_with_weights

    return clone_with_weights(_gpt_before_layout(blocks))


@functools.cache
def _gpt_before_layout(blocks: int) -> ModuleOp:
    from bench.scaling import gpt
    from ge.frontend.onnx_importer import import_model
    from ge.ge_dialects.ge.weights import attach_weights
    from ge.passes.ge_optimize import LevelOptions, cleanup, graph_fusion, shapes, stage_passes

    module, weights = import_model(gpt(blocks))
    attach_weights(module, weights)
    for p in stage_passes((shapes, cleanup, graph_fusion), LevelOptions("must_keep_origin_dtype", None)):
        p.apply(make_context(), module)
    return module


CASES: dict[str, tuple[Callable[[int], ModuleOp], int, tuple[str, ...]]] = {
    "relu chain: fuse-ops, lowering": (
        relu_chain,
        5_000,
        ("fuse-ops", "lower-to-tasks,plan-memory,lower-to-streams{streams=2}"),
    ),
    "twin conversions: merge-trans-data": (twin_conversions, 1_500, ("merge-trans-data",)),
    "matmul-transpose chain: layouts, fuse-ops, fuse-trans-data": (
        matmul_transpose_chain,
        1_000,
        ("assign-formats", "fuse-ops", "fuse-trans-data"),
    ),
    "matmul-reshape chain: fuse-views": (matmul_reshape_chain, 2_000, ("fuse-views",)),
    "relu chain: assign-formats": (relu_chain, 25_000, ("assign-formats",)),
    "relu chain: assign-formats{choice=greedy}": (relu_chain, 25_000, ("assign-formats{choice=greedy}",)),
    "GPT blocks: assign-formats": (gpt_blocks, 48, ("assign-formats",)),
    "GPT blocks: assign-formats{choice=greedy}": (gpt_blocks, 48, ("assign-formats{choice=greedy}",)),
}


def seconds(build: Callable[[int], ModuleOp], size: int, stages: tuple[str, ...]) -> float:
    """The time of `stages` on a fresh `build(size)` (the build and the last run's garbage not counted)."""
    module = build(size)
    passes = [parse_passes(stage) for stage in stages]
    gc.collect()
    start = time.perf_counter()
    for stage in passes:
        apply_all(make_context(), module, stage)
    return time.perf_counter() - start


def measure(name: str, small: int | None = None, repeat: int = 3) -> dict[str, object]:
    build, default, stages = CASES[name]
    small = small or default
    seconds(build, min(small, 50), stages)  # imports and first-call costs out of the way
    t_small = min(seconds(build, small, stages) for _ in range(repeat))
    t_large = min(seconds(build, 4 * small, stages) for _ in range(repeat))
    ratio = t_large / t_small
    return {
        "case": name,
        "sizes": f"{small} -> {4 * small}",
        "small s": t_small,
        "large s": t_large,
        "ratio": ratio,
        "verdict": "linear" if ratio < BOUND else f"NOT LINEAR (bound {BOUND}x)",
    }


def table(rows: list[dict[str, object]]) -> str:
    lines = ["| case | sizes | small s | large s | ratio | verdict |", "|---|---|---|---|---|---|"]
    for r in rows:
        cells = [
            r["case"],
            r["sizes"],
            f"{r['small s']:.3f}",
            f"{r['large s']:.3f}",
            f"{r['ratio']:.1f}x",
            r["verdict"],
        ]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.compile_ratio", description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per size; the fastest counts (default 3)")
    parser.add_argument("--small", type=int, help="the smaller size of every case (default: each case's own)")
    args = parser.parse_args(argv)
    thresholds = gc.get_threshold()
    collect_garbage_less_often()  # as the tools do (and bench.scaling): the collector's pauses are not the passes'
    try:
        rows = [measure(name, args.small, args.repeat) for name in CASES]
    finally:
        gc.set_threshold(*thresholds)  # main may run inside another process (the test suite)
    print(table(rows))
    return 0 if all(r["ratio"] < BOUND for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
