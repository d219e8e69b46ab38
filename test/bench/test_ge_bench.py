"""ge-bench's split of the speedup into the compiler's and the launch mode's shares, and its
sensitivity to the two assumed constants of the target file."""

import math
import sys
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto
from tool_server import run as run_tool

from ge.device.cost import Hardware
from ge.frontend.models import GraphBuilder
from ge.ge_dialects.limits import tensor_byte_limit
from ge.interpreter.stream_executor import simulate_module
from ge.target import load_target
from ge.tools import ge_bench as cli
from ge.tools import ge_bench_measure as ge_bench
from ge.tools import ge_bench_training as training
from ge.tools.ge_bench_measure import ASSUMED, Compiled, compile_both, sensitivity_rows, split_row, with_constants


def tiny(batch: int):
    """Two conv + batch-norm + relu blocks: O3 fuses each into one kernel."""
    b = GraphBuilder()
    x = b.input("input", TensorProto.FLOAT, [batch, 16, 28, 28])
    for i in range(2):
        with b.scope(f"conv{i}"):
            x = b.conv(x, 16, 16, 3, stride=1, pad=1)
        with b.scope(f"bn{i}"):
            x = b.batch_norm(x, 16)
        x = b.relu(x)
    b.output(x, "output", TensorProto.FLOAT, [batch, 16, 28, 28])
    return b.build()


@pytest.fixture(scope="module")
def compiled() -> Compiled:
    ge_bench.MODELS["tiny"] = (tiny, 1)
    try:
        yield compile_both("tiny", "ascend910b", "force_fp16")
    finally:
        del ge_bench.MODELS["tiny"]


def test_with_constants_scales_a_copy():
    spec = load_target("ascend910b")
    launch, overhead = spec.host.launch_s, spec.overheads.task_device_s
    varied = with_constants(spec, launch_s=2.0, task_device_s=0.5)
    assert varied.host.launch_s == 2 * launch
    assert varied.overheads.task_device_s == 0.5 * overhead
    assert varied.events == spec.events and varied.aicpu == spec.aicpu
    # the cached target every pass loads is unchanged
    assert load_target("ascend910b").host.launch_s == launch
    assert load_target("ascend910b").overheads.task_device_s == overhead
    assert set(ASSUMED) == {"launch_s", "task_device_s"}


def test_with_constants_refuses_other_keys():
    with pytest.raises(ValueError, match="'clock_hz' is not one of the assumed constants"):
        with_constants(load_target("ascend910b"), clock_hz=2.0)


def test_split_factors_multiply_to_the_total(compiled):
    s = compiled.split(load_target("ascend910b"))
    assert s.kernels_o3 < s.kernels_o0
    assert math.isclose(s.total, s.compiler_op * s.launch_o3)
    assert math.isclose(s.total, s.compiler_graph * s.launch_o0)
    # a sunk graph pays one launch, per-op mode one per task
    hw_launch = load_target("ascend910b").host.launch_s
    assert s.o0_op >= s.kernels_o0 * hw_launch
    assert s.o3_graph < s.o3_op


def test_launch_cost_is_what_per_op_mode_pays(compiled):
    """Doubling launch_s adds one launch per kernel to per-op runs and one launch to a sunk run
    (the tasks are launch-bound at this size)."""
    spec = load_target("ascend910b")
    base = compiled.split(spec)
    doubled = compiled.split(with_constants(spec, launch_s=2.0))
    launch = spec.host.launch_s
    assert doubled.o3_graph - base.o3_graph == pytest.approx(launch, rel=1e-6)
    assert doubled.o0_op - base.o0_op == pytest.approx(base.kernels_o0 * launch, rel=0.05)
    assert doubled.launch_o3 > base.launch_o3


def test_task_overhead_moves_the_sunk_graph(compiled):
    spec = load_target("ascend910b")
    base = compiled.split(spec)
    doubled = compiled.split(with_constants(spec, task_device_s=2.0))
    overhead = spec.overheads.task_device_s
    # the O3 tasks run one after another: each pays the overhead once more
    assert doubled.o3_graph - base.o3_graph == pytest.approx(base.kernels_o3 * overhead, rel=0.05)


