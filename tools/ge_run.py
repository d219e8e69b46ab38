"""ge-run: execute a ge module (or an ONNX model, imported in memory) with the reference interpreter.

    ge-run model.mlir --inputs in.npz -o out.npz
    ge-run model.onnx --random-inputs 0 --print

A module lowered to streams (lower-to-tasks, plan-memory, lower-to-streams) also runs on the
modeled device: the report gives latency, the roofline bound, utilization and memory;
`--trace` writes a Chrome/Perfetto trace, `--op-summary` a CSV per task. `--timing-only` skips
the numbers (and the weights): for big batches and models.
"""

from __future__ import annotations

import argparse
import io
import json
import time
import zipfile

import numpy as np
from xdsl.utils.exceptions import InterpretationError

from frontend.sidecar import SidecarError, open_weights
from ge_dialects.ge.weights import attach_weights
from interpreter.device import chrome_trace, op_summary_csv
from interpreter.ge import KernelError
from interpreter.stream_executor import NotLowered, is_lowered, memory_figures, report, simulate_module
from interpreter.targets import TargetError, load_target, load_target_file, target_names
from interpreter.runner import InputError, input_signature, main_function, run
from tools.common import UserError, first_line, import_onnx_file, read_module, reported_errors, write_atomic
from ge_dialects.ge.types import numpy_dtype, shape_of


def load_program(path: str, with_weights: bool = True):
    """(module, weights) from an .mlir file with its sidecar, or an .onnx file imported in memory;
    the weights are also attached to the module (ge_dialects/ge/weights.py)."""
    if path.endswith(".onnx"):
        module, weights = import_onnx_file(path)
    else:
        module, weights = read_module(path), {}
        if with_weights:
            try:
                weights = open_weights(module, path)
            except SidecarError as e:
                raise UserError(f"{path}: {e}") from None
    attach_weights(module, weights)
    return module, weights


def load_inputs(path: str) -> dict[str, np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    except (OSError, ValueError, zipfile.BadZipFile) as e:
        raise UserError(f"{path}: cannot read inputs ({e})") from None


def random_inputs(module, seed: int) -> dict[str, np.ndarray]:
    """Inputs of the graph's signature; unknown dims become 1, integers are small non-negative ids."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, t in input_signature(module).items():
        shape = tuple(1 if d is None else d for d in shape_of(t))
        dtype = numpy_dtype(t.element_type)
        if dtype.kind == "f" or dtype.name == "bfloat16":
            out[name] = rng.standard_normal(shape).astype(dtype)
        elif dtype.kind == "b":
            out[name] = rng.random(shape) < 0.5
        else:
            out[name] = rng.integers(0, 2, shape).astype(dtype)
    return out


def summary(outputs: dict[str, np.ndarray], seconds: float) -> str:
    lines = [f"ran in {seconds * 1e3:.1f} ms"]
    for name, v in outputs.items():
        stats = ""
        if v.size and v.dtype.kind in "fiu" or v.dtype.name == "bfloat16":
            f = v.astype(np.float64)
            stats = f"  mean {f.mean():.6g}  std {f.std():.6g}  min {f.min():.6g}  max {f.max():.6g}"
        lines.append(f"{name}: {v.dtype}{list(v.shape)}{stats}")
    return "\n".join(lines)


def run_on_device(module, args) -> None:
    """Simulates the lowered module on the target; prints the report and writes trace / summary."""
    try:
        target = load_target_file(args.target_file) if args.target_file else load_target(args.target)
    except TargetError as e:
        raise UserError(str(e)) from None
    try:
        result = simulate_module(module, target)
    except (NotLowered, ValueError) as e:
        raise UserError(f"{args.program}: {first_line(e)}") from None
    if args.trace:
        write_atomic(args.trace, json.dumps(chrome_trace(result)))
    if args.op_summary:
        write_atomic(args.op_summary, op_summary_csv(result))
    print(report(result, memory_figures(module)))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="ge-run", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("program", help="a ge IR file (.mlir) or an ONNX model (.onnx)")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--inputs", metavar="NPZ", help="inputs by graph input name")
    source.add_argument("--random-inputs", metavar="SEED", type=int, help="random inputs from this seed")
    parser.add_argument("-o", "--output", metavar="NPZ", help="write outputs by graph output name")
    parser.add_argument("--print", action="store_true", help="print a summary of the outputs")
    device = parser.add_argument_group("modeled device (modules lowered to streams)")
    chip = device.add_mutually_exclusive_group()
    chip.add_argument("--target", default="ascend910b", metavar="NAME",  # checked by load_target: one line
                      help=f"target chip, one of {', '.join(target_names())} (default %(default)s)")
    chip.add_argument("--target-file", metavar="TOML",
                      help="a target description of your own (the keys of interpreter/targets/*.toml)")
    device.add_argument("--timing-only", action="store_true", help="model the time only: no numbers, no weights")
    device.add_argument("--trace", metavar="JSON", help="write a Chrome/Perfetto trace of the modeled run")
    device.add_argument("--op-summary", metavar="CSV", help="write the per-task op summary (msprof style)")
    args = parser.parse_args(argv)
    if not args.timing_only and args.inputs is None and args.random_inputs is None:
        parser.error("one of the arguments --inputs --random-inputs is required (or --timing-only)")
    with reported_errors("ge-run"):
        module, weights = load_program(args.program, with_weights=not args.timing_only)
        if is_lowered(module):
            run_on_device(module, args)
        elif args.timing_only or args.trace or args.op_summary:
            raise UserError(f"{args.program}: --timing-only, --trace and --op-summary need a module lowered to "
                            "streams (ge-opt -p 'lower-to-tasks,plan-memory,lower-to-streams')")
        if args.timing_only:
            return
        try:
            main_function(module)
        except InputError as e:
            raise UserError(f"{args.program}: {e}") from None
        inputs = load_inputs(args.inputs) if args.inputs else random_inputs(module, args.random_inputs)
        start = time.perf_counter()
        try:
            outputs = run(module, inputs, weights)
        except InputError as e:
            raise UserError(f"{args.inputs or 'inputs'}: {e}") from None
        except (KernelError, InterpretationError) as e:
            raise UserError(f"{args.program}: {e}") from None
        seconds = time.perf_counter() - start
        if args.output:
            buffer = io.BytesIO()
            np.savez(buffer, **outputs)
            write_atomic(args.output, buffer.getvalue())
        if args.print or not args.output:
            print(summary(outputs, seconds))


if __name__ == "__main__":
    main()
