"""ge-run's inputs and outputs in .npz and .safetensors: the narrow types (bfloat16, float8) pass the
tool boundary both ways, and a bad safetensors input is one line naming the file and the reason."""

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from test_errors import assert_one_line_error, tool

from ge.frontend.sidecar import WeightStore, save

NARROW_IR = """builtin.module {
  func.func @main(%x: tensor<4xbf16> {ge.name = "x"}, %z: tensor<4xf8E4M3FN> {ge.name = "z"})
      -> (tensor<4xf8E5M2> {ge.name = "y"}, tensor<4xf32> {ge.name = "w"}) {
    %0 = ge.cast %x {to = 19 : i64} : (tensor<4xbf16>) -> tensor<4xf8E5M2>
    %1 = ge.cast %z {to = 1 : i64} : (tensor<4xf8E4M3FN>) -> tensor<4xf32>
    func.return %0, %1 : tensor<4xf8E5M2>, tensor<4xf32>
  }
}
"""
BACK_IR = """builtin.module {
  func.func @main(%y: tensor<4xf8E5M2> {ge.name = "y"}, %w: tensor<4xf32> {ge.name = "w"})
      -> (tensor<4xf32> {ge.name = "v"}) {
    %0 = ge.cast %y {to = 1 : i64} : (tensor<4xf8E5M2>) -> tensor<4xf32>
    %1 = ge.add %0, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    func.return %1 : tensor<4xf32>
  }
}
"""
X = np.array([1, 2, 3.5, -448], ml_dtypes.bfloat16)
Z = np.array([0.5, 1, 2, -3], ml_dtypes.float8_e4m3fn)


@pytest.fixture
def narrow(tmp_path):
    (tmp_path / "m.mlir").write_text(NARROW_IR)
    (tmp_path / "back.mlir").write_text(BACK_IR)
    save(tmp_path / "in.safetensors", {"x": X, "z": Z})
    np.savez(tmp_path / "in.npz", x=X, z=Z)
    return tmp_path


def read(path: Path, name: str, dtype) -> np.ndarray:
    if path.suffix == ".safetensors":
        return np.array(WeightStore(path)[name])
    array = np.load(path)[name]  # numpy reads the file back: the point of writing raw bytes
    return array.view(dtype) if array.dtype.kind == "V" else array


@pytest.mark.parametrize("given", ["in.npz", "in.safetensors"])
@pytest.mark.parametrize("written", ["out.npz", "out.safetensors"])
def test_narrow_types_cross_the_tool_boundary(narrow, given, written):
    r = tool("ge-run", narrow / "m.mlir", "--inputs", narrow / given, "-o", narrow / written)
    assert r.returncode == 0, r.stderr
    y = read(narrow / written, "y", ml_dtypes.float8_e5m2)
    assert y.dtype == ml_dtypes.float8_e5m2
    np.testing.assert_array_equal(y.view(np.uint8), X.astype(ml_dtypes.float8_e5m2).view(np.uint8))
    np.testing.assert_array_equal(read(narrow / written, "w", np.float32), Z.astype(np.float32))


@pytest.mark.parametrize("written", ["out.npz", "out.safetensors"])
def test_an_output_file_is_the_next_graphs_input(narrow, written):
    assert tool("ge-run", narrow / "m.mlir", "--inputs", narrow / "in.npz", "-o", narrow / written).returncode == 0
    r = tool("ge-run", narrow / "back.mlir", "--inputs", narrow / written, "-o", narrow / "v.npz")
    assert r.returncode == 0, r.stderr
    want = X.astype(ml_dtypes.float8_e5m2).astype(np.float32) + Z.astype(np.float32)
    np.testing.assert_array_equal(np.load(narrow / "v.npz")["v"], want)


BAD_INPUTS = {
    "wrong dtype": ({"x": X.astype(np.float32), "z": Z}, "input 'x' has dtype float32, the graph expects bf16"),
    "wrong shape": ({"x": X[:3], "z": Z}, "input 'x' has shape [3]"),
    "missing": ({"x": X}, "input 'z' is missing"),
    "extra": ({"x": X, "z": Z, "q": Z}, "input 'q' is not an input of the graph"),
}


@pytest.mark.parametrize("case", BAD_INPUTS)
def test_a_safetensors_input_that_does_not_fit_is_one_line(narrow, case):
    arrays, needle = BAD_INPUTS[case]
    save(narrow / "bad.safetensors", arrays)
    r = tool("ge-run", narrow / "m.mlir", "--inputs", narrow / "bad.safetensors", "-o", narrow / "o.safetensors")
    assert_one_line_error(r, "bad.safetensors", needle)
    assert not (narrow / "o.safetensors").exists()


def test_a_corrupt_safetensors_input_is_one_line(narrow):
    data = (narrow / "in.safetensors").read_bytes()
    (narrow / "cut.safetensors").write_bytes(data[:20])
    r = tool("ge-run", narrow / "m.mlir", "--inputs", narrow / "cut.safetensors", "-o", narrow / "o.npz")
    assert_one_line_error(r, "inputs", "cut.safetensors", "is not a valid safetensors file")
    assert not (narrow / "o.npz").exists()
