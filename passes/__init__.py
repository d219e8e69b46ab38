"""The project's passes, one ModulePass per module; `PASSES` maps each pass name to its class."""

from collections.abc import Callable

from xdsl.passes import ModulePass


def all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Pass name -> factory, as ge-opt registers them (factories keep start-up cheap)."""
    return {}
