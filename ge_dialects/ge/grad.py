"""What an op's gradient (`GeOp.vjp`) is built with: `GradBuilder` emits ge ops into the backward
graph, and `NotDifferentiable` is how an op says it has no gradient.

A VJP (vector-Jacobian product) maps the cotangents of an op's results to the cotangents of its
operands, as ge ops placed by the builder. It is a fact of the op, defined beside its shape
function, so the `autodiff` pass (passes/autodiff.py) knows no op by name and a new op brings its
gradient with it. The builder's helpers are the pieces most gradients share: summing a broadcast
cotangent back to an operand's shape, scalars of a value's element type, zeros.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Block, Operation, SSAValue

from ge.ge_dialects.ge.types import Shape, numpy_dtype, shape_of


class NotDifferentiable(Exception):
    """The op has no gradient (or none for these operands or attributes); the message says why."""


def value_shape(value: SSAValue) -> Shape:
    """The shape of a tensor value (dims may be unknown: None)."""
    return shape_of(_tensor(value))


def static_shape(value: SSAValue) -> tuple[int, ...]:
    """The value's shape; the backward graph is built for static shapes."""
    shape = value_shape(value)
    if any(d is None for d in shape):
        raise NotDifferentiable(f"the gradient needs static shapes, got {value.type}")
    return tuple(int(d) for d in shape)  # type: ignore[arg-type]


class GradBuilder:
    """Emits the backward graph's ops before `anchor` in `block`, named `<forward op name>/grad`."""

    def __init__(self, block: Block, anchor: Operation):
        self.block = block
        self.anchor = anchor
        self.name: str | None = None
        self.emitted: list[Operation] = []

    # -- emitting ---------------------------------------------------------------------------------
    def emit(
        self, cls: Any, operands: dict[str, Any], props: dict[str, Any] | None = None, num_results: int | None = None
    ) -> Any:
        """Builds `cls` with inferred result types (`GeOp.create`) and inserts it."""
        op = cls.create(operands, props, num_results=num_results, name=self.name)
        return self.insert(op)

    def insert(self, op: Operation) -> Any:
        self.block.insert_op_before(op, self.anchor)
        self.emitted.append(op)
        return op

    def value(self, cls: Any, operands: dict[str, Any], props: dict[str, Any] | None = None) -> SSAValue:
        """The first result of a new `cls` op."""
        return self.emit(cls, operands, props).results[0]

    # -- constants --------------------------------------------------------------------------------
    def const(self, array: np.ndarray) -> SSAValue:
        from ge.ge_dialects.ge.constant import ConstantOp

        return self.insert(ConstantOp.inline(np.asarray(array), name=self.name)).results[0]

    def scalar(self, x: float, like: SSAValue) -> SSAValue:
        """A 0-d constant of `like`'s element type."""
        return self.const(np.asarray(x, dtype=numpy_dtype(_tensor(like).element_type)))

    def ints(self, values: Sequence[int]) -> SSAValue:
        """A 1-D i64 constant (shapes, axes, pads)."""
        return self.const(np.asarray(list(values), dtype=np.int64))

    def zeros(self, like: SSAValue) -> SSAValue:
        """Zeros of `like`'s type (a scalar broadcast, so no big constant is made)."""
        from ge.ge_dialects.ge.tensor_ops import ExpandOp

        return self.value(ExpandOp, {"input": self.scalar(0.0, like), "shape": self.ints(static_shape(like))})

    # -- arithmetic -------------------------------------------------------------------------------
    def _binary(self, cls_name: str, a: SSAValue, b: SSAValue) -> SSAValue:
        from ge.ge_dialects.ge import elementwise

        return self.value(getattr(elementwise, cls_name), {"a": a, "b": b})

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._binary("AddOp", a, b)

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._binary("SubOp", a, b)

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._binary("MulOp", a, b)

    def div(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._binary("DivOp", a, b)

    def neg(self, a: SSAValue) -> SSAValue:
        return self.mul(a, self.scalar(-1.0, a))

    def scale(self, a: SSAValue, factor: float) -> SSAValue:
        return a if factor == 1.0 else self.mul(a, self.scalar(factor, a))

    # -- shapes -----------------------------------------------------------------------------------
    def reshape(self, value: SSAValue, shape: Shape) -> SSAValue:
        from ge.ge_dialects.ge.tensor_ops import ReshapeOp

        if static_shape(value) == tuple(shape):
            return value
        return self.value(ReshapeOp, {"data": value, "shape": self.ints([int(d) for d in shape])})  # type: ignore[arg-type]

    def transpose(self, value: SSAValue, perm: Sequence[int]) -> SSAValue:
        from ge.ge_dialects.ge.tensor_ops import TransposeOp

        if list(perm) == list(range(len(perm))):
            return value
        return self.value(TransposeOp, {"data": value}, {"perm": list(perm)})

    def reduce_sum(self, value: SSAValue, axes: Sequence[int], keepdims: bool) -> SSAValue:
        from ge.ge_dialects.ge.tensor_ops import ReduceSumOp

        if not axes:
            return value
        return self.value(ReduceSumOp, {"data": value, "axes": self.ints(axes)}, {"keepdims": int(keepdims)})

    def sum_to(self, grad: SSAValue, shape: Shape) -> SSAValue:
        """The cotangent of an operand of `shape` that was broadcast to `grad`'s shape: summed over
        the dims broadcasting added or stretched (the adjoint of numpy broadcasting)."""
        full = static_shape(grad)
        target = tuple(int(d) for d in shape)  # type: ignore[arg-type]
        lead = len(full) - len(target)
        stretched = [lead + i for i, d in enumerate(target) if d == 1 and full[lead + i] != 1]
        summed = self.reduce_sum(grad, list(range(lead)) + stretched, keepdims=True)
        return self.reshape(summed, target)

    def expand(self, value: SSAValue, shape: Shape) -> SSAValue:
        from ge.ge_dialects.ge.tensor_ops import ExpandOp

        if static_shape(value) == tuple(shape):
            return value
        return self.value(ExpandOp, {"input": value, "shape": self.ints([int(d) for d in shape])})  # type: ignore[arg-type]

    def cast_like(self, value: SSAValue, like: SSAValue) -> SSAValue:
        """`value` in `like`'s element type (a no-op when they agree)."""
        from ge.ge_dialects.ge.tensor_ops import ONNX_ELEMENT_TYPES, CastOp

        want = _tensor(like).element_type
        if _tensor(value).element_type == want:
            return value
        to = next(k for k, t in ONNX_ELEMENT_TYPES.items() if t == want)
        return self.value(CastOp, {"input": value}, {"to": to})


def _tensor(value: SSAValue) -> TensorType:
    t = value.type
    if not isinstance(t, TensorType):
        raise NotDifferentiable(f"expected a tensor, got {t}")
    return t
