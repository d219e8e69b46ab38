"""GE's variable-format optimization, as `assign-formats` applies it to a training step.

A training step (`apply-optimizer`) reads each weight with `ge.variable "key"`, updates it with a
`ge.apply_*` op and returns the new values as outputs marked `{ge.state = "key"}` (GE's Assign).
A conv weight is read by the Cube in FRACTAL_Z (the forward conv and Conv2DBackpropInput, or
Conv2DTranspose and the conv of its input gradient) and its gradient is produced in FRACTAL_Z
(Conv2DBackpropFilter); kept ND, every step would convert the weight to FRACTAL_Z and the gradient
back to ND. GE instead stores such a variable, and the optimizer slots updated with it, in
FRACTAL_Z on the device for good: the update runs in FRACTAL_Z (elementwise, so any layout computes
the same numbers) and writes back into the stored variable.

`plan_variables` chooses these groups before the rule sweep: a `ge.variable` that is the `var` of
an update op and that a group-1 conv, conv_backprop_input or conv_transpose reads directly as W
(same element type: under mixed precision the Cube reads an f16 cast, whose C0 differs, so nothing
is gained and the variable stays ND). The variable, the update's slot variables (accum, m, v), its
gradient and its results are planned in FRACTAL_Z; the anchor rules then find the weight already
there.
`keep_state_stored` runs after insert-trans-data: a state output that returns such a result through
a TransData back to the logical layout returns the stored value instead (the output's declared type
becomes the storage type), so no TransData runs at the step's end either.

The storage format is a device detail: the runtime gives and takes state logically (`ge-run`
converts at the boundary, as for graph inputs and outputs; `read_state` converts a logical state
value to the variable's storage), so `--save-state` writes ND/NCHW arrays that `--load-state` and
a step without this optimization read alike. `assign-formats{variable-formats=false}` turns it off.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, StringAttr, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import Rewriter

from ge.ge_dialects import ge
from ge.ge_dialects.ge.base import GeOp
from ge.ge_dialects.ge.layout import FRACTAL_Z, TransDataOp, cannot_store, storage_of
from ge.passes import remarks
from ge.passes.layout.planning import Planner

RULE = "variable-format"
STATE_ATTR = "ge.state"  # apply_optimizer.STATE_ATTR (not imported: passes.layout stays below the training passes)

SLOTS: dict[type[GeOp], tuple[str, ...]] = {
    ge.ApplyGradientDescentOp: (),
    ge.ApplyMomentumOp: ("accum",),
    ge.ApplyAdamOp: ("m", "v"),
    ge.ApplyAdagradOp: ("accum",),
}
"""The state operands each update op keeps beside `var` (its optimizer slots; the same type as var)."""

_CUBE_READERS: dict[type[GeOp], str] = {ge.ConvOp: "W", ge.ConvBackpropInputOp: "W", ge.ConvTransposeOp: "W"}
"""The ops that read a weight in FRACTAL_Z, and the operand they read it as."""


@dataclass(frozen=True)
class Group:
    """A weight variable, its update op and the update's slot variables: stored alike."""

    update: GeOp
    variables: tuple[ge.VariableOp, ...]


def _conv_reader(value: SSAValue) -> GeOp | None:
    """The first group-1 conv (conv_backprop_input, conv_transpose) reading `value` as its weight."""
    for use in value.uses:
        op = use.operation
        name = _CUBE_READERS.get(type(op))
        if name is not None and getattr(op, name) is value and op.p("group") == 1:
            return op
    return None


def _why_not(update: GeOp, var: SSAValue) -> str | None:
    """Why the update of `var` cannot keep its state in FRACTAL_Z (None: it can)."""
    if _conv_reader(var) is None:
        if any(type(u.operation) in _CUBE_READERS for u in var.uses):
            return "its convs are grouped (FRACTAL_Z with group packing is not modeled)"
        return (
            "no conv reads it directly as W (a conv reading a cast of it, as under mixed precision, "
            "needs the f16 copy in FRACTAL_Z, whose C0 differs)"
        )
    t = var.type
    assert isinstance(t, TensorType)  # a ge.variable's result is a tensor (its verifier)
    reason = cannot_store(t, FRACTAL_Z)
    if reason is not None:
        return reason
    for name in SLOTS[type(update)]:
        slot = getattr(update, name)
        if not isinstance(slot.owner, ge.VariableOp):
            return f"its slot '{name}' is not a variable"
        if sum(1 for _ in slot.uses) != 1:
            return f"its slot variable '{slot.owner.state_key}' has other readers"
    return None


