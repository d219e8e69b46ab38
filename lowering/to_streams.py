"""`lower-to-streams`: streams, events and launches for the task sequence.

Streams come from a minimum path cover of the task DAG (bipartite matching), merged down to
`streams` (0: as many as the cover needs; GE's `ge.streamNum`); `single_stream` (GE's
`ge.enableSingleStream`) puts every task on stream 0. Events are the cross-stream edges of the
transitive reduction of data dependencies plus stream order, with ids reused once waited
(lowering/streams). `mode` is the execution mode: `op` (the host launches each task), `graph`
(whole-graph sink, one launch) or `subgraph` (a new launch at each AI CPU task and each task
with a dynamic shape, where the host must step in).

    // after lower-to-streams{streams=2}
    %0 = task.kernel "/a" ... attributes {..., stream = 0 : i64, launch = 0 : i64}
    stream.record 0 on 0
    %1 = task.kernel "/b" ... attributes {..., stream = 1 : i64, launch = 0 : i64}
    stream.wait 0 on 1
    %2 = task.kernel "/c" (%0, %1) ... attributes {..., stream = 1 : i64, launch = 0 : i64}
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ge_dialects import stream, task
from ge_dialects.ge.types import shape_of
from interpreter.targets import pass_target
from lowering.streams import dag_from_ops, plan_streams
from passes.fusion.cost import CostModel


def launch_ids(kernels: list[task.KernelOp], mode: str) -> list[int]:
    if mode == "graph":
        return [0] * len(kernels)
    if mode == "op":
        return list(range(len(kernels)))
    ids, current = [], 0
    for i, k in enumerate(kernels):
        host_boundary = k.engine.data == "aicpu" or any(None in shape_of(r.type) for r in k.outputs)
        if host_boundary and i > 0:
            current += 1
        ids.append(current)
        if host_boundary:
            current += 1
    return ids


@dataclass(frozen=True)
class LowerToStreamsPass(ModulePass):
    name = "lower-to-streams"

    streams: int = 0
    single_stream: bool = False
    mode: str = "graph"
    target: str = "ascend910b"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.mode not in stream.MODES:
            raise DiagnosticException(f"lower-to-streams: mode '{self.mode}' is not one of {', '.join(stream.MODES)}")
        if self.streams < 0:
            raise DiagnosticException(f"lower-to-streams: streams must be >= 0, got {self.streams}")
        cost = CostModel(pass_target(self.name, self.target))
        limit = 1 if self.single_stream else (self.streams or None)
        for fn in op.ops:
            if isinstance(fn, func.FuncOp) and fn.body.blocks:
                self.lower_function(fn, limit, cost)

    def lower_function(self, fn: func.FuncOp, limit: int | None, cost: CostModel) -> None:
        block = fn.body.block
        if any(isinstance(o, (stream.RecordOp, stream.WaitOp)) for o in block.ops):
            raise DiagnosticException(f"lower-to-streams: @{fn.sym_name.data} already has streams")
        dag, kernels = dag_from_ops(list(block.ops), skip=lambda o: not isinstance(o, task.KernelOp))
        costs = [cost.task_time(k) for k in kernels]
        plan = plan_streams(dag, limit, costs)
        for k, s, launch in zip(kernels, plan.streams, launch_ids(kernels, self.mode)):
            k.stream = IntegerAttr(s, 64)
            k.launch = IntegerAttr(launch, 64)
        for (u, v) in sorted(plan.events):
            event = plan.event_ids[(u, v)]
            block.insert_op_after(stream.RecordOp(event, plan.streams[u]), kernels[u])
            block.insert_op_before(stream.WaitOp(event, plan.streams[v]), kernels[v])
        fn.attributes[stream.MODE_ATTR] = StringAttr(self.mode)
        fn.attributes[stream.COUNT_ATTR] = IntegerAttr(max(plan.num_streams, 1), 64)
