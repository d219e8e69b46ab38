"""docs/tutorial.md runs: its python blocks, in order, as one script in a scratch folder (each block
alone is only compiled by test_docs_code, since later blocks use what earlier ones made)."""

from __future__ import annotations

import tool_server
from doc_checks import ROOT, tool_env
from markdown_blocks import read_blocks

TUTORIAL = ROOT / "docs" / "tutorial.md"


def tutorial_script() -> str:
    blocks = [b for b in read_blocks(TUTORIAL, TUTORIAL.relative_to(ROOT)) if b.lang == "python"]
    return "\n\n".join(b.text for b in blocks)


def test_the_tutorial_runs_from_the_onnx_file_to_the_profile(tmp_path):
    env = dict(tool_env(), GE_CACHE_DIR=str(tmp_path / "cache"))
    done = tool_server.run("python", "-c", tutorial_script(), cwd=tmp_path, env=env, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "recompiling an unchanged model is a cache lookup: True" in out
    assert (tmp_path / "resnet50.ge").is_file() and (tmp_path / "trace.json").is_file()
    assert (tmp_path / "resnet50_o3.dot").read_text().startswith("digraph")
    differences = [float(line.rsplit(" ", 1)[1]) for line in out.splitlines() if line.startswith("largest difference")]
    assert len(differences) == 2 and max(differences) < 1e-3
    assert "conv1.weight_grad" in out
