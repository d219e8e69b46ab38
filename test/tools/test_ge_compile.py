"""ge-compile and ge-run on artifacts: the command lines, the pipeline they record, every error one line."""

import json

import numpy as np
import onnx
import pytest
from test_artifact import small_model

from ge.tools import ge_compile, ge_opt, ge_run, ge_translate
from ge.tools.artifact import load_artifact


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    folder = tmp_path_factory.mktemp("compile")
    onnx.save(small_model(), folder / "small.onnx")
    np.savez(folder / "in.npz", x=np.random.default_rng(1).standard_normal((2, 3, 8, 8)).astype(np.float32))
    return folder


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("GE_CACHE_DIR", str(folder))
    return folder


def test_compile_then_run_matches_the_recorded_ge_opt_pipeline(model, tmp_path, run_main, cache):
    out = tmp_path / "m.ge"
    code, stdout, err = run_main(
        ge_compile.main, [model / "small.onnx", "-O3", "--target", "ascend910b", "--streams", "2", "-o", out]
    )
    assert code == 0, err
    assert err == ""
    assert stdout.startswith(f"{out}: ") and "kernels for ascend910b" in stdout and "compiled in" in stdout
    _, artifact = load_artifact(out)
    pipeline = artifact.manifest["pipeline"]
    assert f"pipeline: {pipeline}" in stdout and "streams=2" in pipeline
    # the same compile by hand: import, then ge-opt with the manifest's pipeline
    assert run_main(ge_translate.main, ["--import-onnx", model / "small.onnx", "-o", tmp_path / "m.mlir"])[0] == 0
    assert run_main(ge_opt.main, [tmp_path / "m.mlir", "-p", pipeline, "-o", tmp_path / "s.mlir"])[0] == 0
    for program, result in ((out, "a.npz"), (tmp_path / "s.mlir", "b.npz")):
        code, _, err = run_main(ge_run.main, [program, "--inputs", model / "in.npz", "-o", tmp_path / result])
        assert code == 0, err
    np.testing.assert_array_equal(np.load(tmp_path / "a.npz")["y"], np.load(tmp_path / "b.npz")["y"])


def test_a_recompile_comes_from_the_cache(model, tmp_path, run_main, cache):
    first, second = tmp_path / "1.ge", tmp_path / "2.ge"
    assert run_main(ge_compile.main, [model / "small.onnx", "-o", first])[0] == 0
    code, stdout, _ = run_main(ge_compile.main, [model / "small.onnx", "-o", second])
    assert code == 0 and "from the cache in" in stdout
    assert first.read_bytes() == second.read_bytes()
    code, stdout, _ = run_main(ge_compile.main, [model / "small.onnx", "-o", second, "--no-cache"])
    assert code == 0 and "compiled in" in stdout


def test_no_cache_and_quiet(model, tmp_path, run_main, cache):
    code, stdout, err = run_main(
        ge_compile.main, [model / "small.onnx", "-o", tmp_path / "m.ge", "--no-cache", "--quiet"]
    )
    assert (code, stdout, err) == (0, "", "")
    assert not cache.exists()


def test_ir_input_with_its_sidecar(model, tmp_path, run_main, cache):
    assert run_main(ge_translate.main, ["--import-onnx", model / "small.onnx", "-o", tmp_path / "m.mlir"])[0] == 0
    assert (tmp_path / "m.safetensors").exists()
    code, _, err = run_main(
        ge_compile.main,
        [tmp_path / "m.mlir", "-O1", "--precision-mode", "force_fp16", "--mode", "op", "-o", tmp_path / "m.ge"],
    )
    assert code == 0, err
    _, artifact = load_artifact(tmp_path / "m.ge")
    assert artifact.manifest["options"] == {
        "optimization_level": 1,
        "target": "ascend910b",
        "precision_mode": "force_fp16",
        "streams": 0,
        "mode": "op",
        "reuse": True,
        "single_stream": False,
    }


