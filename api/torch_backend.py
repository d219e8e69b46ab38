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
tensor (a size Dynamo passes for dynamic shapes) runs eagerly whole.

Training: where gradients are needed, AOT autograd hands over a forward graph (its outputs the
model's, the updated BatchNorm statistics and the tensors saved for the backward) and, at the
first backward, the backward graph (inputs `tangents_*` and the saved tensors); each is compiled
as above. The pair's workspace is one pool, used by the forward and then the backward, beside the
saved tensors (`TrainingMemory`, added to the backward's report). `ge_backend.last_report()` is
the modeled device report of the last graph compiled.

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
    output_names: list[str | None]  # None: an output the graph gives as None (a backward's missing gradient)
    run_level: str
    single: bool = False  # the graph returns one tensor, not a tuple (a part of a partitioned graph)

    def __call__(self, *args: Any) -> list[Any]:
        import torch

        from ge.interpreter.runner import run

        feeds = {n: a.detach().cpu().numpy() for n, a in zip(self.input_names, args)}
        results = run(self.module, feeds)
        return [
            None if n is None else torch.from_numpy(np.require(results[n], requirements="C")) for n in self.output_names
        ]


def CompiledPart(compiled: Compiled) -> Any:
    """A compiled part of a partitioned graph as the submodule it replaces (one tensor or a tuple)."""
    import torch

    class Part(torch.nn.Module):
        def forward(self, *args: Any) -> Any:
            outputs = compiled(*args)
            return outputs[0] if compiled.single else tuple(outputs)

    return Part()


@dataclass(frozen=True)
class Fallback:
    """What ran in eager PyTorch (the warning given): the operators without a converter, between
    compiled parts, or a whole graph and why."""

    message: str
    operators: tuple[str, ...] = ()
    whole_graph: str | None = None


@dataclass(frozen=True)
class TrainingMemory:
    """A training step's memory (bytes): each graph's workspace pool, and the tensors the forward
    saves for the backward (its outputs, the backward's inputs)."""

    forward_pool: int
    backward_pool: int
    saved: int

    @property
    def shared(self) -> int:
        """The pair's pools as one workspace, used by the forward, then the backward."""
        return self.saved + max(self.forward_pool, self.backward_pool)

    @property
    def apart(self) -> int:
        return self.saved + self.forward_pool + self.backward_pool


@dataclass(eq=False)  # Dynamo keys its caches by the backend: hashed by identity
class GeBackend:
    """The backend (a callable Dynamo calls once per graph), with what it compiled last."""

    reports: list[str] = field(default_factory=list)
    fallbacks: list[Fallback] = field(default_factory=list)
    last_pool: int | None = None  # the last forward's pool, paired with the backward compiled next
    training_memory: TrainingMemory | None = None

    def __call__(self, gm: Any, example_inputs: Any, options: dict[str, Any] | None = None) -> Any:
        from torch._decomp import core_aten_decompositions
        from torch._dynamo.backends.common import aot_autograd

        settings = _settings(options or {})

        def compile_graph(fx: Any, inputs: Any) -> Any:
            return self.compile_aten(fx, inputs, settings)

        return aot_autograd(
            fw_compiler=compile_graph, bw_compiler=compile_graph, decompositions=core_aten_decompositions()
        )(gm, example_inputs)

    def compile_aten(self, fx: Any, inputs: Any, settings: dict[str, Any]) -> Any:
        """The ATen graph `fx` compiled; with operators ge lacks, its parts that ge has compiled and
        the rest left to eager PyTorch; `fx` itself where nothing can be compiled."""
        import torch

        from ge.frontend.torch_fx import converter_table, overload_name

        for node in fx.graph.nodes:  # a constant tensor made in the forward (`torch.tensor(...)`): a copy
            if node.target is torch.ops.aten.lift_fresh_copy.default:
                node.target = torch.ops.aten.clone.default
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
        if not all(r is None or hasattr(r.meta.get("val"), "shape") for r in results):
            return "outputs that are not tensors"
        names = [None if r is None else f"output{i}" for i, r in enumerate(results)]
        given = [(r, n) for r, n in zip(results, names) if r is not None and n is not None]  # None: no gradient
        try:
            constants = _held_tensors(fx)
            model = to_onnx(
                fx,
                [(n, n.name) for n in placeholders],
                constants,
                [r for r, _ in given],
                "torch_compile",
                [n for _, n in given],
            )
            module = self._compile(model, settings)
        except (TorchImportError, OnnxImportError) as e:
            return str(e).splitlines()[0]
        self._pair_memory(fx, module)
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
        self.fallbacks.append(Fallback(message, tuple(missing)))
        warnings.warn(message, stacklevel=3)
        return fused

    def _pair_memory(self, fx: Any, module: Any) -> None:
        """A training step's memory when `fx` is AOT autograd's backward (its inputs `tangents_*`
        beside the forward's saved tensors): the forward's and the backward's pools are one
        workspace, used by each graph in turn (GE's reuse across the pair), beside the saved tensors."""
        from ge.interpreter.stream_executor import memory_figures

        figures = memory_figures(module)
        names = [n.name for n in fx.graph.nodes if n.op == "placeholder"]
        if figures is None or not any(n.startswith("tangents_") for n in names):
            self.last_pool = figures.pool if figures is not None else None
            return
        forward = self.last_pool
        if forward is None or not self.reports:
            return
        saved = sum(
            n.meta["val"].numel() * n.meta["val"].element_size()
            for n in fx.graph.nodes
            if n.op == "placeholder" and not n.name.startswith("tangents_")
        )
        pair = self.training_memory = TrainingMemory(forward, figures.pool, saved)
        self.reports[-1] += (
            f"\ntraining step: forward pool {forward} B, backward pool {figures.pool} B, saved for the backward"
            f" {saved} B; one pool for the pair {pair.shared} B (apart {pair.apart} B)"
        )

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
        self.fallbacks.append(Fallback(message, whole_graph=why))
        warnings.warn(message, stacklevel=3)
        return graph.forward

    def last_report(self) -> str | None:
        """The modeled device report of the last graph compiled (None before any)."""
        return self.reports[-1] if self.reports else None


def _held_tensors(fx: Any) -> dict[Any, tuple[str, np.ndarray]]:
    """The tensors the graph holds (`torch.tensor(...)` in the forward), by their get_attr nodes."""
    from torch._subclasses.fake_tensor import unset_fake_temporarily

    with unset_fake_temporarily():  # AOT autograd compiles under its fake tensor mode
        return {
            n: (str(n.target), getattr(fx, str(n.target)).detach().cpu().numpy())
            for n in fx.graph.nodes
            if n.op == "get_attr"
        }


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
