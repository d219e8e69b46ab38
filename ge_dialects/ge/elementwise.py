"""Elementwise ops: unary maps and broadcasting binary maps (ONNX multidirectional broadcasting)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import TensorType, i1
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, result_def, traits_def
from xdsl.traits import Commutative, Pure

from ge.ge_dialects.ge.base import GeOp, InferArgs, StrProp
from ge.ge_dialects.ge.facts import Broadcasting, Elementwise, Engine, LayoutAgnostic, RunsOn, Transcendental
from ge.ge_dialects.ge.grad import GradBuilder, value_shape
from ge.ge_dialects.ge.types import (
    ALL_TYPES,
    FLOAT_TYPES,
    NUMERIC_TYPES,
    SIGNED_INT_TYPES,
    Shape,
    format_of,
    tensor,
)

SIGNED_NUMERIC = FLOAT_TYPES + SIGNED_INT_TYPES


def broadcast_shapes(a: InferArgs, *shapes: Shape) -> Shape:
    """ONNX/numpy multidirectional broadcasting; `None` (unknown) dims stay unknown unless another
    operand fixes them to a size other than 1."""
    rank = max((len(s) for s in shapes), default=0)
    out: list[int | None] = []
    for i in range(rank):
        dims = [s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0]
        known = {d for d in dims if d is not None and d != 1}
        if len(known) > 1:
            shown = " and ".join(str(tuple("?" if d is None else d for d in s)) for s in shapes)
            raise a.fail(f"shapes {shown} do not broadcast (dimension {i} of the result)")
        if known:
            out.append(known.pop())
        elif any(d is None for d in dims):
            out.append(None)
        else:
            out.append(1)
    return tuple(out)


def _same_rank_format(a: InferArgs, names: tuple[str, ...], rank: int):
    for n in names:
        if a.has(n) and a.rank(n) == rank and format_of(a.type(n)) is not None:
            return format_of(a.type(n))
    return None


class UnaryElementwiseOp(GeOp):
    """y = f(x), same shape and element type."""

    x = operand_def(TensorType)
    y = result_def(TensorType)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR), Elementwise(), LayoutAgnostic())

    ALLOWED: ClassVar[tuple[Attribute, ...]] = FLOAT_TYPES

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        dtype = a.expect_dtype("x", cls.ALLOWED)
        return [tensor(dtype, a.shape("x"), a.fmt("x"))]


class BinaryElementwiseOp(GeOp):
    """z = f(a, b) with broadcasting; `a` and `b` share an element type."""

    a = operand_def(TensorType)
    b = operand_def(TensorType)
    z = result_def(TensorType)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR), Elementwise(), Broadcasting(), LayoutAgnostic())

    ALLOWED: ClassVar[tuple[Attribute, ...]] = NUMERIC_TYPES
    RESULT_IS_BOOL: ClassVar[bool] = False

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        a.expect_dtype("a", cls.ALLOWED)
        dtype = a.expect_same_dtype("a", "b") if cls.SAME_DTYPE else a.dtype("a")
        a.expect_dtype("b", cls.ALLOWED)
        shape = broadcast_shapes(a, a.shape("a"), a.shape("b"))
        fmt = _same_rank_format(a, ("a", "b"), len(shape))
        return [tensor(i1 if cls.RESULT_IS_BOOL else dtype, shape, fmt)]

    SAME_DTYPE: ClassVar[bool] = True


@irdl_op_definition
class ReluOp(UnaryElementwiseOp):
    name = "ge.relu"
    ALLOWED: ClassVar = SIGNED_NUMERIC


@irdl_op_definition
class SqrtOp(UnaryElementwiseOp):
    name = "ge.sqrt"
    traits = traits_def(Transcendental())


@irdl_op_definition
class ErfOp(UnaryElementwiseOp):
    name = "ge.erf"
    traits = traits_def(Transcendental())
    ALLOWED: ClassVar = NUMERIC_TYPES


@irdl_op_definition
class TanhOp(UnaryElementwiseOp):
    name = "ge.tanh"
    traits = traits_def(Transcendental())


@irdl_op_definition
class SigmoidOp(UnaryElementwiseOp):
    name = "ge.sigmoid"
    traits = traits_def(Transcendental())


@irdl_op_definition
class HardSwishOp(UnaryElementwiseOp):
    name = "ge.hard_swish"
    traits = traits_def(Transcendental())


@irdl_op_definition
class IdentityOp(UnaryElementwiseOp):
    name = "ge.identity"
    ALLOWED: ClassVar = ALL_TYPES


@irdl_op_definition
class GeluOp(UnaryElementwiseOp):
    """GELU; `approximate` is "none" (erf form) or "tanh"."""

    name = "ge.gelu"
    traits = traits_def(Transcendental())
    approximate = opt_prop_def(StrProp)
    DEFAULTS: ClassVar = {"approximate": "none"}

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        if a.prop("approximate") not in ("none", "tanh"):
            raise a.fail(f'approximate must be "none" or "tanh", got "{a.prop("approximate")}"')
        return super().infer(a)


@irdl_op_definition
class AddOp(BinaryElementwiseOp):
    name = "ge.add"
    traits = traits_def(Pure(), Commutative())

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        (dz,) = cotangents
        assert dz is not None
        return [g.sum_to(dz, value_shape(self.a)), g.sum_to(dz, value_shape(self.b))]


@irdl_op_definition
class SubOp(BinaryElementwiseOp):
    name = "ge.sub"

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        (dz,) = cotangents
        assert dz is not None
        return [g.sum_to(dz, value_shape(self.a)), g.sum_to(g.neg(dz), value_shape(self.b))]


@irdl_op_definition
class MulOp(BinaryElementwiseOp):
    name = "ge.mul"
    traits = traits_def(Pure(), Commutative())

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        (dz,) = cotangents
        assert dz is not None
        return [g.sum_to(g.mul(dz, self.b), value_shape(self.a)), g.sum_to(g.mul(dz, self.a), value_shape(self.b))]


@irdl_op_definition
class DivOp(BinaryElementwiseOp):
    name = "ge.div"
    traits = traits_def(Transcendental())


@irdl_op_definition
class PowOp(BinaryElementwiseOp):
    """Pow: the exponent may have another numeric type than the base; the result has the base's."""

    name = "ge.pow"
    traits = traits_def(Transcendental())
    SAME_DTYPE: ClassVar = False


@irdl_op_definition
class EqualOp(BinaryElementwiseOp):
    name = "ge.equal"
    traits = traits_def(Pure(), Commutative())
    ALLOWED: ClassVar = ALL_TYPES
    RESULT_IS_BOOL: ClassVar = True


ELEMENTWISE_OPS = [
    ReluOp,
    SqrtOp,
    ErfOp,
    TanhOp,
    SigmoidOp,
    HardSwishOp,
    IdentityOp,
    GeluOp,
    AddOp,
    SubOp,
    MulOp,
    DivOp,
    PowOp,
    EqualOp,
]
