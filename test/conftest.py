"""Shared test fixtures; makes the test helper modules (e.g. test/frontend/onnx_node_cases.py) importable."""

import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "frontend"))
sys.path.insert(0, str(Path(__file__).parent / "passes"))

ToolMain = Callable[[list[str]], object]


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
