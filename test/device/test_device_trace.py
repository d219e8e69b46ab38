"""Profile output of a simulation (device/trace.py)."""

from __future__ import annotations

import csv
import io
import json

import pytest
from device_cases import conv_work, vector_task

from ge.device import OP_SUMMARY_COLUMNS, SimTask, chrome_trace, op_summary_csv, simulate
from ge.target import load_target


def _graph():
    c = conv_work("/layer1/0/conv1/Conv", n=4, block_dim=24, y="y1")
    g = vector_task("/gelu", 4 << 20, 4 << 20, transcendental=2 << 20, block_dim=16, inputs=("x",), output="g")
    a = vector_task("/add", 8 << 20, 4 << 20, elems=2 << 20, block_dim=48, inputs=("y1", "g"), output="out")
    cpu = vector_task("/nms", 1 << 12, 1 << 12, elems=1 << 12)
    cpu = type(cpu)(**{**cpu.__dict__, "engine": "aicpu", "op_type": "NonMaxSuppression"})
    return [
        SimTask(c, 0, 0, records=(0,)),
        SimTask(g, 1, 0, records=(1,)),
        SimTask(a, 0, 1, waits=(1,)),
        SimTask(cpu, 2, 1, waits=(0,)),
    ]


@pytest.mark.parametrize("tname", ["ascend910", "ascend910b"])
@pytest.mark.parametrize("mode", ["op", "graph", "subgraph"])
def test_chrome_trace_is_valid(tname, mode):
    res = simulate(_graph(), load_target(tname), mode)
    trace = json.loads(json.dumps(chrome_trace(res)))
    events = trace["traceEvents"]
    assert events
    for e in events:
        for key in ("ph", "ts", "pid", "tid", "name"):
            assert key in e, (key, e)
        assert e["ts"] >= 0
        if e["ph"] == "X":
            assert e["dur"] >= 0
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert {"stream 0", "stream 1", "stream 2"} <= set(names.values())
    procs = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    assert {"Host", "Streams", "AI CPU"} <= procs
    assert ({"AI Cube cores (AIC)", "AI Vector cores (AIV)"} if tname == "ascend910b" else {"AI Core"}) <= procs
    tasks = [e for e in events if e["ph"] == "X" and e.get("cat") == "task"]
    assert sorted(e["name"] for e in tasks) == sorted(t.work.name for t in _graph())
    # one complete event per (core, block group) on the core tracks
    core_pids = {
        e["pid"]
        for e in events
        if e["ph"] == "M"
        and e["name"] == "process_name"
        and e["args"]["name"].startswith(("AI Core", "AI Cube", "AI Vector", "AI CPU"))
    }
    assert sum(1 for e in events if e["ph"] == "X" and e["pid"] in core_pids) == sum(
        len(ids) for t in res.tasks for _, _, _, cores in t.groups for ids in cores.values()
    )
    # every event wait is a flow from its record to the waiting stream
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    ends = {e["id"]: e for e in events if e["ph"] == "f"}
    assert len(starts) == len(ends) == 2 and starts.keys() == ends.keys()
    for k in starts:
        assert starts[k]["ts"] <= ends[k]["ts"]
    launches = [e for e in events if e["ph"] == "X" and e["pid"] == 0]
    assert len(launches) == res.launches


@pytest.mark.parametrize("tname", ["ascend910", "ascend910b"])
def test_op_summary_csv_parses(tname):
    res = simulate(_graph(), load_target(tname), "graph")
    rows = list(csv.reader(io.StringIO(op_summary_csv(res))))
    assert tuple(rows[0]) == OP_SUMMARY_COLUMNS
    body = [dict(zip(rows[0], r)) for r in rows[1:]]
    assert len(body) == len(res.tasks)
    assert {r["Op Name"] for r in body} == {t.work.name for t in res.tasks}
    starts = [float(r["Task Start Time(us)"]) for r in body]
    assert starts == sorted(starts)
    conv = next(r for r in body if r["Op Name"] == "/layer1/0/conv1/Conv")
    assert conv["Task Type"] == ("MIX_AIC" if tname == "ascend910b" else "AI_CORE")
    assert conv["Input Shapes"] == "4,64,56,56;64,64,3,3"
    assert conv["Input Formats"] == "NC1HWC0;FRACTAL_Z" and conv["Input Data Types"] == "f16;f16"
    assert conv["Output Shapes"] == "4,64,56,56"
    assert float(conv["aic_mac_ratio"]) > 0.2
    nms = next(r for r in body if r["Op Name"] == "/nms")
    assert nms["Task Type"] == "AI_CPU" and nms["OP Type"] == "NonMaxSuppression"
    for r in body:
        assert float(r["Task Duration(us)"]) >= 0 and float(r["Task Wait Time(us)"]) >= 0
        assert 0 <= float(r["mte2_ratio"]) <= 1
