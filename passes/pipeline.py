"""Pipelines: flat lists of passes, each verified and shown to the observers after it runs.

A pass that stands for a list of others (`ge-optimize`) is a `CompositePass`; `expand` replaces it
by its sub-passes when a pipeline is built, so that verification, observers (numerics checks),
remarks, `--print-between-passes` and `--time-passes` see every pass that runs, with no composite
case of their own. A module that fails verification after a pass is the pass's bug, not the user's:
`PassVerificationError`, which the tools report as an internal error; so is `PassInternalError`, an
unexpected exception from code a pass ran on one op.

The passes a pipeline may name are the registry's (`passes/__init__.py`): this project's and the
few xDSL passes in `XDSL_PASSES`.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

from numpy import format_float_positional
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import parse_pipeline
from xdsl.utils.exceptions import DiagnosticException

from ge.passes import PassFactory, all_passes, xdsl_passes

#: Called after each pass with the pass and the module it left (e.g. interpreter.differential's checker).
Observer = Callable[[ModulePass, ModuleOp], None]


class Progress(Protocol):
    """Told when each pass of a pipeline starts (tools/progress.py draws it on a terminal)."""

    def starting(self, pass_: ModulePass, index: int, total: int) -> None: ...


class PassVerificationError(Exception):
    """A pass left a module that does not verify: a compiler bug, reported as an internal error."""

    def __init__(self, pass_name: str, cause: BaseException):
        text = str(cause).strip()
        first = text.splitlines()[0] if text else type(cause).__name__
        super().__init__(f"pass '{pass_name}' produced invalid IR: {first}")
        self.pass_name = pass_name


class PassInternalError(Exception):
    """Code a pass calls on one op (a shape function, a kernel) failed with an exception that is not
    one of its declared refusals: a compiler bug, reported as an internal error naming the pass and
    the op. The original exception is the cause (`raise ... from`), so its place is where it failed."""

    def __init__(self, pass_name: str, what: str, cause: BaseException):
        text = str(cause).strip()
        first = text.splitlines()[0] if text else ""
        super().__init__(f"{pass_name}: {what} raised {type(cause).__name__}" + (f": {first}" if first else ""))
        self.pass_name = pass_name


class CompositePass(ModulePass, ABC):
    """A pass that is a list of other passes, built from its options. Pipelines hold its sub-passes
    (`expand`); applied directly (from Python), it runs them as `apply_all` does."""

    @abstractmethod
    def sub_passes(self) -> list[ModulePass]:
        """The passes this one stands for, in order; the options are checked here."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_all(ctx, op, self.sub_passes())


def available_passes() -> dict[str, PassFactory]:
    """Pass name -> factory: what `ge-opt -p` and `parse_passes` accept."""
    return {**xdsl_passes(), **all_passes()}


def expand(passes: Iterable[ModulePass]) -> list[ModulePass]:
    """The pipeline with every composite pass replaced by its sub-passes (recursively)."""
    flat: list[ModulePass] = []
    for p in passes:
        flat += expand(p.sub_passes()) if isinstance(p, CompositePass) else [p]
    return flat


def verify_after(pass_: ModulePass, module: ModuleOp) -> None:
    """module.verify(), a failure blamed on the pass that just ran."""
    try:
        module.verify()
    except DiagnosticException as e:
        raise PassVerificationError(pass_.name, e) from e


def apply_all(
    ctx: Context,
    module: ModuleOp,
    passes: Sequence[ModulePass],
    observers: Sequence[Observer] = (),
    progress: Progress | None = None,
) -> None:
    """Runs the expanded pipeline; after each pass the module must verify, then each observer sees it."""
    flat = expand(passes)
    for index, p in enumerate(flat):
        if progress is not None:
            progress.starting(p, index, len(flat))
        p.apply(ctx, module)
        verify_after(p, module)
        for observer in observers:
            observer(p, module)


_QUOTED_OR_EXPONENT = re.compile(r'"(?:\\.|[^"\\])*"|(?<==)[-+]?[0-9]+(?:\.[0-9]*)?[eE][-+]?[0-9]+(?=[\s},]|$)')


def spell_exponents(spec: str) -> str:
    """`spec` with option values such as `eps=1e-8` written positionally (`eps=0.00000001`), which
    xDSL's pipeline lexer reads as a float (it reads `1e-8` as a name); quoted strings are left alone.
    The positional form is the shortest that reads back as the same double."""

    def spell(match: re.Match[str]) -> str:
        text = match.group(0)
        return text if text.startswith('"') else format_float_positional(float(text), trim="0")

    return _QUOTED_OR_EXPONENT.sub(spell, spec)


def parse_passes(spec: str) -> list[ModulePass]:
    """The expanded pipeline of a textual one (`a,b{opt=1}`), with the passes `available_passes` offers."""
    available = available_passes()
    out = []
    for p in parse_pipeline(spell_exponents(spec)):
        if p.name not in available:
            raise ValueError(f"unknown pass '{p.name}'")
        out.append(available[p.name]().from_pass_spec(p))
    return expand(out)


LOWERED_DIALECTS = ("task", "stream")


def require_graph_level(pass_name: str, module: ModuleOp) -> None:
    """Graph passes work on ge ops; a module already lowered to tasks or streams is refused in one
    line rather than half-rewritten (its kernels and events are not graph operators)."""
    for op in module.walk():
        if op.name.split(".", 1)[0] in LOWERED_DIALECTS:
            raise DiagnosticException(
                f"{pass_name}: the module is already lowered ({op.name} found); graph passes run before lower-to-tasks"
            )
