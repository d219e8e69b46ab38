"""Running passes one after another, with observers called after each (numerics checks, dumps).

Composite passes (`ge-optimize`) run their sub-passes through `apply_all`, so an observer sees
every sub-pass, not just the composite. A module that fails verification after a pass is the
pass's bug, not the user's: `PassVerificationError`, which the tools report as an internal error.

The passes a pipeline may name are this project's and the few xDSL passes in `XDSL_PASSES`; xDSL's
others are not offered (one of them, `mlir-opt`, runs an arbitrary executable).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.transforms.canonicalize import CanonicalizePass
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination
from xdsl.transforms.dead_code_elimination import DeadCodeElimination
from xdsl.utils.arg_spec import parse_pipeline
from xdsl.utils.exceptions import DiagnosticException

from ge.passes import all_passes

#: The xDSL passes this compiler offers (the pipelines and tests use cse and dce).
XDSL_PASSES: tuple[type[ModulePass], ...] = (CommonSubexpressionElimination, DeadCodeElimination, CanonicalizePass)

Observer = Callable[[ModulePass, ModuleOp], None]
_OBSERVERS: list[Observer] = []


class PassVerificationError(Exception):
    """A pass left a module that does not verify: a compiler bug, reported as an internal error."""

    def __init__(self, pass_name: str, cause: BaseException):
        text = str(cause).strip()
        first = text.splitlines()[0] if text else type(cause).__name__
        super().__init__(f"pass '{pass_name}' produced invalid IR: {first}")
        self.pass_name = pass_name


def available_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Pass name -> factory: what `ge-opt -p` and `parse_passes` accept."""
    available: dict[str, Callable[[], type[ModulePass]]] = {
        cls.name: (lambda cls=cls: cls) for cls in XDSL_PASSES}
    available.update(all_passes())
    return available


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


def verify_after(pass_: ModulePass, module: ModuleOp) -> None:
    """module.verify(), a failure blamed on the pass that just ran."""
    try:
        module.verify()
    except DiagnosticException as e:
        raise PassVerificationError(pass_.name, e) from e


def apply_all(ctx: Context, module: ModuleOp, passes: Sequence[ModulePass]) -> None:
    for p in passes:
        p.apply(ctx, module)
        if not is_composite(p):
            verify_after(p, module)
            notify(p, module)


def parse_passes(spec: str) -> list[ModulePass]:
    """Pass objects from a textual pipeline (`a,b{opt=1}`), with the passes `available_passes` offers."""
    available = available_passes()
    out = []
    for p in parse_pipeline(spec):
        if p.name not in available:
            raise ValueError(f"unknown pass '{p.name}'")
        out.append(available[p.name]().from_pass_spec(p))
    return out


LOWERED_DIALECTS = ("task", "stream")


def require_graph_level(pass_name: str, module: ModuleOp) -> None:
    """Graph passes work on ge ops; a module already lowered to tasks or streams is refused in one
    line rather than half-rewritten (its kernels and events are not graph operators)."""
    for op in module.walk():
        if op.name.split(".", 1)[0] in LOWERED_DIALECTS:
            raise DiagnosticException(f"{pass_name}: the module is already lowered ({op.name} found); "
                                      "graph passes run before lower-to-tasks")
