"""Import time and interpreter time against onnxruntime, side by side in one run.

    python -m bench.import_and_run [--repeat 5]

For ResNet-50 (batch 1) and BERT-base (seq 128):
- ge import: ONNX file -> ge IR text + safetensors sidecar (load, import, print, write);
- ort session: onnxruntime InferenceSession creation on the same file (ORT_ENABLE_ALL);
- ge interpreter / ort inference: one forward pass, median of --repeat runs after one warm-up.

The interpreter's convolutions are OpenBLAS sgemm calls, so the BLAS kernel numpy loads matters:
some machines here force `OPENBLAS_CORETYPE=Haswell` (and `OPENBLAS_L2_SIZE`) for old OpenBLAS
builds, which slows a current numpy. The table names the kernel in use; to measure numpy's own
choice, unset both for this command alone:

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python -m bench.import_and_run
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import onnx

from ge.frontend import models
from ge.interpreter.runner import run
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


def measure(name: str, folder: Path, repeat: int) -> dict[str, float]:
    import onnxruntime as ort

    model = MODELS[name]()
    path = folder / f"{name}.onnx"
    onnx.save(model, path)
    inputs = models.random_inputs(model, seed=0)
    row = {}
    row["ge import"] = median_time(lambda: translate_onnx(str(path), str(folder / f"{name}.mlir"), 32), repeat)
    row["ort session"] = median_time(
        lambda: ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]), repeat
    )
    module, weights = load_program(str(folder / f"{name}.mlir"))
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    row["ge interpreter"] = median_time(lambda: run(module, inputs, weights), repeat)
    row["ort inference"] = median_time(lambda: session.run(None, inputs), repeat)
    return row


def blas_kernel() -> str:
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "unknown (install threadpoolctl to see it)"
    blas = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    return ", ".join(f"{i['internal_api']} {i.get('architecture', '?')} x{i['num_threads']}" for i in blas) or "none"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--models", nargs="*", default=list(MODELS), choices=list(MODELS))
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        rows = {name: measure(name, Path(tmp), args.repeat) for name in args.models}
    print(f"\nmedians of {args.repeat} runs (seconds); BLAS: {blas_kernel()}\n")
    print("| model | ge import | ort session | import / session | ge interpreter | ort inference | interpreter / ort |")
    print("|---|---|---|---|---|---|---|")
    for name, r in rows.items():
        print(
            f"| {name} | {r['ge import']:.3f} | {r['ort session']:.3f} | {r['ge import'] / r['ort session']:.2f}x "
            f"| {r['ge interpreter']:.3f} | {r['ort inference']:.4f} "
            f"| {r['ge interpreter'] / r['ort inference']:.2f}x |"
        )


if __name__ == "__main__":
    main()
