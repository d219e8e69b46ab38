"""Target descriptions of modeled Ascend chips: one TOML file per chip, every number with its source.

A target is named by one of the stems in this folder (`target_names()`); nothing else resolves to a
file, so a name can never reach outside the folder. A user's own description is read only through
`load_target_file`, which the tools call for an explicitly named file (`ge-run --target-file`).
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from typing import Any

_FOLDER = Path(__file__).parent

#: The target whose keys every target file must have (the simulator and the passes read them).
_REFERENCE = "ascend910b"


class TargetError(Exception):
    """An unknown target name or a malformed target file."""


@cache
def target_names() -> tuple[str, ...]:
    return tuple(sorted(p.stem for p in _FOLDER.glob("*.toml")))


def check_target_name(name: object) -> str:
    """`name` when it is exactly one of the known targets; a TargetError naming them otherwise."""
    if not isinstance(name, str) or name not in target_names():
        raise TargetError(f"unknown target '{name}' (targets: {', '.join(target_names())})")
    return name


def _parse(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text()
    except OSError as e:
        raise TargetError(f"{path}: cannot read target file: {e.strerror}") from None
    except UnicodeDecodeError:
        raise TargetError(f"{path}: not a text file") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise TargetError(f"{path}: {str(e).splitlines()[0]}") from None


def _missing(reference: dict[str, Any], data: dict[str, Any], prefix: str = "") -> str | None:
    """The first key of `reference` that `data` lacks or gives a value of another kind."""
    for key, want in reference.items():
        where = f"{prefix}{key}"
        if key not in data:
            return f"lacks '{where}'"
        have = data[key]
        if isinstance(want, dict):
            if not isinstance(have, dict):
                return f"'{where}' must be a table"
            found = _missing(want, have, f"{where}.")
            if found:
                return found
        elif isinstance(want, (int, float)) and not isinstance(want, bool):
            if isinstance(have, bool) or not isinstance(have, (int, float)):
                return f"'{where}' must be a number"
        elif not isinstance(have, type(want)):
            return f"'{where}' must be a {type(want).__name__}"
    return None


@cache
def load_target(name: str) -> dict[str, Any]:
    """The known target `name` as nested dicts (e.g. `load_target("ascend910b")["buffers"]["ub"]`)."""
    return _parse(_FOLDER / f"{check_target_name(name)}.toml")


def load_target_file(path: str | Path) -> dict[str, Any]:
    """A user's target description; it must have every key the built-in targets have."""
    path = Path(path)
    data = _parse(path)
    problem = _missing(load_target(_REFERENCE), data)
    if problem:
        raise TargetError(f"{path}: not a target description: {problem}")
    return data


def pass_target(pass_name: str, name: str) -> dict[str, Any]:
    """`load_target` for a pass: an unknown or malformed target is the pass's one-line error."""
    from xdsl.utils.exceptions import DiagnosticException

    try:
        return load_target(name)
    except TargetError as e:
        raise DiagnosticException(f"{pass_name}: {e}") from None
