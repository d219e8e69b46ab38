"""Interpreter functions for `ge.if`, `ge.loop` and `ge.gears` (ge_dialects/ge/control_flow.py):
the host runs the branch, the body or the gear, a function of the module, on the values it reads;
and for the label tasks of a control program (ge_dialects/stream.py), which jump between its blocks.

A Loop runs at most MAX_ITERATIONS times, and a label is gone to at most as often: one without a
trip count whose condition never fails is an error naming the op, not a hang."""

from __future__ import annotations

from collections import Counter

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    Successor,
    impl,
    impl_terminator,
    register_impls,
)
from xdsl.ir import Block

from ge.ge_dialects.ge.base import describe
from ge.ge_dialects.ge.control_flow import GearsOp, IfOp, LoopOp
from ge.ge_dialects.ge.types import numpy_dtype, shape_of
from ge.ge_dialects.stream import LabelGotoOp, LabelSwitchOp
from ge.interpreter.kernels.checked import KernelError

MAX_ITERATIONS = 1_000_000
"""The iterations a `ge.loop` may run before it is stopped as endless."""


class LoopError(KernelError):
    """A loop ran past MAX_ITERATIONS."""


class GearError(KernelError):
    """The inputs' shapes fit no gear."""


def _truth(value) -> bool:
    return bool(np.asarray(value).reshape(-1)[0])


def label_name(block: Block) -> str:
    """A label named by what it runs first: `the label calling @f` (else by its function)."""
    call = next((op for op in block.ops if isinstance(op, func.CallOp)), None)
    if call is not None:
        return f"the label calling @{call.callee.root_reference.data}"
    fn = block.parent_op()
    return f"a label of @{fn.sym_name.data}" if isinstance(fn, func.FuncOp) else "a label"


def switch_target(op: LabelSwitchOp, index) -> Block:
    """The label `op` jumps to for `index` (one out of range is an error naming the labels)."""
    k = int(np.asarray(index).reshape(-1)[0])
    if not 0 <= k < len(op.branches):
        raise KernelError(
            f"stream.label_switch before {label_name(op.branches[0])}: index {k} is not below its "
            f"{len(op.branches)} labels"
        )
    return op.branches[k]


def goto_target(op: LabelGotoOp, gone_to: Counter[LabelGotoOp]) -> Block:
    """The label `op` goes to, counted in `gone_to`: past MAX_ITERATIONS an error naming it."""
    gone_to[op] += 1
    if gone_to[op] > MAX_ITERATIONS:
        raise LoopError(
            f"stream.label_goto to {label_name(op.label)}: gone to more than {MAX_ITERATIONS} times "
            "(its loop's condition never fails)"
        )
    return op.label


@register_impls
class ControlFlowFunctions(InterpreterFunctions):
    def __init__(self) -> None:
        self.gone_to: Counter[LabelGotoOp] = Counter()

    @impl_terminator(LabelSwitchOp)
    def run_label_switch(self, interpreter: Interpreter, op: LabelSwitchOp, args: PythonValues):
        return Successor(switch_target(op, args[0]), ()), ()

    @impl_terminator(LabelGotoOp)
    def run_label_goto(self, interpreter: Interpreter, op: LabelGotoOp, args: PythonValues):
        return Successor(goto_target(op, self.gone_to), args), ()

    @impl(IfOp)
    def run_if(self, interpreter: Interpreter, op: IfOp, args: PythonValues) -> PythonValues:
        branch = op.then_branch if _truth(args[0]) else op.else_branch
        return tuple(interpreter.call_op(branch, tuple(args[1:])))

    @impl(LoopOp)
    def run_loop(self, interpreter: Interpreter, op: LoopOp, args: PythonValues) -> PythonValues:
        n = op.carried_count
        trip, cond = int(np.asarray(args[0]).reshape(-1)[0]), _truth(args[1])
        carried, captures = list(args[2 : 2 + n]), tuple(args[2 + n :])
        scans: list[list[np.ndarray]] = [[] for _ in op.results[n:]]
        i = 0
        while i < trip and cond:
            if i >= MAX_ITERATIONS:
                raise LoopError(f"{describe(op)}: more than {MAX_ITERATIONS} iterations (its condition never fails)")
            out = interpreter.call_op(op.body, (np.array(i, np.int64), np.array(cond), *carried, *captures))
            cond, carried = _truth(out[0]), list(out[1 : 1 + n])
            for scan, element in zip(scans, out[1 + n :]):
                scan.append(np.asarray(element))
            i += 1
        stacked = []
        for scan, result in zip(scans, op.results[n:]):
            if scan:
                stacked.append(np.stack(scan))
            else:  # no iteration: an empty stack of the body's element shape
                t = result.type
                assert isinstance(t, TensorType), "ge.loop's results are tensors (its verifier)"
                dims = [0 if d is None else d for d in shape_of(t)[1:]]
                stacked.append(np.zeros((0, *dims), numpy_dtype(t.element_type)))
        return (*carried, *stacked)

    @impl(GearsOp)
    def run_gears(self, interpreter: Interpreter, op: GearsOp, args: PythonValues) -> PythonValues:
        shapes = [tuple(np.shape(a)) for a in args]
        for fn, ref in zip(op.functions(), op.gears.data):
            takes = [tuple(shape_of(t)) if isinstance(t, TensorType) else () for t in fn.function_type.inputs.data]
            if takes == shapes:
                return tuple(interpreter.call_op(ref, tuple(args)))
        if op.fallback is not None:  # hybrid mode: the dynamic graph
            return tuple(interpreter.call_op(op.fallback, tuple(args)))
        given = ", ".join(str(list(s)) for s in shapes)
        raise GearError(f"{describe(op)}: the inputs' shapes {given} fit no gear ({'; '.join(op.size_texts())})")
