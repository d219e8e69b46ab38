"""Import time and interpreter time against onnxruntime, side by side in one run.

    python -m bench.import_and_run [--repeat 5] [--threads 1 2]

For ResNet-50 (batch 1) and BERT-base (seq 128):
- ge import: ONNX file -> ge IR text + safetensors sidecar (load, import, print, write);
- ort session: onnxruntime InferenceSession creation on the same file (ORT_ENABLE_ALL);
- ge graph fusion: the graph-level passes of ge-optimize (shapes, cleanup, and graph fusion: Conv+BN
  folding, bias folding, LayerNorm / GELU / attention recognition), without the device's data
  layouts and precision: the rewrites onnxruntime's ORT_ENABLE_ALL makes of the same graph;
- ge interpreter / ort inference: one forward pass, at each thread count of --threads (default: one,
  and the cores this process may use), set on both sides: the interpreter's `threads` (its kernels'
  split; BLAS itself at one thread), onnxruntime's intra_op_num_threads (and inter_op_num_threads =
  1). The interpreter runs both the imported graph and the graph-fused one; onnxruntime runs its own
  optimized graph (what its session made).

The configurations are timed in turns (one run of each, --repeat times, after one warm-up each), so
a machine shared with other work slows them alike; the tables give medians.

The interpreter's GEMMs are OpenBLAS sgemm calls, so the BLAS kernel numpy loads matters: some
machines here force `OPENBLAS_CORETYPE=Haswell` (and `OPENBLAS_L2_SIZE`) for old OpenBLAS builds,
which slows a current numpy. The table names the kernel in use; to measure numpy's own choice,
unset both for this command alone:

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python -m bench.import_and_run
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import onnx

from ge.frontend import models
from ge.ge_dialects.context import make_context
from ge.interpreter.runner import available_cores, keep_freed_memory, run
from ge.passes.ge_optimize import LevelOptions, cleanup, graph_fusion, shapes
from ge.passes.pipeline import apply_all
from ge.tools.ge_run import load_program
from ge.tools.ge_translate import translate_onnx

MODELS = {"resnet50": lambda: models.resnet50(), "bert_base": lambda: models.bert_base()}


def median_time(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def medians_in_turns(fns: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """The median time of each function, run in turns (one warm-up each first)."""
    for fn in fns.values():
        fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(ts) for name, ts in times.items()}


def ort_session(path: Path, threads: int):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def graph_fused(path: str):
    """The module at `path` after ge-optimize's graph-level stages (no layouts, no precision change)."""
    module, _ = load_program(path)
    options = LevelOptions(precision_mode="must_keep_origin_dtype", target=None)
    apply_all(make_context(), module, [p for stage in (shapes, cleanup, graph_fusion) for p in stage(options)])
    return module


def measure(name: str, folder: Path, repeat: int, threads: list[int]) -> dict[str, float]:
    """Import, graph fusion and session times, then `ge <t>`, `fused <t>` and `ort <t>` for each
    thread count t."""
    model = MODELS[name]()
    path = folder / f"{name}.onnx"
    onnx.save(model, path)
    inputs = models.random_inputs(model, seed=0)
    row = {}
    row["ge import"] = median_time(lambda: translate_onnx(str(path), str(folder / f"{name}.mlir"), 32), repeat)
    row["ort session"] = median_time(lambda: ort_session(path, threads[-1]), repeat)
    row["ge graph fusion"] = median_time(lambda: graph_fused(str(folder / f"{name}.mlir")), repeat)
    module, weights = load_program(str(folder / f"{name}.mlir"))
    fused = graph_fused(str(folder / f"{name}.mlir"))
    fns: dict[str, Callable[[], object]] = {}
    for t in threads:
        session = ort_session(path, t)
        fns[f"ge {t}"] = lambda t=t: run(module, inputs, weights, threads=t)
        fns[f"fused {t}"] = lambda t=t: run(fused, inputs, threads=t)
        fns[f"ort {t}"] = lambda session=session: session.run(None, inputs)
    row.update(medians_in_turns(fns, repeat))
    return row


def blas_kernel() -> str:
    from threadpoolctl import threadpool_info

    blas = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    return ", ".join(f"{i['internal_api']} {i.get('architecture', '?')}" for i in blas) or "none"


def tables(rows: dict[str, dict[str, float]], threads: list[int]) -> str:
    lines = [
        "| model | ge import | ge graph fusion | ort session | import / session |",
        "|---|---|---|---|---|",
        *(
            f"| {name} | {r['ge import']:.3f} | {r['ge graph fusion']:.3f} | {r['ort session']:.3f} "
            f"| {r['ge import'] / r['ort session']:.2f}x |"
            for name, r in rows.items()
        ),
        "",
        "| model | threads (each side) | ge interpreter, imported | ge interpreter, graph-fused | ort inference "
        "| imported / ort | graph-fused / ort |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, r in rows.items():
        for t in threads:
            ge, fused, ort = r[f"ge {t}"], r[f"fused {t}"], r[f"ort {t}"]
            lines.append(
                f"| {name} | {t} | {ge:.4f} | {fused:.4f} | {ort:.4f} | {ge / ort:.2f}x | {fused / ort:.2f}x |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--models", nargs="*", default=list(MODELS), choices=list(MODELS))
    parser.add_argument(
        "--threads", nargs="*", type=int, default=None, help="thread counts, each side (default: 1 and the cores)"
    )
    args = parser.parse_args(argv)
    threads = args.threads or sorted({1, available_cores()})
    if any(t < 1 for t in threads):
        parser.error("--threads: each count must be at least 1")
    keep_freed_memory()
    with tempfile.TemporaryDirectory() as tmp:
        rows = {name: measure(name, Path(tmp), args.repeat, threads) for name in args.models}
    print(f"\nmedians of {args.repeat} runs (seconds); BLAS: {blas_kernel()}; cores available: {available_cores()}\n")
    print(tables(rows, threads))


if __name__ == "__main__":
    main()
