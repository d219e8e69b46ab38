"""Layouts on architectures nobody here tuned for: what TransData costs each model, per target.

    python -m bench.layouts [--models densenet,bert] [--targets ascend910b,ascend910]
                            [--choices whole-graph,greedy] [--adjust-hw-layout]
                            [--precision-mode force_fp16] [--jobs 2]

Every model of the corpus (test/corpus, with weights drawn as bench.corpus draws them) and the four
built-in models (`ge:resnet50`, `ge:mobilenet_v2`, `ge:bert_base`, `ge:gpt2`, at full size) go through
`ge-optimize{level=3, target=T}` and `lower-to-tasks, plan-memory, lower-to-streams{streams=2}`,
and the lowered program is timed on the modeled device (graph sink, timing only), once per
assign-formats choice (`whole-graph`, the default, and `greedy`, op by op), side by side. Per model,
target and choice:

- kernels: the kernels at O3 as bench.optimize counts them (fused groups and the ops outside them),
  TransData apart; TransData: the conversions that stayed kernels of their own;
- share: the TransData kernels' part of the summed task time (a conversion joined to a kernel is
  timed in that kernel, `fuse-trans-data`);
- ort: the nodes onnxruntime keeps at ORT_ENABLE_ALL, and whether kernels + TransData exceed them;
- latency: the modeled end-to-end time.
- share at x0.5 / x2: the share again with the per-task overhead ASSUMPTION
  (`[overheads] task_device_s`) at half and double, for the models above GOAL.

- O3 s: the time ge-optimize took (assign-formats' choice included).

With `--adjust-hw-layout` the graphs take their inputs and give their outputs in NC1HWC0 where a
TransData would convert them (GE's is_input_adjust_hw_layout / is_output_adjust_hw_layout,
`adjust-hw-layout`): what is left is the graph's own.

The totals say how many models spend more than GOAL of their task time in TransData and how many
launch more kernels (TransData counted) than onnxruntime keeps nodes; the comparison, per target,
what the whole-graph choice changes against the greedy one (TransData, summed latency, the median
ratio of O3 times, and the models whose TransData changed).
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import time
from dataclasses import dataclass

import onnx

from bench import corpus, scaled_target
from ge.frontend import models
from ge.ge_dialects.ge.weights import clone_with_weights
from ge.interpreter.stream_executor import simulate_module
from ge.passes.fusion.census import census
from ge.passes.ge_optimize import GeOptimizePass
from ge.passes.pipeline import apply_all, parse_passes
from ge.target import load_target
from ge.tools.common import make_context

GOAL = 0.05
"""The share of task time in TransData a model should stay under."""
TARGETS = ("ascend910b", "ascend910")
CHOICES = ("whole-graph", "greedy")
OVERHEAD = "task_device_s"
"""The per-task device overhead ASSUMPTION (`[overheads]`), re-timed at half and double."""
TRANS_DATA_TASK = "trans_data"
"""The pattern (task type) of a TransData kernel of its own."""
BUILTIN = {
    "ge:resnet50": models.resnet50,
    "ge:mobilenet_v2": models.mobilenet_v2,
    "ge:bert_base": models.bert_base,
    "ge:gpt2": models.gpt2,
}
"""The built-in models (`ge.frontend.models`), named apart from the corpus's models of the same
architecture."""


def model(name: str) -> onnx.ModelProto:
    return BUILTIN[name]() if name in BUILTIN else corpus.load(name)


@dataclass(frozen=True)
class Row:
    model: str
    target: str
    choice: str
    kernels: int
    trans_data: int
    share: float
    ort_nodes: int
    latency_us: float
    compile_s: float
    share_at: tuple[float, float] = (0.0, 0.0)
    """The share with the per-task overhead ASSUMPTION at half and at double."""

    @property
    def over_ort(self) -> bool:
        return self.kernels + self.trans_data > self.ort_nodes


def measure(
    name: str,
    targets: tuple[str, ...],
    choices: tuple[str, ...] = CHOICES,
    adjust_hw_layout: bool = False,
    precision_mode: str = "must_keep_origin_dtype",
) -> list[Row]:
    onnx_model = model(name)
    imported = corpus.imported(onnx_model)
    ort_nodes = corpus.ort_nodes(onnx_model)
    rows = []
    for target in targets:
        for choice in choices:
            module = clone_with_weights(imported)
            start = time.perf_counter()
            GeOptimizePass(
                level=3,
                target=target,
                layout_choice=choice,
                precision_mode=precision_mode,
                adjust_input_hw_layout=adjust_hw_layout,
                adjust_output_hw_layout=adjust_hw_layout,
            ).apply(make_context(), module)
            compile_s = time.perf_counter() - start
            counted = census(module)
            apply_all(make_context(), module, parse_passes(corpus.LOWER))
            spec = load_target(target)
            result = simulate_module(module, spec)
            share_at = tuple(
                _share(simulate_module(module, scaled_target(spec, "overheads", OVERHEAD, f)).tasks) for f in (0.5, 2.0)
            )
            rows.append(
                Row(
                    name,
                    target,
                    choice,
                    counted.kernels,
                    counted.trans_data,
                    _share(result.tasks),
                    ort_nodes,
                    result.latency * 1e6,
                    compile_s,
                    share_at,  # type: ignore[arg-type]  # two floats
                )
            )
    return rows


def _share(tasks) -> float:
    """The TransData kernels' part of the summed task time."""
    total = sum(t.duration for t in tasks)
    return sum(t.duration for t in tasks if t.work.op_type == TRANS_DATA_TASK) / total if total else 0.0


