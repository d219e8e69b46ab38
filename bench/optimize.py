"""What ge-optimize does to the test models, beside onnxruntime's graph optimizer, in one run.

    python -m bench.optimize [--repeat 3] [--models resnet50,bert_base]

Per model: ops as imported, kernels after O3 (fused groups plus remaining ops; TransData counted
apart), nodes onnxruntime leaves at ORT_ENABLE_ALL, the O3 compile time (ge IR in memory to fused
IR) against onnxruntime's ORT_ENABLE_ALL session creation on the same model (medians), and the
largest output difference between O0 and O3.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import onnx

from ge.frontend import models
from ge.frontend.onnx_importer import import_model
from ge.ge_dialects.ge.weights import attach_weights
from ge.interpreter.differential import relative_error
from ge.interpreter.runner import run
from ge.passes.fusion.census import census
from ge.passes.ge_optimize import GeOptimizePass

MODELS = {
    "resnet50": lambda: models.resnet50(),
    "mobilenet_v2": lambda: models.mobilenet_v2(),
    "bert_base": lambda: models.bert_base(),
    "gpt2": lambda: models.gpt2(),
}


def imported(model: onnx.ModelProto):
    module, weights = import_model(model)
    attach_weights(module, weights)
    return module


def ort_nodes_and_time(path: Path, folder: Path, repeat: int) -> tuple[int, float]:
    import onnxruntime as ort

    out = folder / "ort_optimized.onnx"
    times = []
    for i in range(repeat):
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.log_severity_level = 3
        if i == 0:
            opts.optimized_model_filepath = str(out)
        start = time.perf_counter()
        ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        times.append(time.perf_counter() - start)
    return len(onnx.load(out, load_external_data=False).graph.node), statistics.median(times)


def measure(name: str, folder: Path, repeat: int, level: int) -> dict[str, object]:
    model = MODELS[name]()
    path = folder / f"{name}.onnx"
    onnx.save(model, path)
    inputs = models.random_inputs(model, seed=0)
    before = census(imported(model))
    times = []
    for _ in range(repeat):
        module = imported(model)
        start = time.perf_counter()
        GeOptimizePass(level=level).apply(None, module)
        times.append(time.perf_counter() - start)
    after = census(module)
    o0 = run(imported(model), inputs)
    o3 = run(module, inputs)
    ort_nodes, ort_time = ort_nodes_and_time(path, folder, repeat)
    compile_time = statistics.median(times)
    return {
        "model": name,
        "ops imported": before.kernels,
        f"kernels O{level}": after.kernels,
        "TransData": after.trans_data,
        "ort nodes": ort_nodes,
        f"O{level} time": f"{compile_time:.2f} s",
        "ort session": f"{ort_time:.2f} s",
        "ratio": f"{compile_time / ort_time:.1f}x",
        f"O0 vs O{level}": f"{max(relative_error(o0[k], o3[k]) for k in o0):.2g}",
        "groups": ", ".join(f"{r} {n}" for r, n in after.groups.most_common()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--level", type=int, default=3)
    parser.add_argument("--models", default=",".join(MODELS))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rows = [measure(n, Path(tmp), args.repeat, args.level) for n in args.models.split(",")]
    keys = list(rows[0])
    widths = {k: max(len(k), *(len(str(r[k])) for r in rows)) for k in keys}
    print(" | ".join(k.ljust(widths[k]) for k in keys))
    print("-|-".join("-" * widths[k] for k in keys))
    for r in rows:
        print(" | ".join(str(r[k]).ljust(widths[k]) for k in keys))


if __name__ == "__main__":
    main()
