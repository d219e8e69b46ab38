"""The tool server (test/tool_server.py) gives a tool call what a new process gives it: the caller's
stdin, stdout, stderr, folder, environment and exit code, through its PATH clients and through
`ToolServer.run` alike."""

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import tool_server

IR = Path(__file__).resolve().parent.parent / "passes" / "simplify.mlir"
INSTALLED = Path(sys.executable).parent


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = tool_server.ToolServer.start(tmp_path_factory.mktemp("tools"))
    yield server
    server.stop()


def three_ways(server, args: list[str], **kw) -> list[tuple[int, str, str]]:
    """(exit code, stdout, stderr) of a PATH client, of `ToolServer.run` and of the installed tool."""
    client = subprocess.run([str(server.clients / args[0]), *args[1:]], capture_output=True, text=True, **kw)
    direct = server.run(*args, **kw)
    real = subprocess.run([str(INSTALLED / args[0]), *args[1:]], capture_output=True, text=True, **kw)
    return [(r.returncode, r.stdout, r.stderr) for r in (client, direct, real)]


@pytest.mark.parametrize(
    "args, stdin",
    [
        (["ge-opt", "-p", "simplify", "--split-input-file"], IR.read_text()),  # stdin, stdout, exit 0
        (["ge-opt", "-p", "no-such-pass"], IR.read_text()),  # one error line, exit code 1
        (["ge-opt", "missing.mlir"], ""),  # relative to the caller's folder
        (["ge-run", "--version-of-nothing"], ""),  # argparse's exit code 2
    ],
)
def test_a_call_gets_the_output_and_exit_code_of_the_tool(server, tmp_path, args, stdin):
    client, direct, real = three_ways(server, args, input=stdin, cwd=tmp_path)
    assert client == direct == real


def test_the_callers_folder_and_environment_reach_the_tool(server, tmp_path):
    (tmp_path / "in.mlir").write_text(IR.read_text().split("// -----")[0])
    env = dict(os.environ, NO_COLOR="1")
    for how in ("client", "direct"):
        out = tmp_path / f"{how}.mlir"
        if how == "client":
            subprocess.run(
                [str(server.clients / "ge-opt"), "in.mlir", "-o", out.name], cwd=tmp_path, env=env, check=True
            )
        else:
            assert server.run("ge-opt", "in.mlir", "-o", out.name, cwd=tmp_path, env=env).returncode == 0
        assert out.exists()
    probe = "import os, sys; print(os.environ['GE_PROBE'], os.getcwd(), sys.argv[1:])"
    done = server.run("python", "-c", probe, "a", cwd=tmp_path, env=dict(os.environ, GE_PROBE="x"))
    assert done.stdout.split() == ["x", str(tmp_path), "['a']"] and done.returncode == 0


def test_a_python_script_exits_as_python_would(server):
    assert server.run("python", "-c", "import sys; sys.exit(3)").returncode == 3
    raised = server.run("python", "-c", "raise ValueError('no')")
    assert raised.returncode == 1 and raised.stderr.strip().endswith("ValueError: no")


def test_a_call_past_its_timeout_is_killed(server):
    start = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        server.run("python", "-c", "import time; time.sleep(60)", timeout=1)
    assert time.monotonic() - start < 30
    assert server.run("python", "-c", "print(1)").stdout == "1\n"  # the server goes on


def test_calls_do_not_see_each_other(server):
    """Each call is a fork of the server after its imports: what one does, the next does not see."""
    assert server.run("python", "-c", "import ge.tools.ge_opt as m; m.LEFT_BEHIND = 1").returncode == 0
    seen = server.run("python", "-c", "import ge.tools.ge_opt as m; print(hasattr(m, 'LEFT_BEHIND'))")
    assert seen.stdout == "False\n"


def test_the_server_leaves_when_its_parent_does(tmp_path):
    path = str(tmp_path / "s.sock")
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import os, subprocess, sys, time\n"
            f"subprocess.Popen([sys.executable, {tool_server.__file__!r}, {path!r}, str(os.getpid())])\n"
            f"while not os.path.exists({path!r}): time.sleep(0.05)",
        ]
    )
    parent.wait(timeout=120)
    assert parent.returncode == 0 and os.path.exists(path)
    time.sleep(1.0)  # the server looks at its parent four times a second
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with pytest.raises(OSError):
        probe.connect(path)
