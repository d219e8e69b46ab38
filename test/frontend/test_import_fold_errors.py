"""Import-time folding and source verification tell the model's errors from compiler bugs: a kernel's
KernelError on the constant inputs is the model's error (OnnxImportError naming the node); any
other exception from a kernel or a verifier propagates, for the tools' internal-error report."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from ge.frontend.onnx_importer import import_model
from ge.frontend.onnx_ops import OnnxImportError
from ge.ge_dialects import ge
from ge.ge_dialects.ge import base
from ge.interpreter.kernels import parallel
from ge.tools.common import UserError, parse_module


def constant_add_model():
    """y = x + (a + b), with a + b over two Constant nodes (not parameters): folded at import."""
    a = numpy_helper.from_array(np.ones(4, np.float32), "a")
    b = numpy_helper.from_array(np.full(4, 2, np.float32), "b")
    nodes = [
        helper.make_node("Constant", [], ["a"], value=a),
        helper.make_node("Constant", [], ["b"], value=b),
        helper.make_node("Add", ["a", "b"], ["c"], name="/fold"),
        helper.make_node("Add", ["x", "c"], ["y"], name="/out"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def gather_out_of_range_model():
    data = numpy_helper.from_array(np.ones(2, np.float32), "d")
    index = numpy_helper.from_array(np.array([5], np.int64), "i")
    graph = helper.make_graph(
        [
            helper.make_node("Constant", [], ["d"], value=data),
            helper.make_node("Gather", ["d", "i"], ["y"], name="/oob"),
        ],
        "g",
        [],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
        initializer=[index],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _raises(exc: Exception):
    def broken(*args, **kwargs):
        raise exc

    return broken


def test_the_constant_add_folds():
    module, _ = import_model(constant_add_model())
    assert [op.name for op in module.walk()].count("ge.add") == 1


def test_a_kernel_bug_at_import_is_not_the_models_error(monkeypatch):
    """Mutation of ge.add's kernel: a ZeroDivisionError is not turned into "cannot be evaluated"."""
    monkeypatch.setattr(parallel, "elementwise", _raises(ZeroDivisionError("division by zero")))
    with pytest.raises(ZeroDivisionError):
        import_model(constant_add_model())


def test_a_kernel_refusal_at_import_is_the_models_error():
    with pytest.raises(OnnxImportError, match=r"node '/oob'.*cannot be evaluated on its constant inputs"):
        import_model(gather_out_of_range_model())


IR = """func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = ge.relu %x : (tensor<4xf32>) -> tensor<4xf32> loc("/relu")
  func.return %0 : tensor<4xf32>
}
"""


def test_a_verifier_bug_is_not_a_user_error(monkeypatch):
    """A shape function that raises TypeError is a compiler bug: parse_module does not name a line
    for it as if the IR were wrong."""
    monkeypatch.setattr(ge.ReluOp, "infer", classmethod(_raises(TypeError("'NoneType' object is not iterable"))))
    # a relu like this one verified earlier in the process would be skipped (GeOp.verify's memo)
    monkeypatch.setattr(base, "_VERIFIED_CONTENT", set())
    with pytest.raises(TypeError):
        parse_module(IR, "m.mlir")


def test_a_verifier_error_names_the_line():
    bad = IR.replace("tensor<4xf32>) -> tensor<4xf32> loc", "tensor<4xf32>) -> tensor<5xf32> loc").replace(
        "-> tensor<4xf32> {", "-> tensor<5xf32> {"
    )
    bad = bad.replace("func.return %0 : tensor<4xf32>", "func.return %0 : tensor<5xf32>")
    with pytest.raises(UserError, match=r"m.mlir:2:\d+: .*ge.relu '/relu'"):
        parse_module(bad, "m.mlir")
