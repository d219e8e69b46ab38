"""The kernel of `ge.hcom_all_reduce`: the operands of every replica of the run reduced elementwise
(interpreter/replicas.py holds the rendezvous). Outside a data-parallel run there is no group to
reduce over, which is an error, not a silent identity."""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls
from xdsl.utils.exceptions import InterpretationError

from ge.ge_dialects import ge
from ge.ge_dialects.ge.base import describe
from ge.ge_dialects.messages import one_line
from ge.interpreter.replicas import current_replica


@register_impls
class CollectiveFunctions(InterpreterFunctions):
    @impl(ge.HcomAllReduceOp)
    def run_all_reduce(self, interpreter: Interpreter, op: ge.HcomAllReduceOp, args: tuple[Any, ...]):
        replica = current_replica()
        size = op.p("rank_size")
        if replica is None:
            raise InterpretationError(
                one_line(
                    f"{describe(op)}: a collective over {size} replicas runs only in a data-parallel run of all of them"
                )
            )
        if replica.communicator.size != size:
            raise InterpretationError(
                one_line(f"{describe(op)}: reduces over {size} replicas, but the run has {replica.communicator.size}")
            )
        return tuple(replica.communicator.all_reduce(replica.rank, [np.asarray(a) for a in args], op.p("reduction")))
