"""Interpreter functions for the task and stream dialects.

Numerically a task computes what its ops compute, and streams and events only order work that
SSA already orders; so a task runs its body, a record yields a token for its event value and a
wait does nothing here. Time is the device
simulator's business (device).
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

from ge.ge_dialects import stream, task


@register_impls
class TaskFunctions(InterpreterFunctions):
    @impl(task.KernelOp)
    def run_kernel(self, interpreter: Interpreter, op: task.KernelOp, args: PythonValues) -> PythonValues:
        return interpreter.run_ssacfg_region(op.body, args, f"task {op.task_name.data}")

    @impl_terminator(task.YieldOp)
    def run_yield(
        self, interpreter: Interpreter, op: task.YieldOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()

    @impl(stream.RecordOp)
    def run_record(self, interpreter: Interpreter, op: stream.RecordOp, args: PythonValues) -> PythonValues:
        return (("event", op.event_id, op.stream_id),)

    @impl(stream.WaitOp)
    def run_wait(self, interpreter: Interpreter, op: stream.WaitOp, args: PythonValues) -> PythonValues:
        return ()
