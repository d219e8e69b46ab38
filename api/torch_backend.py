"""`torch.compile(model, backend="ge")`: TorchAir's path, a torch.compile backend over ge.

Dynamo hands the backend an FX graph; AOT autograd (`aot_autograd`, core ATen decompositions)
turns it into the ATen graph frontend/torch_fx.py imports. Each graph is imported, compiled by the
pipeline ge-compile runs (lowering/compile.py: ge-optimize, partition, tasks, memory, streams) and
run on the reference interpreter at the stream level (`run="ge"`: the ge-level graph instead);
the callable returned takes and gives torch tensors. Options, as `torch.compile(..., options={})`:

    level (0-3, default 3), target (a chip name), precision_mode, streams, mode ("graph" or "op"),
    run ("stream" or "ge")

Every graph input is an input of the ge graph (parameters too: they may change between calls), so
weights are not folded into it. An operator ge has no converter for runs in eager PyTorch, after
one warning naming it: the graph's parts of converted operators are compiled (torch's
capability-based partitioner) and the rest runs eagerly. A graph with an input that is not a
tensor (a size Dynamo passes for dynamic shapes) runs eagerly whole, as does one that needs
gradients: the backend compiles inference. `ge_backend.last_report()` is the modeled device report
of the last graph compiled.

Registered under the name "ge" by the package's `torch_dynamo_backends` entry point.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

OPTION_NAMES = ("level", "target", "precision_mode", "streams", "mode", "run")


class BackendOptionError(ValueError):
    """An option torch.compile passed that the backend does not know, or a bad value (one line)."""


@dataclass
class Compiled:
    """One compiled graph: the module run on each call, and how its outputs come back."""

    module: Any
    input_names: list[str]
    output_names: list[str]
    run_level: str
    single: bool = False  # the graph returns one tensor, not a tuple (a part of a partitioned graph)

    def __call__(self, *args: Any) -> list[Any]:
        import torch

        from ge.interpreter.runner import run

        feeds = {n: a.detach().cpu().numpy() for n, a in zip(self.input_names, args)}
        results = run(self.module, feeds)
        return [torch.from_numpy(np.ascontiguousarray(results[n])) for n in self.output_names]


def CompiledPart(compiled: Compiled) -> Any:
    """A compiled part of a partitioned graph as the submodule it replaces (one tensor or a tuple)."""
    import torch

    class Part(torch.nn.Module):
        def forward(self, *args: Any) -> Any:
            outputs = compiled(*args)
            return outputs[0] if compiled.single else tuple(outputs)

    return Part()


@dataclass(eq=False)  # Dynamo keys its caches by the backend: hashed by identity
class GeBackend:
    """The backend (a callable Dynamo calls once per graph), with what it compiled last."""

    reports: list[str] = field(default_factory=list)
    fallbacks: list[str] = field(default_factory=list)

    def __call__(self, gm: Any, example_inputs: Any, options: dict[str, Any] | None = None) -> Any:
        import torch
        from torch._decomp import core_aten_decompositions
        from torch._dynamo.backends.common import aot_autograd

        settings = _settings(options or {})
        if torch.is_grad_enabled() and any(getattr(x, "requires_grad", False) for x in example_inputs):
            return self._eager(gm, "a graph that needs gradients (ge's backend compiles inference)")

        def forward(fx: Any, inputs: Any) -> Any:
            return self.compile_aten(fx, inputs, settings)

        return aot_autograd(fw_compiler=forward, decompositions=core_aten_decompositions())(gm, example_inputs)

    def compile_aten(self, fx: Any, inputs: Any, settings: dict[str, Any]) -> Any:
        """The ATen graph `fx` compiled; with operators ge lacks, its parts that ge has compiled and
        the rest left to eager PyTorch; `fx` itself where nothing can be compiled."""
        from ge.frontend.torch_fx import converter_table, overload_name

        table = converter_table()
        missing = sorted({overload_name(n.target) for n in fx.graph.nodes if n.op == "call_function"} - set(table))
        if missing:
            return self._partitioned(fx, settings, missing)
        compiled = self._compile_graph(fx, settings)
        if isinstance(compiled, str):
            return self._eager(fx, compiled)
        return compiled

    def _compile_graph(self, fx: Any, settings: dict[str, Any]) -> Compiled | str:
        """`fx` (every operator converted) compiled, or why it cannot be."""
        from ge.frontend.onnx_ops import OnnxImportError
        from ge.frontend.torch_fx import TorchImportError, to_onnx

        placeholders = [n for n in fx.graph.nodes if n.op == "placeholder"]
        strange = [n.name for n in placeholders if not hasattr(n.meta.get("val"), "shape")]
        if strange:
            return f"inputs that are not tensors ({', '.join(strange)})"
        output = next(n for n in fx.graph.nodes if n.op == "output")
        single = not isinstance(output.args[0], (tuple, list))
        results = [output.args[0]] if single else list(output.args[0])
        if not all(hasattr(r, "meta") for r in results):
            return "outputs that are not tensors"
        names = [f"output{i}" for i in range(len(results))]
        try:
            model = to_onnx(fx, [(n, n.name) for n in placeholders], {}, results, "torch_compile", names)
            module = self._compile(model, settings)
        except (TorchImportError, OnnxImportError) as e:
            return str(e).splitlines()[0]
        return Compiled(module, [n.name for n in placeholders], names, settings["run"], single)

    def _partitioned(self, fx: Any, settings: dict[str, Any], missing: list[str]) -> Any:
        """`fx` with each maximal part of converted operators compiled (torch's capability-based
        partitioner), the operators in `missing` left to eager PyTorch."""
        from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
        from torch.fx.passes.operator_support import OperatorSupportBase

        from ge.frontend.torch_fx import converter_table, overload_name

        table = converter_table()

        class Converted(OperatorSupportBase):
            def is_node_supported(self, submodules: Any, node: Any) -> bool:
                if node.op != "call_function" or overload_name(node.target) not in table:
                    return False
                source = node.args[0] if overload_name(node.target) == "getitem" else None
                return source is None or (source.op == "call_function" and overload_name(source.target) in table)

        partitioner = CapabilityBasedPartitioner(fx, Converted(), allows_single_node_partition=True)
        fused = partitioner.fuse_partitions(partitioner.propose_partitions())
        parts = [n for n in fused.graph.nodes if n.op == "call_module" and str(n.target).startswith("fused_")]
        compiled = 0
        for node in parts:
            part = self._compile_graph(getattr(fused, str(node.target)), settings)
            if isinstance(part, Compiled):
                setattr(fused, str(node.target), CompiledPart(part))
                compiled += 1
        fused.recompile()
        message = (
            f"ge backend: {', '.join(missing)} run in eager PyTorch, without a ge converter; "
            f"{compiled} of the graph's {len(parts)} other parts compiled"
        )
        self.fallbacks.append(message)
        warnings.warn(message, stacklevel=3)
        return fused

    def _compile(self, model: Any, settings: dict[str, Any]) -> Any:
        from ge.frontend.onnx_importer import import_model
        from ge.ge_dialects.ge.weights import attach_weights

        module, weights = import_model(model)
        attach_weights(module, weights)
        if settings["run"] == "ge":
            from ge.ge_dialects.context import make_context
            from ge.passes.ge_optimize import GeOptimizePass

            GeOptimizePass(level=settings["level"], precision_mode=settings["precision_mode"]).apply(
                make_context(), module
            )
            self.reports.append("run at the ge level: no device report")
            return module
        from ge.ge_dialects.ge.target_attr import resolve_target_name
        from ge.interpreter.stream_executor import memory_figures, report, simulate_module
        from ge.lowering.compile import compile_module
        from ge.target import load_target

        compile_module(
            module,
            level=settings["level"],
            target=settings["target"],
            precision_mode=settings["precision_mode"],
            streams=settings["streams"],
            mode=settings["mode"],
        )
        chip, _ = resolve_target_name(module, settings["target"])
        from ge.ge_dialects.ge.control_flow import lowering_leaves
        from ge.interpreter.runner import main_function

        if lowering_leaves(main_function(module)):
            self.reports.append("its path depends on the inputs: no report ahead of a run")
        else:
            self.reports.append(report(simulate_module(module, load_target(chip)), memory_figures(module)))
        return module

    def _eager(self, graph: Any, why: str) -> Any:
        message = f"ge backend: the graph runs in eager PyTorch: {why}"
        self.fallbacks.append(message)
        warnings.warn(message, stacklevel=3)
        return graph.forward

    def last_report(self) -> str | None:
        """The modeled device report of the last graph compiled (None before any)."""
        return self.reports[-1] if self.reports else None


def _settings(options: dict[str, Any]) -> dict[str, Any]:
    """The backend's options with their defaults, each checked (one line for a bad one)."""
    unknown = sorted(set(options) - set(OPTION_NAMES))
    if unknown:
        raise BackendOptionError(f"ge backend: unknown options {unknown} (options: {', '.join(OPTION_NAMES)})")
    settings = {
        "level": 3,
        "target": None,
        "precision_mode": "must_keep_origin_dtype",
        "streams": 0,
        "mode": "graph",
        "run": "stream",
    }
    settings.update(options)
    if settings["level"] not in (0, 1, 2, 3):
        raise BackendOptionError(f"ge backend: level {settings['level']!r} is not one of 0, 1, 2, 3")
    if settings["run"] not in ("stream", "ge"):
        raise BackendOptionError(f"ge backend: run {settings['run']!r} is not 'stream' or 'ge'")
    if settings["mode"] not in ("graph", "op"):
        raise BackendOptionError(f"ge backend: mode {settings['mode']!r} is not 'graph' or 'op'")
    return settings


ge_backend = GeBackend()
"""The backend torch.compile finds under the name "ge"."""
