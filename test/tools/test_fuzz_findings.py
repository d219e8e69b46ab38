"""Findings of the contract fuzzer (test/fuzz): inputs that are the user's mistake and must end in
one line with exit 1, not an internal error (exit 2)."""

import numpy as np

from ge.tools import ge_opt, ge_run
from ge.tools.common import parse_module

LOWERED = """func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> attributes {stream.count = 1 : i64} {
  %0 = task.kernel "/a" (%x) : (tensor<2xf32>) -> tensor<2xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "relu", stream = 0 : i64} {
  ^bb0(%a: tensor<2xf32>):
    %r = ge.relu %a : (tensor<2xf32>) -> tensor<2xf32>
    task.yield %r : tensor<2xf32>
  }
  func.return %0 : tensor<2xf32>
}
"""

GATHER = """func.func @main(%d: tensor<5xf32> {ge.name = "d"}, %i: tensor<2xi64> {ge.name = "i"}) -> tensor<2xf32> {
  %0 = ge.gather %d, %i : (tensor<5xf32>, tensor<2xi64>) -> tensor<2xf32> loc("/gather")
  func.return %0 : tensor<2xf32>
}
"""


def exit_code(main, *args) -> int:
    try:
        main([str(a) for a in args])
    except SystemExit as e:
        return e.code
    return 0


def test_graph_passes_refuse_a_lowered_module(tmp_path, capsys):
    (tmp_path / "m.mlir").write_text(LOWERED)
    for pipeline in ("ge-optimize", "fuse-ops"):
        assert exit_code(ge_opt.main, tmp_path / "m.mlir", "-p", pipeline) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert err == [
            f"ge-opt: error: {pipeline}: the module is already lowered (task.kernel found); "
            "graph passes run before lower-to-tasks"
        ], err


def test_gather_index_out_of_range_at_run_time(tmp_path, capsys):
    (tmp_path / "m.mlir").write_text(GATHER)
    np.savez(tmp_path / "in.npz", d=np.arange(5, dtype=np.float32), i=np.array([1, -9], np.int64))
    assert exit_code(ge_run.main, tmp_path / "m.mlir", "--inputs", tmp_path / "in.npz") == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "/gather" in err[0] and "index -9 is out of range for axis 0 of size 5" in err[0], err
    np.savez(tmp_path / "ok.npz", d=np.arange(5, dtype=np.float32), i=np.array([1, -5], np.int64))
    assert exit_code(ge_run.main, tmp_path / "m.mlir", "--inputs", tmp_path / "ok.npz", "--print") == 0


def test_an_overflowing_float_literal_is_one_line_without_a_warning(recwarn):
    text = "func.func @main() {\n  %0 = ge.constant dense<[1.0e39]> : tensor<1xf32>\n  func.return\n}"
    try:
        parse_module(text, "t.mlir")
    except Exception as e:
        assert "t.mlir:2" in str(e) and "out of range for type f32" in str(e), e
    else:
        raise AssertionError("1.0e39 was accepted as f32")
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


# -- the 10,000-case run on main (ge-run, ge-translate) ------------------------------------------------


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.endswith("\n") and err.count("\n") == 1, repr(err)
    return err.strip()


NEWLINE_NAME = """func.func @main(%x: tensor<2xf32> {ge.name = "x\\ny"}) -> tensor<2xf32> {
  %0 = ge.relu %x : (tensor<2xf32>) -> tensor<2xf32> loc("/re\\nlu")
  func.return %0 : tensor<2xf32>
}
"""


def test_an_input_name_with_a_newline_stays_on_one_line(tmp_path, capsys):
    """ge-run 005373: the graph input list split the message at a name's newline."""
    (tmp_path / "m.mlir").write_text(NEWLINE_NAME)
    np.savez(tmp_path / "in.npz", x=np.zeros(2, np.float32))
    assert exit_code(ge_run.main, tmp_path / "m.mlir", "--inputs", tmp_path / "in.npz") == 1
    assert one_error_line(capsys).endswith("input 'x' is not an input of the graph (inputs: 'x\\ny')")
    np.savez(tmp_path / "in.npz", **{"x\ny": np.zeros(3, np.float32)})
    assert exit_code(ge_run.main, tmp_path / "m.mlir", "--inputs", tmp_path / "in.npz") == 1
    assert "input 'x\\ny' has shape [3]" in one_error_line(capsys)


RELU2 = """func.func @main(%x: tensor<2xi64> {ge.name = "x"}) -> tensor<2xi64> {
  %0 = ge.relu %x : (tensor<2xi64>) -> tensor<2xi64> loc("/relu")
  func.return %0 : tensor<2xi64>
}
"""


def npz_with_header(path, header: bytes) -> None:
    """An .npz whose member x.npy has this header dict text (padded as numpy pads it) and 16 data bytes."""
    import zipfile

    header = header + b" " * (117 - len(header)) + b"\n"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("x.npy", b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + bytes(16))


def test_an_npy_header_that_is_not_a_literal(tmp_path, capsys):
    """ge-run 001262, 002846, 003164: an unclosed bracket in the header made numpy's tokenizer raise
    TokenError, an internal error; a bad descr was already a ValueError with numpy's reason."""
    (tmp_path / "m.mlir").write_text(RELU2)
    run = (ge_run.main, tmp_path / "m.mlir", "--inputs", tmp_path / "in.npz")
    npz_with_header(tmp_path / "in.npz", b"{'descr': '<i8', 'fortran_order': False, 'shape': (2,, }")
    assert exit_code(*run) == 1
    assert one_error_line(capsys).endswith("in.npz: input 'x': not an .npy array (malformed header)")
    npz_with_header(tmp_path / "in.npz", b"{'descr': 'nonsense', 'fortran_order': False, 'shape': (2,), }")
    assert exit_code(*run) == 1
    assert one_error_line(capsys).endswith(
        "input 'x': not an .npy array (malformed header: descr is not a valid dtype descriptor: 'nonsense')"
    )
    npz_with_header(tmp_path / "in.npz", b"{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }")
    assert exit_code(*run, "--print") == 0  # the control: the same member with a good header runs


