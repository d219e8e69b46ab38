"""`ge.FusionPattern`: a user's fusion pattern as a rule of the declarative fusion engine.

    p = ge.FusionPattern(anchor="Conv2D", followers=["BatchNorm"],
                         constraint=lambda node: node["data_format"] == "NCHW")
    opt = ge.GraphOptimizer(fusion_patterns=[p])     # or opt.add_fusion_pattern(p)

`p.rule()` is a `FusionRule` (passes/fusion/engine.py), the entry a rule file holds: the
optimizer applies it exactly as `ge-opt -p 'fuse-ops' --load-fusion-rules my_rules.py` applies
a file whose `RULES = [rule]` (`user_fusion_rules`, in front of the built-in table). So the
engine's own checks still decide: no cycle, no serialization of a parallel branch, the working
set fits the UB, a positive benefit by the device model; a pattern proposes a group, it cannot
force one. Fusion never changes a number (the interpreter runs a group's body as is).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.ir import Operation

from ge.api import op_types
from ge.api.errors import GEError
from ge.api.graph import Graph
from ge.api.node import Node
from ge.ge_dialects import ge
from ge.ge_dialects.ge.base import GeOp
from ge.ge_dialects.ge.facts import Reduction
from ge.ge_dialects.ge.weights import module_of
from ge.passes.fusion.engine import Candidate, Constraint, FusionRule, Step, ops
from ge.passes.fusion.rules import keeps_shape


def op_class(type_name: str, where: str) -> type[GeOp]:
    """The ge op class of a GE operator type name (`Conv2D`, through api/op_types.py, the table
    `Graph.op` builds with) or of a ge op name (`ge.conv`)."""
    if isinstance(type_name, str):
        entry = op_types.OP_TYPES.get(type_name)
        if entry is not None:
            return entry.op_class
        for cls in ge.ALL_OPS:
            if cls.name == type_name:
                return cls
    raise GEError(f"{where}: unknown operator type {type_name!r} (a GE type of api/op_types.py, or a ge op name)")


def node_of(op: Operation) -> Node:
    """The `ge.Node` view of `op` (what `Graph.nodes` hands out), for a constraint to read."""
    return Node(Graph.from_module(module_of(op)), op)


@dataclass(frozen=True)
class FusionPattern:
    """An anchor op type, the op types that follow it (one op each, along the anchor's consumer
    chain) and an optional constraint, a function of the anchor's `ge.Node` (`node["data_format"]`,
    `node["strides"]`, `node.name`, `node.type`) returning True to allow the group. Type names are
    GE's (`Conv2D`, `BatchNorm`, `MatMul`, ...: api/op_types.py) or ge op names (`ge.conv`)."""

    anchor: str
    followers: Sequence[str] = ()
    constraint: Callable[[Node], bool] | None = None
    name: str | None = None

    def __post_init__(self) -> None:
        where = "FusionPattern"
        op_class(self.anchor, where)
        if isinstance(self.followers, str) or not all(isinstance(f, str) for f in self.followers):
            raise GEError(f"{where}: followers must be a list of operator type names, not {self.followers!r}")
        for f in self.followers:
            op_class(f, where)
        if not self.followers:
            raise GEError(f"{where}: a pattern needs at least one follower (a group has two ops or more)")
        if self.constraint is not None and not callable(self.constraint):
            raise GEError(f"{where}: constraint must be a function of a node, not {type(self.constraint).__name__}")
        if self.name is not None and (not isinstance(self.name, str) or not self.name):
            raise GEError(f"{where}: name must be a non-empty string")

    @property
    def rule_name(self) -> str:
        """The rule's name in remarks and in `fused.group "<class>" "<rule>"`."""
        if self.name:
            return self.name
        parts = [self.anchor, *self.followers]
        return "user_" + "_".join(re.sub(r"[^A-Za-z0-9]+", "_", p).strip("_").lower() for p in parts)

    def pattern_class(self) -> str:
        """The fused.group class: a Cube op makes `cube+elementwise`, a reduction anchor
        `reduce+elementwise`, else `elementwise` (the device model picks the engine from it)."""
        classes = [op_class(t, "FusionPattern") for t in (self.anchor, *self.followers)]
        if any(c.engine_class().uses_cube for c in classes):
            return "cube+elementwise"
        if classes[0].has_trait(Reduction) or classes[0] in (ge.BatchNormOp, ge.LayerNormOp, ge.SoftmaxOp):
            return "reduce+elementwise"
        return "elementwise"

    def rule(self) -> FusionRule:
        """The engine rule: anchor, one `Step` per follower (keeping the group's tensor shape, as
        the built-in rules' followers do) and the constraint as a named `Constraint`."""
        constraints = (Constraint(f"{self.rule_name}-constraint", self._check),) if self.constraint else ()
        return FusionRule(
            name=self.rule_name,
            pattern=self.pattern_class(),
            anchor=ops(op_class(self.anchor, "FusionPattern")),
            followers=tuple(Step(ops(op_class(f, "FusionPattern")), when=keeps_shape) for f in self.followers),
            constraints=constraints,
        )

    def _check(self, candidate: Candidate) -> str | None:
        """The engine's constraint interface: None to allow, else the reason (a remark)."""
        assert self.constraint is not None
        node = node_of(candidate.anchor)
        try:
            ok = self.constraint(node)
        except Exception as e:  # the user's function failed: its own error, in one line
            detail = str(e).strip().splitlines()
            raise GEError(
                f"FusionPattern {self.rule_name}: the constraint raised {type(e).__name__}"
                + (f": {detail[0]}" if detail else "")
                + f" on node '{node.name}' ({node.type})"
            ) from None
        return None if ok else f"the pattern's constraint rejects node '{node.name}' ({node.type})"

    def __repr__(self) -> str:
        chain = " -> ".join([self.anchor, *self.followers])
        extra = ", with constraint" if self.constraint else ""
        return f"FusionPattern({self.rule_name}: {chain} [{self.pattern_class()}]{extra})"