def test_ge_run_on_an_artifact_models_the_device(model, tmp_path, run_main, cache):
    out = tmp_path / "m.ge"
    assert run_main(ge_compile.main, [model / "small.onnx", "-o", out, "--quiet"])[0] == 0
    code, stdout, err = run_main(
        ge_run.main,
        [
            out,
            "--random-inputs",
            "0",
            "--print",
            "--trace",
            tmp_path / "t.json",
            "--op-summary",
            tmp_path / "ops.csv",
            "--schedule-seed",
            "3",
            "-o",
            tmp_path / "seeded.npz",
        ],
    )
    assert code == 0, err
    assert "simulating target ascend910b (from the module)" in stdout and "latency" in stdout
    assert "y: float32[2, 10]" in stdout
    assert json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    assert (tmp_path / "ops.csv").read_text().count("\n") > 1
    assert run_main(ge_run.main, [out, "--random-inputs", "0", "-o", tmp_path / "plain.npz"])[0] == 0
    np.testing.assert_allclose(
        np.load(tmp_path / "seeded.npz")["y"], np.load(tmp_path / "plain.npz")["y"], rtol=1e-5, atol=1e-6
    )
    assert run_main(ge_run.main, [out, "--timing-only"])[0] == 0


def one_line_error(run_main, main, argv, tool: str = "ge-compile") -> str:
    code, stdout, err = run_main(main, argv)
    assert code == 1, (code, err)
    assert stdout == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{tool}: error: "), err
    return lines[0]


@pytest.mark.parametrize(
    "args, reason",
    [
        (["-O4"], "argument -O: invalid choice: 4"),
        (["--target", "ascend310"], "unknown target 'ascend310'"),
        (["--target", "../etc/passwd"], "unknown target '../etc/passwd'"),
        (["--precision-mode", "fp8"], "precision mode 'fp8' is not one of"),
        (["--mode", "batch"], "mode 'batch' is not one of op, graph, subgraph"),
        (["--streams", "-1"], "'-1' is not a count"),
        (["--max-tensor-bytes", "100"], "more than the limit of 100 bytes"),
        (["--ge-option", "ge.bogus=1"], "GE option 'ge.bogus' is not one of ge.exec.disableReuseMemory, "),
        (["--ge-option", "is_input_adjust_hw_layout=maybe"], "'maybe' is not 0, 1, true or false"),
        (["--ge-option", "ge.hcomParallel"], "GE option 'ge.hcomParallel' is not NAME=VALUE"),
    ],
)
def test_bad_options(model, tmp_path, run_main, cache, args, reason):
    out = tmp_path / "m.ge"
    assert reason in one_line_error(run_main, ge_compile.main, [model / "small.onnx", "-o", out, *args])
    assert not out.exists() and not cache.exists()
    assert list(tmp_path.iterdir()) == []  # no temporary either


def test_bad_files(model, tmp_path, run_main, cache):
    onnx_model = model / "small.onnx"
    assert "-o/--output" in one_line_error(run_main, ge_compile.main, [onnx_model])
    assert "must be named *.ge" in one_line_error(run_main, ge_compile.main, [onnx_model, "-o", tmp_path / "m.om"])
    assert "reads .onnx models or .mlir IR" in one_line_error(
        run_main, ge_compile.main, [model / "in.npz", "-o", tmp_path / "m.ge"]
    )
    assert "does not exist" in one_line_error(run_main, ge_compile.main, [onnx_model, "-o", tmp_path / "no" / "m.ge"])
    missing = one_line_error(run_main, ge_compile.main, [tmp_path / "absent.onnx", "-o", tmp_path / "m.ge"])
    assert "absent.onnx" in missing
    (tmp_path / "bad.mlir").write_text("module {\n  %0 = ge.nonsense\n}\n")
    assert "bad.mlir:3:1: Operation ge.nonsense is not registered" in one_line_error(
        run_main, ge_compile.main, [tmp_path / "bad.mlir", "-o", tmp_path / "m.ge"]
    )
    assert "must be named *.ge" in one_line_error(run_main, ge_compile.main, [onnx_model, "-o", onnx_model])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.mlir"]


