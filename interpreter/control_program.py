"""The one reading of a control program (ge_dialects/stream.py; passes/sink_control_flow.py): its
labels (blocks) in order, the functions each calls, and where each label task leads.

`read_control_program` refuses, in one line naming the labels, what the device could not run: a
label that ends in no label task and no return, an op that is neither a call, a constant nor a
label task, and a loop that never ends (a cycle of labels no `stream.label_switch` leads out of).
The verifier (`verify-streams`) adds that every function called is lowered; the host runs the
program (interpreter/host_program.py) after reading it here, and bounds the loops that do have a
way out by counting gotos (interpreter/control_flow.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.ir import Block

from ge.ge_dialects.ge.control_flow import lookup_function
from ge.ge_dialects.stream import LabelGotoOp, LabelSwitchOp
from ge.interpreter.control_flow import label_name
from ge.interpreter.stream_program import StreamError

PROGRAM_OPS = (func.CallOp, LabelSwitchOp, LabelGotoOp, func.ReturnOp)
"""The ops of a control program besides constants."""


@dataclass(frozen=True)
class ControlProgram:
    function: func.FuncOp
    labels: tuple[Block, ...]  # in order; labels[0] is the entry
    calls: tuple[tuple[func.FuncOp, ...], ...]  # per label, the functions it calls, in order
    successors: tuple[tuple[int, ...], ...]  # per label, the labels its label task may go to


def read_control_program(fn: func.FuncOp) -> ControlProgram:
    where = f"@{fn.sym_name.data}"
    labels = tuple(fn.body.blocks)
    index = {block: k for k, block in enumerate(labels)}
    calls: list[tuple[func.FuncOp, ...]] = []
    successors: list[tuple[int, ...]] = []
    for block in labels:
        last = block.last_op
        if not isinstance(last, (LabelSwitchOp, LabelGotoOp, func.ReturnOp)):
            raise StreamError(f"{where}: {label_name(block)} ends in no label task and no return")
        stray = next((op for op in block.ops if not isinstance(op, PROGRAM_OPS) and op.name != "ge.constant"), None)
        if stray is not None:
            raise StreamError(
                f"{where}: {stray.name} in {label_name(block)}; a control program holds calls, constants, label tasks"
            )
        calls.append(tuple(lookup_function(op, op.callee) for op in block.ops if isinstance(op, func.CallOp)))
        successors.append(tuple(index[s] for s in last.successors))
    program = ControlProgram(fn, labels, tuple(calls), tuple(successors))
    for cycle in _cycles(program.successors):
        leaves = any(
            isinstance(labels[k].last_op, LabelSwitchOp) and any(s not in cycle for s in program.successors[k])
            for k in cycle
        )
        if not leaves:
            named = ", ".join(label_name(labels[k]) for k in sorted(cycle))
            raise StreamError(f"{where}: the loop through {named} never ends: no stream.label_switch leads out of it")
    return program


def _cycles(successors: tuple[tuple[int, ...], ...]) -> list[set[int]]:
    """The strongly connected sets of labels that hold a cycle (Tarjan's algorithm)."""
    order: dict[int, int] = {}
    low: dict[int, int] = {}
    stack: list[int] = []
    on_stack: set[int] = set()
    found: list[set[int]] = []

    def visit(v: int) -> None:
        order[v] = low[v] = len(order)
        stack.append(v)
        on_stack.add(v)
        for w in successors[v]:
            if w not in order:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], order[w])
        if low[v] == order[v]:
            component: set[int] = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1 or v in successors[v]:
                found.append(component)

    for v in range(len(successors)):
        if v not in order:
            visit(v)
    return found
