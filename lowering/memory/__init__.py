"""Static device-memory planning for a task sequence (see docs/memory_planning.md)."""

from ge.lowering.memory.liveness import Buffer, Task, intervals_from_schedule
from ge.lowering.memory.plan import HEURISTICS, MemoryPlan, PlanError, plan_memory, verify_plan

__all__ = [
    "HEURISTICS",
    "Buffer",
    "MemoryPlan",
    "PlanError",
    "Task",
    "intervals_from_schedule",
    "plan_memory",
    "verify_plan",
]
