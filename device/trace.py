"""Profiles of a simulation: a Chrome/Perfetto trace and an msprof-style op summary."""

from __future__ import annotations

import csv
import io

from ge.device.cluster import all_reduce_plan
from ge.device.simulator import EventWait, SimResult, TaskResult
from ge.target import load_target

_US = 1e6

#: Trace processes: (pid, name) per track group; core pools get one thread (lane) per core.
_PIDS = {"host": 0, "streams": 1, "aicore": 2, "aic": 2, "aiv": 3, "aicpu": 4, "dma": 5, "memory": 6, "links": 7}
_LINKS = ("hccs", "inter_group", "roce")
_LINK_NAMES = {"hccs": "HCCS", "inter_group": "between HCCS groups", "roce": "RoCE"}
_POOL_NAMES = {
    "aicore": "AI Core",
    "aic": "AI Cube cores (AIC)",
    "aiv": "AI Vector cores (AIV)",
    "aicpu": "AI CPU",
    "dma": "DMA",
}
_LANE = {"aicore": "core", "aic": "aic", "aiv": "aiv", "aicpu": "aicpu", "dma": "dma"}


def _meta(name: str, pid: int, tid: int, value) -> dict:
    key = "sort_index" if name.endswith("sort_index") else "name"
    return {"ph": "M", "name": name, "pid": pid, "tid": tid, "ts": 0, "args": {key: value}}


def chrome_trace(result: SimResult) -> dict:
    """Trace-event JSON (load in chrome://tracing or ui.perfetto.dev). Times in microseconds.
    Tracks: the host's launches, one per stream (tasks, event waits and records, flow arrows from
    each record to its waits), one per core of each pool used, an HBM bandwidth counter and, for a
    data-parallel step, one per kind of link with the collectives' phases. The replicas run in lock
    step, so replica 0's tracks are every replica's."""
    ev = (
        _host_events(result)
        + _stream_events(result)
        + _core_events(result)
        + _memory_events(result)
        + _link_events(result)
    )
    return {
        "traceEvents": ev,
        "displayTimeUnit": "ns",
        "otherData": {
            "target": result.target,
            "mode": result.mode,
            "latency_us": result.latency * _US,
            "bound_us": result.bound.value * _US,
            "bound_limiter": result.bound.limiter,
            "launches": result.launches,
            "cube_util": result.cube_util,
            "vector_util": result.vector_util,
            "hbm_util": result.hbm_util,
            "communication_us": result.communication_s * _US,
            "communication_hidden": result.communication_hidden,
        },
    }


def _host_events(result: SimResult) -> list[dict]:
    """The host track: one slice per launch."""
    ev = [
        _meta("process_name", 0, 0, "Host"),
        _meta("process_sort_index", 0, 0, 0),
        _meta("thread_name", 0, 0, "launches"),
    ]
    for k, t in enumerate(result.launch_times):
        ev.append(
            {
                "ph": "X",
                "name": f"launch {k}",
                "cat": "host",
                "pid": 0,
                "tid": 0,
                "ts": (t - result.launch_s) * _US,
                "dur": result.launch_s * _US,
            }
        )
    return ev


def _stream_events(result: SimResult) -> list[dict]:
    """One track per stream: its tasks, then each task's event waits (with a flow arrow from the record)
    and records."""
    ev = [_meta("process_name", 1, 0, "Streams"), _meta("process_sort_index", 1, 0, 1)]
    for s in sorted({t.stream for t in result.tasks}):
        ev += [_meta("thread_name", 1, s, f"stream {s}"), _meta("thread_sort_index", 1, s, s)]
    flow = 0
    for t in result.tasks:
        ev.append(_task_slice(t))
        for w in t.waits:
            flow += 1
            ev += _wait_events(result, t, w, flow)
        ev += _record_slices(t)
    return ev


