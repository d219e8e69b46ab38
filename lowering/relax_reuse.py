"""`relax-reuse`: gives up the memory reuses that would cost stream parallelism, within a budget.

Runs between `plan-memory` and `lower-to-streams`, with the stream count `lower-to-streams` will
get. `plan-memory` makes the smallest pool from program-order lifetimes; `lower-to-streams` must
then order every reuse (an access of the earlier buffer before the writer of the later one), which
serializes tasks that could have run side by side. This pass predicts that (the same stream
assignment and task costs as `lower-to-streams`), keeps the costly pairs apart and re-plans
memory, for a few rounds, and keeps the plan with the best estimated makespan (then the smallest
pool) whose pool is at most `budget_mib` MiB above plan-memory's (lowering/streams/reuse_tradeoff.py).
Plans are scored by the device simulator's latency in graph mode (device), which
charges events and the engines and bandwidth streams share.
It changes only offsets; streams and events are still `lower-to-streams`' job, and soundness
does not depend on this pass (a stream count other than the one given here is still race-free,
only the trade-off is made for another one).

It records in `task.memory`: `pool` (and `heuristic`) of the chosen plan, `given_up` (buffer
pairs kept apart), `given_up_bytes` (what they cost over plan-memory's pool), `relaxed_for` (the
stream count) and the simulated latencies `latency_ns` (chosen) and `latency_before_ns`.

    ge-opt m.mlir -p 'lower-to-tasks,plan-memory,relax-reuse{streams=4 budget_mib=2},lower-to-streams{streams=4}'

Why a pass of its own: plan-memory stays a pure planner (it knows lifetimes, not streams) and
lower-to-streams stays a pure scheduler (it never moves a buffer); the trade-off between the two,
which needs both models, is this one step that can be left out (GE's default) or tuned alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, ModuleOp, StringAttr
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ge.device import SimTask, simulate
from ge.ge_dialects import stream, task
from ge.ge_dialects.ge.control_flow import lowering_leaves
from ge.ge_dialects.ge.target_attr import module_pass_target
from ge.interpreter.stream_executor import MEMORY_ATTR, task_work
from ge.lowering.memory.plan import verify_plan
from ge.lowering.memory.state import StateError
from ge.lowering.plan_memory import check_hbm, task_sequence_pool
from ge.lowering.streams import Dag, dag_from_ops
from ge.lowering.streams.reuse import ReuseError
from ge.lowering.streams.reuse_tradeoff import Schedule, trade_reuse
from ge.lowering.to_streams import task_costs
from ge.passes import remarks
from ge.passes.fusion.cost import CostModel
from ge.target import Target

MAX_ROUNDS = 16


def simulated_latency(
    fn: func.FuncOp, kernels: list[task.KernelOp], data_dag: Dag, target: Target
) -> Callable[[Schedule], float]:
    """Scores a schedule by the device simulator's latency (graph mode: one launch), as ge-run
    would report it for the lowered function, without building its IR."""
    names: dict = {a: f"%arg{i}" for i, a in enumerate(fn.body.block.args)}
    works = [task_work(k, names) for k in kernels]

    def latency(s: Schedule) -> float:
        waits: dict[int, list[int]] = {}
        records: dict[int, list[int]] = {}
        for u, v in sorted(s.plan.events):
            records.setdefault(u, []).append(s.plan.event_ids[(u, v)])
            waits.setdefault(v, []).append(s.plan.event_ids[(u, v)])
        tasks = [
            SimTask(
                work=w,
                stream=s.plan.streams[i],
                launch=0,
                waits=tuple(waits.get(i, ())),
                records=tuple(records.get(i, ())),
                inputs_from=tuple(data_dag.pred[i]),
            )
            for i, w in enumerate(works)
        ]
        return simulate(tasks, target, "graph").latency

    return latency


def _check_planned(where: str, kernel: task.KernelOp) -> None:
    if kernel.offsets is None:
        raise DiagnosticException(f"{where}: task '{kernel.task_name.data}' has no offsets (run plan-memory first)")


@dataclass(frozen=True)
class RelaxReusePass(ModulePass):
    name = "relax-reuse"

    streams: int = 0
    budget_mib: int | float = 0
    rounds: int = 4
    target: str | None = None  # None: the module's ge.target, else the default

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not 0 <= self.streams <= stream.MAX_STREAMS:
            raise DiagnosticException(f"relax-reuse: streams must be in 0..{stream.MAX_STREAMS}, got {self.streams}")
        if not self.budget_mib >= 0:
            raise DiagnosticException(f"relax-reuse: budget_mib must be >= 0, got {self.budget_mib}")
        if not 0 <= self.rounds <= MAX_ROUNDS:
            raise DiagnosticException(f"relax-reuse: rounds must be in 0..{MAX_ROUNDS}, got {self.rounds}")
        target = module_pass_target(self.name, op, self.target)
        functions = [f for f in op.ops if isinstance(f, func.FuncOp) and f.body.blocks and not lowering_leaves(f)]
        if not functions and any(isinstance(f, func.FuncOp) for f in op.ops):
            return  # every function is the host's (bound when it runs): no plan to relax
        memory = op.attributes.get(MEMORY_ATTR)
        if not isinstance(memory, DictionaryAttr) or not isinstance(memory.data.get("pool"), IntegerAttr):
            raise DiagnosticException(f"relax-reuse: the module has no {MEMORY_ATTR} pool (run plan-memory first)")
        if len(functions) > 1:  # they share one pool: relaxing one would resize it for all
            names = ", ".join(f"@{f.sym_name.data}" for f in functions)
            remarks.emit(self.name, "rejected", "relax", functions, f"{names} share one pool; their plans are kept")
            return
        for fn in functions:
            self.relax_function(op, fn, memory, target)

    def relax_function(self, module: ModuleOp, fn: func.FuncOp, memory: DictionaryAttr, target: Target) -> None:
        where = f"relax-reuse: @{fn.sym_name.data}"
        d = memory.data

        def num(key: str, default: int = 0) -> int:
            v = d.get(key)
            return v.value.data if isinstance(v, IntegerAttr) else default

        alignment = num("alignment", target.hbm.alignment)
        pool = task_sequence_pool(self.name, fn, _check_planned, alignment)
        data_dag, kernels = dag_from_ops(list(fn.body.block.ops), skip=lambda o: not isinstance(o, task.KernelOp))
        limit = self.streams or None
        try:
            result = trade_reuse(
                kernels,
                pool.buffers,
                pool.names,
                pool.write_offsets,
                data_dag,
                limit,
                task_costs(kernels, CostModel(target)),
                base_pool=num("pool"),
                budget=int(self.budget_mib * 2**20),
                alignment=alignment,
                rounds=self.rounds,
                score=simulated_latency(fn, kernels, data_dag, target),
            )
        except (ReuseError, StateError) as e:
            raise DiagnosticException(f"{where}: the memory plan is wrong: {e}") from None
        updated = dict(d)
        if result.plan is not None:
            verify_plan(result.plan, pool.buffers)
            check_hbm(self.name, fn, result.plan.peak, num("weights") + num("state"), num("io"), target)
            updated["pool"] = IntegerAttr(result.plan.peak, 64)
            updated["heuristic"] = StringAttr(result.plan.heuristic)
        updated.update(
            {
                "given_up": IntegerAttr(len(result.given_up), 64),
                "given_up_bytes": IntegerAttr(result.extra_bytes, 64),
                "relaxed_for": IntegerAttr(self.streams, 64),
                "latency_ns": IntegerAttr(round(result.score * 1e9), 64),
                "latency_before_ns": IntegerAttr(round(result.base_score * 1e9), 64),
            }
        )
        module.attributes[MEMORY_ATTR] = DictionaryAttr(updated)
