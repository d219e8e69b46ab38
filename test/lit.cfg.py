"""lit configuration: IR-in / IR-out tests under test/, mirroring the source folders.

The tools run in forks of one server that imported them once (test/tool_server.py);
`GE_TOOL_FORK=0` runs the installed tools instead."""

import atexit
import os
import shutil
import sys

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


def start_tool_server() -> None:
    sys.path.insert(0, config.test_source_root)
    import tool_server

    try:
        server = tool_server.ToolServer.start()
    except RuntimeError as error:
        lit_config.fatal(str(error))

    def stop() -> None:
        server.stop()
        shutil.rmtree(server.folder, ignore_errors=True)

    atexit.register(stop)
    config.environment["PATH"] = str(server.clients) + os.pathsep + config.environment["PATH"]


if os.environ.get("GE_TOOL_FORK", "1") != "0":
    start_tool_server()