def _task_slice(t: TaskResult) -> dict:
    """The task's own slice on its stream's track."""
    return {
        "ph": "X",
        "name": t.name,
        "cat": "task",
        "pid": 1,
        "tid": t.stream,
        "ts": t.start * _US,
        "dur": max(0.0, t.duration) * _US,
        "args": _task_args(t),
    }


def _wait_events(result: SimResult, t: TaskResult, w: EventWait, flow: int) -> list[dict]:
    """Task `t`'s wait on an event: a slice on its stream, and flow arrow number `flow` from the record."""
    src = result.tasks[w.source]
    wait = {
        "ph": "X",
        "name": f"wait e{w.event}",
        "cat": "event",
        "pid": 1,
        "tid": t.stream,
        "ts": (w.done - result.wait_s) * _US,
        "dur": result.wait_s * _US,
    }
    arrow_start = {
        "ph": "s",
        "name": f"event {w.event}",
        "cat": "event",
        "id": flow,
        "pid": 1,
        "tid": src.stream,
        "ts": w.recorded * _US,
    }
    arrow_end = {
        "ph": "f",
        "bp": "e",
        "name": f"event {w.event}",
        "cat": "event",
        "id": flow,
        "pid": 1,
        "tid": t.stream,
        "ts": w.done * _US,
    }
    return [wait, arrow_start, arrow_end]


def _record_slices(t: TaskResult) -> list[dict]:
    """Task `t`'s event records, one slice each, back to back from the task's end."""
    ev = []
    prev = t.end
    for e, when in t.records:
        ev.append(
            {
                "ph": "X",
                "name": f"record e{e}",
                "cat": "event",
                "pid": 1,
                "tid": t.stream,
                "ts": prev * _US,
                "dur": max(0.0, when - prev) * _US,
            }
        )
        prev = when
    return ev


def _task_args(t: TaskResult) -> dict:
    return {
        "op_type": t.work.op_type,
        "engine": t.work.engine,
        "task_type": t.task_type,
        "block_dim": t.work.block_dim,
        "cores": t.cores,
        "launch": t.launch,
        "wait_us": t.wait * _US,
        "bound_us": t.bound_s * _US,
        "cube_ratio": round(t.cube_ratio, 4),
        "vector_ratio": round(t.vector_ratio, 4),
        "mte2_ratio": round(t.mte2_ratio, 4),
        "mte3_ratio": round(t.mte3_ratio, 4),
        "hbm_read_bytes": t.hbm_read_bytes,
        "hbm_write_bytes": t.hbm_write_bytes,
        "l2_read_bytes": t.l2_read_bytes,
    }


def _link_events(result: SimResult) -> list[dict]:
    """One track per kind of link the collectives use: each collective's phases in order, scaled to
    the time it took (longer than its plan when kernels held the HBM it reads and writes)."""
    collectives = [t for t in result.tasks if t.work.engine == "hccl"]
    if not collectives:
        return []
    pid = _PIDS["links"]
    cluster = load_target(result.target).cluster
    ev = [_meta("process_name", pid, 0, "Links"), _meta("process_sort_index", pid, 0, pid)]
    for tid, link in enumerate(_LINKS):
        ev += [_meta("thread_name", pid, tid, _LINK_NAMES[link]), _meta("thread_sort_index", pid, tid, tid)]
    for t in collectives:
        plan = all_reduce_plan(cluster, t.work.replicas, sum(x.nbytes for x in t.work.inputs))
        scale = (t.end - t.start) / plan.seconds if plan.seconds > 0 else 0.0
        at = t.start
        for phase in plan.phases:
            ev.append(
                {
                    "ph": "X",
                    "name": f"{t.name}: {phase.what}",
                    "cat": "HCCL",
                    "pid": pid,
                    "tid": _LINKS.index(phase.link),
                    "ts": at * _US,
                    "dur": phase.seconds * scale * _US,
                    "args": {"bytes per link": phase.bytes_per_link, "algorithm": plan.algorithm},
                }
            )
            at += phase.seconds * scale
    return ev


