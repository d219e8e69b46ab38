"""ge-compile: a model (ONNX, or ge IR with its sidecar) to a compiled artifact, in the spirit of ATC.

    ge-compile model.onnx -O3 --target ascend910b -o model.ge
    ge-compile model.mlir -O1 --precision-mode force_fp16 --streams 4 --mode op -o model.ge
    ge-run model.ge --random-inputs 0 --print

The compile is one pipeline, `ge-opt model.mlir -p '<pipeline>'` reproduces it (lowering/compile.py;
the artifact's manifest records it). The artifact (tools/artifact.py, docs/artifacts.md) is one file:
the stream-level IR, its weights and a manifest with a content hash. Unless `--no-cache`, the result
is kept in the compile cache ($GE_CACHE_DIR, else ~/.cache/ge-compiler), so compiling an unchanged
model again with the same options is a verified copy. Nothing is written when anything fails.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ge.ge_dialects import stream
from ge.interpreter.kernels import format_bytes, tensor_byte_limit
from ge.passes.ge_optimize import PRECISION_MODES
from ge.target import DEFAULT_TARGET, target_names
from ge.tools.artifact import SUFFIX
from ge.tools.common import (
    UserError,
    add_contract_arguments,
    add_op_library_argument,
    doing,
    op_libraries,
    reported_errors,
)
from ge.tools.compile_cache import (
    COMPILE_SWITCHES,
    DEFAULT_TARGET_ALIAS,
    OPTIMIZE_OPTIONS,
    CompileOptions,
    compile_graph,
)
from ge.tools.ge_run import load_program  # the reading ge-run does: ONNX import, or IR and its sidecar
from ge.tools.outputs import Outputs
from ge.tools.progress import PassProgress, wanted

INPUT_SUFFIXES = (".onnx", ".mlir")


def count(text: str) -> int:
    """An argparse type: a non-negative integer."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"'{text}' is not a count (a non-negative integer)")
    return value


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="ge-compile", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("model", help="an ONNX model (.onnx) or ge-level IR (.mlir, with its sidecar)")
    parser.add_argument("-o", "--output", metavar="MODEL.ge", required=True, help="the artifact to write")
    parser.add_argument(
        "-O", dest="level", type=int, choices=range(4), default=3, metavar="LEVEL", help="optimization level 0-3 (-O3)"
    )
    parser.add_argument(
        "--target",
        metavar="NAME",  # checked by CompileOptions.check: one line
        default=DEFAULT_TARGET_ALIAS,
        help=f"chip, one of {', '.join(target_names())}, or '{DEFAULT_TARGET_ALIAS}': the model's "
        f"ge.target, else {DEFAULT_TARGET} (the default)",
    )
    parser.add_argument(
        "--precision-mode",
        metavar="MODE",
        default="must_keep_origin_dtype",
        help=f"GE's precision mode: {', '.join(PRECISION_MODES)} (default must_keep_origin_dtype)",
    )
    parser.add_argument(
        "--streams", metavar="N", type=count, default=0, help="streams to use (0, the default: the lowering chooses)"
    )
    parser.add_argument(
        "--mode", metavar="MODE", default="graph", help=f"launch mode: {', '.join(stream.MODES)} (default graph)"
    )
    parser.add_argument(
        "--no-reuse-memory",
        action="store_true",
        help="every buffer its own memory (GE's ge.exec.disableReuseMemory; plan-memory{reuse=false})",
    )
    parser.add_argument(
        "--single-stream",
        action="store_true",
        help="every task on one stream (GE's ge.enableSingleStream; lower-to-streams{single_stream=true})",
    )
    parser.add_argument(
        "--ge-option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a GE option the compile takes besides the flags above: "
        + ", ".join([*COMPILE_SWITCHES, *OPTIMIZE_OPTIONS]),
    )
    parser.add_argument("--no-cache", action="store_true", help="compile even if the cache holds the result")
    parser.add_argument(
        "--quiet", action="store_true", help="print nothing but errors (no summary, no progress line on a terminal)"
    )
    add_op_library_argument(parser)
    add_contract_arguments(parser, notes=True)
    args = parser.parse_args(argv)
    with (
        reported_errors("ge-compile", args.debug, args.verbose),
        tensor_byte_limit(args.max_tensor_bytes),
        op_libraries(args.load_op_library),
    ):
        execute(args)


def execute(args) -> None:
    options = CompileOptions(
        args.level,
        args.target,
        args.precision_mode,
        args.streams,
        args.mode,
        reuse=not args.no_reuse_memory,
        single_stream=args.single_stream,
    ).with_ge_options(args.ge_option)
    options.check()  # a bad option fails before the model is read
    if Path(args.model).suffix not in INPUT_SUFFIXES:
        raise UserError(f"{args.model}: ge-compile reads .onnx models or .mlir IR, not '{Path(args.model).suffix}'")
    if Path(args.output).suffix != SUFFIX:
        raise UserError(f"{args.output}: the artifact must be named *{SUFFIX} (ge-run tells it by the suffix)")
    outputs = Outputs()
    outputs.protect(args.model, "model")
    outputs.reserve(args.output, "artifact (-o)")
    with doing(f"loading {args.model}"):
        module, _ = load_program(args.model)
    with doing(f"compiling {args.model}"), PassProgress(args.model, wanted(args.quiet)) as progress:
        try:
            compiled = compile_graph(module, options, use_cache=not args.no_cache, progress=progress)
        except UserError as e:
            raise UserError(f"{args.model}: {e}") from None
    outputs.add(args.output, compiled.artifact.write_to)
    with doing(f"writing {args.output}"):
        outputs.commit()
    if args.quiet:
        return
    if compiled.cache_note:
        print(f"ge-compile: warning: {compiled.cache_note}", file=sys.stderr)
    manifest = compiled.artifact.manifest
    print(
        f"{args.output}: {manifest['num_operators']} kernels for {manifest['target']}, "
        f"{format_bytes(compiled.artifact.size)}, "
        + (
            f"from the cache in {compiled.seconds:.2f} s"
            if compiled.cache_hit
            else f"compiled in {compiled.seconds:.2f} s"
        )
    )
    print(f"pipeline: {manifest['pipeline']}")


if __name__ == "__main__":
    main()
