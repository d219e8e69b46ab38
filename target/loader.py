"""Reading target files: TOML in, a `Target` out, or one `TargetError` line naming the file and the key.

A target is named by one of the stems of this folder (`target_names()`); the name is checked
against them before any path is built, so a name can never reach outside the folder. A user's own
description is read only through `load_target_file`, for an explicitly named file (`ge-run
--target-file`). Both go through the same strict reading: every key of the schema (target/spec.py),
no other key, each value of its declared type.
"""

from __future__ import annotations

import dataclasses
import tomllib
import typing
from functools import cache
from pathlib import Path
from typing import Any

from ge.target.spec import Target

_FOLDER = Path(__file__).parent

DEFAULT_TARGET = "ascend910b"
"""The chip a module is compiled for and simulated on when neither an option nor the module names one."""


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


def assumed_constants(name: str) -> set[str]:
    """The keys whose line in the known target `name`'s file says ASSUMPTION (no published
    source): the constants a modeled figure is shown at half and double of."""
    text = (_FOLDER / f"{check_target_name(name)}.toml").read_text()
    return {line.split("=")[0].strip() for line in text.splitlines() if "=" in line and "ASSUMPTION" in line}


@cache
def load_target(name: str) -> Target:
    """The known target `name` (e.g. `load_target("ascend910b").buffers.ub`)."""
    return load_target_file(_FOLDER / f"{check_target_name(name)}.toml")


def load_target_file(path: str | Path) -> Target:
    """The target described by the TOML file `path` (a built-in one or a user's)."""
    path = Path(path)
    return _build(Target, _parse(path), path, "")


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


def _build(cls: type, table: dict[str, Any], path: Path, prefix: str) -> Any:
    """An instance of the dataclass `cls` from the TOML table `table` (at dotted `prefix` in `path`)."""
    types = typing.get_type_hints(cls)
    unknown = _unknown_key(types, table)
    if unknown is not None:
        raise TargetError(f"{path}: unknown key '{prefix}{unknown}' (a key of target/spec.py is expected)")
    names = [f.name for f in dataclasses.fields(cls)]
    missing = next((name for name in names if name not in table), None)
    if missing is not None:
        raise TargetError(f"{path}: missing key '{prefix}{missing}'")
    return cls(**{name: _value(types[name], table[name], path, f"{prefix}{name}") for name in names})


def _unknown_key(types: dict[str, type], table: dict[str, Any]) -> str | None:
    """The first key of `table` the schema does not name (a typo would otherwise be ignored)."""
    return next((key for key in table if key not in types), None)


def _value(want: type, value: Any, path: Path, key: str) -> Any:
    """`value` as the field type `want`: a table for a dataclass, an int also for a float."""
    if dataclasses.is_dataclass(want):
        if not isinstance(value, dict):
            raise TargetError(f"{path}: '{key}' must be a table, not {_kind(value)}")
        return _build(want, value, path, f"{key}.")
    if not _has_type(want, value):
        raise TargetError(f"{path}: '{key}' must be {_KINDS[want]}, not {_kind(value)}")
    return float(value) if want is float else value


def _has_type(want: type, value: Any) -> bool:
    """Exactly `want` (a bool is not an integer), or an integer where a float is wanted."""
    return type(value) is want or (want is float and type(value) is int)


_KINDS = {
    int: "an integer",
    float: "a number",
    bool: "true or false",
    str: "a string",
    dict: "a table",
    list: "an array",
}


def _kind(value: Any) -> str:
    return next((text for kind, text in _KINDS.items() if type(value) is kind), type(value).__name__)
