"""The docs cover what the code has, and the repository explains itself.

- every op of the ge dialect (read from the dialect object) has its line in docs/ge_dialect.md;
- every pass a pipeline may name (the pass registry, `available_passes`) is named in docs/;
- no file tracked by git points outside the repository (at the read-only design material a
  clone does not have): what a user or contributor needs is in docs/.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from doc_checks import ROOT

from ge.ge_dialects.ge import GE
from ge.passes.pipeline import available_passes

DOCS = ROOT / "docs"

OUTSIDE = ".." + "/shared"
"""The folder beside the repository that held the design material (spelled in two pieces so that
this file does not match itself)."""


def named(name: str, text: str) -> bool:
    """Whether `name` occurs in `text` as a whole name (not as part of `ge.reduce_mean_x` or
    `fold-constants-y`)."""
    return re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", text) is not None


def docs_text() -> str:
    return "\n".join(page.read_text(encoding="utf-8") for page in sorted(DOCS.glob("*.md")))


def undocumented_ops(page: str) -> list[str]:
    return sorted(op.name for op in GE.operations if not named(op.name, page))


def unmentioned_passes(text: str) -> list[str]:
    return sorted(name for name in available_passes() if not named(name, text))


def outside_references(files: dict[str, str]) -> list[str]:
    return sorted(
        f"{path}:{n}" for path, text in files.items() for n, line in enumerate(text.splitlines(), 1) if OUTSIDE in line
    )


def tracked_files() -> dict[str, str]:
    """path -> text of every file git tracks (binary files left out)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    files = {}
    for path in filter(None, listed.decode().split("\0")):
        try:
            files[path] = (ROOT / path).read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue  # binary, or deleted in the work tree
    return files


def test_every_ge_op_is_documented():
    assert GE.operations, "the dialect has no ops: the check would pass vacuously"
    assert undocumented_ops((DOCS / "ge_dialect.md").read_text(encoding="utf-8")) == []


def test_every_registered_pass_is_named_in_the_docs():
    assert len(available_passes()) > 30
    assert unmentioned_passes(docs_text()) == []


def test_no_tracked_file_points_outside_the_repository():
    files = tracked_files()
    assert "README.md" in files and "pyproject.toml" in files
    assert outside_references(files) == []


# -- the checks fail when the docs lose something (mutations) -------------------------------------
def test_a_missing_op_line_is_found():
    page = (DOCS / "ge_dialect.md").read_text(encoding="utf-8")
    lines = page.splitlines()
    without = "\n".join(line for line in lines if not line.startswith("| `ge.variable`"))
    assert len(without.splitlines()) == len(lines) - 1
    assert undocumented_ops(without) == ["ge.variable"]
    # a longer name is not a mention of the shorter one
    assert not named("ge.nll_loss", "`ge.nll_loss_grad`")


def test_a_missing_pass_is_found():
    text = docs_text().replace("set-target", "set-chip")
    assert unmentioned_passes(text) == ["set-target"]
    assert not named("fold-constants", "fold-constants-two")


def test_a_reference_outside_is_found():
    files = {"README.md": "The design (see `" + OUTSIDE + "/brief.md`).\n", "docs/a.md": "fine\n"}
    assert outside_references(files) == ["README.md:1"]
