"""A fork server for the lit tests: the tools' modules imported once, each tool call a fork.

lit runs about 500 tool calls (`ge-opt`, `ge-run`, ...); each one in a new interpreter spends most
of its time importing xDSL, numpy, scipy and the project. `lit.cfg.py` starts this server once per
lit run and puts a folder of small client scripts, one per console script of pyproject.toml, in
front of PATH. A client passes its standard input, output and error (the file descriptors, so pipes
and redirections are the test's own), its arguments, folder and environment over a Unix socket;
the server forks a child that takes them over and runs the tool's `main` as the console script
would, and the client exits with the child's exit code. Every call starts from the same state, the
server's after its imports, and nothing a child does reaches another.

`GE_LIT_FORK=0 lit test` runs the installed tools instead (the same tests, each call a new process).
"""

from __future__ import annotations

import array
import contextlib
import importlib
import json
import os
import signal
import socket
import struct
import sys
import tomllib
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CLIENT = """#!{python} -SE
# lit's client of test/lit_fork_server.py for `{name}`: runs it in a fork of the server.
import array, json, os, socket, struct, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect({socket!r})
payload = json.dumps({{"tool": {name!r}, "argv": sys.argv, "cwd": os.getcwd(), "env": dict(os.environ)}}).encode()
s.sendmsg([struct.pack("!I", len(payload))], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [0, 1, 2]))])
s.sendall(payload)
code = s.recv(4)
sys.exit(struct.unpack("!i", code)[0] if len(code) == 4 else 70)
"""


def console_scripts() -> dict[str, str]:
    """`name -> "module:function"`, from pyproject.toml's [project.scripts]."""
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]


def write_clients(folder: Path, socket_path: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in console_scripts():
        path = folder / name
        path.write_text(CLIENT.format(python=sys.executable, name=name, socket=socket_path))
        path.chmod(0o755)


def _exit_code(error: SystemExit) -> int:
    """What the interpreter exits with for `sys.exit(code)`."""
    if error.code is None:
        return 0
    if isinstance(error.code, int):
        return error.code
    print(error.code, file=sys.stderr)
    return 1


def _run_child(conn: socket.socket, entry_points: dict[str, object]) -> int:
    header, fds, _, _ = conn.recvmsg(4, socket.CMSG_SPACE(3 * array.array("i").itemsize))
    if len(header) < 4:  # a caller that connected and left
        return 70
    received = array.array("i")
    for level, kind, data in fds:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            received.frombytes(data[: len(data) - (len(data) % received.itemsize)])
    (size,) = struct.unpack("!I", header)
    payload = b""
    while len(payload) < size:
        payload += conn.recv(size - len(payload))
    request = json.loads(payload)
    for target, fd in enumerate(received[:3]):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = request["argv"]
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    try:
        result = entry_points[request["tool"]]()  # type: ignore[operator]
        code = _exit_code(SystemExit(result))
    except SystemExit as error:
        code = _exit_code(error)
    except BaseException:
        traceback.print_exc()
        code = 1
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: the reader has gone, the code counts
            stream.flush()
    return code


def serve(socket_path: str, parent: int) -> None:
    """Answers on `socket_path` while the process `parent` (lit) is this one's parent."""
    entry_points = {}
    for name, spec in console_scripts().items():
        module, function = spec.split(":")
        entry_points[name] = getattr(importlib.import_module(module), function)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(socket_path + ".tmp")
    server.listen(64)
    os.rename(socket_path + ".tmp", socket_path)  # the clients' socket exists only once it listens
    server.settimeout(1.0)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children reaped by the kernel
    while os.getppid() == parent:  # lit has gone: so does the server
        try:
            conn, _ = server.accept()
        except TimeoutError:
            continue
        sys.stdout.flush()
        sys.stderr.flush()
        if os.fork() == 0:
            server.close()
            conn.settimeout(None)
            code = _run_child(conn, entry_points)
            try:
                conn.sendall(struct.pack("!i", code))
            finally:
                os._exit(code & 0xFF)
        conn.close()


if __name__ == "__main__":
    serve(sys.argv[1], int(sys.argv[2]))
