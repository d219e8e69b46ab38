"""`ge.GraphParser` and `ge.build_graph`: graphs from ONNX files, ONNX models in memory, ge IR files
and PyTorch modules, through the same importer and checks as the tools (frontend/onnx_importer.py,
tools/common.py): a model `ge-translate` refuses is refused here with the same one line, as GEError.
"""

from __future__ import annotations

import importlib
import inspect
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import onnx

from ge.api.errors import GEError, user_errors
from ge.api.graph import Graph
from ge.ge_dialects.ge.weights import attach_weights

TORCH_MISSING = "build_graph needs PyTorch (pip install ge-compiler[torch])"


class GraphParser:
    """Reads models into `Graph`s. `max_tensor_bytes` bounds every tensor the importer reads or
    allocates (as `--max-tensor-bytes` does; default 4 GiB)."""

    def __init__(self, max_tensor_bytes: int | None = None):
        self.max_tensor_bytes = max_tensor_bytes

    def parse_onnx(self, path: str | Path) -> Graph:
        """An ONNX file (external data confined to its folder) as a ge-level graph:
        `ge-translate --import-onnx model.onnx -o model.mlir`."""
        from ge.tools.common import import_onnx_file

        with user_errors():
            module, weights = import_onnx_file(str(path), max_tensor_bytes=self.max_tensor_bytes)
        attach_weights(module, weights)
        return Graph.from_module(module, Path(path).stem)

    def parse_onnx_model(self, model: onnx.ModelProto, name: str | None = None) -> Graph:
        """An ONNX model in memory (validated as a file would be; external data must already be
        loaded): what `ge-translate --import-onnx` does after reading the file."""
        from ge.frontend.onnx_importer import import_model
        from ge.interpreter.ge import TensorTooLarge
        from ge.interpreter.kernels import DEFAULT_MAX_TENSOR_BYTES, tensor_byte_limit
        from ge.tools.common import first_line

        if not isinstance(model, onnx.ModelProto):
            raise GEError(f"parse_onnx_model takes an onnx.ModelProto, got {type(model).__name__}")
        limit = DEFAULT_MAX_TENSOR_BYTES if self.max_tensor_bytes is None else self.max_tensor_bytes
        where = name or model.graph.name or "model"
        try:
            with user_errors(where), tensor_byte_limit(limit):
                module, weights = import_model(model, max_tensor_bytes=limit)
        except TensorTooLarge as e:  # import-time constant folding refused a result
            raise GEError(f"{where}: {first_line(e)}") from None
        attach_weights(module, weights)
        return Graph.from_module(module, name or model.graph.name or "main")

    def parse_ir(self, path: str | Path) -> Graph:
        """A ge IR file with its weights sidecar, as `ge-opt model.mlir` reads it (a lowered module
        reads too; the graph-level calls then refuse it as `ge-opt -p ge-optimize` would)."""
        from ge.tools.ge_run import load_program

        if Path(path).suffix == ".onnx":
            return self.parse_onnx(path)
        with user_errors():
            module, _ = load_program(str(path), max_tensor_bytes=self.max_tensor_bytes)
        return Graph.from_module(module, Path(path).stem)

    def __repr__(self) -> str:
        limit = "default" if self.max_tensor_bytes is None else f"{self.max_tensor_bytes:,}"
        return f"GraphParser(max_tensor_bytes={limit})"


def build_graph(
    torch_module: Any,
    example_inputs: Any,
    input_names: Sequence[str] | None = None,
    output_names: Sequence[str] | None = None,
    opset: int = 17,
) -> Graph:
    """A PyTorch module as a ge-level graph: `torch.onnx.export` (TorchScript exporter, in memory) and
    then `ge-translate --import-onnx`. Needs the optional extra: pip install ge-compiler[torch]."""
    try:
        torch = importlib.import_module("torch")  # the optional extra; untyped here
    except ImportError:
        raise GEError(TORCH_MISSING) from None
    args = tuple(example_inputs) if isinstance(example_inputs, list | tuple) else (example_inputs,)
    options: dict[str, Any] = {"opset_version": opset, "do_constant_folding": True}
    if input_names is not None:
        options["input_names"] = list(input_names)
    if output_names is not None:
        options["output_names"] = list(output_names)
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        options["dynamo"] = False  # the TorchScript exporter writes to a buffer and names nodes by module scope
    buffer = io.BytesIO()
    was_training = getattr(torch_module, "training", False)
    try:
        if was_training:
            torch_module.eval()
        with torch.no_grad():
            torch.onnx.export(torch_module, args, buffer, **options)
    except Exception as e:  # the exporter's refusals (an unsupported op, a bad input) are the user's
        text = str(e).strip().splitlines()
        raise GEError(f"build_graph: torch.onnx.export failed: {text[0] if text else type(e).__name__}") from None
    finally:
        if was_training:
            torch_module.train()
    model = onnx.load_model_from_string(buffer.getvalue())
    return GraphParser().parse_onnx_model(model, type(torch_module).__name__)
