"""`ge.GraphParser` and `ge.build_graph`: graphs from ONNX files, ONNX models in memory, ge IR files,
torch.export programs and PyTorch modules, through the same importers and checks as the tools
(frontend/onnx_importer.py, frontend/torch_fx.py, tools/common.py): a model `ge-translate` refuses
is refused here with the same one line, as GEError.
"""

from __future__ import annotations

import importlib
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

    def parse_torch(self, program: Any, name: str | None = None) -> Graph:
        """A torch.export ExportedProgram (in memory, or a .pt2 file torch.export.save wrote) as a
        ge-level graph: `ge-translate --import-torch`. Parameters and buffers become weights under
        their state_dict names; a dim exported as a `torch.export.Dim` stays symbolic with its range."""
        from ge.tools.common import import_torch_file

        if isinstance(program, (str, Path)):
            with user_errors():
                module, weights = import_torch_file(str(program), self.max_tensor_bytes)
            attach_weights(module, weights)
            return Graph.from_module(module, Path(program).stem)
        module, weights = _import_program(program, name or "program")
        return Graph.from_module(module, name or "main")

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


def _import_program(program: Any, where: str, input_names=None, output_names=None):
    """An ExportedProgram in memory imported, its weights attached; refusals as GEError."""
    from ge.frontend.onnx_ops import OnnxImportError
    from ge.frontend.torch_fx import TorchImportError, import_exported_program
    from ge.tools.common import first_line

    try:
        module, weights = import_exported_program(program, input_names, output_names)
    except (TorchImportError, OnnxImportError) as e:
        raise GEError(f"{where}: {first_line(e)}") from None
    attach_weights(module, weights)
    return module, weights


def build_graph(
    torch_module: Any,
    example_inputs: Any,
    input_names: Sequence[str] | None = None,
    output_names: Sequence[str] | None = None,
    dynamic_shapes: Any = None,
) -> Graph:
    """A PyTorch module as a ge-level graph: `torch.export.export` (the module in eval mode; its
    `dynamic_shapes` as torch.export takes them) and then `GraphParser().parse_torch`. Needs the
    optional extra: pip install ge-compiler[torch]."""
    try:
        torch = importlib.import_module("torch")  # the optional extra; untyped here
    except ImportError:
        raise GEError(TORCH_MISSING) from None
    args = tuple(example_inputs) if isinstance(example_inputs, list | tuple) else (example_inputs,)
    name = type(torch_module).__name__
    was_training = getattr(torch_module, "training", False)
    try:
        if was_training:
            torch_module.eval()
        program = torch.export.export(torch_module, args, dynamic_shapes=dynamic_shapes)
    except Exception as e:  # the exporter's refusals (graph breaks, data-dependent control flow) are the user's
        text = str(e).strip().splitlines()
        raise GEError(f"build_graph: torch.export failed: {text[0] if text else type(e).__name__}") from None
    finally:
        if was_training:
            torch_module.train()
    module, _ = _import_program(program, f"build_graph({name})", input_names, output_names)
    return Graph.from_module(module, name)
