"""The session's shared cache of the built-in models (the `references` fixture of conftest.py).

A model is built, imported, optimized and lowered once per session and configuration; every
caller gets its own copy (with weights) of the cached module. `size` is "small"
(frontend.models.SMALL: every op, layout, fusion and stream structure of the model) unless the size
itself is what a test checks; `full_size_compiles` counts the rest.

Under xdist each worker has its own cache. `--dist load` hands out tests in runs of neighbours, so
a module's full-size tests mostly build their model on one worker; xdist groups per model would
not help: `--dist loadgroup` deals the ungrouped tests one by one to alternate workers, and each
module fixture is then built on both."""

from __future__ import annotations


class References:
    """The cache: models, modules at each level and lowering, their outputs, onnxruntime sessions."""

    def __init__(self) -> None:
        self._models: dict[tuple, tuple] = {}
        self._modules: dict[tuple, object] = {}
        self._outputs: dict[tuple, dict] = {}
        self._sessions: dict[tuple, object] = {}
        self.full_size_compiles = 0

    def model(self, name: str, size: str = "small", **options):
        """(ONNX model, its seeded random inputs), built once."""
        from ge.frontend import models

        key = (name, size, tuple(sorted(options.items())))
        if key not in self._models:
            model = models.small(name, **options) if size == "small" else models.MODELS[name](**options)
            self._models[key] = (model, models.random_inputs(model, 0))
        return self._models[key]

    def module(self, name: str, size: str = "small", level: int | None = None, lower: str = "", **options):
        """A copy of `name` imported (weights attached), after `ge-optimize{level}` when `level` is
        given, then the `lower` pipeline (e.g. "lower-to-tasks,plan-memory")."""
        from ge.ge_dialects.ge.weights import clone_with_weights

        return clone_with_weights(self._module(name, size, level, lower, options))

    def outputs(self, name: str, size: str = "small", level: int | None = None, lower: str = "", **options):
        """The reference interpreter's outputs of `module(...)` on `model(...)`'s inputs, run once
        (the arrays are shared: do not write to them)."""
        from ge.interpreter.runner import run

        key = (name, size, level, lower, tuple(sorted(options.items())))
        if key not in self._outputs:
            module = self._module(name, size, level, lower, options)
            self._outputs[key] = run(module, self.model(name, size, **options)[1])
        return self._outputs[key]

    def onnxruntime(self, name: str, size: str = "small", **options):
        """An onnxruntime CPU session of `model(...)`, created once."""
        import onnxruntime

        key = (name, size, tuple(sorted(options.items())))
        if key not in self._sessions:
            model = self.model(name, size, **options)[0]
            self._sessions[key] = onnxruntime.InferenceSession(
                model.SerializeToString(), providers=["CPUExecutionProvider"]
            )
        return self._sessions[key]

    @property
    def built(self) -> int:
        return len(self._modules)

    def summary(self) -> str:
        return f"shared reference modules: {self.built} built, {self.full_size_compiles} of them full-size compiles"

    def _module(self, name, size, level, lower, options):
        key = (name, size, level, lower, tuple(sorted(options.items())))
        if key not in self._modules:
            self._modules[key] = self._build(name, size, level, lower, options)
        return self._modules[key]

    def _build(self, name, size, level, lower, options):
        from ge.frontend.onnx_importer import import_model
        from ge.ge_dialects.ge.weights import attach_weights
        from ge.passes.ge_optimize import GeOptimizePass
        from ge.passes.pipeline import apply_all, parse_passes
        from ge.tools.common import make_context

        if size != "small" and level is not None:
            self.full_size_compiles += 1
        module, weights = import_model(self.model(name, size, **options)[0])
        attach_weights(module, weights)
        if level is not None:
            GeOptimizePass(level=level).apply(make_context(), module)
        if lower:
            apply_all(make_context(), module, parse_passes(lower))
        return module
