"""The project's passes: one ModulePass per module, found by walking this package.

Every module under `passes/` (graph passes) and `lowering/` (dialect-to-dialect conversions) that
defines a `ModulePass` subclass with a `name` contributes it; adding a pass is adding a module, no
table to edit.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable
from functools import cache

from xdsl.passes import ModulePass


@cache
def _discover() -> dict[str, type[ModulePass]]:
    import ge.lowering

    found: dict[str, type[ModulePass]] = {}
    infos = [*pkgutil.walk_packages(__path__, prefix=f"{__name__}."),
             *pkgutil.walk_packages(lowering.__path__, prefix="lowering.")]
    for info in infos:
        module = importlib.import_module(info.name)
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if (issubclass(obj, ModulePass) and obj.__module__ == module.__name__
                    and isinstance(obj.__dict__.get("name"), str)):
                if obj.name in found and found[obj.name] is not obj:
                    raise ValueError(f"two passes are named '{obj.name}'")
                found[obj.name] = obj
    return found


def all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Pass name -> factory, as ge-opt registers them."""
    return {name: (lambda cls=cls: cls) for name, cls in sorted(_discover().items())}


def pass_class(name: str) -> type[ModulePass]:
    return _discover()[name]
