"""`ge.Graph`: a view of one ge-level module with its weights (no graph structure of its own).

The module is the graph: a `func.func @main` of ge ops, its weights attached
(ge_dialects/ge/weights.py). Everything the API does (optimizing, compiling, running) reads and
rewrites that module through the same passes the tools run, so nothing can drift between a
Python user's graph and a `ge-opt` user's file.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from ge.api.errors import GEError
from ge.ge_dialects.ge.weights import attach_weights, clone_with_weights, weights_of
from ge.interpreter.runner import input_names, main_function, output_names


class Graph:
    """A ge-level graph. `Graph.from_module(m)` wraps an existing module (sharing it, not copying)."""

    def __init__(self, name: str = "main"):
        self.name = name
        self._module = ModuleOp([])
        attach_weights(self._module, {})

    @classmethod
    def from_module(cls, module: ModuleOp, name: str = "main") -> Graph:
        graph = cls.__new__(cls)
        graph.name = name
        graph._module = module
        weights_of(module)  # an empty table when none is attached yet
        return graph

    @property
    def module(self) -> ModuleOp:
        """The ge-level module (weights attached): what `ge-opt` would read from this graph's IR file."""
        return self._module

    def copy(self) -> Graph:
        """An independent graph: passes applied to the copy leave this one unchanged."""
        return Graph.from_module(clone_with_weights(self.module), self.name)

    def _main(self) -> func.FuncOp:
        try:
            return main_function(self.module)
        except Exception:
            raise GEError(f"graph '{self.name}': no func.func @main (nothing was built)") from None

    @property
    def inputs(self) -> list[str]:
        """The graph's input names, in order."""
        return input_names(self._main())

    @property
    def outputs(self) -> list[str]:
        """The graph's output names, in order."""
        return output_names(self._main())
