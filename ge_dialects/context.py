"""The context every tool and pipeline parses and runs in: builtin, func and the project's four dialects."""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import builtin, func

from ge.ge_dialects.fused import FUSED
from ge.ge_dialects.ge import GE
from ge.ge_dialects.stream import STREAM
from ge.ge_dialects.task import TASK


def make_context() -> Context:
    ctx = Context()
    ctx.load_dialect(builtin.Builtin)
    ctx.load_dialect(func.Func)
    ctx.load_dialect(GE)
    ctx.load_dialect(FUSED)
    ctx.load_dialect(TASK)
    ctx.load_dialect(STREAM)
    return ctx