def test_an_already_lowered_module_is_refused(model, tmp_path, run_main, cache):
    out = tmp_path / "m.ge"
    assert run_main(ge_compile.main, [model / "small.onnx", "-o", out, "--quiet"])[0] == 0
    assert run_main(ge_translate.main, ["--import-onnx", model / "small.onnx", "-o", tmp_path / "m.mlir"])[0] == 0
    assert (
        run_main(ge_opt.main, [tmp_path / "m.mlir", "-p", "ge-optimize,lower-to-tasks", "-o", tmp_path / "t.mlir"])[0]
        == 0
    )
    one_line_error(run_main, ge_compile.main, [tmp_path / "t.mlir", "-o", tmp_path / "again.ge"])
    assert not (tmp_path / "again.ge").exists()


def test_ge_run_refuses_a_damaged_artifact_in_one_line(model, tmp_path, run_main, cache):
    out = tmp_path / "m.ge"
    assert run_main(ge_compile.main, [model / "small.onnx", "-o", out, "--quiet"])[0] == 0
    data = bytearray(out.read_bytes())
    data[len(data) // 2] ^= 0x10
    bad = tmp_path / "bad.ge"
    bad.write_bytes(data)
    line = one_line_error(run_main, ge_run.main, [bad, "--random-inputs", "0", "-o", tmp_path / "o.npz"], "ge-run")
    assert f"{bad}: " in line
    assert not (tmp_path / "o.npz").exists()
    truncated = tmp_path / "cut.ge"
    truncated.write_bytes(bytes(data[:1000]))
    assert "truncated" in one_line_error(run_main, ge_run.main, [truncated, "--random-inputs", "0"], "ge-run")


def test_ge_options_as_flags_reach_the_pipeline(model, tmp_path, run_main, cache):
    """--no-reuse-memory and --single-stream: GE's two switches, recorded in the manifest and the pipeline."""
    code, _, err = run_main(
        ge_compile.main,
        [model / "small.onnx", "--no-reuse-memory", "--single-stream", "--streams", "2", "-o", tmp_path / "m.ge"],
    )
    assert code == 0, err
    module, artifact = load_artifact(tmp_path / "m.ge")
    options, pipeline = artifact.manifest["options"], artifact.manifest["pipeline"]
    assert options["reuse"] is False and options["single_stream"] is True
    assert "plan-memory{reuse=false}" in pipeline and "relax-reuse" not in pipeline
    assert "single_stream=true" in pipeline
    (fn,) = module.ops
    assert fn.attributes["stream.count"].value.data == 1  # type: ignore[attr-defined]


def test_ge_options_reach_the_pipeline_and_keep_the_outputs(model, tmp_path, run_main, cache):
    """--ge-option: ge-optimize's GE options (here the image input given in NC1HWC0) and the
    stream switches, recorded in the manifest and the pipeline; the outputs stay those of the
    plain compile (the runner converts the boundary)."""
    given = ["--ge-option", "is_input_adjust_hw_layout=true", "--ge-option", "ge.hcomParallel=1"]
    for name, extra in (("plain.ge", []), ("adjusted.ge", given)):
        code, _, err = run_main(ge_compile.main, [model / "small.onnx", *extra, "-o", tmp_path / name])
        assert code == 0, err
    _, plain = load_artifact(tmp_path / "plain.ge")
    _, adjusted = load_artifact(tmp_path / "adjusted.ge")
    options, pipeline = adjusted.manifest["options"], adjusted.manifest["pipeline"]
    assert options["ge_optimize"] == {"adjust_input_hw_layout": "true"} and options["hcom_parallel"] is True
    assert "adjust_input_hw_layout=true" in pipeline and "hcom_parallel=true" in pipeline
    assert "hcom_parallel" not in plain.manifest["options"]
    assert adjusted.manifest["num_operators"] == plain.manifest["num_operators"] - 1  # the input's TransData
    for name in ("plain", "adjusted"):
        code, _, err = run_main(
            ge_run.main, [tmp_path / f"{name}.ge", "--inputs", model / "in.npz", "-o", tmp_path / f"{name}.npz"]
        )
        assert code == 0, err
    np.testing.assert_array_equal(np.load(tmp_path / "plain.npz")["y"], np.load(tmp_path / "adjusted.npz")["y"])
