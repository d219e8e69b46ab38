"""ge-run: execute a ge module (or an ONNX model, imported in memory) with the reference interpreter.

    ge-run model.mlir --inputs in.npz -o out.npz
    ge-run model.onnx --random-inputs 0 --print
    ge-run model.mlir --inputs in.safetensors -o out.safetensors
    ge-run model.ge --random-inputs 0 --print      # an artifact of ge-compile

Inputs and outputs are .npz or .safetensors files, by their suffix. safetensors carries bfloat16,
the float8 types and int4 natively; in an .npz numpy stores them as raw bytes (void arrays), which
ge-run reads by the graph's declared element type and writes so numpy can read them back (view
them with the ml_dtypes type the graph names).

A module lowered to streams (lower-to-tasks, plan-memory, lower-to-streams) also runs on the
modeled device: the report gives latency, the roofline bound, utilization and memory;
`--trace` writes a Chrome/Perfetto trace, `--op-summary` a CSV per task. `--timing-only` skips
the numbers (and the weights): for big batches and models.
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import math
import time
import zipfile
import zlib
from pathlib import Path
from tokenize import TokenError

import numpy as np
from xdsl.utils.exceptions import InterpretationError

from ge.device import chrome_trace, op_summary_csv
from ge.frontend.sidecar import SidecarError, WeightStore, open_weights, save
from ge.ge_dialects.ge.control_flow import lowering_leaves
from ge.ge_dialects.ge.dims import DimsError, input_dims, parse_sizes, sized, symbols
from ge.ge_dialects.ge.target_attr import module_target, resolve_target_name
from ge.ge_dialects.ge.types import numpy_dtype, shape_of
from ge.ge_dialects.ge.weights import attach_weights, weights_of
from ge.ge_dialects.messages import quoted
from ge.interpreter.arena_executor import run_in_arena
from ge.interpreter.ge import KernelError
from ge.interpreter.host_program import HostRecord, host_time, run_host
from ge.interpreter.kernels import AllocationError, check_alloc, format_bytes, tensor_byte_limit
from ge.interpreter.replicas import replica_count
from ge.interpreter.runner import (
    InputError,
    check_input,
    check_input_names,
    input_signature,
    keep_freed_memory,
    main_function,
    run,
    run_each_replica,
)
from ge.interpreter.stream_executor import (
    NotLowered,
    is_lowered,
    memory_figures,
    report,
    simulate_module,
    stream_function,
)
from ge.lowering.run_time import BindError, bind
from ge.lowering.streams.verify import verify_stream_function
from ge.target import (
    DEFAULT_TARGET,
    Target,
    TargetError,
    check_target_name,
    load_target,
    load_target_file,
    target_names,
)
from ge.tools.artifact import SUFFIX as ARTIFACT_SUFFIX
from ge.tools.artifact import load_artifact
from ge.tools.common import (
    UserError,
    add_contract_arguments,
    add_op_library_argument,
    doing,
    first_line,
    import_onnx_file,
    op_libraries,
    positive,
    read_module,
    reported_errors,
    seed,
)
from ge.tools.outputs import Outputs
from ge.tools.training_state import load_state, require_state, run_steps, scalar_line, state_outputs, state_writer

PROGRAM_SUFFIXES = (".mlir", ".onnx", ARTIFACT_SUFFIX, "")
"""What ge-run reads: IR text (also without an extension, like lit's %t), ONNX models, artifacts."""


def load_program(path: str, with_weights: bool = True, max_tensor_bytes: int | None = None):
    """(module, weights) from an .mlir file with its sidecar, an .onnx file imported in memory, or
    a compiled artifact (.ge, checked whole before use: tools/artifact.py); the weights are also
    attached to the module (ge_dialects/ge/weights.py)."""
    suffix = Path(path).suffix
    if suffix not in PROGRAM_SUFFIXES:
        raise UserError(
            f"{path}: unrecognized file extension '{suffix}' (ge-run reads .mlir IR, .onnx models or .ge artifacts)"
        )
    if suffix == ARTIFACT_SUFFIX:
        module, _ = load_artifact(path)
        return module, weights_of(module)
    if suffix == ".onnx":
        module, weights = import_onnx_file(path, max_tensor_bytes=max_tensor_bytes)
    else:
        module, weights = read_module(path), {}
        if with_weights:
            try:
                weights = open_weights(module, path)
            except SidecarError as e:
                raise UserError(f"{path}: {e}") from None
    attach_weights(module, weights)
    return module, weights


NOT_NPZ = "not an .npz archive (a zip of .npy arrays by input name, as numpy.savez writes)"


SAFETENSORS = ".safetensors"


def is_ml_dtype(dtype: np.dtype) -> bool:
    """An ml_dtypes type (bfloat16, float8, int4): numpy has no .npy descriptor of its own for it."""
    return dtype.type.__module__.startswith("ml_dtypes")


def load_inputs(path: str, signature: dict) -> dict[str, np.ndarray]:
    """The arrays of an .npz or .safetensors file (by its suffix), checked against the graph's
    inputs (and the kernels' size limit, `--max-tensor-bytes`) before any data is read."""
    if Path(path).suffix == SAFETENSORS:
        return _load_safetensors_inputs(path, signature)
    return _load_npz_inputs(path, signature)


def _load_safetensors_inputs(path: str, signature: dict) -> dict[str, np.ndarray]:
    """The tensors of a safetensors file; its header (names, dtypes, shapes) is checked whole when
    the file is opened, and against the signature and the size limit before any tensor is read."""
    try:
        store = WeightStore(Path(path), role="inputs")
        check_input_names(signature, list(store))
        for name in store:
            dtype, shape = store.spec(name)
            check_input(name, signature[name], dtype, tuple(shape))
            _check_size(name, tuple(shape), dtype)
        return {name: np.array(store[name]) for name in store}
    except SidecarError as e:
        raise UserError(str(e)) from None
    except InputError as e:
        raise UserError(f"{path}: {e}") from None


def _check_size(name: str, shape: tuple[int, ...], dtype: np.dtype) -> None:
    try:
        check_alloc(shape, dtype)
    except AllocationError as e:
        raise InputError(f"input '{name}': {e}") from None


def _load_npz_inputs(path: str, signature: dict) -> dict[str, np.ndarray]:
    """The arrays of an .npz file, checked against the graph's inputs before any data is read.

    Names, dtypes, shapes and byte sizes come from the members' .npy headers; only when all of them
    fit the signature (and the limit) are the arrays read. Pickled (object) arrays are never loaded."""
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise UserError(f"{path}: {NOT_NPZ}") from None
    except OSError as e:
        raise UserError(f"{path}: cannot read: {e.strerror or first_line(e)}") from None
    with archive:
        try:
            members = _members(archive)
            check_input_names(signature, members)
            headers = {name: _header(archive, info, signature[name]) for name, info in members.items()}
            return {name: _read_array(archive, members[name], *headers[name]) for name in members}
        except InputError as e:
            raise UserError(f"{path}: {e}") from None
        except (zipfile.BadZipFile, zlib.error, EOFError, ValueError, NotImplementedError, RuntimeError) as e:
            raise UserError(f"{path}: cannot read inputs ({first_line(e)})") from None


def _members(archive: zipfile.ZipFile) -> dict[str, zipfile.ZipInfo]:
    members = {}
    for info in archive.infolist():
        if info.is_dir():
            continue
        if not info.filename.endswith(".npy"):
            raise InputError(f"member '{info.filename}' is not an .npy array; {NOT_NPZ}")
        name = info.filename[: -len(".npy")]
        if name in members:
            raise InputError(f"input '{name}' appears twice")
        members[name] = info
    return members


def _header(archive: zipfile.ZipFile, info: zipfile.ZipInfo, t):
    """(dtype, shape, fortran order, data offset) of a member, checked against its input type `t`."""
    name = info.filename[: -len(".npy")]
    with archive.open(info) as f:
        try:
            version = np.lib.format.read_magic(f)
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
            elif version == (2, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
            else:
                raise InputError(f"input '{name}': .npy format version {version[0]}.{version[1]} is not supported")
        except ValueError as e:  # numpy's own checks of the header's fields: their message says which
            header = _one_byte_float_header(archive, info)
            if header is None:
                raise InputError(
                    f"input {quoted(name)}: not an .npy array (malformed header: {first_line(e)})"
                ) from None
            shape, fortran, dtype = header
        except (SyntaxError, TokenError, TypeError, RecursionError):  # the header is not a Python literal
            raise InputError(f"input {quoted(name)}: not an .npy array (malformed header)") from None
        offset = f.tell()
    if dtype.hasobject:
        raise InputError(f"input '{name}' holds Python objects (pickled data), which are never loaded")
    want = numpy_dtype(t.element_type)
    if dtype.kind == "V" and not dtype.fields and is_ml_dtype(want) and dtype.itemsize == want.itemsize:
        dtype = want  # numpy writes ml_dtypes arrays (bf16, f8, ...) as raw bytes of the same width
    check_input(name, t, dtype, shape)
    _check_size(name, shape, dtype)
    size = math.prod(shape) * dtype.itemsize
    if info.file_size - offset < size:
        raise InputError(
            f"input '{name}' is truncated: its header promises {format_bytes(size)}, "
            f"the member holds {format_bytes(max(info.file_size - offset, 0))}"
        )
    return dtype, shape, fortran, offset


def _one_byte_float_header(archive: zipfile.ZipFile, info: zipfile.ZipInfo):
    """(shape, fortran order, V1) of a member whose descriptor is '<f1': what `np.savez` writes for a
    float8_e5m2 array (ml_dtypes gives it kind 'f'), which numpy cannot read back. Read as raw bytes,
    the declared element type then decides what they are, as for bf16's 'V2'. None otherwise."""
    with archive.open(info) as f:
        version = np.lib.format.read_magic(f)
        width = {(1, 0): 2, (2, 0): 4}.get(version)
        if width is None:
            return None
        text = f.read(int.from_bytes(f.read(width), "little")).decode("latin1")
    try:
        header = ast.literal_eval(text)
    except (ValueError, SyntaxError, TokenError, TypeError, RecursionError, MemoryError):
        return None
    if not isinstance(header, dict) or header.get("descr") not in ("<f1", "|f1"):
        return None
    shape, fortran = header.get("shape"), header.get("fortran_order")
    if not isinstance(shape, tuple) or not all(type(d) is int and d >= 0 for d in shape) or type(fortran) is not bool:
        return None
    return shape, fortran, np.dtype("V1")


def _read_array(archive: zipfile.ZipFile, info, dtype, shape, fortran: bool, offset: int) -> np.ndarray:
    array = np.empty(shape, dtype=dtype, order="F" if fortran else "C")
    buffer = array.reshape(-1, order="A").view(np.uint8).data if array.size and dtype.itemsize else None
    with archive.open(info) as f:
        assert isinstance(f, zipfile.ZipExtFile), "a member opened for reading"
        f.read(offset)
        filled = 0
        while buffer is not None and filled < len(buffer):
            count = f.readinto(buffer[filled:])
            if not count:
                raise EOFError(f"member '{info.filename}' ends early")
            filled += count
    return array


def random_inputs(module, seed: int, dims: str | None = None) -> dict[str, np.ndarray]:
    """Inputs of the graph's signature; a named unknown dim takes its size from `dims`
    (`batch=2,seq=64`, ge_dialects/ge/dims.py), the others 1; integers are small non-negative ids.

    Each input's size is checked against the kernels' limit (`--max-tensor-bytes`) first."""
    if not isinstance(seed, int) or seed < 0:
        raise InputError(f"the random seed must be a non-negative integer, not {seed}")
    rng = np.random.default_rng(seed)
    signature = input_signature(module)
    names = input_dims(main_function(module).arg_attrs, len(signature))
    try:
        sizes = parse_sizes(dims, symbols(names)) if dims else {}
    except DimsError as e:
        raise InputError(str(e)) from None
    out = {}
    for (name, t), dim_names in zip(signature.items(), names):
        shape = sized(shape_of(t), dim_names, sizes)
        dtype = numpy_dtype(t.element_type)
        try:
            check_alloc(shape, dtype)
        except AllocationError as e:
            raise InputError(f"random input '{name}' ({t}): {e}") from None
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
        if (v.size and v.dtype.kind in "fiu") or v.dtype.name == "bfloat16":
            f = v.astype(np.float64)
            stats = f"  mean {f.mean():.6g}  std {f.std():.6g}  min {f.min():.6g}  max {f.max():.6g}"
        lines.append(f"{name}: {v.dtype}{list(v.shape)}{stats}")
    return "\n".join(lines)


def run_on_device(module, args, outputs: Outputs) -> None:
    """Simulates the lowered module on the target; prints the report, hands trace / summary to `outputs`."""
    target, source = device_target(module, args)
    try:
        verify_stream_function(stream_function(module))  # StreamError (a ValueError) on a race
        result = simulate_module(module, target)
    except (NotLowered, ValueError) as e:
        raise UserError(f"{args.program}: {first_line(e)}") from None
    if args.trace:
        outputs.add(args.trace, json.dumps(chrome_trace(result)))
    if args.op_summary:
        outputs.add(args.op_summary, op_summary_csv(result))
    # which chip, first: on stdout with the report (stderr carries only an error's one line)
    print(f"simulating target {target.name} ({source})")
    print(report(result, memory_figures(module)))


def has_host_main(module) -> bool:
    """Whether `@main` is a program of calls the runner interprets (a host program, a control
    program, or shapes known only at run time); False without a `@main` (the run's own check says
    so in one line)."""
    try:
        return lowering_leaves(main_function(module))
    except InputError:
        return False


TARGET_SOURCES = {
    "option": "from --target",
    "module": "from the module",
    "default": "the default: the module names no target",
}


def device_target(module, args) -> tuple[Target, str]:
    """The target to simulate and where it comes from: --target or --target-file, which must agree
    with the module's ge.target when it has one; else the module's; else the default."""
    try:
        if args.target_file:
            target = load_target_file(args.target_file)
            declared = module_target(module)
            if declared is not None and declared != target.name:
                raise UserError(f"{args.target_file}: target={target.name} contradicts the module's target {declared}")
            return target, f"from --target-file {args.target_file}"
        if args.target is not None:
            check_target_name(args.target)
        name, source = resolve_target_name(module, args.target)
        return load_target(name), TARGET_SOURCES[source]
    except TargetError as e:
        raise UserError(str(e)) from None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="ge-run", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("program", help="a ge IR file (.mlir), an ONNX model (.onnx) or a compiled artifact (.ge)")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--inputs", metavar="NPZ", help="inputs by graph input name")
    source.add_argument("--random-inputs", metavar="SEED", type=seed, help="random inputs from this seed")
    parser.add_argument(
        "--dims",
        metavar="NAME=SIZE,...",
        help="with --random-inputs: the size of each named unknown dim (an input's dim_param, e.g. batch=2,seq=64)",
    )
    parser.add_argument("-o", "--output", metavar="NPZ", help="write outputs by graph output name")
    parser.add_argument("--print", action="store_true", help="print a summary of the outputs")
    add_op_library_argument(parser)
    add_contract_arguments(parser, notes=True)
    device = parser.add_argument_group("modeled device (modules lowered to streams)")
    chip = device.add_mutually_exclusive_group()
    chip.add_argument(
        "--target",
        metavar="NAME",  # checked by check_target_name: one line
        help=f"target chip, one of {', '.join(target_names())} (default: the module's "
        f"ge.target, else {DEFAULT_TARGET}); must agree with the module's",
    )
    chip.add_argument(
        "--target-file",
        metavar="TOML",
        help="a target description of your own (the keys of target/*.toml; its name must "
        "agree with the module's ge.target)",
    )
    device.add_argument("--timing-only", action="store_true", help="model the time only: no numbers, no weights")
    device.add_argument("--trace", metavar="JSON", help="write a Chrome/Perfetto trace of the modeled run")
    device.add_argument("--op-summary", metavar="CSV", help="write the per-task op summary (msprof style)")
    device.add_argument(
        "--schedule-seed",
        metavar="N",
        type=int,
        help="compute the outputs with every intermediate in one arena at its planned offset and "
        "the tasks in a random order the streams and events allow, drawn from seed N",
    )
    training = parser.add_argument_group("training steps (graphs made by apply-optimizer)")
    training.add_argument(
        "--steps", metavar="N", type=positive, default=1, help="run N steps, each on the state the last one wrote"
    )
    training.add_argument("--save-state", metavar="SAFETENSORS", help="write the parameters and optimizer slots")
    training.add_argument("--load-state", metavar="SAFETENSORS", help="start from a state --save-state wrote")
    args = parser.parse_args(argv)
    if not args.timing_only and args.inputs is None and args.random_inputs is None:
        parser.error("one of the arguments --inputs --random-inputs is required (or --timing-only)")
    if args.dims is not None and args.random_inputs is None:
        parser.error("--dims sizes the random inputs: give --random-inputs too")
    with (
        reported_errors("ge-run", args.debug, args.verbose),
        tensor_byte_limit(args.max_tensor_bytes),
        op_libraries(args.load_op_library),
    ):
        execute(args)


def execute(args) -> None:
    """The whole job; its files are written only at the end, and only if everything succeeded."""
    keep_freed_memory()  # a tool's process is its own: keep freed blocks for the next op (runner.py)
    outputs = Outputs()
    outputs.protect(args.program, "program")
    if args.inputs:
        outputs.protect(args.inputs, "inputs")
    if args.load_state:
        outputs.protect(args.load_state, "state (--load-state)")
    reserved = (
        (args.output, "outputs (-o)"),
        (args.trace, "trace"),
        (args.op_summary, "op summary"),
        (args.save_state, "state (--save-state)"),
    )
    for path, role in reserved:
        if path:
            outputs.reserve(path, role)
    with doing(f"loading {args.program}"):
        module, weights = load_program(args.program, not args.timing_only, args.max_tensor_bytes)
    host = has_host_main(module)
    if host and (args.timing_only or args.trace or args.op_summary):
        raise UserError(
            f"{args.program}: @main runs control flow or shapes known only at run time, so its "
            "path and time depend on the inputs: run it with inputs (without --timing-only, --trace or "
            "--op-summary) for its modeled time"
        )
    if is_lowered(module) and not host:
        with doing("modeling the device"):
            run_on_device(module, args, outputs)
    elif args.timing_only or args.trace or args.op_summary:
        raise UserError(
            f"{args.program}: --timing-only, --trace and --op-summary need a module lowered to "
            "streams (ge-opt -p 'lower-to-tasks,plan-memory,lower-to-streams')"
        )
    if not args.timing_only:
        try:
            signature = input_signature(module)
        except InputError as e:
            raise UserError(f"{args.program}: {e}") from None
        if args.inputs:
            with doing(f"reading inputs from {args.inputs}"):
                inputs = load_inputs(args.inputs, signature)
        else:
            with doing("making random inputs"):
                try:
                    inputs = random_inputs(module, args.random_inputs, args.dims)
                except InputError as e:
                    raise UserError(f"{args.program}: {e}") from None
        run_and_report(args, module, inputs, weights, outputs)
    with doing("writing the outputs"):
        outputs.commit()


def run_and_report(args, module, inputs, weights, outputs: Outputs) -> None:
    """Runs the graph (`--steps` times for a training step, each reading the state the last wrote)
    and hands the outputs, the state and the summary to `outputs` / stdout."""
    marked = state_outputs(module)
    for option, given in (
        ("--steps", args.steps > 1),
        ("--save-state", args.save_state),
        ("--load-state", args.load_state),
    ):
        if given:
            require_state(args.program, marked, option)
    initial = None
    if args.load_state:
        with doing(f"reading the state from {args.load_state}"):
            initial = load_state(args.load_state, marked)

    host_runs: list[HostRecord] = []

    replicas = replica_count(main_function(module))

    def run_one(m, one_inputs, step_weights):
        if args.schedule_seed is None:
            return run(m, one_inputs, step_weights)
        return run_in_arena(m, one_inputs, step_weights, args.schedule_seed)

    def run_step(step_weights):
        if replicas > 1:
            each = run_each_replica(module, inputs, step_weights, run_one=run_one)
            if args.print:
                for rank, results in enumerate(each):
                    print(scalar_line(f"replica {rank}", results))
            return each[0]
        if has_host_main(module):
            results, record = run_host(module, inputs, step_weights, bind=bind)
            host_runs.append(record)
            return results
        return (
            run(module, inputs, step_weights)
            if args.schedule_seed is None
            else run_in_arena(module, inputs, step_weights, args.schedule_seed)
        )

    def on_step(step: int, results) -> None:
        if args.print and args.steps > 1:
            print(scalar_line(f"step {step}", results))

    start = time.perf_counter()
    try:
        with doing(f"running {args.program}"):
            results, state = run_steps(run_step, weights, marked, args.steps, on_step, initial)
    except InputError as e:
        raise UserError(f"{args.inputs or 'inputs'}: {e}") from None
    except NotLowered as e:
        raise UserError(f"{args.program}: --schedule-seed: {first_line(e)}") from None
    except (KernelError, InterpretationError, BindError) as e:
        raise UserError(f"{args.program}: {first_line(e)}") from None
    seconds = time.perf_counter() - start
    if args.output:
        outputs.add(args.output, output_contents(args.output, results))
    if args.save_state:
        outputs.add(args.save_state, state_writer(state))
    if host_runs and host_runs[-1].calls:
        target, source = device_target(module, args)
        timed = host_time(host_runs[-1], target)
        print(f"simulating target {target.name} ({source}), along the path these inputs took")
        labels = f" ({timed.labels} label tasks on the device)" if timed.labels else ""
        print(
            f"modeled {timed.total_s * 1e6:.1f} us: {timed.calls} function runs {timed.device_s * 1e6:.1f} us{labels}, "
            f"{timed.reads} values read back by the host {timed.reads_s * 1e6:.1f} us"
        )
    if args.print or not args.output:
        print(summary(results, seconds))


def output_contents(path: str, results: dict[str, np.ndarray]):
    """The -o file's contents by its suffix: a safetensors writer, or .npz bytes in which the
    types numpy has no descriptor for (bfloat16, float8, int4) are raw bytes of their width."""
    if Path(path).suffix == SAFETENSORS:
        arrays = {name: np.ascontiguousarray(a) for name, a in results.items()}
        return lambda target: save(target, arrays)
    buffer = io.BytesIO()
    np.savez(buffer, **{name: _numpy_readable(a) for name, a in results.items()})  # type: ignore[arg-type]
    return buffer.getvalue()


def _numpy_readable(array: np.ndarray) -> np.ndarray:
    """`array`, or its bytes as a void array when its dtype is an ml_dtypes type: numpy writes some
    of those with a descriptor it cannot read back (float8_e5m2 as '<f1')."""
    if is_ml_dtype(array.dtype):
        return np.ascontiguousarray(array).view(np.dtype(f"V{array.dtype.itemsize}"))
    return array


if __name__ == "__main__":
    main()
