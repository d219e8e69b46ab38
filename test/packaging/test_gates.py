"""The layering gate catches a wrong-way import: each check broken once (a mutation) must fail."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("importlinter") is None, reason="the dev extra (import-linter) is not installed"
)


def staged(tmp_path: Path) -> Path:
    sys.path.insert(0, str(ROOT))
    try:
        import dev
    finally:
        sys.path.remove(str(ROOT))
    dev.VENV = tmp_path
    return dev.namespace_copy()


def lint_imports(stage: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(stage))
    return subprocess.run(
        [str(LINT_IMPORTS), str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=stage,
        env=env,
        capture_output=True,
        text=True,
    )


@pytest.mark.mutation
def test_layers_hold_and_a_wrong_way_import_breaks_them(tmp_path):
    stage = staged(tmp_path)
    assert lint_imports(stage).returncode == 0
    simplify = stage / "ge" / "passes" / "simplify.py"
    simplify.write_text(simplify.read_text() + "\nfrom ge.lowering import to_tasks  # noqa\n")
    broken = lint_imports(stage)
    assert broken.returncode != 0 and "ge.passes is not allowed to import ge.lowering" in broken.stdout
    shutil.rmtree(stage)
