"""sink-control-flow: control flow of known shapes decided on the device, as GE sinks a static
graph's If and While into label tasks (LabelSet, LabelSwitchByIndex, LabelGoto) instead of
returning to the host for each decision.

It takes the host programs partition-dynamic made, whose every value and every function they call
has static dims, and turns each into a *control program* (ge_dialects/stream.py): its blocks are
labels, its `ge.if` a switch on the condition between two labels that call the branches and go to
a join, its `ge.loop` a head that calls the loop's condition function and switches between the exit
and the body, whose label goes back to the head with the next iteration number, condition and
carried values:

    %c = func.call @main_sub_0_know(%x)                      stream.label_goto ^head(%zero, %c0, %v0 : ...)
    stream.label_switch %c : tensor<i1> [^else, ^then]     ^head(%i, %c, %v):
  ^then:                                                     %go, %next = func.call @main_loop_0_cond(%i, %trip, %c)
    %t = func.call @then(%x)                                 stream.label_switch %go : tensor<i1> [^exit, ^body]
    stream.label_goto ^join(%t : tensor<2x8xf32>)          ^body:
  ^else: ...                                                 %c2, %v2 = func.call @body(%i, %c, %v, captures...)
  ^join(%r: tensor<2x8xf32>):                                stream.label_goto ^head(%next, %c2, %v2 : ...)
                                                           ^exit: ...

The condition function `@<fn>_loop_<k>_cond(i, trip, cond) -> (i < trip and cond, i + 1)` is
made here, a graph like any other, so lowering sinks it with the rest; where the condition always
holds (true on entry, and the body returns it unchanged or a true capture: a `for` loop as
exporters write it) it is neither carried nor read, `(i, trip) -> (i < trip, i + 1)`. What stays on the host,
each with a remark naming why: gears (the host picks a gear from the inputs' shapes), functions
of unknown shapes, a loop with scan outputs (their length is the trip count, known only when it
runs), a function calling one of those. Run it only for whole-graph sink (`compile_pipeline` does
so for mode=graph): in subgraph and per-op modes the host schedules the subgraphs, control flow
with them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, StringAttr, TensorType
from xdsl.ir import Block, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from ge.ge_dialects import ge
from ge.ge_dialects.ge.base import describe, name_loc
from ge.ge_dialects.ge.control_flow import (
    UNKNOWN_SHAPE_ATTR,
    GearsOp,
    IfOp,
    LoopOp,
    is_host_program,
    lookup_function,
    scalar,
)
from ge.ge_dialects.stream import LabelGotoOp, LabelSwitchOp, is_control_program
from ge.passes import remarks
from ge.passes.partition_dynamic import is_static

PASS = "sink-control-flow"


def _callees(fn: func.FuncOp) -> list[func.FuncOp]:
    """The functions `fn` calls or runs (calls, branches, bodies, gears)."""
    found: list[func.FuncOp] = []
    for op in fn.body.block.ops:
        if isinstance(op, func.CallOp):
            found.append(lookup_function(op, op.callee))
        elif isinstance(op, IfOp):
            found += [op.function("then_branch"), op.function("else_branch")]
        elif isinstance(op, LoopOp):
            found.append(op.function("body"))
        elif isinstance(op, GearsOp):
            found += op.functions()
    return found


def _static_signature(fn: func.FuncOp) -> bool:
    return all(is_static(t) for t in [*fn.function_type.inputs.data, *fn.function_type.outputs.data])


def why_not_sunk(fn: func.FuncOp, sunk: set[func.FuncOp]) -> str | None:
    """Why the host program `fn` must stay on the host (None: it can be sunk, given that the
    programs in `sunk` are)."""
    for op in fn.body.block.ops:
        if isinstance(op, GearsOp):
            return "the host picks a gear from the inputs' shapes"
        if isinstance(op, LoopOp) and len(op.results) > op.carried_count:
            return f"the loop {op.body.root_reference.data!r} has scan outputs, as long as its trip count"
        if any(not is_static(r.type) for r in op.results):
            return f"{describe(op)} has a result of unknown dims"
    if not _static_signature(fn):
        return "its arguments or results have unknown dims"
    for callee in _callees(fn):
        name = callee.sym_name.data
        if UNKNOWN_SHAPE_ATTR in callee.attributes:
            return f"@{name} has shapes known only when it runs"
        if is_host_program(callee) and callee not in sunk:
            return f"@{name} has control flow that stays on the host"
        if not _static_signature(callee):
            return f"@{name} has unknown dims"
    return None


def _call(name: str, args: list[SSAValue], callee: func.FuncOp) -> func.CallOp:
    call = func.CallOp(name, args, list(callee.function_type.outputs.data))
    call.location = name_loc(name)
    return call


def _named(prefix: str, count: int) -> ArrayAttr[DictionaryAttr]:
    return ArrayAttr([DictionaryAttr({"ge.name": StringAttr(f"{prefix}{i}")}) for i in range(count)])


def _is_true(value: SSAValue) -> bool:
    owner = value.owner
    if not isinstance(owner, ge.ConstantOp):
        return False
    array = owner.inline_value()
    return array is not None and array.size == 1 and bool(array.reshape(-1)[0])


def always_true(loop: LoopOp) -> bool:
    """Whether the Loop's condition holds at every iteration: true on entry, and the body returns its
    own condition argument or a capture that is true (a `for` loop as exporters write it)."""
    if not _is_true(loop.args[1]):
        return False
    body = loop.function("body")
    returned = next(op for op in body.body.block.ops if isinstance(op, func.ReturnOp)).operands[0]
    if returned is body.body.block.args[1]:
        return True
    position = next((k for k, a in enumerate(body.body.block.args) if a is returned), None)
    if position is not None:
        return position >= 2 + loop.carried_count and _is_true(loop.captures[position - 2 - loop.carried_count])
    return _is_true(returned)


def loop_condition(name: str, loop: LoopOp, with_cond: bool) -> func.FuncOp:
    """`@name(i, trip[, cond]) -> (i < trip [and cond], i + 1)`: a Loop's decision, on the device
    (without the condition when it always holds)."""
    trip, cond = loop.args[0], loop.args[1]
    assert isinstance(trip.type, TensorType), "ge.loop's operands are tensors (its verifier)"
    inputs = [scalar(trip.type.element_type), trip.type, *([cond.type] if with_cond else [])]
    fn = func.FuncOp(name, (inputs, []))
    i, limit = fn.body.block.args[:2]
    less = ge.LessOp.create({"a": i, "b": limit}, name=f"{name}/Less")
    ops = [less]
    if with_cond:
        ops.append(ge.LogicalAndOp.create({"a": less.results[0], "b": fn.body.block.args[2]}, name=f"{name}/And"))
    one = ge.ConstantOp.inline(np.array(1, np.int64), name=f"{name}/one")
    step = ge.AddOp.create({"a": i, "b": one.results[0]}, name=f"{name}/Add")
    go = ops[-1].results[0]
    fn.body.block.add_ops([*ops, one, step, func.ReturnOp(go, step.results[0])])
    fn.function_type = func.FunctionType.from_lists(inputs, [go.type, step.results[0].type])
    fn.arg_attrs = _named("in", len(inputs))
    fn.res_attrs = _named("out", 2)
    return fn


class _Sinker:
    """Rewrites one host program into a control program, block by block."""

    def __init__(self, fn: func.FuncOp) -> None:
        self.fn = fn
        self.made: list[func.FuncOp] = []
        self.ifs = self.loops = 0

    def run(self) -> None:
        block = self.fn.body.block
        while True:
            op = next((o for o in block.ops if isinstance(o, (IfOp, LoopOp))), None)
            if op is None:
                return
            block = self.sink_if(block, op) if isinstance(op, IfOp) else self.sink_loop(block, op)

    def sink_if(self, block: Block, op: IfOp) -> Block:
        """`block` switches on the condition to the branches' labels; returns the join."""
        region = self.fn.body
        join = block.split_before(op, arg_types=[r.type for r in op.results])
        labels = []
        for prop in ("else_branch", "then_branch"):
            callee = op.function(prop)
            label = Block()
            call = _call(callee.sym_name.data, list(op.inputs), callee)
            label.add_ops([call, LabelGotoOp(join, list(call.results))])
            labels.append(label)
        region.insert_block_before(labels, join)
        block.add_op(LabelSwitchOp(op.cond, labels))
        for old, new in zip(op.results, join.args):
            old.replace_all_uses_with(new)
        Rewriter.erase_op(op)
        self.ifs += 1
        return join

    def sink_loop(self, block: Block, op: LoopOp) -> Block:
        """`block` goes to the loop's head, which switches to the exit or the body; returns the
        exit. A condition that always holds is not carried: the head decides on the count alone."""
        region = self.fn.body
        body_fn = op.function("body")
        trip, cond = op.args[0], op.args[1]
        varies = not always_true(op)
        name = f"{self.fn.sym_name.data}_loop_{self.loops}_cond"
        condition = loop_condition(name, op, varies)
        self.made.append(condition)
        exit_label = block.split_before(op)
        counter = condition.function_type.inputs.data[0]
        head = Block(arg_types=[counter, *([cond.type] if varies else []), *(v.type for v in op.initial)])
        body = Block()
        region.insert_block_before([head, body], exit_label)
        zero = ge.ConstantOp.inline(np.array(0, np.int64), name=f"{name}/zero")
        block.add_ops([zero, LabelGotoOp(head, [zero.results[0], *([cond] if varies else []), *op.initial])])
        i, *rest = head.args
        c, carried = (rest[0], rest[1:]) if varies else (cond, rest)
        decide = _call(name, [i, trip, *([c] if varies else [])], condition)
        head.add_ops([decide, LabelSwitchOp(decide.results[0], [exit_label, body])])
        step = _call(body_fn.sym_name.data, [i, c, *carried, *op.captures], body_fn)
        back: list[SSAValue] = [decide.results[1], *(step.results if varies else step.results[1:])]
        body.add_ops([step, LabelGotoOp(head, back)])
        for old, new in zip(op.results, carried):
            old.replace_all_uses_with(new)
        Rewriter.erase_op(op)
        self.loops += 1
        return exit_label