def test_sensitivity_grid(compiled):
    rows = sensitivity_rows(compiled)
    assert len(rows) == 9
    given = [r for r in rows if "(given)" in r["launch_s (us)"] and "(given)" in r["task_device_s (us)"]]
    assert len(given) == 1
    assert given[0]["total"] == split_row(compiled)["total O0 op -> O3 graph"]
    assert [r["launch_s (us)"] for r in rows[:3]] == ["10"] * 3
    assert [r["task_device_s (us)"] for r in rows[:3]] == ["2.5", "5 (given)", "10"]
    assert len({r["total"] for r in rows}) > 1  # the constants reach the simulation


def run_cli(*args):
    return run_tool("ge-bench", *args)


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--models", "resnet51"], "--models: unknown model 'resnet51'"),
        (["--sweep", "nope"], "--sweep: unknown model 'nope'"),
        (["--sensitivity", "--sensitivity-models", "x"], "--sensitivity-models: unknown model 'x'"),
        (["--targets", "ascend999"], "--targets: unknown target 'ascend999'"),
    ],
)
def test_bad_options_are_one_line_errors(args, needle):
    result = run_cli(*args)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert needle in lines[0]


def test_cli_prints_and_writes_the_tables(compiled, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(ge_bench.MODELS, "tiny", (tiny, 1))
    out = tmp_path / "bench.md"
    cli.main(
        [
            "--models",
            "tiny",
            "--targets",
            "ascend910b",
            "--no-max-batch",
            "--sweep",
            "",
            "--sensitivity",
            "--sensitivity-models",
            "tiny",
            "--markdown",
            str(out),
        ]
    )
    printed = capsys.readouterr().out
    text = out.read_text()
    for title in (
        "O0 per-op against O3 graph sink",
        "The compiler's share and the launch mode's share",
        "Sensitivity to the assumed constants",
    ):
        assert f"## {title}" in printed and f"## {title}" in text
    assert "launch mode, O3 (op -> graph)" in text
    assert "Reasoning (an assumption, marked as" in text
    assert text.count("| tiny | ascend910b |") == 1 + 1 + 9


def wide_relu(batch: int):
    """One Relu whose input is 4 GiB per batch row: beyond the host's default tensor-size limit."""
    b = GraphBuilder()
    x = b.input("input", TensorProto.FLOAT, [batch, 2**30])
    b.output(b.relu(x), "output", TensorProto.FLOAT, [batch, 2**30])
    return b.build()


def test_largest_batch_probe_is_bounded_by_the_device_not_the_host_limit():
    """The max-batch search compiles only: batch 2 (8 GiB) fits the 910B's HBM and must not stop at
    the 4 GiB host limit (it ended ge-bench with an internal OnnxImportError)."""
    hbm = load_target("ascend910b").hbm.bytes
    compile_at = ge_bench.inference_at(wide_relu, 0, "force_fp32", "ascend910b")
    assert ge_bench.fits(compile_at, 2, hbm) is not None
    assert ge_bench.fits(compile_at, 64, hbm) is None  # 256 GiB: plan-memory refuses


def _tiny_cnn(batch: int):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "passes"))
    from training_models import cnn

    model, _ = cnn(np.random.default_rng(0), dtype=np.float32, batch=1, mse=False)
    for value in [*model.graph.input, *model.graph.output]:  # the batch without making its inputs
        value.type.tensor_type.shape.dim[0].dim_value = batch
    return model


def test_training_step_row_reports_the_modeled_step():
    """--training's row on a small CNN (BN in training mode): a momentum step at O3 in
    allow_mix_precision, with the samples/s the step time implies and a plan near its bound."""
    built = training.training_build(_tiny_cnn(8), "add-loss{output=y}", training.DEFAULT_PRECISION, "ascend910b")
    text = str(built.module)
    assert "ge.apply_momentum" in text or "apply_momentum" in text
    row = training.step_row("tiny", built.module, 8, "ascend910b", built.seconds)
    step_s = float(row["step (us)"]) * 1e-6
    assert step_s > 0 and abs(float(row["samples/s"]) - 8 / step_s) <= 0.01 * 8 / step_s + 1
    assert float(row["peak / lower bound"]) <= 1.05


