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
    """The session is a host like the tools (ge.tools.common), with their two settings:
    - it runs the interpreter thousands of times: freed blocks are kept for the next run instead
      of being returned to the system and faulted in again (ge.interpreter.runner);
    - it keeps many modules alive (the shared references, module fixtures): the cyclic garbage
      collector runs less often instead of re-traversing them at every few hundred allocations
      (test/passes, lowering and interpreter side by side: 137 s -> 118 s, medians of two)."""
    from ge.interpreter.runner import keep_freed_memory
    from ge.tools.common import collect_garbage_less_often

    keep_freed_memory()
    collect_garbage_less_often()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        _onnxruntime_on_one_thread()


def _onnxruntime_on_one_thread() -> None:
    """A session a test creates without options runs on one thread: the workers are one per core,
    and a session's default pool of spinning threads slows the other worker (the corpus tests'
    summed time under -n 2: 46 s with default sessions, 11 s with one thread each)."""
    try:
        import onnxruntime
    except ImportError:
        return

    class OneThreadSession(onnxruntime.InferenceSession):
        def __init__(self, path_or_bytes, sess_options=None, *args, **kwargs):
            if sess_options is None:
                sess_options = onnxruntime.SessionOptions()
                sess_options.intra_op_num_threads = 1
                sess_options.inter_op_num_threads = 1
            super().__init__(path_or_bytes, sess_options, *args, **kwargs)

    onnxruntime.InferenceSession = OneThreadSession  # type: ignore[misc]


sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent / "frontend"))
sys.path.insert(0, str(Path(__file__).parent / "passes"))

from reference_models import References  # noqa: E402  (found through the lines above)

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


_REFERENCES = References()


@pytest.fixture(scope="session")
def references() -> References:
    """The session's shared cache of compiled reference modules (`References`)."""
    return _REFERENCES


def pytest_terminal_summary(terminalreporter):
    """Without xdist (the workers' caches are not the controller's): what the cache built."""
    if _REFERENCES.built:
        terminalreporter.write_line(_REFERENCES.summary())


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
