"""Custom operators in the Python API: `ge.register_op` in a plugin file, `ge.load_op_library` to
run one, `ge.op_library` to make libraries known while a block runs (docs/custom_ops.md)."""

from __future__ import annotations

from pathlib import Path

from ge.api.errors import GEError
from ge.frontend.onnx_ops import check_claims
from ge.ge_dialects.op_library import OpLibrary, OpLibraryError, TensorSpec, op_library, register_op
from ge.ge_dialects.op_library import load_op_library as _load


def load_op_library(path: str | Path) -> OpLibrary:
    """Runs the plugin file (Python, run as is) and returns the operators it registers; a plugin that
    fails, registers nothing or claims an operator the importer reads itself raises GEError."""
    try:
        library = _load(path)
        check_claims(library)
    except OpLibraryError as e:
        raise GEError(str(e)) from None
    return library


__all__ = ["OpLibrary", "TensorSpec", "load_op_library", "op_library", "register_op"]
