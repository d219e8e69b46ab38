"""ge-translate: model formats in and out of the ge dialect.

    ge-translate --import-onnx model.onnx -o model.mlir     # weights go to model.safetensors beside it

The IR and its sidecar are written together, whole or not at all, after the import succeeded.
"""

from __future__ import annotations

import argparse
import sys

from xdsl.dialects.builtin import StringAttr

from ge.frontend.sidecar import SIDECAR_ATTR, save
from ge.ge_dialects import ge
from ge.tools.common import UserError, add_contract_arguments, doing, import_onnx_file, print_module, reported_errors
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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="ge-translate", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--import-onnx", metavar="MODEL", required=True, help="ONNX model to import")
    parser.add_argument("-o", "--output", metavar="FILE", help="IR file to write (default: stdout)")
    parser.add_argument(
        "--inline-limit",
        type=int,
        default=ge.ConstantOp.INLINE_LIMIT,
        help="constants with at most this many elements stay inline (default %(default)s)",
    )
    parser.add_argument(
        "--training",
        action="store_true",
        help="import for training: every float initializer of rank >= 1 becomes a weight (a parameter "
        "autodiff can train), however small",
    )
    add_contract_arguments(parser)
    args = parser.parse_args(argv)
    with reported_errors("ge-translate", args.debug):
        translate_onnx(args.import_onnx, args.output, args.inline_limit, args.max_tensor_bytes, args.training)


if __name__ == "__main__":
    main()