def _types_agree(fn: func.FuncOp) -> str | None:
    """Why the values crossing labels would change type (None: they do not)."""
    for op in fn.body.block.ops:
        if isinstance(op, IfOp):
            for prop in ("then_branch", "else_branch"):
                if list(op.function(prop).function_type.outputs.data) != [r.type for r in op.results]:
                    return f"@{op.function(prop).sym_name.data} returns other types than the If's results"
        elif isinstance(op, LoopOp):
            outputs = list(op.function("body").function_type.outputs.data)
            if outputs != [op.args[1].type, *(v.type for v in op.initial)]:
                return f"@{op.body.root_reference.data} returns other types than the Loop carries"
    return None


@dataclass(frozen=True)
class SinkControlFlowPass(ModulePass):
    """Host programs of known shapes become control programs (see the module docstring)."""

    name = "sink-control-flow"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        programs = [f for f in op.ops if isinstance(f, func.FuncOp) and f.body.blocks and is_host_program(f)]
        sunk: set[func.FuncOp] = {f for f in op.ops if isinstance(f, func.FuncOp) and is_control_program(f)}
        reasons: dict[func.FuncOp, str] = {}
        changed = True
        while changed:  # a program calling another is sunk once the other is
            changed = False
            for fn in programs:
                if fn in sunk:
                    continue
                reason = why_not_sunk(fn, sunk) or _types_agree(fn)
                if reason is None:
                    sunk.add(fn)
                    changed = True
                reasons[fn] = reason or ""
        for fn in programs:
            if fn not in sunk:
                remarks.emit(PASS, "missed", "host", [fn], f"@{fn.sym_name.data} stays on the host: {reasons[fn]}")
                continue
            sinker = _Sinker(fn)
            sinker.run()
            after: func.FuncOp = fn
            for made in sinker.made:
                Rewriter.insert_op(made, InsertPoint.after(after))
                after = made
            remarks.emit(
                PASS,
                "applied",
                "labels",
                [fn],
                f"@{fn.sym_name.data}: {sinker.ifs} If and {sinker.loops} Loop decided on the device (label tasks)",
            )