def _core_events(result: SimResult) -> list[dict]:
    """One track per core used, per pool: the groups of blocks it ran."""
    ev: list[dict] = []
    used: dict[str, set[int]] = {}
    for t in result.tasks:
        for _, _, _, cores in t.groups:
            for p, ids in cores.items():
                if p in _POOL_NAMES:  # the links have tracks of their own
                    used.setdefault(p, set()).update(ids)
    for p in sorted(used, key=lambda q: _PIDS[q]):
        pid = _PIDS[p]
        ev += [_meta("process_name", pid, 0, _POOL_NAMES[p]), _meta("process_sort_index", pid, 0, pid)]
        for c in sorted(used[p]):
            ev += [_meta("thread_name", pid, c, f"{_LANE[p]} {c}"), _meta("thread_sort_index", pid, c, c)]
    for t in result.tasks:
        for g_start, g_end, _, cores in t.groups:
            for p, ids in cores.items():
                if p not in _POOL_NAMES:
                    continue
                for c in ids:
                    ev.append(
                        {
                            "ph": "X",
                            "name": t.name,
                            "cat": t.task_type,
                            "pid": _PIDS[p],
                            "tid": c,
                            "ts": g_start * _US,
                            "dur": max(0.0, g_end - g_start) * _US,
                            "args": {"op_type": t.work.op_type, "stream": t.stream},
                        }
                    )
    return ev


def _memory_events(result: SimResult) -> list[dict]:
    """The HBM bandwidth counter."""
    ev = [_meta("process_name", 6, 0, "Memory"), _meta("process_sort_index", 6, 0, 6)]
    for time, bw in result.hbm_trace:
        ev.append(
            {"ph": "C", "name": "HBM bandwidth", "pid": 6, "tid": 0, "ts": time * _US, "args": {"GB/s": bw / 1e9}}
        )
    return ev


#: Columns of the op summary, after msprof's op_summary_*.csv (plus the model's own bytes and bound).
OP_SUMMARY_COLUMNS = (
    "Task ID",
    "Stream ID",
    "Op Name",
    "OP Type",
    "Task Type",
    "Task Start Time(us)",
    "Task Duration(us)",
    "Task Wait Time(us)",
    "Block Dim",
    "Cores Used",
    "Input Shapes",
    "Input Data Types",
    "Input Formats",
    "Output Shapes",
    "Output Data Types",
    "Output Formats",
    "aic_mac_ratio",
    "aiv_vec_ratio",
    "mte2_ratio",
    "mte3_ratio",
    "mte_ratio",
    "HBM Read Bytes",
    "L2 Read Bytes",
    "HBM Write Bytes",
    "Bound(us)",
)


def _shapes(tensors) -> str:
    return ";".join(",".join(str(d) for d in x.shape) for x in tensors)


def op_summary_csv(result: SimResult) -> str:
    """One row per task, ordered by start time (as msprof's op summary)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(OP_SUMMARY_COLUMNS)
    for t in sorted(result.tasks, key=lambda x: (x.start, x.index)):
        ins, outs = t.work.inputs, t.work.outputs
        w.writerow(
            [
                t.index,
                t.stream,
                t.name,
                t.work.op_type,
                t.task_type,
                f"{t.start * _US:.3f}",
                f"{t.duration * _US:.3f}",
                f"{t.wait * _US:.3f}",
                t.work.block_dim,
                t.cores,
                _shapes(ins),
                ";".join(x.dtype for x in ins),
                ";".join(x.fmt for x in ins),
                _shapes(outs),
                ";".join(x.dtype for x in outs),
                ";".join(x.fmt for x in outs),
                f"{t.cube_ratio:.4f}",
                f"{t.vector_ratio:.4f}",
                f"{t.mte2_ratio:.4f}",
                f"{t.mte3_ratio:.4f}",
                f"{t.mte_ratio:.4f}",
                t.hbm_read_bytes,
                t.l2_read_bytes,
                t.hbm_write_bytes,
                f"{t.bound_s * _US:.3f}",
            ]
        )
    return buf.getvalue()
