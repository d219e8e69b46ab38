"""assign-formats: chooses a storage format for every value, GE style, then inserts TransData.

The rules are data (`rules.py`, made by the constructors of `planning.py`); the rewrite engine
applies them in one sweep in program order, with a `Planner` that keeps the storage format planned
for each value (initially the one its type has):

1. anchor rules: an op that wants a format (Conv, ConvTranspose: NC1HWC0 activations and
   FRACTAL_Z weights; pools and BatchNorm: NC1HWC0; MatMul/Gemm: FRACTAL_NZ where the benefit rule
   holds) asks for it on the listed operands and results, when every check of the rule passes;
2. follow rules: a format-agnostic op (elementwise, Clip, Dropout; Softmax and LayerNorm over the
   last axis for FRACTAL_NZ) whose full-shape operand arrives in a format the rule carries computes
   in that format: its full-shape operands and its results take it, so the format flows along the
   chain (forward; a TransData goes right before the first op that cannot take the format);
3. everything else, and graph inputs and outputs, keep their storage (= origin) format; except,
   in a training step, a conv weight variable with its optimizer slots and update, planned in
   FRACTAL_Z before the sweep (GE's variable-format optimization, `variable_formats.py`): its
   state outputs are then stored in FRACTAL_Z too.

The choices become `ge.storage` annotations, which `insert-trans-data` materializes (with
`insert=false` the annotated IR is printed instead). Each decision is a remark: `applied` with the
formats (and the benefit, for FRACTAL_NZ: the MACs run on the Cube), `rejected` with the reason.

Options: `nz=false` turns FRACTAL_NZ off; `nz-min-dim` is the smallest M, K and N for FRACTAL_NZ;
`variable-formats=false` keeps every variable in its logical layout.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ge.ge_dialects.ge.base import GeOp
from ge.ge_dialects.ge.target_attr import module_pass_target
from ge.passes import remarks
from ge.passes.fusion.cost import CostModel
from ge.passes.layout.format_choice import MAX_COMPONENT_OPS, ConversionCost, FormatChoice, follow_rules
from ge.passes.layout.insert_trans_data import annotation, materialize
from ge.passes.layout.planning import Planner
from ge.passes.layout.rules import BROADCASTS, RULES, Options
from ge.passes.layout.variable_formats import Group, keep_state_stored, plan_variables
from ge.passes.rewrite import apply_rules

PASS = "assign-formats"


CHOICES = ("whole-graph", "greedy")


def plan(
    module: ModuleOp,
    options: Options,
    variable_formats: bool = True,
    choice: ConversionCost | None = None,
    max_component_ops: int = MAX_COMPONENT_OPS,
) -> tuple[list[Group], Callable[[Operation], str | None]]:
    """Annotates `module`'s ops with the storage formats the rules choose: first the variables kept
    in FRACTAL_Z, then the anchors, then the format-agnostic ops (by the whole-graph choice when
    `choice` gives the conversions' cost, else greedily); the variables' groups, and what says why an
    op took no format."""
    planner = Planner(options, BROADCASTS)
    groups = plan_variables(module, planner) if variable_formats else []
    if choice is None:
        apply_rules(module, RULES, PASS, walk="single-pass", context=planner)
    else:
        anchors = [r for r in RULES if not r.finds]
        follows = [r for r in RULES if r.finds]
        apply_rules(module, anchors, PASS, walk="single-pass", context=planner)
        FormatChoice(planner, follow_rules(follows), choice, max_component_ops).run(module, PASS)
        apply_rules(module, follows, PASS, walk="single-pass", context=planner)
        for op, decision in planner.decided.items():
            if decision.storage is not None and not annotation(op):
                why = planner.refused.get(op, "its rule did not apply")
                remarks.emit(PASS, "note", "whole-graph", [op], f"chosen for {decision.storage}, but {why}")
    return groups, refusal(planner)


def refusal(planner: Planner) -> Callable[[Operation], str | None]:
    """Why a format arriving at an op stops there (asked only where a TransData goes in): a follow
    rule's refusal, the op's shapes outside its follow rule, its anchor rule's refusal (its remark),
    no rule for its kind of op, or the graph's declared outputs."""
    follows = {cls: " or ".join(r.name for r in rules) for cls, rules in follow_rules(RULES).items()}
    anchors = {cls: r.name for r in RULES if not r.finds for cls in r.pattern.classes}

    def why(op: Operation) -> str | None:
        if op in planner.refused:
            return planner.refused[op]
        if isinstance(op, func.ReturnOp):
            return "the graph's outputs keep their declared types"
        if not isinstance(op, GeOp) or annotation(op):
            return None
        if type(op) in follows:
            return f"its operands' shapes are not those {follows[type(op)]} carries a format through"
        if type(op) in anchors:
            return f"{anchors[type(op)]} did not apply (its remark says why)"
        return f"no layout rule carries a storage format through {op.name}"

    return why


@dataclass(frozen=True)
class AssignFormatsPass(ModulePass):
    """Chooses storage formats by the rule tables and inserts the TransData they need."""

    name = "assign-formats"

    nz: bool = True
    """Use FRACTAL_NZ for matmul/gemm operands where the benefit rule holds."""

    nz_min_dim: int | None = None
    """FRACTAL_NZ only when M, K and N are all at least this (None: the target's Cube fractal,
    `[cube] m`: a smaller dim would leave the tile mostly padding)."""

    insert: bool = True
    """Insert the TransData (run insert-trans-data); false leaves the `ge.storage` annotations."""

    variable_formats: bool = True
    """Keep conv weight variables and their optimizer slots in FRACTAL_Z across training steps."""

    choice: str = "whole-graph"
    """How the format-agnostic ops are placed: `whole-graph` (the least modeled conversion time per
    component, format_choice.py) or `greedy` (each takes the format arriving first)."""

    max_component_ops: int = MAX_COMPONENT_OPS
    """A component of more format-agnostic ops than this is placed greedily."""

    target: str | None = None
    """The target whose cost model times the conversions (None: the module's, else the default)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.choice not in CHOICES:
            raise DiagnosticException(f"{self.name}: choice={self.choice} is not one of {', '.join(CHOICES)}")
        target = module_pass_target(self.name, op, self.target, record=False)
        cost = ConversionCost(CostModel(target)) if self.choice == "whole-graph" else None
        options = Options(nz=self.nz, nz_min_dim=self.nz_min_dim if self.nz_min_dim is not None else target.cube.m)
        groups, why = plan(op, options, self.variable_formats, cost, self.max_component_ops)
        if self.insert:
            materialize(op, PASS, why)
            keep_state_stored(op, groups)