def candidates(module: ModuleOp) -> list[GeOp]:
    """The update ops whose `var` is a variable some conv reads (directly or, under mixed precision,
    through a cast): the ones a remark speaks of."""
    found: list[GeOp] = []
    for op in module.walk():
        if type(op) not in SLOTS:
            continue
        assert isinstance(op, GeOp)
        var = op.operands[0]
        if not isinstance(var.owner, ge.VariableOp):
            continue
        weights = [var, *(u.operation.results[0] for u in var.uses if isinstance(u.operation, ge.CastOp))]
        readers = [u.operation for w in weights for u in w.uses]
        if any(type(r) in _CUBE_READERS and getattr(r, _CUBE_READERS[type(r)]) in weights for r in readers):
            found.append(op)
    return found


def plan_variables(module: ModuleOp, planner: Planner) -> list[Group]:
    """Plans FRACTAL_Z for every conv weight variable that can keep it, with its update and slots."""
    groups: list[Group] = []
    for update in candidates(module):
        var = update.operands[0]
        key = var.owner.state_key if isinstance(var.owner, ge.VariableOp) else "?"
        reason = _why_not(update, var)
        if reason is not None:
            remarks.emit(
                "assign-formats", "rejected", RULE, [update], f"state '{key}' stays in its logical layout: {reason}"
            )
            continue
        variables: list[ge.VariableOp] = []
        for value in (var, *(getattr(update, n) for n in SLOTS[type(update)])):
            assert isinstance(value.owner, ge.VariableOp)  # _why_not checked the slots
            variables.append(value.owner)
            planner.assign(value.owner, {"output": FRACTAL_Z}, ["output"])
        names = ["var", *SLOTS[type(update)], "grad"]
        outs = [name for name, _ in update.get_irdl_definition().results]
        planner.assign(update, {n: FRACTAL_Z for n in names + outs}, outs)
        groups.append(Group(update, tuple(variables)))
        keys = ", ".join(f"'{v.state_key}'" for v in variables)
        remarks.emit("assign-formats", "applied", RULE, [update], f"state {keys} stored in FRACTAL_Z across steps")
    return groups


def keep_state_stored(module: ModuleOp, groups: list[Group]) -> int:
    """State outputs of the groups' updates return the stored value, not a TransData of it: the
    step writes back into the variable as it stores it. Returns how many TransData went."""
    results = {r for g in groups for r in g.update.results}
    removed = 0
    for fn in module.walk():
        if not isinstance(fn, func.FuncOp) or fn.res_attrs is None:
            continue
        ret = fn.body.block.last_op
        if not isinstance(ret, func.ReturnOp):
            continue
        outputs = list(fn.function_type.outputs.data)
        for i, (value, attrs) in enumerate(zip(ret.operands, fn.res_attrs.data)):
            trans, key = value.owner, attrs.data.get(STATE_ATTR)
            if not isinstance(key, StringAttr) or not isinstance(trans, TransDataOp):
                continue
            if trans.src not in results or storage_of(trans.src.type) != FRACTAL_Z:  # type: ignore[arg-type]
                continue
            ret.operands[i] = trans.src
            outputs[i] = trans.src.type
            remarks.emit(
                "assign-formats",
                "applied",
                RULE,
                [op for op in (trans.src.owner,) if isinstance(op, Operation)],
                f"state output '{key.data}' returns the stored value: no TransData at the step's end",
            )
            if not trans.dst.uses:
                Rewriter.erase_op(trans)
                removed += 1
        fn.function_type = FunctionType.from_lists(list(fn.function_type.inputs.data), outputs)
    return removed


__all__ = ["Group", "candidates", "keep_state_stored", "plan_variables"]
