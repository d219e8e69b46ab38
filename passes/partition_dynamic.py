"""partition-dynamic: a function with control flow decided at run time becomes a host program that
calls sunk subgraphs, as GE's DynamicShapePartition splits a graph into known and unknown parts.

A `ge.if`, `ge.loop` or `ge.gears` needs the host: it reads a condition, a trip count or the
inputs' shapes before it knows which function runs. The ops between two such ops (and before the
first, after the last) are a known subgraph: each maximal run of them is outlined into a function
of its own, `@<fn>_sub_<k>_know` (GE's `<root>_sub_<id>_know`), which the lowering sinks whole
(one launch, its own tasks, streams and memory plan), and the function keeps only the host's
work: the calls, the control flow ops, the constants they read, the return.

    %y = ge.relu %x                            %y = func.call @main_sub_0_know(%x)
    %c = ge.reduce_max ...                     %c = ...          (in @main_sub_0_know)
    %z = ge.if @pos, @neg (%c, %y)      ->     %z = ge.if @pos, @neg (%c, %y)
    %w = ge.neg %z                             %w = func.call @main_sub_1_know(%z)

A constant a subgraph reads is cloned into it (weights are references: nothing is copied). The
branches, bodies and gears are functions already: each is lowered as its own known subgraph, or
partitioned in turn when it holds control flow.

A function (or subgraph) with dims known only when it runs is marked `ge.unknown_shape` and named
`_unknow` where it is a subgraph made here (GE's unknown subgraph): lowering leaves it, and the
host binds it to its inputs' sizes when it is called, lowers it then and launches its kernels one
by one after their shape inference and tiling (interpreter/host_program.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DYNAMIC_INDEX, ArrayAttr, DictionaryAttr, ModuleOp, StringAttr, TensorType, UnitAttr
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from ge.ge_dialects import ge
from ge.ge_dialects.ge.base import name_loc
from ge.ge_dialects.ge.control_flow import CONTROL_FLOW_OPS, UNKNOWN_SHAPE_ATTR, lowering_leaves
from ge.passes import remarks

PASS = "partition-dynamic"


def is_host_op(op: Operation) -> bool:
    """Work the host does in a partitioned function: control flow, calls of subgraphs, the return."""
    return isinstance(op, (*CONTROL_FLOW_OPS, func.CallOp, func.ReturnOp))


def is_static(t) -> bool:
    """Whether a value of type `t` has every dim known."""
    return not isinstance(t, TensorType) or DYNAMIC_INDEX not in t.get_shape()


def _static_function(fn: func.FuncOp) -> bool:
    """Whether every value of `fn` (its arguments and every op's results, in nested regions too)
    has static dims."""
    return all(is_static(a.type) for a in fn.body.block.args) and all(
        is_static(r.type) for op in fn.body.walk() for r in op.results
    )


def _segments(fn: func.FuncOp) -> list[list[Operation]]:
    """The maximal runs of device ops between host ops (constants belong to their readers)."""
    runs: list[list[Operation]] = [[]]
    for op in fn.body.block.ops:
        if is_host_op(op):
            runs.append([])
        elif not isinstance(op, ge.ConstantOp):
            runs[-1].append(op)
    return [r for r in runs if r]


def _outline(fn: func.FuncOp, ops: list[Operation], index: int, after: Operation) -> func.FuncOp:
    """Outlines `ops` (a run of `fn`'s device ops) into a new function, placed after `after`."""
    inside = set(ops)
    inputs: list[SSAValue] = []
    constants: list[ge.ConstantOp] = []
    for op in ops:
        for v in op.operands:
            owner = v.owner
            if isinstance(owner, ge.ConstantOp):
                if owner not in constants:
                    constants.append(owner)
            elif owner not in inside and v not in inputs:
                inputs.append(v)
    outputs = [r for op in ops for r in op.results if any(u.operation not in inside for u in r.uses)]
    known = all(is_static(v.type) for v in [*inputs, *(r for op in ops for r in op.results)])
    name = f"{fn.sym_name.data}_sub_{index}_{'know' if known else 'unknow'}"
    sub = func.FuncOp(name, ([v.type for v in inputs], [v.type for v in outputs]))
    sub.arg_attrs = ArrayAttr([DictionaryAttr({"ge.name": StringAttr(f"in{i}")}) for i in range(len(inputs))])
    sub.res_attrs = ArrayAttr([DictionaryAttr({"ge.name": StringAttr(f"out{i}")}) for i in range(len(outputs))])
    body = sub.body.block
    mapping: dict[SSAValue, SSAValue] = dict(zip(inputs, body.args))
    for op in [*constants, *ops]:
        clone = op.clone(value_mapper=mapping)
        body.add_op(clone)
        mapping.update(zip(op.results, clone.results))
    body.add_op(func.ReturnOp(*[mapping[v] for v in outputs]))
    call = func.CallOp(name, inputs, [v.type for v in outputs])
    call.location = name_loc(name)
    Rewriter.insert_op(call, InsertPoint.before(ops[0]))
    for old, new in zip(outputs, call.results):
        old.replace_all_uses_with(new)
    for op in reversed(ops):
        Rewriter.erase_op(op)
    for constant in constants:
        if not constant.output.uses:
            Rewriter.erase_op(constant)
    Rewriter.insert_op(sub, InsertPoint.after(after))
    return sub


@dataclass(frozen=True)
class PartitionDynamicPass(ModulePass):
    """Functions with control flow split into a host program and known subgraphs (see the module
    docstring)."""

    name = "partition-dynamic"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in [f for f in op.ops if isinstance(f, func.FuncOp) and f.body.blocks]:
            if not any(isinstance(o, tuple(CONTROL_FLOW_OPS)) for o in fn.body.block.ops):
                continue
            made: list[func.FuncOp] = []
            for k, ops in enumerate(_segments(fn)):
                made.append(_outline(fn, ops, k, made[-1] if made else fn))
            remarks.emit(
                PASS,
                "applied",
                "partition",
                [fn],
                f"@{fn.sym_name.data}: {len(made)} known subgraphs ({', '.join('@' + m.sym_name.data for m in made)}) "
                "around its control flow",
            )
        for fn in [f for f in op.ops if isinstance(f, func.FuncOp) and f.body.blocks]:
            if not lowering_leaves(fn) and not _static_function(fn):
                fn.attributes[UNKNOWN_SHAPE_ATTR] = UnitAttr()
                remarks.emit(PASS, "applied", "unknown-shape", [fn], f"@{fn.sym_name.data} is bound when it runs")
