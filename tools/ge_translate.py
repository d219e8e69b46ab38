"""ge-translate: model formats in and out of the ge dialect.

    ge-translate --import-onnx model.onnx -o model.mlir     # weights go to model.safetensors beside it
    ge-translate --import-torch model.pt2 -o model.mlir     # a torch.export program (torch.export.save)
    ge-translate model.mlir --export-onnx -o model.onnx      # ge-level or fused-level IR back to ONNX
    ge-translate model.mlir --export-dot [--remarks] -o g.dot   # Graphviz DOT (default: stdout)

The IR and its sidecar are written together, whole or not at all, after the import succeeded; an
export writes its one file only after the whole export succeeded (docs/export.md).
"""

from __future__ import annotations

import argparse
import sys

from xdsl.dialects.builtin import StringAttr

from ge.frontend.sidecar import SIDECAR_ATTR, save
from ge.ge_dialects import ge
from ge.tools.common import (
    UserError,
    add_contract_arguments,
    add_op_library_argument,
    doing,
    import_onnx_file,
    import_torch_file,
    op_libraries,
    print_module,
    reported_errors,
)
from ge.tools.outputs import Outputs, reserve_ir_output


def translate_onnx(
    model_path: str,
    output: str | None,
    inline_limit: int = ge.ConstantOp.INLINE_LIMIT,
    max_tensor_bytes: int | None = None,
    training: bool = False,
) -> None:
    outputs = Outputs()
    sidecar = reserve_ir_output(outputs, output) if output is not None else None
    module, weights = import_onnx_file(model_path, inline_limit, max_tensor_bytes, training)
    write_imported(module, weights, model_path, output, outputs, sidecar)


def translate_torch(model_path: str, output: str | None, max_tensor_bytes: int | None = None) -> None:
    outputs = Outputs()
    sidecar = reserve_ir_output(outputs, output) if output is not None else None
    module, weights = import_torch_file(model_path, max_tensor_bytes)
    write_imported(module, weights, model_path, output, outputs, sidecar)


def write_imported(module, weights, model_path: str, output: str | None, outputs: Outputs, sidecar) -> None:
    """Prints an imported module to `output` (stdout without it) with its weights' sidecar."""
    if weights and output is None:
        raise UserError(
            f"{model_path}: the model has {len(weights)} weights above the inline limit; "
            "give -o FILE.mlir so they can be written to a sidecar beside it"
        )
    with doing("printing the IR"):
        if weights:
            assert sidecar is not None, "weights without -o were rejected above"
            module.attributes[SIDECAR_ATTR] = StringAttr(sidecar.name)
        text = print_module(module)
    if output is None:
        sys.stdout.write(text)
        return
    if weights:
        assert sidecar is not None, "weights without -o were rejected above"
        outputs.add(sidecar, lambda tmp: save(tmp, weights))
    outputs.add(output, text)
    with doing(f"writing {output}"):
        outputs.commit()


def export_onnx(path: str, output: str | None) -> None:
    """The IR file (or an ONNX model, imported in memory) as ONNX; see frontend/onnx_exporter.py."""
    from ge.frontend.onnx_exporter import OnnxExportError, export_module
    from ge.tools.ge_run import load_program

    if output is None:
        raise UserError("--export-onnx writes a binary model: give -o FILE.onnx")
    outputs = Outputs()
    outputs.protect(path, "input")
    outputs.reserve(output, "ONNX output (-o)")
    module, weights = load_program(path)
    try:
        with doing("exporting ONNX"):
            model = export_module(module, weights)
    except OnnxExportError as e:
        raise UserError(f"{path}: {e}") from None
    outputs.add(output, model.SerializeToString())
    with doing(f"writing {output}"):
        outputs.commit()


def export_dot(path: str, output: str | None, remarks: bool) -> None:
    """The IR file (or an ONNX model) as Graphviz DOT; see tools/dot_export.py."""
    from ge.tools.dot_export import module_to_dot
    from ge.tools.ge_run import load_program

    outputs = Outputs()
    if output is not None:
        outputs.protect(path, "input")
        outputs.reserve(output, "DOT output (-o)")
    module, _ = load_program(path, with_weights=False)
    try:
        text = module_to_dot(module, remarks=remarks)
    except UserError as e:
        raise UserError(f"{path}: {e}") from None
    if output is None:
        sys.stdout.write(text)
        return
    outputs.add(output, text)
    with doing(f"writing {output}"):
        outputs.commit()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="ge-translate", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("input", nargs="?", metavar="IR", help="IR file (.mlir, or .onnx) to export")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--import-onnx", metavar="MODEL", help="ONNX model to import")
    mode.add_argument(
        "--import-torch", metavar="MODEL", help="torch.export program to import (.pt2, torch.export.save)"
    )
    mode.add_argument("--export-onnx", action="store_true", help="write the IR as an ONNX model (-o FILE.onnx)")
    mode.add_argument("--export-dot", action="store_true", help="write the IR as a Graphviz DOT graph")
    parser.add_argument(
        "--remarks",
        action="store_true",
        help="with --export-dot: add the fusions fuse-ops rejects on this graph, as notes on their ops",
    )
    parser.add_argument("-o", "--output", metavar="FILE", help="file to write (default: stdout)")
    parser.add_argument(
        "--inline-limit",
        type=int,
        default=ge.ConstantOp.INLINE_LIMIT,
        help="constants with at most this many elements stay inline (default %(default)s)",
    )
    parser.add_argument(
        "--training",
        action="store_true",
        help="store every float initializer of rank >= 1 in the sidecar, however small (every float "
        "initializer is a parameter autodiff trains either way)",
    )
    add_op_library_argument(parser)
    add_contract_arguments(parser, notes=True)
    args = parser.parse_args(argv)
    imported = args.import_onnx or args.import_torch
    if imported is not None and args.input is not None:
        flag = "--import-onnx" if args.import_onnx else "--import-torch"
        parser.error(f"{flag} takes the model itself; unexpected argument '{args.input}'")
    if imported is None and args.input is None:
        parser.error("--export-onnx and --export-dot need the IR file to read")
    if args.remarks and not args.export_dot:
        parser.error("--remarks goes with --export-dot")
    with reported_errors("ge-translate", args.debug, args.verbose), op_libraries(args.load_op_library):
        if args.export_onnx:
            export_onnx(args.input, args.output)
        elif args.export_dot:
            export_dot(args.input, args.output, args.remarks)
        elif args.import_torch:
            translate_torch(args.import_torch, args.output, args.max_tensor_bytes)
        else:
            translate_onnx(args.import_onnx, args.output, args.inline_limit, args.max_tensor_bytes, args.training)


if __name__ == "__main__":
    main()
