"""How compile time grows with the graph: each stage per model size, against onnxruntime's session.

    python -m bench.scaling [--gpt 12,48,192,768] [--chain 100000] [--timeout 600] [--repeat 3]

Models: deep GPT-2 stacks (the same block repeated: hidden 64, 4 heads, sequence 64, vocabulary
512) and a chain of N Relu ops. Each size runs in a fresh process (so one size's memory is not the
next one's), stage after stage on the same module, each stage timed alone:

- import: the ONNX model (in memory) to the ge dialect, with its weights;
- print+parse: the module printed as text and parsed back (what ge-opt reads and writes);
- O3: `ge-optimize{level=3}`;
- lower: `lower-to-tasks, plan-memory, lower-to-streams{streams=2}`;
- run: the lowered module on the interpreter (the chain only: the GPT stacks are timed to lowering);
- ort: onnxruntime InferenceSession creation on the same model (ORT_ENABLE_ALL, one intra-op thread).

Each size runs `--repeat` times, in rounds (every size once, then again), and each stage shows the
median of its runs: on a shared machine one slow moment moves a single run of a small size by 2x,
and the GPT ratio and exponent rest on the smallest size. A size that exceeds `--timeout` seconds in
all is stopped; its row shows the stages its runs finished and "stopped" for the rest. "peak RSS" is
the largest run's high-water mark after its last stage. The "exponent" line fits O3 time = c * ops^k
over the GPT sizes that finished (least squares in log-log): k = 1 is linear. Threads: every stage
is single-threaded Python; numpy's BLAS (the run stage) and ORT are held to one thread. Each size's
process sets the garbage collector's thresholds as the tools do
(`tools.common.collect_garbage_less_often`).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # before numpy loads: one BLAS thread, as ORT gets

import onnx  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

STAGES = ("import", "print+parse", "O3", "lower", "run", "ort")
LOWER = "lower-to-tasks,plan-memory,lower-to-streams{streams=2}"


def gpt(blocks: int) -> onnx.ModelProto:
    from ge.frontend import models

    return models.gpt2(batch=1, seq=64, layers=blocks, hidden=64, heads=4, vocab=512)


def relu_chain(length: int) -> onnx.ModelProto:
    names = ["x", *(f"r{i}" for i in range(length))]
    nodes = [helper.make_node("Relu", [a], [b], name=f"/relu{i}") for i, (a, b) in enumerate(zip(names, names[1:]))]
    graph = helper.make_graph(
        nodes,
        "chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info(names[-1], TensorProto.FLOAT, [1, 64])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


BUILDERS: dict[str, Callable[[int], onnx.ModelProto]] = {"gpt": gpt, "chain": relu_chain}


def _emit(stage: str, seconds: float, **extra) -> None:
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"stage": stage, "seconds": seconds, "peak_mib": peak_mib, **extra}), flush=True)


def run_case(kind: str, size: int) -> None:
    """The child process: every stage of one model size, one JSON line per finished stage."""
    from ge.frontend.models import random_inputs
    from ge.frontend.onnx_importer import import_model
    from ge.ge_dialects.ge.weights import attach_weights
    from ge.interpreter.runner import run
    from ge.passes.pipeline import apply_all, parse_passes
    from ge.tools.common import collect_garbage_less_often, make_context, parse_module, print_module

    collect_garbage_less_often()  # as the tools do
    model = BUILDERS[kind](size)
    _emit("nodes", 0.0, nodes=len(model.graph.node))
    start = time.perf_counter()
    module, weights = import_model(model)
    attach_weights(module, weights)
    _emit("import", time.perf_counter() - start)
    start = time.perf_counter()
    module = parse_module(print_module(module), "<scaling>")
    attach_weights(module, weights)
    _emit("print+parse", time.perf_counter() - start)
    for stage, pipeline in (("O3", "ge-optimize{level=3}"), ("lower", LOWER)):
        start = time.perf_counter()
        apply_all(make_context(), module, parse_passes(pipeline))
        _emit(stage, time.perf_counter() - start)
    if kind == "chain":
        inputs = random_inputs(model, seed=0)
        start = time.perf_counter()
        run(module, inputs, weights)
        _emit("run", time.perf_counter() - start)
    _emit("ort", _ort_session_seconds(model))


def _ort_session_seconds(model: onnx.ModelProto) -> float:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = 1
    data = model.SerializeToString()
    start = time.perf_counter()
    ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    return time.perf_counter() - start


def measure(kind: str, size: int, timeout: float) -> dict[str, object]:
    """Runs one case in a fresh process; the stages it finished within `timeout`."""
    cmd = [sys.executable, "-m", "bench.scaling", "--case", f"{kind}:{size}"]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        out, stopped = done.stdout, done.returncode != 0
        if stopped:
            print(f"{kind}:{size} failed: {done.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else e.stdout or ""
        stopped = True
    row: dict[str, object] = {"model": f"{kind} {size}", "stopped": stopped}
    for line in out.splitlines():
        record = json.loads(line)
        if record["stage"] == "nodes":
            row["nodes"] = record["nodes"]
        else:
            row[record["stage"]] = record["seconds"]
        row["peak_mib"] = record["peak_mib"]
    return row


def median_row(runs: list[dict[str, object]]) -> dict[str, object]:
    """One size's runs as one row: each stage's median over the runs that finished it, the largest
    peak, stopped if any run was."""
    row: dict[str, object] = {"model": runs[0]["model"], "stopped": any(r["stopped"] for r in runs)}
    if "nodes" in runs[0]:
        row["nodes"] = runs[0]["nodes"]
    for stage in STAGES:
        times = [float(r[stage]) for r in runs if stage in r]  # type: ignore[arg-type]
        if times:
            row[stage] = statistics.median(times)
    row["peak_mib"] = max(float(r.get("peak_mib", 0.0)) for r in runs)  # type: ignore[arg-type]
    row["runs"] = len(runs)
    return row


def fitted_exponent(points: list[tuple[float, float]]) -> float | None:
    """k of t = c * n^k by least squares on (log n, log t); None for fewer than two points."""
    if len(points) < 2:
        return None
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(t) for _, t in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def table(rows: list[dict[str, object]]) -> str:
    header = ["model", "ONNX nodes", *(f"{s} s" for s in STAGES), "O3 / ort", "peak RSS MiB"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        cells = [str(row["model"]), str(row.get("nodes", "?"))]
        for stage in STAGES:
            value = row.get(stage)
            skipped = stage == "run" and str(row["model"]).startswith("gpt")
            cells.append(f"{value:.3f}" if isinstance(value, float) else "-" if skipped else "stopped")
        o3, ort = row.get("O3"), row.get("ort")
        cells.append(f"{o3 / ort:.1f}x" if isinstance(o3, float) and isinstance(ort, float) and ort else "")
        cells.append(f"{row.get('peak_mib', 0):.0f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _sizes(text: str) -> list[int]:
    return [int(s) for s in text.split(",") if s.strip()]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.scaling", description=__doc__.split("\n\n")[0])
    parser.add_argument("--gpt", default="12,48,192,768", help="GPT block counts ('' for none)")
    parser.add_argument("--chain", default="100000", help="Relu chain lengths ('' for none)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per model size, all stages")
    parser.add_argument("--repeat", type=int, default=3, help="runs per size (the median is shown)")
    parser.add_argument("--case", help=argparse.SUPPRESS)  # the child process: KIND:SIZE
    args = parser.parse_args(argv)
    if args.case:
        kind, size = args.case.split(":")
        run_case(kind, int(size))
        return
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1, got {args.repeat}")
    cases = [("gpt", n) for n in _sizes(args.gpt)] + [("chain", n) for n in _sizes(args.chain)]
    runs: dict[tuple[str, int], list[dict[str, object]]] = {case: [] for case in cases}
    for _ in range(args.repeat):
        for kind, n in cases:
            runs[kind, n].append(measure(kind, n, args.timeout))
    rows = [median_row(runs[case]) for case in cases]
    print(f"median of {args.repeat} run(s) per size")
    print(table(rows))
    gpt_points = [(float(r["nodes"]), float(r["O3"])) for r in rows[: len(_sizes(args.gpt))] if "O3" in r]  # type: ignore[arg-type]
    k = fitted_exponent(gpt_points)
    first, last = (gpt_points[0], gpt_points[-1]) if len(gpt_points) >= 2 else (None, None)
    if k is not None and first and last:
        print(
            f"\nGPT O3 time: {last[1] / first[1]:.1f}x for {last[0] / first[0]:.1f}x the nodes; "
            f"fitted exponent {k:.2f} (1 = linear)"
        )


if __name__ == "__main__":
    main()