def test_training_largest_batch_is_where_the_step_stops_fitting():
    compile_at = training.training_at(_tiny_cnn, "add-loss{output=y}", "force_fp32", "ascend910b")
    largest = ge_bench.largest_batch(compile_at, "ascend910b")
    hbm = load_target("ascend910b").hbm.bytes
    assert largest > 1
    assert ge_bench.fits(compile_at, largest, hbm) is not None
    assert ge_bench.fits(compile_at, largest + 1, hbm) is None


def test_data_parallel_rows_scale_from_one_chip(monkeypatch):
    """--data-parallel's table on the small CNN (8 per chip): one row per chip count, the samples/s
    the step implies, efficiency against one chip at most 1, collectives only beyond one chip; the
    bucket sweep: one bucket is one collective, 1 MiB buckets at least as many as 500 MiB ones."""
    from ge.tools import ge_bench_data_parallel as dp

    monkeypatch.setitem(training.TRAINING_MODELS, "tiny", (_tiny_cnn, 8, "add-loss{output=y}"))
    monkeypatch.setattr(dp, "DEVICES", (1, 2))
    monkeypatch.setattr(dp, "SWEEP_DEVICES", 2)
    rows = dp.scaling_rows("tiny", "ascend910", "force_fp32")
    assert [r["chips"] for r in rows] == ["1", "2"]
    for r in rows:
        chips, step_s = int(r["chips"]), float(r["step (ms)"]) * 1e-3
        assert abs(float(r["samples/s"]) - 8 * chips / step_s) <= 0.01 * 8 * chips / step_s + 1
        assert 0 < float(r["scaling"]) <= 1.0 + 1e-3
        assert (int(r["collectives"]) > 0) == (chips > 1)
    rows_4, default = dp.bucket_rows("tiny", "ascend910", "force_fp32", float(rows[0]["samples/s"]))
    sweep = {r["buckets"]: r for r in rows_4}
    assert sweep["one bucket"]["collectives"] == "1"
    assert int(sweep["1 MiB"]["collectives"]) >= int(sweep["500 MiB"]["collectives"]) >= 1
    assert default is not None and default.devices == 2
    sens = dp.sensitivity_rows("tiny", "ascend910", default)
    assert {r["constant"] for r in sens} >= {"cluster.hccs_latency_s", "cluster.roce_latency_s"}
    for r in sens:  # slower links never make the step faster
        assert float(r["step x2 (ms)"]) >= float(r["step x0.5 (ms)"]) - 1e-9


def test_training_rejects_an_inference_model_name():
    r = run_cli("--training", "--models", "bert_base")
    assert r.returncode == 1
    assert r.stderr.strip().startswith("ge-bench: error: --models: unknown model 'bert_base' (models: resnet50 b32,")


def test_a_training_step_that_does_not_fit_is_a_row_saying_so(monkeypatch):
    """A batch whose step needs more than the HBM: its row says so, the table goes on."""
    monkeypatch.setitem(training.TRAINING_MODELS, "tiny huge", (_tiny_cnn, 10**8, "add-loss{output=y}"))
    with tensor_byte_limit(2**40):  # compile only: the host's limit on one tensor does not apply
        row = training.training_row("tiny huge", "ascend910b", "force_fp32", with_max_batch=False)
    assert (
        row["step (us)"].startswith("does not fit: @main needs") and "ascend910b has 64.00 GiB HBM" in row["step (us)"]
    )
    table = ge_bench.markdown([row, {"model": "fits", "target": "ascend910b", "step (us)": "1", "samples/s": "8"}])
    assert "does not fit" in table and table.splitlines()[0].count("|") == 5


def test_training_row_reports_the_device_total_the_batch_search_uses():
    """The step's device total counts the state once (its new values written in place over the
    variables) and is what the largest-batch search compares with the HBM."""
    from ge.interpreter.stream_executor import memory_figures

    built = training.training_build(_tiny_cnn(8), "add-loss{output=y}", "force_fp32", "ascend910b")
    memory = memory_figures(built.module)
    assert memory is not None and memory.state_in_place > 0 and memory.state_copies_avoided == memory.state
    row = training.step_row("tiny", built.module, 8, "ascend910b", built.seconds)
    assert row["device MiB"] == f"{memory.device_total / 2**20:.1f}"
    assert ge_bench.device_bytes(built.module) == memory.device_total
    assert memory.device_total == memory.pool + memory.weights + memory.state + memory.io


