#!/usr/bin/env python3
"""The two entry points of the README, with nothing but Python 3.11 on the machine.

    python3 dev.py example   # ResNet-50 built in code: import, optimize, execute, summarize
    python3 dev.py test      # every test: lit (IR in, IR out) and pytest (numerics, tools)

Both create `.venv` beside this file on first use and install the project (with its test
extras) into it, so nothing installed elsewhere on the machine is relied on.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")


def ensure_venv() -> None:
    stamp = VENV / ".installed"
    pyproject = ROOT / "pyproject.toml"
    if stamp.exists() and stamp.stat().st_mtime >= pyproject.stat().st_mtime:
        return
    if not (BIN / "python").exists():
        print(f"creating {VENV}", flush=True)
        venv.create(VENV, with_pip=True)
    print("installing the project and its test dependencies", flush=True)
    subprocess.run([str(BIN / "python"), "-m", "pip", "install", "-q", "-e", f"{ROOT}[test]"], check=True)
    stamp.touch()


def run(*cmd: str) -> int:
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    return subprocess.run(cmd, cwd=ROOT, env=env).returncode


def main() -> int:
    what = sys.argv[1] if len(sys.argv) > 1 else ""
    if what not in ("example", "test"):
        print(__doc__.strip())
        return 2
    ensure_venv()
    python = str(BIN / "python")
    if what == "example":
        return run(python, "-m", "ge.examples.resnet50", *sys.argv[2:])
    lit_status = run(str(BIN / "lit"), "-v", "test")
    pytest_status = run(python, "-m", "pytest", "test", *sys.argv[2:])
    return lit_status or pytest_status


if __name__ == "__main__":
    sys.exit(main())
