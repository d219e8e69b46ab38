#!/usr/bin/env python3
"""The two entry points of the README, with nothing but Python 3.11 on the machine.

    python3 dev.py example   # ResNet-50 built in code: import, optimize, execute, summarize
    python3 dev.py test      # the gates below, then every test: lit (IR in, IR out) and pytest
    python3 dev.py gates     # ruff (lint, format), mypy, import-linter (the layering contracts)

Both create `.venv` beside this file on first use and install the project (with its test
extras and PyTorch's CPU build, for the torch frontend's tests) into it, so nothing installed
elsewhere on the machine is relied on.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import tomllib
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
TORCH = "torch==2.13.0"
"""The PyTorch the tests of the torch frontend run against (the optional extra, installed for them)."""


def ensure_venv() -> None:
    stamp = VENV / ".installed"
    pyproject = ROOT / "pyproject.toml"
    if stamp.exists() and stamp.stat().st_mtime >= pyproject.stat().st_mtime:
        return
    if not (BIN / "python").exists():
        print(f"creating {VENV}", flush=True)
        venv.create(VENV, with_pip=True)
    print("installing the project and its test dependencies", flush=True)
    # PyTorch's CPU build first, pinned: the torch extra's range would otherwise take a CUDA build
    subprocess.run([str(BIN / "python"), "-m", "pip", "install", "-q", TORCH], check=True)
    subprocess.run([str(BIN / "python"), "-m", "pip", "install", "-q", "-e", f"{ROOT}[test,dev,torch]"], check=True)
    stamp.touch()


def run(*cmd: str, cwd: Path = ROOT, **extra_env: str) -> int:
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", **extra_env)
    return subprocess.run(cmd, cwd=cwd, env=env).returncode


def namespace_copy() -> Path:
    """The installed layout (`ge/<folder>/...`) as a plain folder tree under .venv, for the tools that
    find modules on disk and do not follow the editable install's import hook (mypy, import-linter)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    stage = VENV / "namespace"
    shutil.rmtree(stage, ignore_errors=True)
    for package, folder in config.items():
        shutil.copytree(
            ROOT / folder,
            stage / package.replace(".", "/"),
            dirs_exist_ok=True,
            ignore=shutil.ignore_patterns("__pycache__"),
        )
    return stage


def gates() -> int:
    """Each gate runs even when an earlier one failed, so one run shows every problem."""
    python = str(BIN / "python")
    stage = namespace_copy()
    status = [
        run(python, "-m", "ruff", "check", "."),
        run(python, "-m", "ruff", "format", "--check", "--quiet", "."),
        run(python, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), "-p", "ge", cwd=stage),
        run(str(BIN / "lint-imports"), str(ROOT / "pyproject.toml"), "--no-cache", cwd=stage, PYTHONPATH=str(stage)),
    ]
    return max(status)


def main() -> int:
    what = sys.argv[1] if len(sys.argv) > 1 else ""
    if what not in ("example", "test", "gates"):
        print(__doc__.strip())
        return 2
    ensure_venv()
    python = str(BIN / "python")
    if what == "example":
        return run(python, "-m", "ge.examples.resnet50", *sys.argv[2:])
    times: dict[str, float] = {}

    def timed(stage: str, *cmd: str, **extra_env: str) -> int:
        start = time.monotonic()
        status = gates() if stage == "gates" else run(*cmd, **extra_env)
        times[stage] = time.monotonic() - start
        return status

    gate_status = timed("gates")
    if what == "gates":
        return gate_status
    lit_status = timed("lit", str(BIN / "lit"), "-sv", "test")
    # on every core; the slowest tests are listed at the end: the suite's time is watched at every stop
    pytest_status = timed(
        "pytest", python, "-m", "pytest", "test", "-n", "auto", "--dist", "loadgroup", "--durations=20", *sys.argv[2:]
    )
    print("time: " + ", ".join(f"{k} {v:.0f} s" for k, v in times.items()) + f", total {sum(times.values()):.0f} s")
    return gate_status or lit_status or pytest_status


if __name__ == "__main__":
    sys.exit(main())
