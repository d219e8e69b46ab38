"""A fork server for the project's tools: their modules imported once, each tool call a fork.

The tests make about a thousand tool calls (`ge-opt`, `ge-run`, ...: lit's RUN lines, the docs'
sh blocks, pytest's error-contract tests); each one in a new interpreter spends most of its time
importing xDSL, numpy, scipy and the project. A caller starts one server (`ToolServer.start`) and
then either runs a tool through it (`ToolServer.run`, like `subprocess.run`) or puts its folder of
client scripts (one per console script of pyproject.toml) in front of PATH, so that shells find
them. A call passes its standard input, output and error (the file descriptors, so pipes and
redirections are the caller's own), its arguments, folder and environment over a Unix socket; the
server forks a child that takes them over and runs the tool's `main` as the console script would,
and the call ends with the child's exit code. `run("python", "-c", code)` runs a script the same way
(the docs' Python blocks, scripts that patch a tool before running it). Every call starts from the same state, the server's
after its imports, and nothing a child does reaches another.

What a fork cannot give is a new interpreter's start: PYTHONHASHSEED and Python's own flags are
the server's. Tests of those run the installed tools (`subprocess`). `GE_TOOL_FORK=0` makes every
call a new process (lit and pytest alike).
"""

from __future__ import annotations

import array
import atexit
import contextlib
import importlib
import json
import os
import runpy
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import tomllib
import traceback
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FORKING = os.environ.get("GE_TOOL_FORK", "1") != "0"

CLIENT = """#!{python} -SE
# A client of test/tool_server.py for `{name}`: runs it in a fork of the server.
import array, json, os, socket, struct, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect({socket!r})
payload = json.dumps({{"tool": {name!r}, "argv": sys.argv, "cwd": os.getcwd(), "env": dict(os.environ)}}).encode()
s.sendmsg([struct.pack("!I", len(payload))], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [0, 1, 2]))])
s.sendall(payload)
reply = b""
while len(reply) < 8:
    part = s.recv(8 - len(reply))
    if not part:
        break
    reply += part
sys.exit(struct.unpack("!ii", reply)[1] if len(reply) == 8 else 70)
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


def _python() -> None:
    """The `python` entry: `python -c CODE ARGS...`, `python -m MODULE ARGS...` or
    `python SCRIPT ARGS...`, run as `__main__`."""
    if sys.argv[1:2] == ["-c"]:
        code, sys.argv = sys.argv[2], ["-c", *sys.argv[3:]]
        sys.path[0] = os.getcwd()  # as python puts '' (the folder it runs in) first
        exec(compile(code, "<string>", "exec"), {"__name__": "__main__"})
    elif sys.argv[1:2] == ["-m"]:
        module, sys.argv = sys.argv[2], [sys.argv[2], *sys.argv[3:]]
        sys.path[0] = os.getcwd()
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    else:
        sys.argv = sys.argv[1:]
        sys.path[0] = os.path.dirname(os.path.abspath(sys.argv[0]))
        runpy.run_path(sys.argv[0], run_name="__main__")


def serve(socket_path: str, parent: int) -> None:
    """Answers on `socket_path` while the process `parent` is this one's parent. Each answer is the
    child's pid (so a caller can stop it), then its exit code."""
    entry_points: dict[str, object] = {"python": _python}
    for name, spec in console_scripts().items():
        module, function = spec.split(":")
        entry_points[name] = getattr(importlib.import_module(module), function)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(socket_path + ".tmp")
    server.listen(64)
    os.rename(socket_path + ".tmp", socket_path)  # the clients' socket exists only once it listens
    server.settimeout(0.25)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children reaped by the kernel
    while os.getppid() == parent:  # the caller has gone: so does the server
        try:
            conn, _ = server.accept()
        except TimeoutError:
            continue
        sys.stdout.flush()
        sys.stderr.flush()
        if os.fork() == 0:
            server.close()
            conn.settimeout(None)
            code = 70
            try:
                conn.sendall(struct.pack("!i", os.getpid()))
                code = _run_child(conn, entry_points)
                conn.sendall(struct.pack("!i", code))
            finally:
                os._exit(code & 0xFF)
        conn.close()


