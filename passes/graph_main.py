"""The graph a training pass rewrites: the module's `func.func @main`."""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException


def main_of(module: ModuleOp, pass_name: str) -> func.FuncOp:
    """`@main` with a body; else the pass's one-line error."""
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == "main" and op.body.blocks:
            return op
    raise DiagnosticException(f"{pass_name}: the module has no func.func @main")
