"""ge-translate: model formats in and out of the ge dialect.

    ge-translate --import-onnx model.onnx -o model.mlir     # weights go to model.safetensors beside it
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from frontend.sidecar import SIDECAR_ATTR, save
from ge_dialects import ge
from tools.common import UserError, import_onnx_file, print_module, reported_errors, write_atomic
from xdsl.dialects.builtin import StringAttr


def translate_onnx(model_path: str, output: str | None, inline_limit: int) -> None:
    module, weights = import_onnx_file(model_path, inline_limit)
    if weights and output is None:
        raise UserError(f"{model_path}: the model has {len(weights)} weights above the inline limit; "
                        "give -o FILE.mlir so they can be written to a sidecar beside it")
    if output is None:
        sys.stdout.write(print_module(module))
        return
    out = Path(output)
    if weights:
        sidecar = out.with_suffix(".safetensors")
        module.attributes[SIDECAR_ATTR] = StringAttr(sidecar.name)
        text = print_module(module)  # printed before anything is written: a failure leaves no file
        write_atomic(sidecar, lambda tmp: save(tmp, weights))
    else:
        text = print_module(module)
    write_atomic(out, text)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="ge-translate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--import-onnx", metavar="MODEL", required=True, help="ONNX model to import")
    parser.add_argument("-o", "--output", metavar="FILE", help="IR file to write (default: stdout)")
    parser.add_argument("--inline-limit", type=int, default=ge.ConstantOp.INLINE_LIMIT,
                        help="constants with at most this many elements stay inline (default %(default)s)")
    args = parser.parse_args(argv)
    with reported_errors("ge-translate"):
        translate_onnx(args.import_onnx, args.output, args.inline_limit)


if __name__ == "__main__":
    main()