class ToolServer:
    """One server for the calling process: `run` a tool through it, or put `clients` on PATH."""

    def __init__(self, folder: Path, process: subprocess.Popen) -> None:
        self.folder = folder
        self.socket_path = str(folder / "tools.sock")
        self.clients = folder / "bin"
        self.process = process

    @classmethod
    def start(cls, folder: Path | None = None, timeout: float = 120) -> ToolServer:
        folder = Path(folder or tempfile.mkdtemp(prefix="ge-tools-"))
        socket_path = str(folder / "tools.sock")
        process = subprocess.Popen([sys.executable, __file__, socket_path, str(os.getpid())])
        deadline = time.monotonic() + timeout
        while not os.path.exists(socket_path):
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise RuntimeError(f"the tool server did not start (exit code {process.poll()})")
            time.sleep(0.05)
        server = cls(folder, process)
        write_clients(server.clients, socket_path)
        return server

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait()

    def run(
        self,
        tool: str,
        *args: object,
        input: str | bytes | None = None,
        cwd: str | Path | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> subprocess.CompletedProcess:
        """`subprocess.run([tool, *args], capture_output=True, text=True, ...)`, in a fork."""
        argv = [tool, *map(str, args)]
        with tempfile.TemporaryFile() as stdin, tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
            if input is not None:
                stdin.write(input.encode() if isinstance(input, str) else input)
                stdin.seek(0)
            request = {
                "tool": tool,
                "argv": argv,
                "cwd": str(cwd or os.getcwd()),
                "env": dict(os.environ if env is None else env),
            }
            payload = json.dumps(request).encode()
            fds = array.array("i", [stdin.fileno(), stdout.fileno(), stderr.fileno()])
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
                conn.connect(self.socket_path)
                conn.sendmsg([struct.pack("!I", len(payload))], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
                conn.sendall(payload)
                conn.settimeout(timeout)
                code = _read_reply(conn, argv, timeout)
            outputs = []
            for stream in (stdout, stderr):
                stream.seek(0)
                outputs.append(stream.read().decode(errors="replace"))
        return subprocess.CompletedProcess(argv, code, outputs[0], outputs[1])


def _read_reply(conn: socket.socket, argv: list[str], timeout: float | None) -> int:
    """The child's exit code; 70 (EX_SOFTWARE) for a child that died without answering (a signal).
    Past `timeout` the child is killed and `subprocess.TimeoutExpired` raised."""
    reply = b""
    pid = 0
    try:
        while len(reply) < 8:
            part = conn.recv(8 - len(reply))
            if not part:
                break
            reply += part
            if len(reply) >= 4:
                (pid,) = struct.unpack("!i", reply[:4])
    except TimeoutError:
        if pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        raise subprocess.TimeoutExpired(argv, timeout or 0) from None
    return struct.unpack("!ii", reply)[1] if len(reply) == 8 else 70


class NewProcesses:
    """`ToolServer`'s interface with every call a new process of the installed console script."""

    clients = Path(sys.executable).parent

    def run(
        self,
        tool: str,
        *args: object,
        input: str | bytes | None = None,
        cwd: str | Path | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> subprocess.CompletedProcess:
        if isinstance(input, bytes):
            input = input.decode()
        command = [sys.executable if tool == "python" else str(self.clients / tool), *map(str, args)]
        return subprocess.run(command, input=input, cwd=cwd, env=env, timeout=timeout, capture_output=True, text=True)


_SHARED: list[ToolServer | NewProcesses] = []


def shared() -> ToolServer | NewProcesses:
    """This process's server, started on first use and stopped when the process ends (a new process
    per call when GE_TOOL_FORK=0)."""
    if not _SHARED:
        if FORKING:
            server = ToolServer.start()
            atexit.register(server.stop)
            _SHARED.append(server)
        else:
            _SHARED.append(NewProcesses())
    return _SHARED[0]


def run(tool: str, *args: object, **options) -> subprocess.CompletedProcess:
    """`shared().run(...)`: one call of a console script by name, as `subprocess.run` with
    `capture_output=True, text=True` would make it."""
    return shared().run(tool, *args, **options)


if __name__ == "__main__":
    serve(sys.argv[1], int(sys.argv[2]))
