"""Models at an older opset (1 to 12; the model zoo's are at 7 to 12) are upgraded to the oldest opset the
importer reads natively, with onnx's own version converter, before anything is imported.

The converter is onnx's C++ code: it sees only a model `validate` has already checked, and every
failure it reports becomes one line naming the node it stopped at."""

from __future__ import annotations

import logging
import re

import onnx
from onnx import version_converter

from ge.frontend.onnx_ops import DEFAULT_DOMAINS, MIN_OPSET, OnnxImportError, node_name

log = logging.getLogger(__name__)
"""Notes of the `ge` logger (the tools print them with -v)."""

_STOPPED_AT = re.compile(r"\bfor ([A-Za-z_][A-Za-z0-9_]*)\s*$")
"""The operator in the converter's "No Adapter From Version $7 for Scan"."""


def upgraded(model: onnx.ModelProto, opset: int) -> tuple[onnx.ModelProto, int]:
    """(model, opset) at MIN_OPSET or newer: `model` itself when it is already there, else the
    version converter's copy (a note on this module's logger says so)."""
    if opset >= MIN_OPSET:
        return model, opset
    try:
        converted = version_converter.convert_version(model, MIN_OPSET)
    except Exception as e:  # the converter raises RuntimeError, and others on shapes it cannot adapt
        raise OnnxImportError(_failure(model, opset, str(e))) from None
    log.info("the model was upgraded from opset %d to %d (onnx.version_converter)", opset, MIN_OPSET)
    return converted, MIN_OPSET


def _failure(model: onnx.ModelProto, opset: int, message: str) -> str:
    """One line for a conversion the converter refused: the node (the first of the operator it names)."""
    reason = message.strip().splitlines()[-1] if message.strip() else "no reason given"
    reason = re.sub(r"^.*?(Assertion `[^`]*` failed: )", "", reason)
    match = _STOPPED_AT.search(reason)
    op_type = match.group(1) if match else None
    for index, node in enumerate(model.graph.node):
        if node.op_type == op_type and node.domain in DEFAULT_DOMAINS:
            return (
                f"node '{node_name(node, index)}' ({node.op_type}, opset {opset}): onnx's version converter "
                f"cannot upgrade it to opset {MIN_OPSET} (export the model at opset {MIN_OPSET} or newer)"
            )
    return f"onnx's version converter cannot upgrade the model from opset {opset} to {MIN_OPSET}: {reason}"
