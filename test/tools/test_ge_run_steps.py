"""ge-run --steps / --save-state / --load-state: state carried between steps, at the ge level and the
stream level, and the state files' errors (one line, exit 1, nothing written).

The step here is written by hand: it adds its input to the weight `w` and returns the sum marked
`{ge.state = "w"}`, so after k steps on x = 1, w = w0 + k. (The optimizers' own steps are tested
in test/passes/test_apply_optimizer.py.)"""

from __future__ import annotations

import numpy as np
import pytest
from tool_server import run as run_tool

from ge.frontend.sidecar import WeightStore, save

STEP = """builtin.module attributes {ge.weights = "w.safetensors"} {
  func.func @main(%x: tensor<3xf32> {ge.name = "x"}) -> (tensor<3xf32> {ge.name = "w", ge.state = "w"},
                                                       tensor<f32> {ge.name = "loss"}) {
    %w = ge.constant parameter #ge.weight<"w"> : tensor<3xf32>
    %new = ge.add %w, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32> loc("/update")
    %sq = ge.mul %new, %new : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32> loc("/square")
    %loss = ge.reduce_sum %sq {keepdims = 0 : i64} : (tensor<3xf32>) -> tensor<f32> loc("/loss")
    func.return %new, %loss : tensor<3xf32>, tensor<f32>
  }
}
"""
W0 = np.array([1.0, -2.0, 0.5], np.float32)


tool = run_tool


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("steps")
    (folder / "step.mlir").write_text(STEP)
    save(folder / "w.safetensors", {"w": W0})
    np.savez(folder / "in.npz", x=np.ones(3, np.float32))
    r = tool("ge-opt", folder / "step.mlir", "-p", "lower-to-tasks,plan-memory,lower-to-streams{streams=2}")
    assert r.returncode == 0, r.stderr
    (folder / "streams.mlir").write_text(r.stdout)
    return folder


def _outputs(path):
    with np.load(path) as f:
        return {k: f[k] for k in f.files}


@pytest.mark.parametrize("program", ["step.mlir", "streams.mlir"])
def test_steps_carry_the_state_and_print_the_loss_curve(folder, program):
    out = folder / f"{program}.npz"
    r = tool("ge-run", folder / program, "--inputs", folder / "in.npz", "--steps", 3, "-o", out, "--print")
    assert r.returncode == 0, r.stderr
    got = _outputs(out)
    np.testing.assert_array_equal(got["w"], W0 + 3)
    lines = [line for line in r.stdout.splitlines() if line.startswith("step ")]
    want = [f"step {k}: loss {float(np.sum((W0 + k) ** 2)):.6g}" for k in (1, 2, 3)]
    assert lines == want


def test_saved_state_resumes_where_it_stopped(folder, tmp_path):
    state = tmp_path / "state.safetensors"
    r = tool("ge-run", folder / "step.mlir", "--inputs", folder / "in.npz", "--steps", 2, "--save-state", state)
    assert r.returncode == 0, r.stderr
    np.testing.assert_array_equal(np.asarray(WeightStore(state)["w"]), W0 + 2)
    out = tmp_path / "out.npz"
    r = tool("ge-run", folder / "step.mlir", "--inputs", folder / "in.npz", "--load-state", state, "-o", out)
    assert r.returncode == 0, r.stderr
    np.testing.assert_array_equal(_outputs(out)["w"], W0 + 3)
    assert np.asarray(WeightStore(folder / "w.safetensors")["w"]).tolist() == W0.tolist()  # the sidecar is untouched


@pytest.mark.parametrize(
    ("state", "message"),
    [
        ({"w": np.zeros(4, np.float32)}, "state 'w' is float32[4], the step's variable is f32[3]"),
        ({"w": np.zeros(3, np.float64)}, "state 'w' is float64[3], the step's variable is f32[3]"),
        ({"v": np.zeros(3, np.float32)}, "state 'v' is not a variable the step writes"),
        ({}, "the file has no state 'w'"),
    ],
)
def test_a_state_file_that_does_not_fit_is_one_line(folder, tmp_path, state, message):
    path = tmp_path / "bad.safetensors"
    save(path, state)
    out = tmp_path / "out.npz"
    r = tool("ge-run", folder / "step.mlir", "--inputs", folder / "in.npz", "--load-state", path, "-o", out)
    assert r.returncode == 1
    assert r.stderr.strip() == f"ge-run: error: {path}: {message}"
    assert not out.exists()


def test_a_graph_without_state_refuses_the_training_options(folder, tmp_path):
    plain = tmp_path / "plain.mlir"
    plain.write_text(STEP.replace(', ge.state = "w"', ""))
    (tmp_path / "w.safetensors").write_bytes((folder / "w.safetensors").read_bytes())
    for option in (["--steps", "2"], ["--save-state", tmp_path / "s.safetensors"]):
        r = tool("ge-run", plain, "--inputs", folder / "in.npz", *option)
        assert r.returncode == 1
        assert r.stderr.strip() == (
            f"ge-run: error: {plain}: {option[0]} needs a training step "
            "(outputs marked ge.state, as apply-optimizer makes them)"
        )
    assert not (tmp_path / "s.safetensors").exists()


def test_steps_must_be_positive(folder):
    r = tool("ge-run", folder / "step.mlir", "--inputs", folder / "in.npz", "--steps", 0)
    assert r.returncode == 1
    assert "'0' is not a positive integer" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_state_is_written_only_when_the_run_succeeds(folder, tmp_path):
    """A failing run (inputs of the wrong shape) writes neither the outputs nor the state."""
    np.savez(tmp_path / "bad.npz", x=np.ones(4, np.float32))
    state = tmp_path / "s.safetensors"
    r = tool("ge-run", folder / "step.mlir", "--inputs", tmp_path / "bad.npz", "--save-state", state)
    assert r.returncode == 1
    assert not state.exists()
