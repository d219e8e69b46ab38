"""The built-in example: ResNet-50, built in code, through the whole tool chain.

1. build the ONNX model (seeded weights, unfolded BatchNormalization) and save it;
2. import it (`ge-translate --import-onnx`): IR text plus a safetensors sidecar;
3. optimize it (`ge-opt -p cse,dce`: the passes that exist so far);
4. execute it (`ge-run`) on random inputs, and compare with onnxruntime when it is installed.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path

import numpy as np
import onnx

from frontend import models
from interpreter.runner import run
from tools.ge_opt import main as ge_opt
from tools.ge_run import load_program
from tools.ge_translate import translate_onnx


def timed(label: str, fn):
    start = time.perf_counter()
    value = fn()
    print(f"  {label:<34} {time.perf_counter() - start:8.3f} s")
    return value


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="out/resnet50", help="folder for the model, IR and outputs")
    parser.add_argument("--batch", type=int, default=1)
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    print(f"ResNet-50, batch {args.batch}, in {out}/")
    model = timed("build ONNX model in code", lambda: models.resnet50(batch=args.batch))
    onnx.save(model, out / "model.onnx")
    timed("import (ge-translate)", lambda: translate_onnx(str(out / "model.onnx"), str(out / "model.mlir"), 32))
    timed("optimize (ge-opt -p cse,dce)", lambda: ge_opt([str(out / "model.mlir"), "-p", "cse,dce",
                                                          "-o", str(out / "model.opt.mlir")]))
    module, weights = timed("parse IR + open sidecar", lambda: load_program(str(out / "model.opt.mlir")))
    inputs = models.random_inputs(model, seed=0)
    outputs = timed("execute (ge-run interpreter)", lambda: run(module, inputs, weights))

    ops = Counter(op.name for op in module.walk() if op.name.startswith("ge."))
    print(f"\nIR: {sum(ops.values())} ge ops: " + ", ".join(f"{n.removeprefix('ge.')} {c}" for n, c in ops.most_common()))
    for name, value in outputs.items():
        top = np.argsort(value[0])[::-1][:5]
        print(f"output '{name}': {value.dtype}{list(value.shape)}, top-5 classes of image 0: {top.tolist()}")
    np.savez(out / "outputs.npz", **outputs)
    try:
        import onnxruntime as ort
    except ImportError:
        return
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = session.run(None, inputs)[0]
    got = next(iter(outputs.values()))
    err = float(np.max(np.abs(got - want) / (np.abs(want) + 1e-5)))
    print(f"onnxruntime agrees: max relative error {err:.2e} (allclose rtol 1e-4, atol 1e-5: "
          f"{np.allclose(got, want, rtol=1e-4, atol=1e-5)})")


if __name__ == "__main__":
    main()
