"""Target descriptions of modeled Ascend chips: one TOML file per chip, every number with its source."""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from typing import Any

_FOLDER = Path(__file__).parent


class TargetError(Exception):
    """An unknown target name or a malformed target file."""


def target_names() -> list[str]:
    return sorted(p.stem for p in _FOLDER.glob("*.toml"))


@cache
def load_target(name: str) -> dict[str, Any]:
    """The target file `name`.toml as nested dicts (e.g. `load_target("ascend910b")["buffers"]["ub"]`)."""
    path = _FOLDER / f"{name}.toml"
    if not path.is_file():
        raise TargetError(f"unknown target '{name}' (targets: {', '.join(target_names())})")
    try:
        return tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise TargetError(f"{path}: {e}") from None


def pass_target(pass_name: str, name: str) -> dict[str, Any]:
    """`load_target` for a pass: an unknown or malformed target is the pass's one-line error."""
    from xdsl.utils.exceptions import DiagnosticException

    try:
        return load_target(name)
    except TargetError as e:
        raise DiagnosticException(f"{pass_name}: {e}") from None