def _measure(args: tuple[str, tuple[str, ...], tuple[str, ...], bool, str]) -> list[Row] | str:
    name, targets, choices, adjust_hw_layout, precision_mode = args
    try:
        return measure(name, targets, choices, adjust_hw_layout, precision_mode)
    except Exception as e:  # a report: one line per model that failed
        return f"{name}: {corpus.one_line(e)}"


def table(rows: list[Row]) -> str:
    lines = [
        "| model | target | choice | kernels O3 | TransData | share of task time | ort nodes | over ort "
        "| latency us | O3 s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        cells = [
            r.model,
            r.target,
            r.choice,
            r.kernels,
            r.trans_data,
            f"{r.share:.1%}",
            r.ort_nodes,
            "yes" if r.over_ort else "",
            f"{r.latency_us:.0f}",
            f"{r.compile_s:.2f}",
        ]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines)


def totals(rows: list[Row], targets: tuple[str, ...], choices: tuple[str, ...] = CHOICES) -> str:
    lines = []
    for target in targets:
        for choice in choices:
            mine = [r for r in rows if r.target == target and r.choice == choice]
            above = sorted((r for r in mine if r.share > GOAL), key=lambda r: -r.share)
            over = [r for r in mine if r.over_ort]
            lines.append(
                f"{target} {choice}: {len(mine)} models, {sum(r.trans_data for r in mine)} TransData, "
                f"{len(above)} above {GOAL:.0%} of task time"
                + (f" ({', '.join(f'{r.model} {r.share:.0%}' for r in above)})" if above else "")
                + f", {len(over)} over onnxruntime's nodes"
                + (f" ({', '.join(r.model for r in over)})" if over else "")
                + f"; summed latency {sum(r.latency_us for r in mine):.0f} us"
            )
            if above:
                lines.append(
                    f"  with [overheads] {OVERHEAD} at half / double: "
                    + ", ".join(f"{r.model} {r.share_at[0]:.1%} / {r.share_at[1]:.1%}" for r in above)
                )
    return "\n".join(lines)


def comparison(rows: list[Row], targets: tuple[str, ...]) -> str:
    """Per target, the whole-graph choice against the greedy one, on the models measured with both."""
    lines = []
    for target in targets:
        pairs = [
            (w, g)
            for w in rows
            if w.target == target and w.choice == "whole-graph"
            for g in rows
            if g.target == target and g.choice == "greedy" and g.model == w.model
        ]
        if not pairs:
            continue
        changed = [f"{w.model} {g.trans_data}->{w.trans_data}" for w, g in pairs if w.trans_data != g.trans_data]
        latency = sum(w.latency_us for w, _ in pairs), sum(g.latency_us for _, g in pairs)
        lines.append(
            f"{target} whole-graph vs greedy: TransData {sum(w.trans_data for w, _ in pairs)} vs "
            f"{sum(g.trans_data for _, g in pairs)}, summed latency {latency[0]:.0f} vs {latency[1]:.0f} us "
            f"({latency[1] / latency[0]:.3f}x), O3 time median ratio "
            f"{statistics.median(w.compile_s / g.compile_s for w, g in pairs):.2f}x"
            + (f"; TransData changed: {', '.join(changed)}" if changed else "")
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.layouts",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--models", default="", help="comma-separated names (default: the corpus and the built-ins)")
    parser.add_argument("--targets", default=",".join(TARGETS))
    parser.add_argument("--choices", default=",".join(CHOICES), help="assign-formats choices, side by side")
    parser.add_argument(
        "--adjust-hw-layout", action="store_true", help="inputs and outputs in NC1HWC0 where they would convert"
    )
    parser.add_argument(
        "--precision-mode",
        default="must_keep_origin_dtype",
        help="ge-optimize's precision mode (default must_keep_origin_dtype: the models' f32)",
    )
    parser.add_argument("--jobs", type=int, default=2, help="models measured at once (default 2)")
    args = parser.parse_args(argv)
    names = args.models.split(",") if args.models else [*BUILTIN, *corpus.names()]
    targets = tuple(args.targets.split(","))
    choices = tuple(args.choices.split(","))
    with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
        jobs = [(n, targets, choices, args.adjust_hw_layout, args.precision_mode) for n in names]
        results = pool.map(_measure, jobs, chunksize=1)
    rows = [r for result in results if isinstance(result, list) for r in result]
    failures = [result for result in results if isinstance(result, str)]
    print(table(rows))
    print(totals(rows, targets, choices))
    print(comparison(rows, targets))
    for failure in failures:
        print(f"failed: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
