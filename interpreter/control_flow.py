"""Interpreter functions for `ge.if`, `ge.loop` and `ge.gears` (ge_dialects/ge/control_flow.py):
the host runs the branch, the body or the gear, a function of the module, on the values it reads.

A Loop runs at most MAX_ITERATIONS times: one without a trip count whose condition never fails is
an error naming the op, not a hang."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls

from ge.ge_dialects.ge.base import describe
from ge.ge_dialects.ge.control_flow import GearsOp, IfOp, LoopOp
from ge.ge_dialects.ge.types import numpy_dtype, shape_of
from ge.interpreter.kernels.checked import KernelError

MAX_ITERATIONS = 1_000_000
"""The iterations a `ge.loop` may run before it is stopped as endless."""


class LoopError(KernelError):
    """A loop ran past MAX_ITERATIONS."""


class GearError(KernelError):
    """The inputs' shapes fit no gear."""


def _truth(value) -> bool:
    return bool(np.asarray(value).reshape(-1)[0])


@register_impls
class ControlFlowFunctions(InterpreterFunctions):
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
