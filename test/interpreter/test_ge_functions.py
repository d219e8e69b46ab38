"""The ge dialect's interpreter functions: one implementation per op, and compile-time folding
evaluating through them with the same checks as a run (the tensor-size limit)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, f32
from xdsl.interpreter import InterpreterFunctions, impl, register_impls
from xdsl.ir import Block, Region

from ge.ge_dialects import ge
from ge.ge_dialects.ge import GE
from ge.ge_dialects.ge.types import tensor
from ge.ge_dialects.limits import tensor_byte_limit
from ge.interpreter import ge as ge_functions
from ge.interpreter.control_flow import ControlFlowFunctions
from ge.interpreter.ge import GeFunctions, TensorTooLarge, check_one_kernel_each, folding_interpreter, op_types
from ge.interpreter.kernels.checked import kernel_impl
from ge.interpreter.kernels.elementwise import ElementwiseFunctions
from ge.passes import fold_constants, remarks
from ge.passes.fold_constants import FoldConstantsPass


def test_every_ge_op_has_an_implementation():
    """A kernel written but left out of its family's table would make folding skip the op."""
    missing = [op.name for op in GE.operations if op not in op_types(GeFunctions) | op_types(ControlFlowFunctions)]
    assert not missing, missing


def test_a_second_kernel_for_an_op_is_refused():
    @register_impls
    class AnotherAdd(InterpreterFunctions):
        run_add = impl(ge.AddOp)(kernel_impl(lambda op, ins: ins["a"] - ins["b"]))

    check_one_kernel_each((ElementwiseFunctions,))
    with pytest.raises(ValueError, match=r"ge.add has two kernels \(ElementwiseFunctions and AnotherAdd\)"):
        check_one_kernel_each((ElementwiseFunctions, AnotherAdd))


def add_of_constants(n: int) -> tuple[ModuleOp, ge.AddOp]:
    a = ge.ConstantOp.inline(np.ones(n, np.float32))
    b = ge.ConstantOp.inline(np.full(n, 2, np.float32))
    add = ge.AddOp.create({"a": a.output, "b": b.output}, name="/add")
    block = Block()
    block.add_ops([a, b, add, func.ReturnOp(add.results[0])])
    return ModuleOp([func.FuncOp("main", ([], [tensor(f32, (n,))]), Region(block))]), add


def test_folding_evaluates_with_the_tensor_size_limit():
    module, add = add_of_constants(4)
    values = (np.ones(4, np.float32), np.full(4, 2, np.float32))
    interpreter = folding_interpreter(module)
    np.testing.assert_array_equal(interpreter.run_op(add, values)[0], np.full(4, 3, np.float32))
    with tensor_byte_limit(15), pytest.raises(TensorTooLarge, match="needs 16 bytes, more than the limit of 15"):
        interpreter.run_op(add, values)


def test_fold_constants_keeps_an_op_whose_result_is_over_the_limit():
    module, _ = add_of_constants(4)
    with tensor_byte_limit(15), remarks.collected() as found:
        FoldConstantsPass().apply(None, module)
    assert "ge.add" in [op.name for op in module.walk()]
    (rejected,) = [r for r in found if r.kind == "rejected"]
    assert "evaluation failed" in rejected.reason and "more than the limit of 15 bytes" in rejected.reason
    FoldConstantsPass().apply(None, module)
    assert "ge.add" not in [op.name for op in module.walk()]


def test_fold_constants_builds_one_interpreter_per_run(monkeypatch):
    built = []

    def counting(module=None):
        built.append(module)
        return ge_functions.folding_interpreter(module)

    monkeypatch.setattr(fold_constants, "folding_interpreter", counting)
    module, add = add_of_constants(4)
    double = ge.AddOp.create({"a": add.results[0], "b": add.results[0]}, name="/double")
    module.body.block.first_op.body.block.insert_op_before(double, module.body.block.first_op.body.block.last_op)
    FoldConstantsPass().apply(None, module)
    assert built == [module]
    assert [op.name for op in module.walk()].count("ge.add") == 0
