"""lit configuration: IR-in / IR-out tests under test/, mirroring the source folders.

The tools run in forks of one server that imported them once (test/lit_fork_server.py);
`GE_LIT_FORK=0` runs the installed tools instead."""

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import lit.formats

config.name = "ge"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.excludes = ["inputs", "__pycache__"]
config.environment["PATH"] = os.environ["PATH"]
for var in ("PYTHONPATH", "HOME", "TMPDIR"):
    if var in os.environ:
        config.environment[var] = os.environ[var]


def start_fork_server() -> None:
    sys.path.insert(0, config.test_source_root)
    import lit_fork_server

    folder = tempfile.mkdtemp(prefix="ge-lit-")
    socket_path = os.path.join(folder, "tools.sock")
    server = subprocess.Popen([sys.executable, lit_fork_server.__file__, socket_path, str(os.getpid())])

    def stop() -> None:
        server.terminate()
        server.wait()
        shutil.rmtree(folder, ignore_errors=True)

    atexit.register(stop)
    deadline = time.monotonic() + 120
    while not os.path.exists(socket_path):
        if server.poll() is not None or time.monotonic() > deadline:
            lit_config.fatal(f"the lit fork server did not start (exit code {server.poll()})")
        time.sleep(0.05)
    clients = os.path.join(folder, "bin")
    lit_fork_server.write_clients(Path(clients), socket_path)
    config.environment["PATH"] = clients + os.pathsep + config.environment["PATH"]


if os.environ.get("GE_LIT_FORK", "1") != "0":
    start_fork_server()
