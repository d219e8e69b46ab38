"""The progress line: drawn per pass on a terminal, absent otherwise (tools/progress.py)."""

from __future__ import annotations

import io
import subprocess
import sys

from rich.console import Console

from ge.frontend import models
from ge.frontend.onnx_importer import import_model
from ge.ge_dialects.ge.weights import attach_weights
from ge.lowering.compile import compile_module
from ge.tools.progress import PassProgress, wanted


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _small_module():
    module, weights = import_model(models.small("resnet50", batch=1), max_tensor_bytes=1 << 30)
    attach_weights(module, weights)
    return module


def test_each_pass_of_the_compile_is_shown_on_a_terminal():
    screen = _Terminal()
    console = Console(file=screen, force_terminal=True, width=120)
    passes: list[str] = []

    class Recording(PassProgress):
        def starting(self, pass_, index, total):
            passes.append(pass_.name)
            assert 0 <= index < total
            super().starting(pass_, index, total)

    with Recording("resnet50", enabled=True, console=console) as progress:
        spec = compile_module(_small_module(), level=1, progress=progress)
    assert passes[0] == "require-graph-level" and passes[-1] == "lower-to-streams"
    assert len(passes) > 5
    assert "lower-to-streams" in spec
    assert "resnet50" in screen.getvalue()  # rich drew the line (then erased it: transient)


def test_silent_when_not_a_terminal_or_quiet():
    assert not wanted(stream=io.StringIO())
    assert not wanted(quiet=True, stream=_Terminal())
    assert wanted(stream=_Terminal())
    with PassProgress("x", enabled=False) as progress:
        progress.starting(None, 0, 1)  # type: ignore[arg-type]  # disabled: touches nothing


def test_ge_opt_prints_nothing_extra_when_stderr_is_a_pipe(tmp_path):
    ir = tmp_path / "m.mlir"
    ir.write_text(
        'func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n  %y = "ge.relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>\n'
        "  func.return %y : tensor<2xf32>\n}\n"
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ge.tools.ge_opt",
            str(ir),
            "-p",
            "ge-optimize{level=3}",
            "-o",
            str(tmp_path / "o.mlir"),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


def test_ge_opt_draws_the_pass_on_a_terminal(tmp_path):
    """stderr on a pseudo-terminal: the line names the input and a pass; --quiet draws nothing."""
    import os
    import pty

    ir = tmp_path / "m.mlir"
    ir.write_text(
        'func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n  %y = "ge.relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>\n'
        "  func.return %y : tensor<2xf32>\n}\n"
    )
    drawn = {}
    for quiet in (False, True):
        leader, follower = pty.openpty()
        command = [sys.executable, "-m", "ge.tools.ge_opt", str(ir), "-p", "ge-optimize{level=3}"]
        command += ["-o", str(tmp_path / "o.mlir")] + (["--quiet"] if quiet else [])
        done = subprocess.run(command, stderr=follower, stdout=subprocess.DEVNULL, env=dict(os.environ, COLUMNS="200"))
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the pty's other end is closed: all read
                break
            if not chunk:
                break
            chunks.append(chunk)
        os.close(leader)
        assert done.returncode == 0
        drawn[quiet] = b"".join(chunks).decode(errors="replace")
    assert "m.mlir" in drawn[False] and "/" in drawn[False]
    assert drawn[True] == ""
