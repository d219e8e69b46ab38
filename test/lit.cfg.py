"""lit configuration: IR-in / IR-out tests under test/, mirroring the source folders."""

import os

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
