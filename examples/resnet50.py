"""The built-in example: ResNet-50, built in code, through the whole tool chain.

1. build the ONNX model (seeded weights, unfolded BatchNormalization) and save it;
2. import it (`ge-translate --import-onnx`): IR text plus a safetensors sidecar;
3. optimize it (`ge-opt -p 'ge-optimize{level=3}'`): BN folded, NC1HWC0/FRACTAL_Z layouts,
   Conv+bias+ReLU(+residual) fused into kernels;
4. lower it (`ge-opt -p 'lower-to-tasks,plan-memory,lower-to-streams'`): tasks on engines, the
   memory plan, streams and events, whole-graph sink;
5. run it (`ge-run`) on the modeled Ascend 910B: outputs, latency, utilization, a Chrome trace
   and an op summary; compare the outputs with the unoptimized graph and with onnxruntime.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import onnx

from ge.frontend import models
from ge.interpreter.differential import relative_error
from ge.interpreter.runner import run
from ge.passes.fusion.census import census
from ge.tools.ge_opt import main as ge_opt
from ge.tools.ge_run import load_program
from ge.tools.ge_run import main as ge_run
from ge.tools.ge_translate import translate_onnx


def timed(label: str, fn):
    start = time.perf_counter()
    value = fn()
    print(f"  {label:<44} {time.perf_counter() - start:8.3f} s")
    return value


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="out/resnet50", help="folder for the model, IR and outputs")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--target", default="ascend910b")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {k: str(out / f"{k}.mlir") for k in ("model", "o3", "streams")}

    print(f"ResNet-50, batch {args.batch}, in {out}/")
    model = compile_model(out, paths, args.batch, args.target)
    imported, _ = load_program(paths["model"])
    print_fusion(imported, paths["o3"])
    outputs = run_on_device(model, out, paths["streams"], args.target)
    inputs = models.random_inputs(model, seed=0)
    compare_with_graph(imported, inputs, outputs)
    compare_with_onnxruntime(model, inputs, outputs)


def compile_model(out: Path, paths: dict[str, str], batch: int, target: str) -> onnx.ModelProto:
    """Steps 1-4, each timed: build and save the model, import, optimize and lower it."""
    model = timed("build ONNX model in code", lambda: models.resnet50(batch=batch))
    onnx.save(model, out / "model.onnx")
    timed("import (ge-translate)", lambda: translate_onnx(str(out / "model.onnx"), paths["model"], 32))
    timed(
        "optimize (ge-opt -p ge-optimize{level=3})",
        lambda: ge_opt([paths["model"], "-p", f"ge-optimize{{level=3 target={target}}}", "-o", paths["o3"]]),
    )
    timed(
        "lower to tasks, memory, streams (ge-opt)",
        lambda: ge_opt(
            [
                paths["o3"],
                "-p",
                f"lower-to-tasks{{target={target}}},plan-memory{{target={target}}},lower-to-streams{{target={target}}}",
                "-o",
                paths["streams"],
            ]
        ),
    )
    return model


def print_fusion(imported, optimized_path: str) -> None:
    """Kernel counts before and after O3, and the fused groups per rule."""
    optimized, _ = load_program(optimized_path)
    before, after = census(imported), census(optimized)
    print(
        f"\nkernels: {before.kernels} imported -> {after.kernels} after O3 "
        f"(+{after.trans_data} TransData); fused groups: "
        + ", ".join(f"{rule} {n}" for rule, n in after.groups.most_common())
    )


def run_on_device(model: onnx.ModelProto, out: Path, streams_path: str, target: str) -> dict[str, np.ndarray]:
    """Step 5: ge-run on the modeled target, with a trace and an op summary; the outputs it wrote."""
    print(f"\nge-run on the modeled {target} (stream level):")
    # numpy's stub lets `**` reach savez's allow_pickle: bool; the input names never include it
    np.savez(out / "inputs.npz", **models.random_inputs(model, seed=0))  # type: ignore[arg-type]
    ge_run(
        [
            streams_path,
            "--inputs",
            str(out / "inputs.npz"),
            "-o",
            str(out / "outputs.npz"),
            "--target",
            target,
            "--trace",
            str(out / "trace.json"),
            "--op-summary",
            str(out / "op_summary.csv"),
        ]
    )
    print(f"  trace: {out / 'trace.json'} (open in ui.perfetto.dev), op summary: {out / 'op_summary.csv'}")
    with np.load(out / "outputs.npz") as data:
        return {k: data[k] for k in data.files}


def compare_with_graph(imported, inputs: dict[str, np.ndarray], outputs: dict[str, np.ndarray]) -> None:
    """Top-5 classes of each output and its error against the unoptimized graph."""
    reference = run(imported, inputs)
    for name, value in outputs.items():
        top = np.argsort(value[0])[::-1][:5]
        print(f"\noutput '{name}': {value.dtype}{list(value.shape)}, top-5 classes of image 0: {top.tolist()}")
        print(f"  stream level vs unoptimized graph: max relative error {relative_error(reference[name], value):.2e}")


def compare_with_onnxruntime(
    model: onnx.ModelProto, inputs: dict[str, np.ndarray], outputs: dict[str, np.ndarray]
) -> None:
    """The first output against onnxruntime's, when onnxruntime is installed."""
    try:
        import onnxruntime as ort
    except ImportError:
        return
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = session.run(None, inputs)[0]
    got = next(iter(outputs.values()))
    print(
        f"  vs onnxruntime: max relative error {relative_error(want, got):.2e} "
        f"(allclose rtol 1e-4, atol 1e-5: {np.allclose(got, want, rtol=1e-4, atol=1e-5)})"
    )


if __name__ == "__main__":
    main()
