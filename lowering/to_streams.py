"""`lower-to-streams`: streams, events and launches for the task sequence.

Streams come from a minimum path cover of the task DAG (bipartite matching), merged down to
`streams` (0: as many as the cover needs; GE's `ge.streamNum`); `single_stream` (GE's
`ge.enableSingleStream`) puts every task on stream 0. Events are the cross-stream edges of the
transitive reduction of data dependencies plus stream order, with ids reused once waited
(lowering/streams). `mode` is the execution mode: `op` (the host launches each task), `graph`
(whole-graph sink, one launch), `subgraph` (a new launch at each AI CPU task and each task
with a dynamic shape, where the host must step in) or `dynamic` (one launch per task after the
host inferred its shapes and tiling: a graph bound to its sizes only when it runs, `bind-dims`).
The collectives of a data-parallel step (`hccl` tasks) run on a stream of their own, HCCL's, after
the compute streams' ids and outside the `streams` budget; with `hcom_parallel` (GE's
`ge.hcomParallel`) the tasks that read their results get one more, so the updates after a bucket
overlap the rest of the backward instead of waiting in a compute stream's program order.

Memory reuse is ordered too: when `plan-memory` gave a later result bytes of an earlier one,
every access of the earlier result must finish before the later one is written. Those *reuse
edges* (lowering/streams/reuse.py) join the data edges in the DAG that streams and events are
planned on, so the transitive reduction covers them with events where they cross streams; the
function's `stream.reuse_events` counts the events that exist only because of reuse. A training
step's update written in place over its variable (`state_alias`, lowering/memory/state.py) must
start after every reader of the variable's old value: those *write-after-read edges* are in the
DAG too, as necessary as the data edges. (Which
reuses are worth their ordering is `relax-reuse`'s question, asked before this pass.) Event ids
are reused only where safe under both latest-record and flag semantics. The result is checked by
the stream verifier (lowering/streams/verify.py) before the pass returns.

    // after lower-to-streams{streams=2}
    %0 = task.kernel "/a" ... attributes {..., stream = 0 : i64, launch = 0 : i64}
    %ev0 = stream.record 0 on 0 after %0 : tensor<64xf32>
    %1 = task.kernel "/b" ... attributes {..., stream = 1 : i64, launch = 0 : i64}
    stream.wait %ev0 on 1
    %2 = task.kernel "/c" (%0, %1) ... attributes {..., stream = 1 : i64, launch = 0 : i64}
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ge.device.engines import stays_outside_tasks
from ge.ge_dialects import stream, task
from ge.ge_dialects.ge.base import name_after
from ge.ge_dialects.ge.control_flow import lowering_leaves
from ge.ge_dialects.ge.target_attr import module_pass_target
from ge.ge_dialects.ge.types import shape_of, tensor_type_of
from ge.lowering.memory.state import StateError
from ge.lowering.streams import dag_from_ops
from ge.lowering.streams.reuse import ReuseError
from ge.lowering.streams.reuse_tradeoff import schedule
from ge.lowering.streams.verify import StreamError, verify_control_program, verify_stream_function
from ge.passes.fusion.cost import CostModel


def launch_ids(kernels: list[task.KernelOp], mode: str) -> list[int]:
    if mode == "graph":
        return [0] * len(kernels)
    if mode in ("op", "dynamic"):
        return list(range(len(kernels)))
    ids, current = [], 0
    for i, k in enumerate(kernels):
        host_boundary = k.engine.data == "aicpu" or any(None in shape_of(tensor_type_of(r)) for r in k.outputs)
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
    hcom_parallel: bool = False
    """GE's `ge.hcomParallel`: the tasks reading a collective's results get a stream of their own."""
    target: str | None = None  # None: the module's ge.target, else the default

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.mode not in stream.MODES:
            raise DiagnosticException(f"lower-to-streams: mode '{self.mode}' is not one of {', '.join(stream.MODES)}")
        if not 0 <= self.streams <= stream.MAX_STREAMS:
            raise DiagnosticException(
                f"lower-to-streams: streams must be in 0..{stream.MAX_STREAMS}, got {self.streams}"
            )
        cost = CostModel(module_pass_target(self.name, op, self.target))
        limit = 1 if self.single_stream else (self.streams or None)
        for fn in op.ops:
            if isinstance(fn, func.FuncOp) and fn.body.blocks and not lowering_leaves(fn):
                self.lower_function(fn, limit, cost)
        for fn in op.ops:
            if isinstance(fn, func.FuncOp) and stream.is_control_program(fn):
                try:
                    verify_control_program(fn)
                except StreamError as e:
                    raise DiagnosticException(f"lower-to-streams: {e}") from None

    def lower_function(self, fn: func.FuncOp, limit: int | None, cost: CostModel) -> None:
        block = fn.body.block
        where = f"lower-to-streams: @{fn.sym_name.data}"
        if any(isinstance(o, (stream.RecordOp, stream.WaitOp)) for o in block.ops):
            raise DiagnosticException(f"{where} already has streams")
        stray = next((o for o in block.ops if not isinstance(o, task.KernelOp) and not stays_outside_tasks(o)), None)
        if stray is not None:
            raise DiagnosticException(f"{where} has '{stray.name}' outside a task.kernel (run lower-to-tasks first)")
        data_dag, kernels = dag_from_ops(list(block.ops), skip=lambda o: not isinstance(o, task.KernelOp))
        try:
            planned = schedule(kernels, data_dag, limit, task_costs(kernels, cost), self.hcom_parallel)
        except (ReuseError, StateError) as e:
            raise DiagnosticException(f"{where}: the memory plan is wrong: {e}") from None
        plan = planned.plan
        for k, s, launch in zip(kernels, plan.streams, launch_ids(kernels, self.mode)):
            k.stream = IntegerAttr(s, 64)
            k.launch = IntegerAttr(launch, 64)
        fn.attributes[stream.MODE_ATTR] = StringAttr(self.mode)
        fn.attributes[stream.COUNT_ATTR] = IntegerAttr(max(plan.num_streams, 1), 64)
        fn.attributes[stream.REUSE_EVENTS_ATTR] = IntegerAttr(planned.reuse_events, 64)
        insert_event_ops(block, kernels, plan)
        try:
            verify_stream_function(fn)
        except StreamError as e:
            raise DiagnosticException(f"lower-to-streams: internal error: {e}") from None


def task_costs(kernels: list[task.KernelOp], cost: CostModel) -> list[float]:
    """Estimated seconds of each task (the cost model the stream merge and the reuse trade-off use)."""
    return [cost.task_time(k) for k in kernels]


def insert_event_ops(block, kernels: list[task.KernelOp], plan) -> None:
    """A record right after each event's source task, a wait on its event right before its
    destination task (events in (src, dst) order, so records and waits keep that order), named
    after the task each follows or precedes and the event (`<src>/record_e3`, `<dst>/wait_e3`)."""
    after_src: dict[int, object] = {}
    for u, v in sorted(plan.events):
        event = plan.event_ids[(u, v)]
        record = name_after(
            stream.RecordOp(event, plan.streams[u], kernels[u].results[0]), kernels[u], f"record_e{event}"
        )
        record.result.name_hint = "ev"
        block.insert_op_after(record, after_src.get(u, kernels[u]))
        after_src[u] = record
        wait = name_after(stream.WaitOp(record.result, plan.streams[v]), kernels[v], f"wait_e{event}")
        block.insert_op_before(wait, kernels[v])
