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

A function with dims known only when it runs is split as GE's DynamicShapePartition splits a
graph: its ops (every operand and result static: known; else unknown) are put in a topological
order that keeps each kind together (the current kind's ready ops first), cut into runs of one
kind, and a known run of fewer than `static_model_ops_lower_limit` ops (GE's
ge.exec.static_model_ops_lower_limit, 4) joins its unknown neighbours (a static op whose integer
result an unknown op reads, a shape or a bound computed from a dynamic tensor, counts as unknown:
the unknown op needs the value where it is bound); with a known run left, each
run is outlined, `_know` or `_unknow`, and the function becomes a host program calling them. (GE
merges clusters by the paths between them; runs of one grouped order are a simpler, safe cut.)

A function (or subgraph) with dims known only when it runs is marked `ge.unknown_shape` and named
`_unknow` where it is a subgraph made here (GE's unknown subgraph): lowering leaves it, and the
host binds it to its inputs' sizes when it is called, lowers it then and launches its kernels one
by one after their shape inference and tiling (interpreter/host_program.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DictionaryAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
)
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException

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


def _static_op(op: Operation) -> bool:
    return all(is_static(v.type) for v in [*op.operands, *op.results])


def _integer(value: SSAValue) -> bool:
    t = value.type
    return isinstance(t, TensorType) and isinstance(t.element_type, IntegerType)


def known_ops(ops: list[Operation]) -> set[Operation]:
    """GE's known-shape nodes among `ops`: every operand and result static, and no result read as
    an integer by an unknown node, directly or through other nodes (a shape, a slice's bounds or a
    range's limit computed from a dynamic tensor's shape: the unknown node needs the value when it
    is bound, so it stays with it)."""
    inside = set(ops)
    known = {op for op in ops if _static_op(op)}
    pending = [op for op in ops if op not in known]
    while pending:
        op = pending.pop()
        for v in op.operands:
            producer = v.owner
            if isinstance(producer, Operation) and producer in known and _integer(v):
                known.discard(producer)
                pending.append(producer)
    return known & inside


def _grouped_order(ops: list[Operation], known: set[Operation]) -> list[Operation]:
    """`ops` in a topological order that keeps ops of one kind (known, unknown) together: Kahn's
    algorithm taking from the current kind's ready ops, in program order, until there are none."""
    index = {op: i for i, op in enumerate(ops)}
    waiting = {op: len({v.owner for v in op.operands if v.owner in index}) for op in ops}
    readers: dict[Operation, set[Operation]] = {op: set() for op in ops}
    for op in ops:
        for v in op.operands:
            if v.owner in index:
                readers[v.owner].add(op)  # type: ignore[index]
    ready: dict[bool, list[Operation]] = {True: [], False: []}
    for op in ops:
        if not waiting[op]:
            ready[op in known].append(op)
    order: list[Operation] = []
    kind = ops[0] in known
    while len(order) < len(ops):
        if not ready[kind]:
            kind = not kind
        ready[kind].sort(key=index.__getitem__)
        op = ready[kind].pop(0)
        order.append(op)
        for reader in readers[op]:
            waiting[reader] -= 1
            if not waiting[reader]:
                ready[reader in known].append(reader)
    return order


def clusters(fn: func.FuncOp, limit: int) -> list[tuple[bool, list[Operation]]]:
    """`fn`'s device ops as runs of one kind (known: all static) in a grouped order; a known run of
    fewer than `limit` ops joins its unknown neighbours (GE's ge.exec.static_model_ops_lower_limit:
    sinking it would not pay for the extra launch). The block is left as it is."""
    ops = [o for o in fn.body.block.ops if not isinstance(o, (ge.ConstantOp, func.ReturnOp))]
    if not ops:
        return []
    known_set = known_ops(ops)
    order = _grouped_order(ops, known_set)
    runs: list[tuple[bool, list[Operation]]] = []
    for op in order:
        known = op in known_set
        if runs and runs[-1][0] == known:
            runs[-1][1].append(op)
        else:
            runs.append((known, [op]))
    merged: list[tuple[bool, list[Operation]]] = []
    for known, run in runs:
        known = known and len(run) >= limit
        if merged and merged[-1][0] == known:
            merged[-1][1].extend(run)
        else:
            merged.append((known, list(run)))
    return merged


@dataclass(frozen=True)
class PartitionDynamicPass(ModulePass):
    """Functions with control flow split into a host program and known subgraphs, functions of
    unknown shapes into their known and unknown clusters (see the module docstring)."""

    name = "partition-dynamic"

    static_model_ops_lower_limit: int = 4
    """GE's ge.exec.static_model_ops_lower_limit: a known cluster of fewer ops stays dynamic."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.static_model_ops_lower_limit < 1:
            raise DiagnosticException(
                f"{PASS}: static_model_ops_lower_limit must be at least 1, got {self.static_model_ops_lower_limit}"
            )
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
            if lowering_leaves(fn) or _static_function(fn):
                continue
            runs = clusters(fn, self.static_model_ops_lower_limit)
            if len(runs) < 2:
                continue
            terminator = fn.body.block.last_op
            assert terminator is not None
            for inner in (o for _, run in runs for o in run):  # the grouped order, topological
                inner.detach()
                Rewriter.insert_op(inner, InsertPoint.before(terminator))
            made = []
            for k, (_, ops) in enumerate(runs):
                made.append(_outline(fn, ops, k, made[-1] if made else fn))
            known = [len(ops) for is_known, ops in runs if is_known]
            remarks.emit(
                PASS,
                "applied",
                "clusters",
                [fn],
                f"@{fn.sym_name.data}: {len(known)} known subgraphs sunk ({sum(known)} ops), "
                f"{len(runs) - len(known)} unknown bound when they run",
            )
        for fn in [f for f in op.ops if isinstance(f, func.FuncOp) and f.body.blocks]:
            if not lowering_leaves(fn) and not _static_function(fn):
                fn.attributes[UNKNOWN_SHAPE_ATTR] = UnitAttr()
                remarks.emit(PASS, "applied", "unknown-shape", [fn], f"@{fn.sym_name.data} is bound when it runs")
