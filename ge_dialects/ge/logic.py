"""Comparisons and logic: ordered comparisons of numbers (GE's Greater, Less, GreaterEqual,
LessEqual) and the bool connectives (LogicalAnd, LogicalOr, LogicalXor, LogicalNot). Each result is
bool (i1) with broadcasting; none carries a gradient (a comparison is piecewise constant, a bool is
no value a gradient moves)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import i1
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, traits_def
from xdsl.traits import Commutative, Pure

from ge.ge_dialects.ge.elementwise import BinaryElementwiseOp, UnaryElementwiseOp
from ge.ge_dialects.ge.grad import GradBuilder
from ge.ge_dialects.ge.types import NUMERIC_TYPES


class ComparisonOp(BinaryElementwiseOp):
    """z = a (compare) b, elementwise with broadcasting, on numbers of one type; z is bool."""

    ALLOWED: ClassVar[tuple[Attribute, ...]] = NUMERIC_TYPES
    RESULT_IS_BOOL: ClassVar = True
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"a", "b"})

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        return [None, None]


@irdl_op_definition
class GreaterOp(ComparisonOp):
    name = "ge.greater"
    ONNX: ClassVar = ("Greater",)


@irdl_op_definition
class LessOp(ComparisonOp):
    name = "ge.less"
    ONNX: ClassVar = ("Less",)


@irdl_op_definition
class GreaterEqualOp(ComparisonOp):
    name = "ge.greater_equal"
    ONNX: ClassVar = ("GreaterOrEqual",)


@irdl_op_definition
class LessEqualOp(ComparisonOp):
    name = "ge.less_equal"
    ONNX: ClassVar = ("LessOrEqual",)


class ConnectiveOp(ComparisonOp):
    """z = a (connective) b on bools."""

    ALLOWED: ClassVar[tuple[Attribute, ...]] = (i1,)
    traits = traits_def(Pure(), Commutative())


@irdl_op_definition
class LogicalAndOp(ConnectiveOp):
    name = "ge.logical_and"
    ONNX: ClassVar = ("And",)


@irdl_op_definition
class LogicalOrOp(ConnectiveOp):
    name = "ge.logical_or"
    ONNX: ClassVar = ("Or",)


@irdl_op_definition
class LogicalXorOp(ConnectiveOp):
    name = "ge.logical_xor"
    ONNX: ClassVar = ("Xor",)


@irdl_op_definition
class LogicalNotOp(UnaryElementwiseOp):
    name = "ge.logical_not"
    ONNX: ClassVar = ("Not",)
    ALLOWED: ClassVar[tuple[Attribute, ...]] = (i1,)
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"x"})

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        return [None]


LOGIC_OPS = [
    GreaterOp,
    LessOp,
    GreaterEqualOp,
    LessEqualOp,
    LogicalAndOp,
    LogicalOrOp,
    LogicalXorOp,
    LogicalNotOp,
]

__all__ = [
    "ComparisonOp",
    "GreaterOp",
    "LessOp",
    "GreaterEqualOp",
    "LessEqualOp",
    "LogicalAndOp",
    "LogicalOrOp",
    "LogicalXorOp",
    "LogicalNotOp",
    "LOGIC_OPS",
]