def test_deployment_table_is_before_against_after():
    from ge.tools.ge_bench_deployment import deployment_rows

    rows = {r["metric"]: r for r in deployment_rows("ascend910b", "force_fp16", True, builder=tiny)}
    latency = rows["batch-1 latency (us)"]
    assert float(latency["before"]) > float(latency["after"])  # per-op launch of unfused kernels is slower
    before, after = float(latency["before"]), float(latency["after"])
    shown = before / after  # of the figures as printed, each rounded to the last digit shown
    rounding = 0.5 / before + 0.5 / after + 0.005  # and the ratio itself to two decimals
    assert float(latency["before/after"].rstrip("x")) == pytest.approx(shown, rel=rounding)
    assert rows["host launches"]["after"] == "1"  # graph sink
    assert int(rows["kernels"]["before"]) > int(rows["kernels"]["after"])  # conv+bn+relu fused
    util = rows["AI Core utilization"]
    assert 0 < int(util["before"].rstrip("%")) < int(util["after"].rstrip("%")) <= 100
    assert int(rows["largest batch that fits"]["after"]) >= int(rows["largest batch that fits"]["before"]) > 1


def test_aicore_utilization_counts_every_core_a_task_holds():
    """Held core-seconds over the AI Core pools: at least the Cube's busy share (910B: Cube and Vector
    pools apart), at most 1; the per-op run's host gaps lower it."""
    spec = load_target("ascend910b")
    sims = {
        mode: simulate_module(ge_bench.build(tiny(1), 3, "force_fp16", "ascend910b", mode).module, spec)
        for mode in ("op", "graph")
    }
    hw = Hardware(spec)
    cores = spec.cores.cube_core + spec.cores.vector_core
    for sim in sims.values():
        # block-seconds of each task times the AI Cores one of its blocks holds (the cost model's `need`)
        held = sum(
            t.block_s * sum(n for p, n in hw.need(t.work.engine).items() if p in ("aic", "aiv")) for t in sim.tasks
        )
        assert sim.aicore_util == pytest.approx(held / (cores * sim.latency), rel=1e-6)
        assert 0 < sim.aicore_util <= 1.0
    assert sims["op"].aicore_util < sims["graph"].aicore_util


def test_deployment_and_training_are_exclusive():
    done = run_cli("--deployment", "--training")
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "ge-bench: error: --training, --data-parallel, --deployment and --int8 are different reports: give one"
    )


def test_int8_table_is_f16_against_quantize_static(monkeypatch):
    """The small ResNet-50, quantized by quantize_static: fewer Cube seconds by the rate ratio of
    the target file (int8_k / k = 2: the Cube time halves), and the 910B's assumed int8_k shown at
    half and double."""
    pytest.importorskip("onnxruntime")
    from ge.frontend import models
    from ge.tools import ge_bench_int8

    monkeypatch.setitem(ge_bench_int8.INT8_MODELS, "resnet50 small", (lambda batch: models.small("resnet50"), 1))
    rows, sensitivity = ge_bench_int8.int8_rows("resnet50 small", ["ascend910", "ascend910b"])
    assert [r["target"] for r in rows] == ["ascend910", "ascend910b"]
    for r in rows:
        assert float(r["Cube f16/int8"].removesuffix("x")) > 1.5  # the Cube's int8 rate, less what stays f16
        assert r["int8_k / k"].startswith("2.0")
    assert rows[1]["int8_k / k"] == "2.0 (ASSUMPTION)" and rows[0]["int8_k / k"] == "2.0"
    assert [s["int8_k"] for s in sensitivity] == ["16 (x0.5)", "32 (x1)", "64 (x2)"]
    latency = [float(s["int8 latency us"]) for s in sensitivity]
    assert latency[0] >= latency[1] >= latency[2]


def test_int8_refuses_another_precision():
    done = run_cli("--int8", "--precision", "allow_mix_precision")
    assert done.returncode == 1
    assert done.stderr.strip().startswith("ge-bench: error: --int8 compiles both models in force_fp16")
