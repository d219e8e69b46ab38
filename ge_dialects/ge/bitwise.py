"""Bitwise operators on integers (GE's BitwiseAnd, BitwiseOr, BitwiseXor, Invert, LeftShift /
RightShift): elementwise, with broadcasting for the binary ones. Integer arithmetic, so their
instances run on the AI CPU (`engine()`); bits carry no gradient. And BitCast (GE's Bitcast): the
same bits read as another type of the same width."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, result_def, traits_def
from xdsl.traits import Commutative, Pure

from ge.ge_dialects.ge.base import GeOp, InferArgs, IntProp, StrProp
from ge.ge_dialects.ge.elementwise import BinaryElementwiseOp, UnaryElementwiseOp
from ge.ge_dialects.ge.facts import Elementwise, Engine, RunsOn
from ge.ge_dialects.ge.grad import GradBuilder
from ge.ge_dialects.ge.tensor_ops import ONNX_ELEMENT_TYPES
from ge.ge_dialects.ge.types import INT_TYPES, NARROW_INT_TYPES, f4E2M1FN, i2, numpy_dtype, tensor, ui2


class BitwiseBinaryOp(BinaryElementwiseOp):
    """z = a (op) b on integers of one type, with broadcasting."""

    ALLOWED: ClassVar[tuple[Attribute, ...]] = INT_TYPES
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"a", "b"})

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        return [None, None]


@irdl_op_definition
class BitwiseAndOp(BitwiseBinaryOp):
    name = "ge.bitwise_and"
    ONNX: ClassVar = ("BitwiseAnd",)
    traits = traits_def(Pure(), Commutative())


@irdl_op_definition
class BitwiseOrOp(BitwiseBinaryOp):
    name = "ge.bitwise_or"
    ONNX: ClassVar = ("BitwiseOr",)
    traits = traits_def(Pure(), Commutative())


@irdl_op_definition
class BitwiseXorOp(BitwiseBinaryOp):
    name = "ge.bitwise_xor"
    ONNX: ClassVar = ("BitwiseXor",)
    traits = traits_def(Pure(), Commutative())


@irdl_op_definition
class BitShiftOp(BitwiseBinaryOp):
    """ONNX BitShift (opset 28's, which takes signed types too): `a` shifted by `b` bits,
    `direction` "LEFT" or "RIGHT"; a right shift of a signed type is arithmetic, bits shifted past
    the width are lost, and a count below 0 or of the width or more leaves only the sign fill."""

    name = "ge.bit_shift"
    ONNX: ClassVar = ("BitShift",)
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
    ONNX: ClassVar = ("BitwiseNot",)
    ALLOWED: ClassVar[tuple[Attribute, ...]] = INT_TYPES
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"x"})

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        return [None]


def bit_width(dtype: Attribute) -> int:
    """Bits per element as ONNX counts them (the 4- and 2-bit types are stored a byte each here)."""
    if dtype in NARROW_INT_TYPES or dtype == f4E2M1FN:
        return 2 if dtype in (i2, ui2) else 4
    return numpy_dtype(dtype).itemsize * 8


@irdl_op_definition
class BitCastOp(GeOp):
    """ONNX BitCast: the input's bits as the element type `to` (an ONNX data type number) of the
    same width, shape unchanged; no value is converted, so no gradient flows."""

    name = "ge.bit_cast"
    ONNX: ClassVar = ("BitCast",)
    PRECISION: ClassVar = "keep"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    to = opt_prop_def(IntProp)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR), Elementwise())
    NO_GRADIENT: ClassVar = "a reinterpretation of bits has no derivative"

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        to = a.prop("to")
        if to not in ONNX_ELEMENT_TYPES:
            raise a.fail(f"'to' must be an ONNX data type ge has, got {to}")
        source, target = a.dtype("input"), ONNX_ELEMENT_TYPES[to]
        if bit_width(source) != bit_width(target):
            raise a.fail(
                f"{source} has {bit_width(source)} bits and {target} {bit_width(target)}: BitCast needs equal widths"
            )
        return [tensor(target, a.shape("input"), a.fmt("input"))]


BITWISE_OPS = [BitwiseAndOp, BitwiseOrOp, BitwiseXorOp, BitShiftOp, BitwiseNotOp, BitCastOp]

__all__ = ["BitwiseAndOp", "BitwiseOrOp", "BitwiseXorOp", "BitShiftOp", "BitwiseNotOp", "BitCastOp", "BITWISE_OPS"]
