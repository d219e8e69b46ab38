"""Static device-memory planning for a task sequence (see docs/memory_planning.md)."""

from ge.lowering.memory.liveness import Buffer, Task, intervals_from_schedule
from ge.lowering.memory.plan import HEURISTICS, MemoryPlan, PlanError, plan_memory, verify_plan
from ge.lowering.memory.sizes import device_bytes, element_bits, storage_bytes

__all__ = [
    "HEURISTICS",
    "Buffer",
    "MemoryPlan",
    "PlanError",
    "Task",
    "device_bytes",
    "element_bits",
    "intervals_from_schedule",
    "plan_memory",
    "storage_bytes",
    "verify_plan",
]
