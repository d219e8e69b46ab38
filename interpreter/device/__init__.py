"""The modeled Ascend device: a timing model of one task (cost.py) and a discrete-event simulator of
streams, events and cores (simulator.py) over plain task records (work.py), with profile output
(trace.py). Formulas, numbers and sources: docs/device_model.md."""

from ge.interpreter.device.cost import Hardware, Phases, block_cost, task_bound, task_time
from ge.interpreter.device.simulator import MODES, Bound, EventWait, ScheduleError, SimResult, TaskResult, simulate
from ge.interpreter.device.trace import OP_SUMMARY_COLUMNS, chrome_trace, op_summary_csv
from ge.interpreter.device.work import ENGINES, SimTask, TaskWork, Tensor, dtype_bytes

__all__ = [
    "ENGINES",
    "MODES",
    "OP_SUMMARY_COLUMNS",
    "Bound",
    "EventWait",
    "Hardware",
    "Phases",
    "SimResult",
    "SimTask",
    "TaskResult",
    "TaskWork",
    "Tensor",
    "block_cost",
    "chrome_trace",
    "dtype_bytes",
    "ScheduleError",
    "op_summary_csv",
    "simulate",
    "task_bound",
    "task_time",
]
