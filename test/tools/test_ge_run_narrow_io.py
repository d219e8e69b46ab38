"""Every narrow float type ge-run reads is also one it writes, in both file formats: bfloat16,
float8 e4m3 and float8 e5m2 go in and come out unchanged (bit for bit), from files written the
way users write them (`np.savez` stores them as raw void arrays, safetensors natively)."""

import ml_dtypes
import numpy as np
import pytest
from test_errors import tool

from ge.frontend.sidecar import WeightStore, save

TYPES = {
    "a": ("bf16", ml_dtypes.bfloat16),
    "b": ("f8E4M3FN", ml_dtypes.float8_e4m3fn),
    "c": ("f8E5M2", ml_dtypes.float8_e5m2),
}
IR = """builtin.module {{
  func.func @main({args}) -> ({results}) {{
{body}
    func.return {returns} : {types}
  }}
}}
"""


def identity_ir() -> str:
    """out_<name> = <name> for each narrow type, shape [5]: each passes through a cast to f32 and
    back (exact for these values), so the values are computed by the interpreter, not just copied."""
    args = ", ".join(f'%{n}: tensor<5x{t}> {{ge.name = "{n}"}}' for n, (t, _) in TYPES.items())
    results = ", ".join(f'tensor<5x{t}> {{ge.name = "out_{n}"}}' for n, (t, _) in TYPES.items())
    body = "\n".join(
        f"    %w{i} = ge.cast %{n} {{to = 1 : i64}} : (tensor<5x{t}>) -> tensor<5xf32>\n"
        f"    %r{i} = ge.cast %w{i} {{to = {code} : i64}} : (tensor<5xf32>) -> tensor<5x{t}>"
        for i, (n, (t, _), code) in enumerate(zip(TYPES, TYPES.values(), (16, 17, 19)))
    )
    returns = ", ".join(f"%r{i}" for i in range(len(TYPES)))
    types = ", ".join(f"tensor<5x{t}>" for t, _ in TYPES.values())
    return IR.format(args=args, results=results, body=body, returns=returns, types=types)


# Values that exercise sign, subnormals and the types' extremes, all exactly representable.
VALUES = {
    "a": np.array([1.5, -0.0078125, 3.0e38, -1.0e-40, 7], ml_dtypes.bfloat16),
    "b": np.array([448, -0.001953125, 0.5, -3, 0], ml_dtypes.float8_e4m3fn),
    "c": np.array([57344, -1.52587890625e-05, 0.75, -2, -57344], ml_dtypes.float8_e5m2),
}


def read_back(path, name, dtype) -> np.ndarray:
    if path.suffix == ".safetensors":
        return np.array(WeightStore(path)[name])
    array = np.load(path)[name]
    assert array.dtype.kind == "V" and array.dtype.itemsize == np.dtype(dtype).itemsize  # numpy can read it
    return array.view(dtype)


@pytest.mark.parametrize("given", ["in.npz", "in.safetensors"])
@pytest.mark.parametrize("written", ["out.npz", "out.safetensors"])
def test_bf16_and_float8_inputs_and_outputs_both_formats(tmp_path, given, written):
    (tmp_path / "m.mlir").write_text(identity_ir())
    np.savez(tmp_path / "in.npz", **VALUES)
    save(tmp_path / "in.safetensors", VALUES)
    r = tool("ge-run", tmp_path / "m.mlir", "--inputs", tmp_path / given, "-o", tmp_path / written)
    assert r.returncode == 0, r.stderr
    for name, (_, dtype) in TYPES.items():
        got = read_back(tmp_path / written, f"out_{name}", dtype)
        assert got.dtype == np.dtype(dtype)
        bits = np.uint8 if got.itemsize == 1 else np.uint16
        np.testing.assert_array_equal(got.view(bits), VALUES[name].view(bits))


def test_a_void_array_of_the_wrong_size_is_refused(tmp_path):
    """Raw bytes are read by the declared type only when their size fits it."""
    (tmp_path / "m.mlir").write_text(identity_ir())
    arrays = dict(VALUES, a=VALUES["b"].view(np.void(1).dtype))  # 1-byte items where bf16 needs 2
    np.savez(tmp_path / "in.npz", **arrays)
    r = tool("ge-run", tmp_path / "m.mlir", "--inputs", tmp_path / "in.npz", "-o", tmp_path / "o.npz")
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "'a'" in r.stderr
    assert not (tmp_path / "o.npz").exists()
