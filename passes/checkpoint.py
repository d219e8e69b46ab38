"""`checkpoint{policy=none|layer|sqrt|nodes|budget nodes="a,b" budget_mib=N}`: activation checkpointing.

After `autodiff`, the backward graph reads forward values (activations), each alive from its
forward op to its last backward use; that is where a training step's memory goes. This pass keeps
a chosen set of them (the checkpoints) and recomputes every other one the backward needs: a copy
of its forward op, with the operands kept or themselves recomputed, placed just before its first
backward use, so it lives only through the backward of its segment. Values are recomputed with
the same kernels on the same operands, so every gradient is bit-equal to the one without
checkpointing.

Policies (which forward values the backward keeps):
- `none`: all of them (the pass changes nothing);
- `layer` (GE's default granularity): the values that cross a layer boundary, where a layer is
  the node-name scope up to its first indexed module (`/layer1/layer1.0`, `/encoder/layer.3`,
  `/h.5`; else the first component, `/conv1`), as the importer keeps the exporter's names;
- `sqrt` (Chen et al. 2016, "Training Deep Nets with Sublinear Memory Cost"): every
  ceil(sqrt(n))-th of the n values the backward reads, in forward order: sqrt(n) segments;
- `nodes`: exactly the outputs of the named nodes (`nodes="/layer1/layer1.0/relu_2/Relu,..."`;
  a name matches a node's full name or its last component);
- `budget` (`budget_mib=N`, `time_limit_s=10`): the least recomputed work whose peak of stashed
  activations fits N MiB, solved exactly as an integer program (checkpoint_budget.py states the model),
  with a heuristic and a remark when the solver times out.
Always kept, whatever the policy: graph inputs and outputs, constants, and values of ops that are
not pure (a training-mode dropout would draw a new mask).

Runs right after `autodiff` or `accumulate-gradients`: the backward is what depends on autodiff's
seed (`/autodiff/seed`, the loss's cotangent).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, UnitAttr
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import is_side_effect_free
from xdsl.utils.exceptions import DiagnosticException

from ge.ge_dialects import ge
from ge.ge_dialects.ge.base import location_name
from ge.ge_dialects.ge.target_attr import module_pass_target
from ge.interpreter.runner import InputError, main_function
from ge.passes.autodiff import SEED_NAME
from ge.passes.checkpoint_budget import choose_budget
from ge.passes.pipeline import require_graph_level

PASS = "checkpoint"
RECOMPUTE_ATTR = "ge.recompute"
"""Marks a recomputed copy (as GE marks its recompute nodes): it differs from its original, so cse
does not merge the two back and undo the checkpointing."""
POLICIES = ("none", "layer", "sqrt", "nodes", "budget")
_INDEXED = re.compile(r"\.\d+$")


def _error(message: str) -> DiagnosticException:
    return DiagnosticException(f"{PASS}: {message}")


@dataclass(frozen=True)
class CheckpointPass(ModulePass):
    name = "checkpoint"

    policy: str = "layer"
    nodes: str | None = None
    """With policy=nodes: comma-separated node names whose outputs the backward keeps."""
    budget_mib: int | float | None = None
    """With policy=budget: the MiB the stashed activations may peak at."""
    time_limit_s: int | float = 10.0
    """With policy=budget: the MILP's time limit; past it, the heuristic decides (and a remark says so)."""
    target: str | None = None
    """With policy=budget: the target whose Cube and Vector rates weigh the recomputed work (None:
    the module's, else the default; read, not recorded: the step is not lowered yet)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_graph_level(PASS, op)
        if self.policy not in POLICIES:
            raise _error(f"unknown policy '{self.policy}'; expected one of {', '.join(POLICIES)}")
        if (self.nodes is not None) != (self.policy == "nodes"):
            raise _error("nodes=... goes with policy=nodes, and policy=nodes needs nodes=...")
        self._check_budget_options()
        try:
            fn = main_function(op)
        except InputError as e:
            raise _error(str(e)) from None
        forward, backward = split_at_seed(fn)
        always = always_kept(fn, forward)
        stash = [v for v in stashed_values(forward, backward) if v not in always]
        if self.policy == "none" or not stash:
            return
        if self.policy == "budget":
            assert self.budget_mib is not None
            target = module_pass_target(PASS, op, self.target, record=False)
            chosen = choose_budget(forward, backward, always, stash, self.budget_mib, self.time_limit_s, target)
        else:
            chosen = self._chosen(forward, stash)
        _Recomputer(forward, always | chosen).rewrite(backward)

    def _check_budget_options(self) -> None:
        if self.policy != "budget":
            if self.budget_mib is not None:
                raise _error(f"budget_mib=... goes with policy=budget, not policy={self.policy}")
            return
        if self.budget_mib is None or self.budget_mib <= 0:
            raise _error("policy=budget needs budget_mib=N, a positive number of MiB")
        if self.time_limit_s <= 0:
            raise _error(f"time_limit_s={self.time_limit_s:g} must be positive")

    def _chosen(self, forward: list[Operation], stash: list[SSAValue]) -> set[SSAValue]:
        if self.policy == "layer":
            return layer_boundaries(forward)
        if self.policy == "sqrt":
            step = math.ceil(math.sqrt(len(stash)))
            return set(stash[step - 1 :: step])
        assert self.nodes is not None
        return named_outputs(forward, [n.strip() for n in self.nodes.split(",") if n.strip()])


def split_at_seed(fn: func.FuncOp) -> tuple[list[Operation], list[Operation]]:
    """The forward ops and the backward ops, each in block order. The backward is what depends on
    a seed (the loss's cotangent autodiff starts from; one per micro-batch after
    accumulate-gradients), and the ops only the backward uses (a VJP's `1 - y*y` reads the forward
    result `y` but not the seed); everything else, the return aside, is forward."""
    ops = list(fn.body.block.ops)[:-1]
    seeded: set[SSAValue] = set()
    backward: set[Operation] = set()
    for o in ops:
        if location_name(o) == SEED_NAME or any(v in seeded for v in o.operands):
            seeded.update(o.results)
            backward.add(o)
    if not backward:
        raise _error("the graph has no backward part (autodiff's seed); run checkpoint right after autodiff")
    for o in reversed(ops):  # users come after their producers: one reverse sweep settles it
        users = [u.operation for r in o.results for u in r.uses]
        if o not in backward and not isinstance(o, ge.ConstantOp) and users and all(u in backward for u in users):
            backward.add(o)
    return [o for o in ops if o not in backward], [o for o in ops if o in backward]


def stashed_values(forward: list[Operation], backward: list[Operation]) -> list[SSAValue]:
    """The forward values the backward reads, in forward order."""
    position: dict[SSAValue, int] = {r: i for i, o in enumerate(forward) for r in o.results}
    read = {v for o in backward for v in o.operands if v in position}
    return sorted(read, key=lambda v: position[v])


def always_kept(fn: func.FuncOp, forward: Iterable[Operation]) -> set[SSAValue]:
    ret = fn.body.block.last_op
    assert ret is not None
    kept: set[SSAValue] = set(ret.operands)
    for o in forward:
        if isinstance(o, ge.ConstantOp) or not is_side_effect_free(o):
            kept.update(o.results)
    return kept


def layer_of(name: str | None) -> str:
    """The layer scope of a node name: up to its first indexed module, else its first component."""
    if not name:
        return ""
    parts = name.strip("/").split("/")
    for i, part in enumerate(parts[:-1]):
        if _INDEXED.search(part):
            return "/".join(parts[: i + 1])
    return parts[0] if len(parts) > 1 else ""


def layer_boundaries(forward: list[Operation]) -> set[SSAValue]:
    """Forward values read by a forward op of another layer."""
    layer = {o: layer_of(location_name(o)) for o in forward}
    crossing: set[SSAValue] = set()
    for o in forward:
        for v in o.operands:
            owner = v.owner
            if isinstance(owner, Operation) and owner in layer and layer[owner] != layer[o]:
                crossing.add(v)
    return crossing


def named_outputs(forward: list[Operation], names: list[str]) -> set[SSAValue]:
    found: set[SSAValue] = set()
    for name in names:
        matches = [o for o in forward if _names(o, name)]
        if not matches:
            raise _error(f"no forward node is named '{name}'")
        for o in matches:
            found.update(o.results)
    return found


def _names(op: Operation, name: str) -> bool:
    full = location_name(op) or ""
    return full == name or full.endswith(f"/{name}")


class _Recomputer:
    """Redirects the backward's reads of values not kept to copies made just before their first read."""

    def __init__(self, forward: list[Operation], kept: set[SSAValue]):
        self.forward = set(forward)
        self.kept = kept
        self.copies: dict[SSAValue, SSAValue] = {}

    def rewrite(self, backward: list[Operation]) -> None:
        for op in backward:
            for i, v in enumerate(op.operands):
                if self._needs_copy(v):
                    op.operands[i] = self._copy(v, op)

    def _needs_copy(self, v: SSAValue) -> bool:
        return v.owner in self.forward and v not in self.kept

    def _copy(self, v: SSAValue, before: Operation) -> SSAValue:
        if v in self.copies:
            return self.copies[v]
        original = v.owner
        assert isinstance(original, Operation) and original.parent is not None
        operands = [self._copy(o, before) if self._needs_copy(o) else o for o in original.operands]
        clone = original.clone()
        for i, o in enumerate(operands):
            clone.operands[i] = o
        clone.attributes[RECOMPUTE_ATTR] = UnitAttr()
        original.parent.insert_op_before(clone, before)
        for old, new in zip(original.results, clone.results):
            self.copies[old] = new
            new.name_hint = old.name_hint
        return self.copies[v]
