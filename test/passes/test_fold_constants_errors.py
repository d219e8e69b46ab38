"""fold-constants tells a refused fold from a compiler bug: the errors a shape function or a kernel
declares for values that cannot be folded (`CANNOT_INFER`, `CANNOT_EVALUATE`) are `rejected`
remarks; any other exception is a `PassInternalError` naming the op, which ge-opt reports as an
internal error (exit code 2, one line), never as an op that was merely not folded."""

from __future__ import annotations

import pytest
from xdsl.utils.exceptions import VerifyException

from ge.ge_dialects import ge
from ge.interpreter.kernels import DataError, parallel
from ge.passes import remarks
from ge.passes.fold_constants import ConstantInferArgs, FoldConstantsPass
from ge.passes.pipeline import PassInternalError
from ge.tools import ge_opt
from ge.tools.common import parse_module

IR = """func.func @main() -> tensor<4xf32> {
  %a = ge.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %b = ge.constant dense<[1.0, 1.0, 1.0, 1.0]> : tensor<4xf32>
  %0 = ge.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("/add")
  func.return %0 : tensor<4xf32>
}
"""


def _raises(exc: Exception):
    def broken(*args, **kwargs):
        raise exc

    return broken


def fold(text: str = IR):
    module = parse_module(text, "m.mlir")
    with remarks.collected() as found:
        FoldConstantsPass().apply(None, module)
    names = [op.name for op in module.walk()]
    return names, [r for r in found if r.kind == "rejected"]


def ge_opt_fold(tmp_path, capsys) -> tuple[int, str]:
    source = tmp_path / "m.mlir"
    source.write_text(IR)
    out = tmp_path / "out.mlir"
    try:
        ge_opt.main([str(source), "-p", "fold-constants", "-o", str(out)])
        code = 0
    except SystemExit as e:
        code = int(e.code or 0)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 0 or not out.exists()
    return code, "\n".join(err)


def test_the_add_folds():
    names, rejected = fold()
    assert "ge.add" not in names and not rejected


# -- kernels -------------------------------------------------------------------------------------
def test_a_kernel_bug_is_an_internal_error_naming_the_op(monkeypatch):
    """Mutation of ge.add's kernel: its elementwise loop raises ZeroDivisionError."""
    monkeypatch.setattr(parallel, "elementwise", _raises(ZeroDivisionError("division by zero")))
    with pytest.raises(
        PassInternalError, match=r"fold-constants: the kernel of ge.add '/add' raised ZeroDivisionError"
    ):
        fold()


def test_ge_opt_reports_a_kernel_bug_with_exit_code_2(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(parallel, "elementwise", _raises(ZeroDivisionError("division by zero")))
    code, err = ge_opt_fold(tmp_path, capsys)
    assert code == 2, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert err.startswith(
        "ge-opt: internal error: PassInternalError: fold-constants: the kernel of ge.add '/add' "
        "raised ZeroDivisionError: division by zero (at test/passes/test_fold_constants_errors.py:"
    ), err


def test_a_declared_kernel_refusal_is_a_remark(monkeypatch):
    """A DataError (the values make the op undefined) becomes a KernelError: not folded, a remark."""
    monkeypatch.setattr(parallel, "elementwise", _raises(DataError("index 5 is out of range")))
    names, rejected = fold()
    assert "ge.add" in names
    (remark,) = rejected
    assert remark.reason == "ge.add '/add': evaluation failed: index 5 is out of range"


def test_ge_opt_keeps_a_refused_fold_and_exits_0(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(parallel, "elementwise", _raises(DataError("index 5 is out of range")))
    code, err = ge_opt_fold(tmp_path, capsys)
    assert code == 0, err
    assert "ge.add" in (tmp_path / "out.mlir").read_text()


def test_a_gather_out_of_range_is_a_remark():
    names, rejected = fold(
        """func.func @main() -> tensor<1xf32> {
  %d = ge.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %i = ge.constant dense<[5]> : tensor<1xi64>
  %g = ge.gather %d, %i : (tensor<2xf32>, tensor<1xi64>) -> tensor<1xf32> loc("/oob")
  func.return %g : tensor<1xf32>
}
"""
    )
    assert "ge.gather" in names
    (remark,) = rejected
    assert "evaluation failed: index 5 is out of range" in remark.reason


# -- shape functions -----------------------------------------------------------------------------
def _infer_failing_on_constants(monkeypatch, exc: Exception) -> None:
    """ge.add's shape function raises `exc` when it sees the constants' values (fold-constants'
    ConstantInferArgs), and works as before for the verifier."""
    infer = ge.AddOp.infer.__func__

    def patched(cls, args):
        if isinstance(args, ConstantInferArgs):
            raise exc
        return infer(cls, args)

    monkeypatch.setattr(ge.AddOp, "infer", classmethod(patched))


def test_a_shape_function_bug_is_an_internal_error(monkeypatch):
    _infer_failing_on_constants(monkeypatch, TypeError("'NoneType' object is not subscriptable"))
    with pytest.raises(PassInternalError, match=r"the shape function of ge.add '/add' raised TypeError"):
        fold()


def test_a_shape_rule_the_values_break_is_a_remark(monkeypatch):
    _infer_failing_on_constants(monkeypatch, VerifyException("ge.add '/add': shapes do not broadcast"))
    names, rejected = fold()
    assert "ge.add" in names
    (remark,) = rejected
    assert "shape function failed" in remark.reason
