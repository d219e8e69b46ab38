"""ge.api.visualize: .dot always; .png/.svg through Graphviz's `dot` when it is on PATH.

Graphviz is not installed here, so a fake `dot` (a Python script put first on PATH) stands in for
it: it records its arguments and answers like dot does (image on stdout), or fails, or hangs."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from xdsl.dialects.builtin import ModuleOp

from ge.api import visualize as viz
from ge.api.errors import GEError
from ge.api.graph import Graph
from ge.tools.common import parse_module

IR = """
func.func @main(%x: tensor<1x8xf32> {ge.name = "x"}) -> (tensor<1x8xf32> {ge.name = "y"}) {
  %0 = ge.relu %x : (tensor<1x8xf32>) -> tensor<1x8xf32> loc("/relu/Relu")
  func.return %0 : tensor<1x8xf32>
}
"""

FAKE_DOT = """#!{python}
import json, sys, time
mode = {mode!r}
with open({log!r}, "a") as log:
    log.write(json.dumps({{"argv": sys.argv[1:], "stdin": sys.stdin.read()}}) + "\\n")
if mode == "fail":
    sys.stderr.write("Error: <stdin>: syntax error in line 3\\nmore\\n")
    sys.exit(3)
if mode == "hang":
    time.sleep(30)
fmt = sys.argv[1][2:]
sys.stdout.write("<svg>fake</svg>" if fmt == "svg" else "PNGDATA")
"""


@pytest.fixture
def graph() -> Graph:
    module = parse_module(IR, "v.mlir")
    assert isinstance(module, ModuleOp)
    return Graph.from_module(module)


def install_fake_dot(tmp_path: Path, monkeypatch, mode: str = "ok") -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "dot.log"
    script = bin_dir / "dot"
    script.write_text(FAKE_DOT.format(python=sys.executable, mode=mode, log=str(log)))
    script.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    return log


def no_dot(tmp_path: Path, monkeypatch) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))


def test_dot_file_needs_no_graphviz(graph, tmp_path, monkeypatch):
    no_dot(tmp_path, monkeypatch)
    written = viz.visualize(graph, tmp_path / "g.dot")
    assert written == tmp_path / "g.dot"
    text = written.read_text()
    assert text.startswith('digraph "main" {') and "/relu/Relu" in text
    assert viz.svg(graph) is None  # a notebook falls back to the repr


def test_png_without_dot_writes_the_dot_and_says_so(graph, tmp_path, monkeypatch):
    no_dot(tmp_path, monkeypatch)
    with pytest.warns(viz.GraphvizMissing) as caught:
        written = viz.visualize(graph, tmp_path / "g.png")
    assert written == tmp_path / "g.dot"
    message = str(caught[0].message)
    assert "\n" not in message and "dot is not on PATH" in message and "g.dot was written" in message
    assert (tmp_path / "g.dot").exists() and not (tmp_path / "g.png").exists()


@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_image_through_dot(graph, tmp_path, monkeypatch, suffix):
    log = install_fake_dot(tmp_path, monkeypatch)
    written = viz.visualize(graph, tmp_path / f"g{suffix}", remarks=True)
    assert written == tmp_path / f"g{suffix}"
    assert written.read_text() == ("<svg>fake</svg>" if suffix == ".svg" else "PNGDATA")
    (call,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert call["argv"] == [f"-T{suffix[1:]}"]  # an argument list: no shell, no file names to quote
    assert call["stdin"] == (tmp_path / "g.dot").read_text()


def test_svg_for_notebooks(graph, tmp_path, monkeypatch):
    install_fake_dot(tmp_path, monkeypatch)
    assert viz.svg(graph) == "<svg>fake</svg>"


def test_dot_failure_is_one_line(graph, tmp_path, monkeypatch):
    install_fake_dot(tmp_path, monkeypatch, mode="fail")
    with pytest.raises(GEError, match=r"^visualize: Graphviz dot failed: Error: <stdin>: syntax error in line 3$"):
        viz.visualize(graph, tmp_path / "g.svg")
    assert not (tmp_path / "g.svg").exists()


def test_dot_timeout(graph, tmp_path, monkeypatch):
    install_fake_dot(tmp_path, monkeypatch, mode="hang")
    monkeypatch.setattr(viz, "RENDER_TIMEOUT_S", 0.5)
    with pytest.raises(GEError, match="took longer than 0.5 s"):
        viz.svg(graph)


def test_unsupported_suffix(graph, tmp_path):
    with pytest.raises(GEError, match=r"unsupported file type '\.jpg'"):
        viz.visualize(graph, tmp_path / "g.jpg")
    assert not os.listdir(tmp_path)


def test_lowered_module_is_a_one_line_geerror(tmp_path, run_main):
    """What the API refuses is what the tool refuses, as a GEError naming the graph."""
    from ge.tools.common import read_module
    from ge.tools.ge_opt import main as opt_main

    src = tmp_path / "m.mlir"
    src.write_text(IR)
    lowered = tmp_path / "l.mlir"
    code, _, err = run_main(opt_main, [src, "-p", "lower-to-tasks", "-o", lowered])
    assert code == 0, err
    graph = Graph.from_module(read_module(str(lowered)))
    with pytest.raises(GEError, match=r"^graph 'main': DOT export: the module is lowered"):
        viz.visualize(graph, tmp_path / "l.dot")
