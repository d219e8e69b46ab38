"""The modeled Ascend device, one model of one target for every layer above it: where each kernel
runs and how it is tiled (engines.py), a timing model of one task (cost.py), the collectives on the
cluster's links (cluster.py), a discrete-event simulator of streams, events and cores (simulator.py)
over plain task records (work.py, ir_work.py), with profile output (trace.py). The passes, the
lowering and the interpreter read the target's numbers through it; the numbers themselves live in
the target files (target/*.toml) with their sources. Formulas: docs/device_model.md."""

# ruff: noqa: E402 (the bare-import check runs before anything is imported)
from ge import refuse_bare_import

refuse_bare_import(__name__)


from ge.device.cost import Hardware, Phases, block_cost, task_bound, task_time
from ge.device.simulator import MODES, Bound, EventWait, ScheduleError, SimResult, TaskResult, simulate
from ge.device.trace import OP_SUMMARY_COLUMNS, chrome_trace, op_summary_csv
from ge.device.work import ENGINES, SimTask, TaskWork, Tensor, dtype_bytes

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
