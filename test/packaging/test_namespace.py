"""One installed namespace: every package is `ge.<folder>`, listed in pyproject.toml, and importable
under that one name only (a second name would load a second copy of every dialect class)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
MAPPED = {name: folder for name, folder in CONFIG["package-dir"].items() if name != "ge"}


def package_folders() -> set[str]:
    found = {"ge"}
    for name, folder in MAPPED.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            if "__pycache__" not in init.parts:
                rel = init.parent.relative_to(ROOT / folder)
                found.add(".".join([name, *rel.parts]))
    return found


def test_every_package_folder_is_listed_and_nothing_else():
    assert set(CONFIG["packages"]) == package_folders()


def test_every_top_level_folder_is_mapped():
    """A new top-level package must join the namespace (bench/ and test/ are the repository's own)."""
    top = {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"bench", "ge"}
    assert top == set(MAPPED.values())


@pytest.mark.parametrize("folder", sorted(MAPPED.values()))
def test_bare_import_is_refused(folder: str):
    r = subprocess.run([sys.executable, "-c", f"import {folder}"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode != 0
    assert f"import it as 'ge.{folder}'" in r.stderr


def test_wheel_installs_only_the_ge_namespace(tmp_path: Path):
    """The non-editable install: the wheel holds `ge/` and its dist-info, and the console scripts."""
    r = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    (wheel,) = tmp_path.glob("*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        entry_points = next(z.read(n).decode() for n in names if n.endswith("entry_points.txt"))
    top = {n.split("/")[0] for n in names}
    assert {t for t in top if not t.endswith(".dist-info")} == {"ge"}
    assert "ge/passes/fusion/engine.py" in names and "ge/examples/resnet50.py" in names
    assert any(n.endswith(".toml") for n in names)  # the target files and precision lists ship
    for script in ("ge-opt", "ge-run", "ge-translate", "ge-bench", "ge-compile"):
        assert f"{script} = ge.tools." in entry_points
