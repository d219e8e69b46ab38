"""Every user mistake ends in one line on stderr, a non-zero exit, no traceback, no output file."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from tool_server import run as run_tool

GOOD_IR = """builtin.module attributes {ge.weights = "w.safetensors"} {
  func.func @main(%x: tensor<2x4xf32> {ge.name = "x"}) -> (tensor<2x4xf32> {ge.name = "y"}) {
    %w = ge.constant #ge.weight<"w"> : tensor<4xf32>
    %0 = ge.add %x, %w : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32> loc("/add")
    func.return %0 : tensor<2x4xf32>
  }
}
"""


tool = run_tool  # the CLI contract: exit code and stderr, each call a process of its own (a fork)


def assert_one_line_error(result, *needles):
    assert result.returncode != 0, result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def small_model(op_type="Relu", **attrs):
    graph = helper.make_graph(
        [helper.make_node(op_type, ["x"], ["y"], name="/the/node", **attrs)],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.fixture
def workdir(tmp_path):
    from ge.frontend.sidecar import save

    (tmp_path / "model.mlir").write_text(GOOD_IR)
    save(tmp_path / "w.safetensors", {"w": np.arange(4, dtype=np.float32)})
    np.savez(tmp_path / "in.npz", x=np.ones((2, 4), np.float32))
    return tmp_path


def test_good_run_writes_outputs(workdir):
    r = tool("ge-run", workdir / "model.mlir", "--inputs", workdir / "in.npz", "-o", workdir / "out.npz")
    assert r.returncode == 0, r.stderr
    np.testing.assert_array_equal(np.load(workdir / "out.npz")["y"], np.ones((2, 4)) + np.arange(4))


def test_truncated_onnx(tmp_path):
    data = small_model().SerializeToString()
    (tmp_path / "m.onnx").write_bytes(data[: len(data) // 2])
    r = tool("ge-translate", "--import-onnx", tmp_path / "m.onnx", "-o", tmp_path / "m.mlir")
    assert_one_line_error(r, "m.onnx", "not a valid ONNX model")
    assert not (tmp_path / "m.mlir").exists()


def test_unsupported_op(tmp_path):
    onnx.save(small_model("StringNormalizer"), tmp_path / "m.onnx")
    r = tool("ge-translate", "--import-onnx", tmp_path / "m.onnx", "-o", tmp_path / "m.mlir")
    assert_one_line_error(r, "'/the/node'", "StringNormalizer", "opset 17", "not supported")
    assert not (tmp_path / "m.mlir").exists()


def test_unsupported_op_in_ge_run(tmp_path):
    onnx.save(small_model("StringNormalizer"), tmp_path / "m.onnx")
    assert_one_line_error(tool("ge-run", tmp_path / "m.onnx", "--random-inputs", 0), "StringNormalizer")


@pytest.mark.parametrize(
    "value, needle",
    [
        (np.ones((2, 5), np.float32), "has shape [2, 5]"),
        (np.ones((2, 4), np.float64), "has dtype float64"),
    ],
)
def test_wrong_input_shape_or_dtype(workdir, value, needle):
    np.savez(workdir / "bad.npz", x=value)
    r = tool("ge-run", workdir / "model.mlir", "--inputs", workdir / "bad.npz", "-o", workdir / "out.npz")
    assert_one_line_error(r, "input 'x'", needle)
    assert not (workdir / "out.npz").exists()


def test_missing_input(workdir):
    np.savez(workdir / "empty.npz", z=np.ones(1))
    r = tool("ge-run", workdir / "model.mlir", "--inputs", workdir / "empty.npz", "-o", workdir / "out.npz")
    assert_one_line_error(r, "'z' is not an input")
    np.savez(workdir / "none.npz")
    r = tool("ge-run", workdir / "model.mlir", "--inputs", workdir / "none.npz", "-o", workdir / "out.npz")
    assert_one_line_error(r, "input 'x' is missing")
    assert not (workdir / "out.npz").exists()


def test_malformed_ir(workdir):
    (workdir / "bad.mlir").write_text(GOOD_IR.replace("ge.add %x, %w", "ge.add %x %w"))
    for r in (
        tool("ge-opt", workdir / "bad.mlir", "-o", workdir / "out.mlir"),
        tool("ge-run", workdir / "bad.mlir", "--random-inputs", 0),
    ):
        assert_one_line_error(r, "bad.mlir:4:")
    assert not (workdir / "out.mlir").exists()


def test_out_of_range_literal(workdir):
    (workdir / "bad.mlir").write_text(
        GOOD_IR.replace(
            '%w = ge.constant #ge.weight<"w"> : tensor<4xf32>',
            '%i = ge.constant dense<[300]> : tensor<1xi8>\n    %w = ge.constant #ge.weight<"w"> : tensor<4xf32>',
        )
    )
    for r in (
        tool("ge-opt", workdir / "bad.mlir", "-o", workdir / "out.mlir"),
        tool("ge-run", workdir / "bad.mlir", "--random-inputs", 0),
    ):
        assert_one_line_error(r, "bad.mlir", "300 is out of range for type i8")
    assert not (workdir / "out.mlir").exists()


def test_module_without_main(workdir):
    (workdir / "f.mlir").write_text(GOOD_IR.replace("@main", "@other"))
    assert_one_line_error(tool("ge-run", workdir / "f.mlir", "--random-inputs", 0), "f.mlir", "no func.func @main")


SCALAR_ARGUMENT = GOOD_IR.replace('%x: tensor<2x4xf32> {ge.name = "x"}', '%x: tensor<2x4xf32> {ge.name = "x"}, %n: i32')
SCALAR_RESULT = """func.func private @scalar() -> f32
func.func @main(%x: tensor<2x4xf32>) -> (tensor<2x4xf32>, f32) {
  %c = func.call @scalar() : () -> f32
  func.return %x, %c : tensor<2x4xf32>, f32
}
"""
SIGNATURE_CASES = [
    (SCALAR_ARGUMENT, "@main's argument 'arg1' has type i32"),
    (SCALAR_RESULT, "@main's result 'result1' has type f32"),
]


@pytest.mark.parametrize("text, named", SIGNATURE_CASES)
@pytest.mark.parametrize(
    "command",
    [
        ["ge-run", "f.mlir", "--random-inputs", "0"],
        ["ge-run", "f.mlir", "--inputs", "in.npz"],
        ["ge-opt", "f.mlir", "-p", "lower-to-tasks"],
        ["ge-opt", "f.mlir", "-p", "simplify", "--verify-numerics"],
    ],
)
def test_main_signature_must_be_tensors(workdir, text, named, command):
    """A non-tensor in main's signature is the user's mistake, named, not an internal error."""
    (workdir / "f.mlir").write_text(text)
    r = tool(command[0], *[workdir / a if a.endswith((".mlir", ".npz")) else a for a in command[1:]])
    assert r.returncode == 1
    assert_one_line_error(r, named, "a graph takes and returns tensors only")


def test_main_signature_check_is_what_catches_it(workdir, run_main, monkeypatch):
    """Mutation: without the signature check, ge-run fails with an internal error (exit 2), which the
    test above would reject."""
    import ge.interpreter.runner as runner
    from ge.tools import ge_run

    (workdir / "f.mlir").write_text(SCALAR_ARGUMENT)
    monkeypatch.setattr(runner, "signature_problem", lambda fn: None)
    code, _, err = run_main(ge_run.main, [workdir / "f.mlir", "--random-inputs", "0"])
    assert code == 2 and "internal error" in err


def test_verifier_violation(workdir):
    bad = GOOD_IR.replace("tensor<4xf32>) -> tensor<2x4xf32> loc", "tensor<4xf32>) -> tensor<2x5xf32> loc")
    (workdir / "bad.mlir").write_text(
        bad.replace("func.return %0 : tensor<2x4xf32>", "func.return %0 : tensor<2x5xf32>").replace(
            '(tensor<2x4xf32> {ge.name = "y"})', '(tensor<2x5xf32> {ge.name = "y"})'
        )
    )
    r = tool("ge-opt", workdir / "bad.mlir", "-o", workdir / "out.mlir")
    assert_one_line_error(r, "ge.add '/add'", "result #0 has type tensor<2x5xf32>")
    assert not (workdir / "out.mlir").exists()


def test_sidecar_outside_folder(workdir):
    (workdir / "escape.mlir").write_text(GOOD_IR.replace('"w.safetensors"', '"../w.safetensors"'))
    r = tool("ge-run", workdir / "escape.mlir", "--inputs", workdir / "in.npz", "-o", workdir / "out.npz")
    assert_one_line_error(r, "'../w.safetensors'", "inside")
    assert not (workdir / "out.npz").exists()


def test_missing_sidecar_key(workdir):
    (workdir / "nokey.mlir").write_text(GOOD_IR.replace('#ge.weight<"w">', '#ge.weight<"v">'))
    r = tool("ge-run", workdir / "nokey.mlir", "--inputs", workdir / "in.npz", "-o", workdir / "out.npz")
    assert_one_line_error(r, "weight 'v' is not in the weights sidecar w.safetensors")
    assert not (workdir / "out.npz").exists()


def test_unknown_pass_and_option(workdir):
    assert_one_line_error(tool("ge-opt", workdir / "model.mlir", "-p", "no-such-pass"), "no-such-pass")
    assert_one_line_error(tool("ge-opt", workdir / "model.mlir", "-p", "cse{bogus=1}"), "bogus")


def test_external_data_outside_folder(tmp_path):
    model = small_model("Add")
    model.graph.node[0].input.append("w")
    w = helper.make_tensor("w", TensorProto.FLOAT, [4], np.zeros(4, np.float32))
    w.data_location = TensorProto.EXTERNAL
    w.ClearField("float_data")
    w.external_data.add(key="location", value="../secret.bin")
    model.graph.initializer.append(w)
    (tmp_path / "m.onnx").write_bytes(model.SerializeToString())
    r = tool("ge-translate", "--import-onnx", tmp_path / "m.onnx", "-o", tmp_path / "m.mlir")
    assert_one_line_error(r, "external data of 'w'", "'../secret.bin'")
    assert not (tmp_path / "m.mlir").exists()
