"""A dynamic BERT against its gears and the static graph: kernels, modeled time and runtime memory.

    python -m bench.dynamic [--target ascend910b] [--layers 12] [--shapes 1x128,2x64,4x32]

BERT-base is built three ways: exported at 1x128 (static), exported with batch and seq as
dim_params and compiled as gears (`dynamic_dims`, one static graph per shape, sunk whole), and the
same export compiled once on symbolic shapes (`dim_ranges`, fold-symbolic-shapes) and bound to each
shape when it runs (`bind-dims`): the host infers every kernel's shapes and tiling and launches
it (`lower-to-streams{mode=dynamic}`, GE's dynamic-shape execution). All at O3, timing only.

The first table splits the dynamic graph's extra time at the first shape into its causes, by
simulating the same programs with one cost turned on at a time:

- kernels: the dynamic graph's own kernels, sunk whole (its fusion and formats against the static
  graph's);
- host launches: one launch per kernel instead of one model-execute;
- host shape work: shape inference and tiling per kernel before its launch;
- device-to-host reads: conditions and trip counts read back (none: BERT has no control flow).

The second table re-times the dynamic program with each host ASSUMPTION of the target file
(`[host] launch_s`, `shape_infer_s`, `tiling_s`) at half and double. The third gives, per shape,
the runtime pool the bound graph plans (peak of the memory plan) against its lower bound (the
largest set of buffers live at once), and the worst case planned ahead at the ranges' maxima.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, replace

from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, ModuleOp, StringAttr

from ge.device import simulate
from ge.frontend import models
from ge.frontend.onnx_importer import import_model
from ge.ge_dialects.ge.weights import attach_weights, clone_with_weights
from ge.interpreter.stream_executor import sim_tasks, stream_function
from ge.interpreter.stream_program import MEMORY_ATTR
from ge.passes.fusion.census import census
from ge.passes.ge_optimize import GeOptimizePass
from ge.passes.pipeline import apply_all, parse_passes
from ge.target import Target, load_target
from ge.tools.common import make_context

RANGES = "batch=1:64,seq=1:512"
WORST = {"batch": 8, "seq": 512}
"""The worst case planned ahead (within RANGES; BERT-base at 64x512 plans too, slowly)."""
LOWER = "lower-to-tasks,plan-memory,lower-to-streams{{mode={mode}}}"
HOST_ASSUMPTIONS = ("launch_s", "shape_infer_s", "tiling_s")


@dataclass
class Lowered:
    kernels: int
    tasks: list
    pool: int
    lower_bound: int


def _bert(batch, seq, layers: int):
    return models.bert_base(batch=batch, seq=seq, layers=layers)


def _lower(module: ModuleOp, mode: str) -> Lowered:
    kernels = census(module).kernels
    apply_all(make_context(), module, parse_passes(LOWER.format(mode=mode)))
    memory = module.attributes[MEMORY_ATTR]
    assert isinstance(memory, DictionaryAttr)
    pool, bound = memory.data["pool"], memory.data["lower_bound"]
    assert isinstance(pool, IntegerAttr) and isinstance(bound, IntegerAttr)
    return Lowered(kernels, sim_tasks(stream_function(module)), pool.value.data, bound.value.data)


def _optimized(model, **options) -> ModuleOp:
    module, weights = import_model(model)
    attach_weights(module, weights)
    GeOptimizePass(level=3, **options).apply(make_context(), module)
    return module


def _gear(module: ModuleOp, index: int) -> ModuleOp:
    """Gear `index` of a geared module, alone as `@main`."""
    gear = next(f for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name.data == f"main.gear{index}")
    alone = ModuleOp([gear.clone()])
    only = alone.ops.first
    assert isinstance(only, func.FuncOp)
    only.sym_name = StringAttr("main")
    return alone


def _with_host(spec: Target, **factors: float) -> Target:
    host = spec.host
    return replace(spec, host=replace(host, **{k: getattr(host, k) * f for k, f in factors.items()}))


def _bound(dynamic: ModuleOp, sizes: dict[str, int]) -> Lowered:
    """The dynamic module bound to `sizes` as the host binds it at run time (its shape ops then
    computed on the host: folded), lowered for dynamic execution."""
    module = clone_with_weights(dynamic)
    text = ",".join(f"{n}={v}" for n, v in sizes.items())
    apply_all(make_context(), module, parse_passes(f'bind-dims{{sizes="{text}"}}'))
    return _lower(module, "dynamic")


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:,.0f}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--target", default="ascend910b")
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--shapes", default="1x128,2x64,4x32")
    args = parser.parse_args(argv)
    spec = load_target(args.target)
    shapes = [tuple(int(x) for x in s.split("x")) for s in args.shapes.split(",")]
    batch, seq = shapes[0]

    started = time.perf_counter()
    static = _lower(_optimized(_bert(batch, seq, args.layers)), "graph")
    gears_text = ";".join(f"batch={b},seq={s}" for b, s in shapes)
    geared = _optimized(_bert("batch", "seq", args.layers), dynamic_dims=gears_text)
    gear = _lower(_gear(geared, 0), "graph")
    dynamic = _optimized(_bert("batch", "seq", args.layers), dim_ranges=RANGES)
    dynamic_kernels = census(dynamic).kernels
    bound = {s: _bound(dynamic, {"batch": s[0], "seq": s[1]}) for s in shapes}
    first = bound[shapes[0]]

    def latency(tasks, mode: str, target: Target = spec) -> float:
        return simulate(tasks, target, mode).latency

    s_graph, g_graph = latency(static.tasks, "graph"), latency(gear.tasks, "graph")
    d_graph, d_op, d_dyn = (latency(first.tasks, m) for m in ("graph", "op", "dynamic"))
    print(f"BERT-base ({args.layers} layers) at {batch}x{seq} on {spec.name}, O3, timing only")
    print()
    print("| graph | kernels | launches | latency us | vs static |")
    print("|---|---|---|---|---|")
    print(f"| static (exported at {batch}x{seq}), graph sink | {static.kernels} | 1 | {_us(s_graph)} | 1.00x |")
    print(
        f"| gear {batch}x{seq} of {len(shapes)}, graph sink | {gear.kernels} | 1 | {_us(g_graph)} | "
        f"{g_graph / s_graph:.2f}x |"
    )
    print(
        f"| dynamic (O3 on symbols: {dynamic_kernels} kernels; bound, the shape ops on the host) | {first.kernels} | "
        f"{len(first.tasks)} | {_us(d_dyn)} | {d_dyn / s_graph:.2f}x |"
    )
    print()
    print("dynamic - static, by cause (each re-simulated with one more cost on):")
    print()
    print("| cause | us |")
    print("|---|---|")
    print(f"| the dynamic graph's own kernels (both sunk) | {_us(d_graph - s_graph)} |")
    print(f"| host launches, one per kernel ({_us(spec.host.launch_s)} us each) | {_us(d_op - d_graph)} |")
    per = spec.host.shape_infer_s + spec.host.tiling_s
    print(f"| host shape inference + tiling ({_us(per)} us per kernel) | {_us(d_dyn - d_op)} |")
    print("| device-to-host reads (no control flow) | 0 |")
    print(f"| total | {_us(d_dyn - s_graph)} |")
    print()
    print("dynamic latency (us) with each host ASSUMPTION at half, as given, double:")
    print()
    print("| assumption | x0.5 | x1 | x2 |")
    print("|---|---|---|---|")
    for key in HOST_ASSUMPTIONS:
        cells = [_us(latency(first.tasks, "dynamic", _with_host(spec, **{key: f}))) for f in (0.5, 1.0, 2.0)]
        print(f"| {key} = {getattr(spec.host, key) * 1e6:g} us | {' | '.join(cells)} |")
    print()
    worst = _bound(dynamic, WORST)
    print("runtime memory pool of the bound graph (bytes):")
    print()
    print("| shape | pool | lower bound | pool / bound | static plan of the gear |")
    print("|---|---|---|---|---|")
    for index, (b, s) in enumerate(shapes):
        own = bound[(b, s)]
        gear_pool = (gear if index == 0 else _lower(_gear(geared, index), "graph")).pool
        print(f"| {b}x{s} | {own.pool:,} | {own.lower_bound:,} | {own.pool / own.lower_bound:.3f} | {gear_pool:,} |")
    shown = "x".join(str(v) for v in WORST.values())
    print(
        f"| worst case {shown} (planned ahead) | {worst.pool:,} | {worst.lower_bound:,} | "
        f"{worst.pool / worst.lower_bound:.3f} | |"
    )
    print()
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
