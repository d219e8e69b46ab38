"""Bitwise operators on integers (GE's BitwiseAnd, BitwiseOr, BitwiseXor, Invert, LeftShift /
RightShift): elementwise, with broadcasting for the binary ones. Integer arithmetic, so their
instances run on the AI CPU (`engine()`); bits carry no gradient."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, opt_prop_def, traits_def
from xdsl.traits import Commutative, Pure

from ge.ge_dialects.ge.base import InferArgs, StrProp
from ge.ge_dialects.ge.elementwise import BinaryElementwiseOp, UnaryElementwiseOp
from ge.ge_dialects.ge.grad import GradBuilder
from ge.ge_dialects.ge.types import INT_TYPES


class BitwiseBinaryOp(BinaryElementwiseOp):
    """z = a (op) b on integers of one type, with broadcasting."""

    ALLOWED: ClassVar[tuple[Attribute, ...]] = INT_TYPES
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"a", "b"})

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        return [None, None]


@irdl_op_definition
class BitwiseAndOp(BitwiseBinaryOp):
    name = "ge.bitwise_and"
    traits = traits_def(Pure(), Commutative())


@irdl_op_definition
class BitwiseOrOp(BitwiseBinaryOp):
    name = "ge.bitwise_or"
    traits = traits_def(Pure(), Commutative())


@irdl_op_definition
class BitwiseXorOp(BitwiseBinaryOp):
    name = "ge.bitwise_xor"
    traits = traits_def(Pure(), Commutative())


@irdl_op_definition
class BitShiftOp(BitwiseBinaryOp):
    """ONNX BitShift (opset 28's, which takes signed types too): `a` shifted by `b` bits,
    `direction` "LEFT" or "RIGHT"; a right shift of a signed type is arithmetic, bits shifted past
    the width are lost, and a count below 0 or of the width or more leaves only the sign fill."""

    name = "ge.bit_shift"
    direction = opt_prop_def(StrProp)
    DIRECTIONS: ClassVar = ("LEFT", "RIGHT")

    @classmethod
    def infer(cls, a: InferArgs):
        direction = a.prop("direction")
        if direction not in cls.DIRECTIONS:
            raise a.fail(f"direction must be LEFT or RIGHT, got {direction!r}")
        return super().infer(a)


@irdl_op_definition
class BitwiseNotOp(UnaryElementwiseOp):
    name = "ge.bitwise_not"
    ALLOWED: ClassVar[tuple[Attribute, ...]] = INT_TYPES
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"x"})

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        return [None]


BITWISE_OPS = [BitwiseAndOp, BitwiseOrOp, BitwiseXorOp, BitShiftOp, BitwiseNotOp]

__all__ = ["BitwiseAndOp", "BitwiseOrOp", "BitwiseXorOp", "BitShiftOp", "BitwiseNotOp", "BITWISE_OPS"]
