"""Typed access to the tensor type of an SSA value, for code that knows it holds a tensor."""

from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue


def tensor_type(value: SSAValue) -> TensorType:
    """The type of `value`, a tensor wherever the ge verifiers hold (ge ops take and make tensors)."""
    t = value.type
    assert isinstance(t, TensorType), f"expected a tensor value, got one of type {t}"
    return t
