"""ge-run on a stream-level module: the modeled device's report, trace and op summary."""

import csv
import io
import json

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper, save
from tool_server import run as run_tool

from ge.tools.common import read_module

tool = run_tool


@pytest.fixture(scope="module")
def lowered(tmp_path_factory):
    """Two branches (fc1, relu, fc2 and fc3, sigmoid) joined by a product, lowered to two streams,
    with the weights in a sidecar."""
    folder = tmp_path_factory.mktemp("device")
    rng = np.random.default_rng(0)
    w1, w2, w3 = (
        numpy_helper.from_array(rng.standard_normal((64, 64)).astype(np.float32), n) for n in ("w1", "w2", "w3")
    )
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "w1"], ["h"], name="/fc1"),
            helper.make_node("Relu", ["h"], ["r"], name="/relu"),
            helper.make_node("MatMul", ["r", "w2"], ["a"], name="/fc2"),
            helper.make_node("MatMul", ["x", "w3"], ["g"], name="/fc3"),
            helper.make_node("Sigmoid", ["g"], ["b"], name="/gate"),
            helper.make_node("Mul", ["a", "b"], ["y"], name="/out"),
        ],
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [16, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [16, 64])],
        initializer=[w1, w2, w3],
    )
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), folder / "mlp.onnx")
    assert tool("ge-translate", "--import-onnx", folder / "mlp.onnx", "-o", folder / "mlp.mlir").returncode == 0
    r = tool(
        "ge-opt",
        folder / "mlp.mlir",
        "-p",
        "ge-optimize,lower-to-tasks,plan-memory,lower-to-streams{streams=2}",
        "-o",
        folder / "streams.mlir",
    )
    assert r.returncode == 0, r.stderr
    return folder


def test_report_trace_and_op_summary(lowered):
    r = tool(
        "ge-run",
        lowered / "streams.mlir",
        "--random-inputs",
        0,
        "--print",
        "--trace",
        lowered / "t.json",
        "--op-summary",
        lowered / "ops.csv",
    )
    assert r.returncode == 0, r.stderr
    assert "latency" in r.stdout and "roofline bound" in r.stdout and "memory: planned peak" in r.stdout
    assert "y: float32[16, 64]" in r.stdout  # numbers too
    trace = json.loads((lowered / "t.json").read_text())
    events = trace["traceEvents"]
    assert all({"ph", "pid", "tid", "name"} <= set(e) for e in events)
    tasks = [e for e in events if e["ph"] == "X" and e.get("cat") != "host"]
    assert tasks and all(e["dur"] >= 0 for e in events if e["ph"] == "X")
    rows = list(csv.DictReader(io.StringIO((lowered / "ops.csv").read_text())))
    kernels = sum(1 for op in read_module(str(lowered / "streams.mlir")).walk() if op.name == "task.kernel")
    assert len(rows) == kernels
    assert {r["Stream ID"] for r in rows} == {"0", "1"}


def test_timing_only_needs_no_weights(lowered):
    (lowered / "streams.safetensors").rename(lowered / "moved.safetensors")
    try:
        r = tool("ge-run", lowered / "streams.mlir", "--timing-only")
        assert r.returncode == 0, r.stderr
        assert "target ascend910b, mode graph" in r.stdout  # the module's target (ge-optimize's default)
        r = tool("ge-run", lowered / "streams.mlir", "--random-inputs", 0)
        assert r.returncode == 1 and "streams.safetensors" in r.stderr
    finally:
        (lowered / "moved.safetensors").rename(lowered / "streams.safetensors")


@pytest.mark.parametrize(
    "args, needle",
    [
        (["mlp.mlir", "--trace", "t.json"], "need a module lowered to streams"),
        (["streams.mlir", "--timing-only", "--target", "ascend1"], "unknown target 'ascend1'"),
    ],
)
def test_device_errors_are_one_line(lowered, args, needle):
    r = tool("ge-run", *(lowered / a if a.endswith(".mlir") else a for a in args), "--random-inputs", 0)
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in r.stderr, r.stderr
