"""Control flow on the host against control flow on the device (label tasks), along the paths real
inputs take.

    python -m bench.control_flow [--target ascend910b] [--steps 0,1,4,16]

The model is the corpus's scripted If + Loop exported by torch (test/corpus/dynamic/
scripted_control.onnx.gz: a gate on the input's mean chooses a branch, then a Loop whose trip count
is a graph input), bound to batch 2 and compiled at O3 twice: with its control flow left to the
host (subgraph sink: partition-dynamic) and decided on the device (whole-graph sink:
sink-control-flow). Each run is modeled along the path its inputs took (interpreter/host_program.py).

The first table gives both per trip count; the second splits the difference into its causes:

- host launches saved: one per sunk subgraph call on the host, one per control program on the device;
- reads saved: the If's condition and the Loop's once per iteration and once more, read back;
- the Loop's condition function, run on the device once per iteration and once more (its integer
  kernels run on the AI CPU);
- label tasks: switches and gotos.

The third re-times the longest run with each ASSUMPTION it rests on at half and double.
"""

from __future__ import annotations

import argparse
import gzip
from pathlib import Path

import numpy as np
import onnx

from bench import scaled_target
from ge.frontend.onnx_importer import import_model
from ge.ge_dialects.ge.weights import attach_weights, clone_with_weights
from ge.interpreter.host_program import HostRecord, host_time, run_host
from ge.interpreter.stream_executor import simulate_module
from ge.passes.pipeline import apply_all, parse_passes
from ge.target import Target, load_target
from ge.tools.common import make_context

MODEL = Path(__file__).parent.parent / "test" / "corpus" / "dynamic" / "scripted_control.onnx.gz"
BIND = 'ge-optimize{level=3},bind-dims{sizes="batch=2"},partition-dynamic'
LOWER = "lower-to-tasks,plan-memory,lower-to-streams"
ASSUMPTIONS = (("host", "launch_s"), ("host", "d2h_read_s"), ("events", "label_s"), ("aicpu", "task_device_s"))


def _compiled(sink: bool):
    module, weights = import_model(onnx.load_from_string(gzip.decompress(MODEL.read_bytes())))
    attach_weights(module, weights)
    module = clone_with_weights(module)
    apply_all(make_context(), module, parse_passes(f"{BIND},{'sink-control-flow,' if sink else ''}{LOWER}"))
    return module


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:,.1f}"


def _condition_s(record: HostRecord, spec: Target) -> float:
    """Device time of the Loop's condition function over the run (without launches: the device runs it)."""
    total = 0.0
    for call in record.calls:
        if call.endswith("_cond"):
            owner, name = record.functions[call]
            total += simulate_module(owner, spec, name).latency - spec.host.launch_s
    return total


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.control_flow", description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="ascend910b")
    parser.add_argument("--steps", default="0,1,4,16", help="trip counts to run")
    args = parser.parse_args(argv)
    spec = load_target(args.target)
    steps = [int(s) for s in args.steps.split(",")]
    host, device = _compiled(False), _compiled(True)
    x = np.abs(np.random.default_rng(0).standard_normal((2, 8))).astype(np.float32)  # the then branch
    runs = {}
    for n in steps:
        feeds = {"x": x, "steps": np.array(n, np.int64)}
        out_h, rec_h = run_host(host, feeds)
        out_d, rec_d = run_host(device, feeds)
        assert np.allclose(out_h["h"], out_d["h"], rtol=1e-5, atol=1e-6), "host and device paths disagree"
        runs[n] = (rec_h, rec_d)

    print(f"scripted If + Loop (corpus, torch export) at batch 2 on {spec.name}, O3, along each run's path")
    print()
    print("| trip count | host: calls, reads | host us | device: calls, labels | device us | device / host |")
    print("|---|---|---|---|---|---|")
    for n, (rec_h, rec_d) in runs.items():
        th, td = host_time(rec_h, spec), host_time(rec_d, spec)
        print(
            f"| {n} | {th.calls}, {th.reads} | {_us(th.total_s)} | {td.calls}, {td.labels} | {_us(td.total_s)} | "
            f"{td.total_s / th.total_s:.2f}x |"
        )
    print()
    print("device - host, by cause:")
    print()
    print("| trip count | host launches saved | reads saved | loop condition on the device | label tasks | total |")
    print("|---|---|---|---|---|---|")
    for n, (rec_h, rec_d) in runs.items():
        launches = (len(rec_h.calls) - rec_d.programs) * spec.host.launch_s
        reads = rec_h.reads * spec.host.d2h_read_s
        condition = _condition_s(rec_d, spec)
        labels = rec_d.labels * spec.events.label_s
        total = host_time(rec_d, spec).total_s - host_time(rec_h, spec).total_s
        print(f"| {n} | -{_us(launches)} | -{_us(reads)} | +{_us(condition)} | +{_us(labels)} | {_us(total)} |")
    longest = max(runs)
    rec_h, rec_d = runs[longest]
    print()
    print(f"device / host at trip count {longest}, each ASSUMPTION at half, as given, double:")
    print()
    print("| assumption | x0.5 | x1 | x2 |")
    print("|---|---|---|---|")
    for table, key in ASSUMPTIONS:
        ratios = []
        for factor in (0.5, 1.0, 2.0):
            scaled = scaled_target(spec, table, key, factor)
            ratios.append(host_time(rec_d, scaled).total_s / host_time(rec_h, scaled).total_s)
        print(f"| [{table}] {key} | " + " | ".join(f"{r:.2f}x" for r in ratios) + " |")


if __name__ == "__main__":
    main()