DYNAMIC_MATMUL = """func.func @main(%x: tensor<?x?xf32> {ge.name = "x"}, %w: tensor<{K}x8xf32> {ge.name = "w"}) -> tensor<?x8xf32> {
  %0 = ge.matmul %x, %w : (tensor<?x?xf32>, tensor<{K}x8xf32>) -> tensor<?x8xf32> loc("/fc/MatMul")
  func.return %0 : tensor<?x8xf32>
}
"""


def test_dynamic_dims_that_disagree_at_run_time(tmp_path, capsys):
    """ge-run 003787, 006320, 009436: `?` dims let inputs through whose sizes the kernel cannot
    combine; numpy's ValueError was an internal error, it is the inputs' fault."""
    (tmp_path / "m.mlir").write_text(DYNAMIC_MATMUL.replace("{K}", "16"))
    np.savez(tmp_path / "in.npz", x=np.zeros((2, 3), np.float32), w=np.zeros((16, 8), np.float32))
    assert exit_code(ge_run.main, tmp_path / "m.mlir", "--inputs", tmp_path / "in.npz") == 1
    line = one_error_line(capsys)
    assert "ge.matmul '/fc/MatMul': operand shapes [2, 3], [16, 8] do not fit together at run time" in line, line
    assert exit_code(ge_run.main, tmp_path / "m.mlir", "--random-inputs", "0") == 1  # `?` becomes 1
    assert "operand shapes [1, 1], [16, 8]" in one_error_line(capsys)
    np.savez(tmp_path / "in.npz", x=np.zeros((2, 16), np.float32), w=np.zeros((16, 8), np.float32))
    assert exit_code(ge_run.main, tmp_path / "m.mlir", "--inputs", tmp_path / "in.npz") == 0


def test_a_kernel_value_error_on_a_static_op_stays_internal():
    """The verifier checked a static op's shapes, so a kernel refusing them is a compiler bug: only ops
    with unknown dims turn a ValueError into the user's KernelError."""
    import pytest
    from xdsl.interpreter import Interpreter, impl, register_impls

    from ge.ge_dialects import ge
    from ge.interpreter.ge import GeFunctions, KernelError
    from ge.interpreter.kernels.checked import kernel_impl

    def refuse(op, operands):
        raise ValueError("shapes do not fit")

    @register_impls
    class RefusingMatMul(GeFunctions):
        run_matmul = impl(ge.MatMulOp)(kernel_impl(refuse))

    static = DYNAMIC_MATMUL.replace("{K}", "16").replace("?x?", "2x16").replace("?x8", "2x8")
    for text, error in ((static, ValueError), (DYNAMIC_MATMUL.replace("{K}", "16"), KernelError)):
        module = parse_module(text, "m.mlir")
        matmul = next(op for op in module.walk() if isinstance(op, ge.MatMulOp))
        interpreter = Interpreter(module)
        interpreter.register_implementations(RefusingMatMul())
        with pytest.raises(error, match="shapes do not fit"):
            interpreter.run_op(matmul, (np.zeros((2, 16), np.float32), np.zeros((16, 8), np.float32)))


RESHAPE_BY_INPUT = """func.func @main(%x: tensor<2x2x4xf32> {ge.name = "x"}, %s: tensor<2xi64> {ge.name = "s"}) -> tensor<4x4xf32> {
  %0 = ge.reshape %x, %s : (tensor<2x2x4xf32>, tensor<2xi64>) -> tensor<4x4xf32> loc("/reshape")
  func.return %0 : tensor<4x4xf32>
}
"""


def test_a_shape_operand_the_verifier_could_not_see(tmp_path, capsys):
    """ge-run 1876 (3000-case rerun): a lowered reshape's shape constant sits outside its task.kernel,
    so its verifier sees a block argument; [-1, -1] raised ShapeError in the kernel, an internal
    error. A shape given at run time is data: one line naming the op. The same ShapeError on an op
    whose operands are all visible constants stays a compiler bug."""
    import pytest

    from ge.ge_dialects import ge
    from ge.ge_dialects.ge.tensor_ops import ShapeError
    from ge.interpreter.ge import folding_interpreter

    (tmp_path / "m.mlir").write_text(RESHAPE_BY_INPUT)
    x = np.zeros((2, 2, 4), np.float32)
    np.savez(tmp_path / "in.npz", x=x, s=np.array([-1, -1], np.int64))
    assert exit_code(ge_run.main, tmp_path / "m.mlir", "--inputs", tmp_path / "in.npz") == 1
    assert one_error_line(capsys).endswith("ge.reshape '/reshape': shape [-1, -1] has more than one -1")
    np.savez(tmp_path / "in.npz", x=x, s=np.array([4, -1], np.int64))
    assert exit_code(ge_run.main, tmp_path / "m.mlir", "--inputs", tmp_path / "in.npz") == 0

    constant = RESHAPE_BY_INPUT.replace(', %s: tensor<2xi64> {ge.name = "s"}', "").replace(
        "  %0 = ge.reshape", "  %s = ge.constant dense<[4, 4]> : tensor<2xi64>\n  %0 = ge.reshape"
    )
    reshape = next(op for op in parse_module(constant, "m.mlir").walk() if isinstance(op, ge.ReshapeOp))
    with pytest.raises(ShapeError):
        folding_interpreter().run_op(reshape, (x, np.array([-1, -1], np.int64)))
