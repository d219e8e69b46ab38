"""GeOp.verify skips an op unchanged since it last verified (pipelines re-verify the whole module
after every pass). Each test changes one thing the key covers after a successful
verification and shows the op is checked again; dropping that part of the key fails the test."""

import numpy as np
import pytest
from xdsl.dialects.builtin import DenseArrayBase, StringAttr, TensorType, f32, i64
from xdsl.ir import Operation
from xdsl.utils.exceptions import VerifyException

from ge.ge_dialects.ge.base import GeOp
from ge.ge_dialects.ge.constant import ConstantOp
from ge.tools.common import parse_module

TEXT = """
func.func @main(%x: tensor<2x3x4xf32>) -> (tensor<4x6xf32>, tensor<4x3x2xf32>) {
  %shape = ge.constant dense<[4, -1]> : tensor<2xi64>
  %r = ge.reshape %x, %shape : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<4x6xf32>
  %t = ge.transpose %x : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  func.return %r, %t : tensor<4x6xf32>, tensor<4x3x2xf32>
}
"""


def _ops():
    module = parse_module(TEXT, "memo.mlir")
    ops = {op.name: op for op in module.walk() if isinstance(op, GeOp)}
    module.verify()
    return module, ops


def _count_verifications(monkeypatch) -> list[str]:
    """The names of the ops xDSL's own verification runs on from now on."""
    calls: list[str] = []
    original = Operation.verify
    monkeypatch.setattr(Operation, "verify", lambda self, *a: (calls.append(self.name), original(self, *a))[1])
    return calls


def test_unchanged_ops_are_not_verified_again(monkeypatch):
    module, _ = _ops()
    calls = _count_verifications(monkeypatch)
    module.verify()
    assert [c for c in calls if c.startswith("ge.")] == []


def test_a_changed_result_type_is_verified_again():
    module, ops = _ops()
    ops["ge.transpose"].results[0]._type = TensorType(f32, [2, 3, 4])  # as in-place type rewrites do
    with pytest.raises(VerifyException, match="operands imply"):
        module.verify()


def test_a_changed_property_is_verified_again():
    module, ops = _ops()
    ops["ge.transpose"].properties["perm"] = DenseArrayBase.from_list(i64, [0, 2, 1])
    with pytest.raises(VerifyException, match="operands imply"):
        module.verify()


def test_a_changed_inline_constant_operand_is_verified_again():
    """The reshape's result follows its shape constant's value, held in the constant's properties."""
    module, ops = _ops()
    new_value = ConstantOp.inline(np.array([6, -1], dtype=np.int64)).properties["value"]
    ops["ge.constant"].properties["value"] = new_value
    with pytest.raises(VerifyException, match="operands imply"):
        module.verify()


def test_a_changed_operand_is_verified_again():
    module, ops = _ops()
    other = ConstantOp.inline(np.zeros((3, 3), dtype=np.float32))
    ops["ge.transpose"].parent.insert_op_before(other, ops["ge.transpose"])
    ops["ge.transpose"].operands = [other.results[0]]
    with pytest.raises(VerifyException, match="operands imply"):
        module.verify()


def test_an_attribute_change_reverifies(monkeypatch):
    module, ops = _ops()
    calls = _count_verifications(monkeypatch)
    ops["ge.reshape"].attributes["ge.note"] = StringAttr("x")
    module.verify()
    assert [c for c in calls if c.startswith("ge.")] == ["ge.reshape"]


def test_a_clone_of_a_verified_op_is_not_verified_again(monkeypatch):
    """The content memo: a new op alike to one that verified (a clone, as lower-to-tasks makes)."""
    module, ops = _ops()
    transpose = ops["ge.transpose"]
    clone = transpose.clone()
    transpose.parent.insert_op_after(clone, transpose)
    calls = _count_verifications(monkeypatch)
    module.verify()
    assert [c for c in calls if c.startswith("ge.")] == []


@pytest.mark.mutation
def test_a_clone_made_wrong_is_verified():
    """Same op, same operand and properties as one that verified, but another result type: checked."""
    module, ops = _ops()
    transpose = ops["ge.transpose"]
    clone = transpose.clone()
    transpose.parent.insert_op_after(clone, transpose)
    clone.results[0]._type = TensorType(f32, [2, 3, 4])
    with pytest.raises(VerifyException, match="operands imply"):
        module.verify()


def test_an_op_that_ends_its_block_is_verified_despite_the_memo():
    """A ge op alike to one that verified, but last in its block (not a terminator): checked."""
    module, ops = _ops()
    transpose = ops["ge.transpose"]
    block = transpose.parent
    block.erase_op(block.last_op)
    clone = transpose.clone()
    block.add_op(clone)
    with pytest.raises(VerifyException, match="terminator"):
        module.verify()
