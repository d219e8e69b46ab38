"""Interpreter functions for the fused dialect: a group runs its body on its inputs.

A fused kernel computes what its ops compute; running the body op by op is the reference the
later levels (tasks, streams) are compared against.
"""

from __future__ import annotations

from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    ReturnedValues,
    TerminatorValue,
    impl,
    impl_terminator,
    register_impls,
)

from ge.ge_dialects import fused


@register_impls
class FusedFunctions(InterpreterFunctions):
    @impl(fused.GroupOp)
    def run_group(self, interpreter: Interpreter, op: fused.GroupOp, args: PythonValues) -> PythonValues:
        return interpreter.run_ssacfg_region(op.body, args, f"fused.group {op.rule.data}")

    @impl_terminator(fused.YieldOp)
    def run_yield(
        self, interpreter: Interpreter, op: fused.YieldOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()
