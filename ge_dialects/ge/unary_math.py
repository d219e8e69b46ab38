"""Elementwise functions of one float: the trigonometric and hyperbolic functions and their
inverses (GE's Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh), Round (half to
even, as ONNX and numpy), and the float classifiers IsNaN and IsInf (bool results). Each
function costs a transcendental's lane-cycles on the Vector unit; outside its domain (asin of 2)
it gives NaN, as the device's kernels and numpy do."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import TensorType, i1
from xdsl.ir import SSAValue
from xdsl.irdl import irdl_op_definition, opt_prop_def, traits_def

from ge.ge_dialects.ge.base import InferArgs, IntProp
from ge.ge_dialects.ge.elementwise import UnaryElementwiseOp
from ge.ge_dialects.ge.facts import PreservesZero, Transcendental
from ge.ge_dialects.ge.grad import GradBuilder
from ge.ge_dialects.ge.types import FLOAT_TYPES, tensor


class TranscendentalOp(UnaryElementwiseOp):
    traits = traits_def(Transcendental())


def _sqrt(g: GradBuilder, x: SSAValue) -> SSAValue:
    from ge.ge_dialects.ge.elementwise import SqrtOp

    return g.value(SqrtOp, {"x": x})


def _unary(g: GradBuilder, cls: type[UnaryElementwiseOp], x: SSAValue) -> SSAValue:
    return g.value(cls, {"x": x})


@irdl_op_definition
class SinOp(TranscendentalOp):
    name = "ge.sin"
    ONNX: ClassVar = ("Sin",)
    traits = traits_def(PreservesZero())

    def grad_x(self, g: GradBuilder, dy: SSAValue) -> SSAValue:
        return g.mul(dy, _unary(g, CosOp, self.x))


@irdl_op_definition
class CosOp(TranscendentalOp):
    name = "ge.cos"
    ONNX: ClassVar = ("Cos",)

    def grad_x(self, g: GradBuilder, dy: SSAValue) -> SSAValue:
        return g.neg(g.mul(dy, _unary(g, SinOp, self.x)))


@irdl_op_definition
class TanOp(TranscendentalOp):
    name = "ge.tan"
    ONNX: ClassVar = ("Tan",)
    traits = traits_def(PreservesZero())

    def grad_x(self, g: GradBuilder, dy: SSAValue) -> SSAValue:
        return g.mul(dy, g.add(g.scalar(1.0, self.y), g.mul(self.y, self.y)))  # dy (1 + y^2)


@irdl_op_definition
class AsinOp(TranscendentalOp):
    name = "ge.asin"
    ONNX: ClassVar = ("Asin",)
    traits = traits_def(PreservesZero())

    def grad_x(self, g: GradBuilder, dy: SSAValue) -> SSAValue:
        return g.div(dy, _sqrt(g, g.sub(g.scalar(1.0, self.x), g.mul(self.x, self.x))))  # dy / sqrt(1 - x^2)


@irdl_op_definition
class AcosOp(TranscendentalOp):
    name = "ge.acos"
    ONNX: ClassVar = ("Acos",)

    def grad_x(self, g: GradBuilder, dy: SSAValue) -> SSAValue:
        return g.neg(g.div(dy, _sqrt(g, g.sub(g.scalar(1.0, self.x), g.mul(self.x, self.x)))))


@irdl_op_definition
class AtanOp(TranscendentalOp):
    name = "ge.atan"
    ONNX: ClassVar = ("Atan",)
    traits = traits_def(PreservesZero())

    def grad_x(self, g: GradBuilder, dy: SSAValue) -> SSAValue:
        return g.div(dy, g.add(g.scalar(1.0, self.x), g.mul(self.x, self.x)))  # dy / (1 + x^2)


@irdl_op_definition
class SinhOp(TranscendentalOp):
    name = "ge.sinh"
    ONNX: ClassVar = ("Sinh",)
    traits = traits_def(PreservesZero())

    def grad_x(self, g: GradBuilder, dy: SSAValue) -> SSAValue:
        return g.mul(dy, _unary(g, CoshOp, self.x))


@irdl_op_definition
class CoshOp(TranscendentalOp):
    name = "ge.cosh"
    ONNX: ClassVar = ("Cosh",)

    def grad_x(self, g: GradBuilder, dy: SSAValue) -> SSAValue:
        return g.mul(dy, _unary(g, SinhOp, self.x))


@irdl_op_definition
class AsinhOp(TranscendentalOp):
    name = "ge.asinh"
    ONNX: ClassVar = ("Asinh",)
    traits = traits_def(PreservesZero())

    def grad_x(self, g: GradBuilder, dy: SSAValue) -> SSAValue:
        return g.div(dy, _sqrt(g, g.add(g.mul(self.x, self.x), g.scalar(1.0, self.x))))  # dy / sqrt(x^2 + 1)


@irdl_op_definition
class AcoshOp(TranscendentalOp):
    name = "ge.acosh"
    ONNX: ClassVar = ("Acosh",)

    def grad_x(self, g: GradBuilder, dy: SSAValue) -> SSAValue:
        return g.div(dy, _sqrt(g, g.sub(g.mul(self.x, self.x), g.scalar(1.0, self.x))))  # dy / sqrt(x^2 - 1)


@irdl_op_definition
class AtanhOp(TranscendentalOp):
    name = "ge.atanh"
    ONNX: ClassVar = ("Atanh",)
    traits = traits_def(PreservesZero())

    def grad_x(self, g: GradBuilder, dy: SSAValue) -> SSAValue:
        return g.div(dy, g.sub(g.scalar(1.0, self.x), g.mul(self.x, self.x)))  # dy / (1 - x^2)


@irdl_op_definition
class RoundOp(UnaryElementwiseOp):
    """Round half to even (2.5 -> 2); piecewise constant, no gradient (zero wherever it exists)."""

    name = "ge.round"
    ONNX: ClassVar = ("Round",)
    traits = traits_def(PreservesZero())

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        return [None]


class FloatClassOp(UnaryElementwiseOp):
    """A bool per element saying what kind of float it is; no gradient flows through a bool."""

    ALLOWED: ClassVar = FLOAT_TYPES
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"x"})

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        a.expect_dtype("x", cls.ALLOWED)
        return [tensor(i1, a.shape("x"), a.fmt("x"))]

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        return [None]


@irdl_op_definition
class IsNaNOp(FloatClassOp):
    name = "ge.is_nan"
    ONNX: ClassVar = ("IsNaN",)


@irdl_op_definition
class IsInfOp(FloatClassOp):
    """`detect_positive` / `detect_negative` (1 each by default) choose which infinities count."""

    name = "ge.is_inf"
    ONNX: ClassVar = ("IsInf",)
    detect_positive = opt_prop_def(IntProp)
    detect_negative = opt_prop_def(IntProp)
    DEFAULTS: ClassVar = {"detect_positive": 1, "detect_negative": 1}


UNARY_MATH_OPS = [
    SinOp,
    CosOp,
    TanOp,
    AsinOp,
    AcosOp,
    AtanOp,
    SinhOp,
    CoshOp,
    AsinhOp,
    AcoshOp,
    AtanhOp,
    RoundOp,
    IsNaNOp,
    IsInfOp,
]

__all__ = [
    "SinOp",
    "CosOp",
    "TanOp",
    "AsinOp",
    "AcosOp",
    "AtanOp",
    "SinhOp",
    "CoshOp",
    "AsinhOp",
    "AcoshOp",
    "AtanhOp",
    "RoundOp",
    "IsNaNOp",
    "IsInfOp",
    "UNARY_MATH_OPS",
]
