"""Running passes one after another, with observers called after each (numerics checks, dumps).

Composite passes (`ge-optimize`) run their sub-passes through `apply_all`, so an observer sees
every sub-pass, not just the composite.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.transforms import get_all_passes
from xdsl.utils.arg_spec import parse_pipeline

from passes import all_passes

Observer = Callable[[ModulePass, ModuleOp], None]
_OBSERVERS: list[Observer] = []


@contextmanager
def observed(observer: Observer) -> Iterator[None]:
    _OBSERVERS.append(observer)
    try:
        yield
    finally:
        _OBSERVERS.remove(observer)


def notify(pass_: ModulePass, module: ModuleOp) -> None:
    for observer in list(_OBSERVERS):
        observer(pass_, module)


def is_composite(pass_: ModulePass) -> bool:
    return callable(getattr(pass_, "sub_passes", None))


def apply_all(ctx: Context, module: ModuleOp, passes: Sequence[ModulePass]) -> None:
    for p in passes:
        p.apply(ctx, module)
        if not is_composite(p):
            module.verify()
            notify(p, module)


def parse_passes(spec: str) -> list[ModulePass]:
    """Pass objects from a textual pipeline (`a,b{opt=1}`), with this project's and xDSL's passes."""
    available: dict[str, Callable[[], type[ModulePass]]] = dict(get_all_passes())
    available.update(all_passes())
    out = []
    for p in parse_pipeline(spec):
        if p.name not in available:
            raise ValueError(f"unknown pass '{p.name}'")
        out.append(available[p.name]().from_pass_spec(p))
    return out
