"""`require-graph-level`: refuses a module already lowered to tasks or streams, changing nothing.

The first sub-pass of `ge-optimize`, so that a lowered module is refused before any of its passes
runs, in ge-optimize's name (`require-graph-level{owner=ge-optimize}`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ge.passes.pipeline import require_graph_level


@dataclass(frozen=True)
class RequireGraphLevelPass(ModulePass):
    name = "require-graph-level"

    owner: str = "require-graph-level"
    """The pass the error names: the one whose sub-passes need a graph-level module."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_graph_level(self.owner, op)
