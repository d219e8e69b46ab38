"""`verify-streams`: rejects a function lowered to streams that has a race (see
lowering/streams/verify.py): a cross-stream data or memory-reuse dependency no stream order or
event enforces, an in-place state write that may overtake a reader of the variable's old value, a
record or wait out of place, or an event id reused unsafely; and a control program the device
could not run (a loop with no way out, a call of a function not lowered). One line naming the two
tasks or the label; the module is unchanged. `lower-to-streams` runs the same checks on its result.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ge.ge_dialects.ge.control_flow import lowering_leaves
from ge.ge_dialects.stream import is_control_program
from ge.lowering.streams.verify import StreamError, verify_control_program, verify_stream_function


@dataclass(frozen=True)
class VerifyStreamsPass(ModulePass):
    name = "verify-streams"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in op.ops:
            if not isinstance(fn, func.FuncOp) or not fn.body.blocks:
                continue
            try:
                if is_control_program(fn):
                    verify_control_program(fn)
                elif not lowering_leaves(fn):
                    verify_stream_function(fn)
            except StreamError as e:
                raise DiagnosticException(f"verify-streams: {e}") from None
