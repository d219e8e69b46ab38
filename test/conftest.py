"""Shared test fixtures; makes the test helper modules (e.g. test/frontend/onnx_node_cases.py) importable."""

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

if os.environ.get("PYTEST_XDIST_WORKER") and "numpy" not in sys.modules:
    # one worker per core: the workers are the parallelism, and a BLAS that spreads each GEMM over
    # every core makes the workers wait for each other's threads (the interpreter's own kernel
    # threads ask for the idle cores at each run)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def pytest_sessionstart(session):
    """The suite runs the interpreter thousands of times: freed blocks are kept for the next run
    instead of being returned to the system and faulted in again (ge.interpreter.runner)."""
    from ge.interpreter.runner import keep_freed_memory

    keep_freed_memory()


sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent / "frontend"))
sys.path.insert(0, str(Path(__file__).parent / "passes"))

ToolMain = Callable[[list[str]], object]


def pytest_collection_modifyitems(items):
    """Marks the mutation tests (test/mutations.py): `pytest -m mutation` runs them."""
    from mutations import is_mutation_test

    for item in items:
        function = getattr(item, "function", None)
        if function is not None and is_mutation_test(function):
            item.add_marker(pytest.mark.mutation)


def pytest_configure(config):
    """Under xdist, the controller writes the ONNX node-case files (onnx_node_cases.collect, a few
    seconds on a fresh machine) before the workers start, so they read them instead of each
    generating its own."""
    if config.getoption("numprocesses", None) and not hasattr(config, "workerinput"):
        import onnx_node_cases

        onnx_node_cases.collect()


class References:
    """The built-in models, imported, optimized and lowered once per session and configuration;
    every caller gets its own copy (with weights) of the cached module.

    `size` is "small" (frontend.models.SMALL: every op, layout, fusion and stream structure of the
    model) unless the size itself is what a test checks; `full_size_compiles` counts the rest."""

    def __init__(self) -> None:
        self._models: dict[tuple, tuple] = {}
        self._modules: dict[tuple, object] = {}
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

        key = (name, size, level, lower, tuple(sorted(options.items())))
        if key not in self._modules:
            self._modules[key] = self._build(name, size, level, lower, options)
        return clone_with_weights(self._modules[key])

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


_REFERENCES = References()


@pytest.fixture(scope="session")
def references() -> References:
    """The session's shared cache of compiled reference modules (`References`)."""
    return _REFERENCES


def pytest_terminal_summary(terminalreporter):
    if _REFERENCES.full_size_compiles or _REFERENCES._modules:
        terminalreporter.write_line(
            f"shared reference modules: {len(_REFERENCES._modules)} built, "
            f"{_REFERENCES.full_size_compiles} of them full-size compiles"
        )


@pytest.fixture(autouse=True, scope="session")
def private_compile_cache(tmp_path_factory):
    """Compiles in tests (the API caches by default) use a cache folder of their own, never ~/.cache;
    subprocesses inherit it through the environment."""
    patch = pytest.MonkeyPatch()
    patch.setenv("GE_CACHE_DIR", str(tmp_path_factory.mktemp("ge-cache")))
    yield
    patch.undo()


@pytest.fixture
def run_main(capsys) -> Callable[[ToolMain, Sequence[object]], tuple[object, str, str]]:
    """run_main(main, argv) -> (exit code, stdout, stderr) of a tool's main run in this process.

    In process (not a subprocess) so a test can monkeypatch the tool's modules; argv items may be Paths."""

    def run(main: ToolMain, argv: Sequence[object]) -> tuple[object, str, str]:
        try:
            main([str(a) for a in argv])
            code: object = 0
        except SystemExit as e:
            code = e.code
        out, err = capsys.readouterr()
        return code, out, err

    return run
