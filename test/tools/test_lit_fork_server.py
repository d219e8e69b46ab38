"""The lit fork server (test/lit_fork_server.py) gives a tool call what a new process gives it:
the caller's stdin, stdout, stderr, folder, environment and exit code."""

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

TEST = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TEST))
import lit_fork_server  # noqa: E402

IR = TEST / "passes" / "simplify.mlir"


@pytest.fixture(scope="module")
def clients(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fork")
    path = str(folder / "s.sock")
    server = subprocess.Popen([sys.executable, lit_fork_server.__file__, path, str(os.getpid())])
    deadline = time.monotonic() + 120
    while not os.path.exists(path):
        assert server.poll() is None and time.monotonic() < deadline, "the fork server did not start"
        time.sleep(0.05)
    lit_fork_server.write_clients(folder / "bin", path)
    yield folder / "bin"
    server.terminate()
    server.wait()


def both(clients: Path, args: list[str], **kw) -> tuple[subprocess.CompletedProcess, subprocess.CompletedProcess]:
    forked = subprocess.run([str(clients / args[0]), *args[1:]], capture_output=True, text=True, **kw)
    real = subprocess.run([str(Path(sys.executable).parent / args[0]), *args[1:]], capture_output=True, text=True, **kw)
    return forked, real


def test_a_client_gets_the_output_and_exit_code_of_the_tool(clients, tmp_path):
    for args, stdin in (
        (["ge-opt", "-p", "simplify", "--split-input-file"], IR.read_text()),  # stdin, stdout, exit 0
        (["ge-opt", "-p", "no-such-pass"], IR.read_text()),  # one error line, exit code
        (["ge-opt", "missing.mlir"], ""),  # relative to the caller's folder
    ):
        forked, real = both(clients, args, input=stdin, cwd=tmp_path)
        assert (forked.returncode, forked.stdout, forked.stderr) == (real.returncode, real.stdout, real.stderr), args
    assert real.returncode != 0


def test_the_callers_environment_reaches_the_tool(clients, tmp_path):
    (tmp_path / "in.mlir").write_text(IR.read_text().split("// -----")[0])
    env = dict(os.environ, NO_COLOR="1", GE_LIT_PROBE="x")
    forked, real = both(clients, ["ge-opt", "in.mlir", "-o", "out.mlir"], cwd=tmp_path, env=env)
    assert forked.returncode == real.returncode == 0
    assert (tmp_path / "out.mlir").exists()


def test_the_server_leaves_when_its_parent_does(tmp_path):
    path = str(tmp_path / "s.sock")
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import os, subprocess, sys, time\n"
            f"subprocess.Popen([sys.executable, {lit_fork_server.__file__!r}, {path!r}, str(os.getpid())])\n"
            f"while not os.path.exists({path!r}): time.sleep(0.05)",
        ]
    )
    parent.wait(timeout=120)
    assert parent.returncode == 0 and os.path.exists(path)
    time.sleep(2.5)  # the server looks at its parent every second
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with pytest.raises(OSError):
        probe.connect(path)
