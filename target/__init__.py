"""The modeled Ascend chips: one TOML file per chip (every number with its source) and its typed form.

    from ge.target import load_target
    load_target("ascend910b").buffers.ub   # 196608

`load_target(name)` takes only the stems of this folder (`target_names()`); `load_target_file(path)`
reads a user's description through the same strict loader (target/loader.py) into the same
dataclasses (target/spec.py).
"""

from __future__ import annotations

from ge import refuse_bare_import
from ge.target.loader import (
    DEFAULT_TARGET,
    TargetError,
    assumed_constants,
    check_target_name,
    load_target,
    load_target_file,
    target_names,
)
from ge.target.spec import Target

refuse_bare_import(__name__)


def pass_target(pass_name: str, name: str) -> Target:
    """`load_target` for a pass: an unknown or malformed target is the pass's one-line error."""
    from xdsl.utils.exceptions import DiagnosticException

    try:
        return load_target(name)
    except TargetError as e:
        raise DiagnosticException(f"{pass_name}: {e}") from None


__all__ = [
    "DEFAULT_TARGET",
    "Target",
    "assumed_constants",
    "TargetError",
    "check_target_name",
    "load_target",
    "load_target_file",
    "pass_target",
    "target_names",
]
