"""Elementwise ops: unary maps and broadcasting binary maps (ONNX multidirectional broadcasting),
their gradients (`vjp`), and the fused activation gradients GE's backward graphs use (ReluGrad,
GeluGrad)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar, cast

from xdsl.dialects.builtin import TensorType, i1
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, result_def, traits_def
from xdsl.traits import Commutative, Pure

from ge.ge_dialects.ge.base import FloatProp, GeOp, InferArgs, IntProp, StrProp, describe
from ge.ge_dialects.ge.facts import (
    Broadcasting,
    Carries,
    Elementwise,
    Engine,
    PreservesZero,
    RunsOn,
    StorageFormats,
    Transcendental,
)
from ge.ge_dialects.ge.grad import GradBuilder, NotDifferentiable, value_shape
from ge.ge_dialects.ge.layout import ACTIVATION_FORMATS
from ge.ge_dialects.ge.symbolic import Dim
from ge.ge_dialects.ge.types import (
    ALL_TYPES,
    FLOAT_TYPES,
    NUMERIC_TYPES,
    SIGNED_INT_TYPES,
    Shape,
    format_of,
    is_float,
    tensor,
    tensor_type_of,
)

SIGNED_NUMERIC = FLOAT_TYPES + SIGNED_INT_TYPES


def broadcast_shapes(a: InferArgs, *shapes: Shape) -> Shape:
    """ONNX/numpy multidirectional broadcasting; `None` (unknown) dims stay unknown unless another
    operand fixes them to a size other than 1. A symbolic dim (passes/symbolic_shapes.py) is kept
    when every other operand has it or 1 there, is fixed by a size other than 1 like `None`, and
    is unknown beside a different symbol or `None`."""
    rank = max((len(s) for s in shapes), default=0)
    out: list[int | None] = []
    for i in range(rank):
        dims = [s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0]
        known = {d for d in dims if isinstance(d, int) and d != 1}
        if len(known) > 1:
            shown = " and ".join(str(tuple("?" if d is None else d for d in s)) for s in shapes)
            raise a.fail(f"shapes {shown} do not broadcast (dimension {i} of the result)")
        if known:
            out.append(known.pop())
            continue
        symbols = [d for d in cast(list[object], dims) if isinstance(d, Dim)]
        if symbols and None not in dims and all(d.same(symbols[0]) for d in symbols):
            out.append(cast(int, symbols[0]))  # a symbolic size stands where an int would
        elif symbols or any(d is None for d in dims):
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
    traits = traits_def(
        Pure(),
        RunsOn(Engine.VECTOR),
        Elementwise(),
        StorageFormats(Carries("elementwise", ACTIVATION_FORMATS, ("x",), ("y",))),
    )

    ALLOWED: ClassVar[tuple[Attribute, ...]] = FLOAT_TYPES
    DATA_OPERANDS: ClassVar[tuple[str, ...]] = ("x",)

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        dtype = a.expect_dtype("x", cls.ALLOWED)
        return [tensor(dtype, a.shape("x"), a.fmt("x"))]

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        dy = float_cotangent(self, cotangents)
        return [None if dy is None else self.grad_x(g, dy)]

    def grad_x(self, g: GradBuilder, dy: SSAValue) -> SSAValue:
        """dx from dy (a float cotangent of y); an op without a gradient keeps this refusal."""
        raise NotDifferentiable(f"{describe(self)} has no gradient")


class BinaryElementwiseOp(GeOp):
    """z = f(a, b) with broadcasting; `a` and `b` share an element type."""

    a = operand_def(TensorType)
    b = operand_def(TensorType)
    z = result_def(TensorType)
    traits = traits_def(
        Pure(),
        RunsOn(Engine.VECTOR),
        Elementwise(),
        Broadcasting(),
        StorageFormats(Carries("elementwise", ACTIVATION_FORMATS, ("a", "b"), ("z",))),
    )

    ALLOWED: ClassVar[tuple[Attribute, ...]] = NUMERIC_TYPES
    RESULT_IS_BOOL: ClassVar[bool] = False
    DATA_OPERANDS: ClassVar[tuple[str, ...]] = ("a", "b")

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        a.expect_dtype("a", cls.ALLOWED)
        dtype = a.expect_same_dtype("a", "b") if cls.SAME_DTYPE else a.dtype("a")
        a.expect_dtype("b", cls.ALLOWED)
        shape = broadcast_shapes(a, a.shape("a"), a.shape("b"))
        fmt = _same_rank_format(a, ("a", "b"), len(shape))
        return [tensor(i1 if cls.RESULT_IS_BOOL else dtype, shape, fmt)]

    SAME_DTYPE: ClassVar[bool] = True

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        dz = float_cotangent(self, cotangents)
        return [None, None] if dz is None else list(self.grad_ab(g, dz))

    def grad_ab(self, g: GradBuilder, dz: SSAValue) -> tuple[SSAValue | None, SSAValue | None]:
        """(da, db) from dz (a float cotangent of z), each summed back to its operand's shape."""
        raise NotDifferentiable(f"{describe(self)} has no gradient")


def float_cotangent(op: GeOp, cotangents: Sequence[SSAValue | None]) -> SSAValue | None:
    """The cotangent of the op's one result (None: the loss does not depend on it). Gradients are
    for float values: an integer instance (ge.relu on i32, integer division) has none."""
    (dy,) = cotangents
    if dy is not None and not is_float(tensor_type_of(op.results[0]).element_type):
        raise NotDifferentiable(f"{describe(op)} computes on {op.results[0].type}: gradients are for float values only")
    return dy


@irdl_op_definition
class ReluOp(UnaryElementwiseOp):
    name = "ge.relu"
    ONNX: ClassVar = ("Relu",)
    traits = traits_def(PreservesZero())
    ALLOWED: ClassVar = SIGNED_NUMERIC

    def grad_x(self, g: GradBuilder, dy: SSAValue) -> SSAValue:
        return g.value(ReluGradOp, {"dy": dy, "y": self.y})


@irdl_op_definition
class SqrtOp(UnaryElementwiseOp):
    name = "ge.sqrt"
    ONNX: ClassVar = ("Sqrt",)
    traits = traits_def(Transcendental())

    def grad_x(self, g: GradBuilder, dy: SSAValue) -> SSAValue:
        return g.div(g.scale(dy, 0.5), self.y)  # dy / (2 sqrt(x))


@irdl_op_definition
class ErfOp(UnaryElementwiseOp):
    name = "ge.erf"
    ONNX: ClassVar = ("Erf",)
    traits = traits_def(Transcendental())
    ALLOWED: ClassVar = NUMERIC_TYPES

    def grad_x(self, g: GradBuilder, dy: SSAValue) -> SSAValue:
        gauss = g.value(ExpOp, {"x": g.neg(g.mul(self.x, self.x))})  # exp(-x^2)
        return g.scale(g.mul(dy, gauss), 2 / math.sqrt(math.pi))


@irdl_op_definition
class TanhOp(UnaryElementwiseOp):
    name = "ge.tanh"
    ONNX: ClassVar = ("Tanh",)
    traits = traits_def(Transcendental())

    def grad_x(self, g: GradBuilder, dy: SSAValue) -> SSAValue:
        return g.mul(dy, g.sub(g.scalar(1.0, self.y), g.mul(self.y, self.y)))  # dy (1 - y^2)


@irdl_op_definition
class SigmoidOp(UnaryElementwiseOp):
    name = "ge.sigmoid"
    ONNX: ClassVar = ("Sigmoid",)
    traits = traits_def(Transcendental())

    def grad_x(self, g: GradBuilder, dy: SSAValue) -> SSAValue:
        return g.mul(g.mul(dy, self.y), g.sub(g.scalar(1.0, self.y), self.y))  # dy y (1 - y)


@irdl_op_definition
class HardSwishOp(UnaryElementwiseOp):
    """x * clip(x/6 + 1/2, 0, 1)."""

    name = "ge.hard_swish"
    ONNX: ClassVar = ("HardSwish",)
    traits = traits_def(Transcendental())

    def grad_x(self, g: GradBuilder, dy: SSAValue) -> SSAValue:
        """dy * (x/3 + 1/2 inside the band -3 <= x <= 3, else the 0 or 1 hard_sigmoid gives there):
        the mask GE's HardSwishGrad computes, built from clip, equal and where."""
        from ge.ge_dialects.ge.nn import ClipOp
        from ge.ge_dialects.ge.tensor_ops import WhereOp

        x = self.x

        def clip(v: SSAValue, low: float, high: float) -> SSAValue:
            return g.value(ClipOp, {"input": v, "min": g.scalar(low, v), "max": g.scalar(high, v)})

        in_band = g.value(EqualOp, {"a": x, "b": clip(x, -3.0, 3.0)})
        inside = g.add(g.scale(x, 1 / 3), g.scalar(0.5, x))
        outside = clip(g.add(g.scale(x, 1 / 6), g.scalar(0.5, x)), 0.0, 1.0)
        return g.mul(dy, g.value(WhereOp, {"condition": in_band, "X": inside, "Y": outside}))


@irdl_op_definition
class IdentityOp(UnaryElementwiseOp):
    name = "ge.identity"
    ONNX: ClassVar = ("Identity",)
    ALLOWED: ClassVar = ALL_TYPES

    def grad_x(self, g: GradBuilder, dy: SSAValue) -> SSAValue:
        return dy


@irdl_op_definition
class ExpOp(UnaryElementwiseOp):
    """ONNX Exp (GE's Exp)."""

    name = "ge.exp"
    ONNX: ClassVar = ("Exp",)
    traits = traits_def(Transcendental())

    def grad_x(self, g: GradBuilder, dy: SSAValue) -> SSAValue:
        return g.mul(dy, self.y)


@irdl_op_definition
class LogOp(UnaryElementwiseOp):
    """ONNX Log (GE's Log): the natural logarithm."""

    name = "ge.log"
    ONNX: ClassVar = ("Log",)
    # Log: flag not found in GE's stub; f32 because log's absolute error near 1 is the input's rounding error over x,
    # and log feeds losses
    PRECISION: ClassVar = "black"
    traits = traits_def(Transcendental())

    def grad_x(self, g: GradBuilder, dy: SSAValue) -> SSAValue:
        return g.div(dy, self.x)


@irdl_op_definition
class GeluOp(UnaryElementwiseOp):
    """GELU; `approximate` is "none" (erf form) or "tanh"."""

    name = "ge.gelu"
    ONNX: ClassVar = ("Gelu",)
    traits = traits_def(Transcendental())
    approximate = opt_prop_def(StrProp)
    DEFAULTS: ClassVar = {"approximate": "none"}

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        if a.prop("approximate") not in ("none", "tanh"):
            raise a.fail(f'approximate must be "none" or "tanh", got "{a.prop("approximate")}"')
        return super().infer(a)

    def grad_x(self, g: GradBuilder, dy: SSAValue) -> SSAValue:
        return g.value(GeluGradOp, {"dy": dy, "x": self.x}, {"approximate": self.p("approximate")})


@irdl_op_definition
class AddOp(BinaryElementwiseOp):
    name = "ge.add"
    ONNX: ClassVar = ("Add",)
    traits = traits_def(Pure(), Commutative(), PreservesZero())

    def grad_ab(self, g: GradBuilder, dz: SSAValue) -> tuple[SSAValue | None, SSAValue | None]:
        return g.sum_to(dz, value_shape(self.a)), g.sum_to(dz, value_shape(self.b))


@irdl_op_definition
class SubOp(BinaryElementwiseOp):
    name = "ge.sub"
    ONNX: ClassVar = ("Sub",)
    traits = traits_def(PreservesZero())

    def grad_ab(self, g: GradBuilder, dz: SSAValue) -> tuple[SSAValue | None, SSAValue | None]:
        return g.sum_to(dz, value_shape(self.a)), g.sum_to(g.neg(dz), value_shape(self.b))


@irdl_op_definition
class MulOp(BinaryElementwiseOp):
    name = "ge.mul"
    ONNX: ClassVar = ("Mul",)
    traits = traits_def(Pure(), Commutative(), PreservesZero())

    def grad_ab(self, g: GradBuilder, dz: SSAValue) -> tuple[SSAValue | None, SSAValue | None]:
        return g.sum_to(g.mul(dz, self.b), value_shape(self.a)), g.sum_to(g.mul(dz, self.a), value_shape(self.b))


@irdl_op_definition
class DivOp(BinaryElementwiseOp):
    name = "ge.div"
    ONNX: ClassVar = ("Div",)
    traits = traits_def(Transcendental())

    def grad_ab(self, g: GradBuilder, dz: SSAValue) -> tuple[SSAValue | None, SSAValue | None]:
        da = g.div(dz, self.b)
        db = g.neg(g.div(g.mul(dz, self.z), self.b))  # -dz a / b^2 = -dz z / b
        return g.sum_to(da, value_shape(self.a)), g.sum_to(db, value_shape(self.b))


@irdl_op_definition
class PowOp(BinaryElementwiseOp):
    """Pow: the exponent may have another numeric type than the base; the result has the base's."""

    name = "ge.pow"
    ONNX: ClassVar = ("Pow",)
    PRECISION: ClassVar = "black"  # Pow / Power: false (x^y amplifies the input's relative error by y)
    DATA_OPERANDS: ClassVar = ("a",)  # the exponent may keep its own type
    traits = traits_def(Transcendental())
    SAME_DTYPE: ClassVar = False

    def grad_ab(self, g: GradBuilder, dz: SSAValue) -> tuple[SSAValue | None, SSAValue | None]:
        """da = dz b a^(b-1); db = dz z log(a), for a float exponent only (an integer one is a count,
        not a value a gradient moves)."""
        b = g.cast_like(self.b, self.a)
        a_to_b_minus_1 = g.value(PowOp, {"a": self.a, "b": g.sub(b, g.scalar(1.0, b))})
        da = g.sum_to(g.mul(g.mul(dz, b), a_to_b_minus_1), value_shape(self.a))
        if not is_float(tensor_type_of(self.b).element_type):
            return da, None
        db = g.mul(g.mul(dz, self.z), g.value(LogOp, {"x": self.a}))
        return da, g.sum_to(g.cast_like(db, self.b), value_shape(self.b))


@irdl_op_definition
class EqualOp(BinaryElementwiseOp):
    name = "ge.equal"
    ONNX: ClassVar = ("Equal",)
    traits = traits_def(Pure(), Commutative())
    ALLOWED: ClassVar = ALL_TYPES
    RESULT_IS_BOOL: ClassVar = True
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"a", "b"})

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """None for both: the bool result carries no cotangent, and a comparison is piecewise
        constant (its derivative is zero wherever it exists)."""
        return [None, None]


def _selected_gradients(
    g: GradBuilder, op: BinaryElementwiseOp, dz: SSAValue, picks_a: type[GeOp]
) -> tuple[SSAValue | None, SSAValue | None]:
    """(da, db) of a max or min: dz goes to `a` where `picks_a(a, b)` holds (ties included), else
    to `b`, each summed back to its operand's shape."""
    from ge.ge_dialects.ge.tensor_ops import WhereOp

    takes_a = g.value(picks_a, {"a": op.a, "b": op.b})
    zero = g.scalar(0.0, dz)
    da = g.value(WhereOp, {"condition": takes_a, "X": dz, "Y": zero})
    db = g.value(WhereOp, {"condition": takes_a, "X": zero, "Y": dz})
    return g.sum_to(da, value_shape(op.a)), g.sum_to(db, value_shape(op.b))


@irdl_op_definition
class MaximumOp(BinaryElementwiseOp):
    """GE's Maximum (ONNX Max of two inputs); at a tie the gradient goes to `a`."""

    name = "ge.maximum"
    traits = traits_def(PreservesZero())

    def grad_ab(self, g: GradBuilder, dz: SSAValue) -> tuple[SSAValue | None, SSAValue | None]:
        from ge.ge_dialects.ge.logic import GreaterEqualOp

        return _selected_gradients(g, self, dz, GreaterEqualOp)


@irdl_op_definition
class MinimumOp(BinaryElementwiseOp):
    """GE's Minimum (ONNX Min of two inputs); at a tie the gradient goes to `a`."""

    name = "ge.minimum"
    traits = traits_def(PreservesZero())

    def grad_ab(self, g: GradBuilder, dz: SSAValue) -> tuple[SSAValue | None, SSAValue | None]:
        from ge.ge_dialects.ge.logic import LessEqualOp

        return _selected_gradients(g, self, dz, LessEqualOp)


@irdl_op_definition
class ModOp(BinaryElementwiseOp):
    """ONNX Mod: the remainder of a / b. `fmod` 0 gives it the divisor's sign (Python's %), 1 the
    dividend's (C's fmod)."""

    name = "ge.mod"
    ONNX: ClassVar = ("Mod",)
    # FloorMod / Mod: kept f32 like a long division (the remainder of a large quotient keeps none of f16's 11 bits)
    PRECISION: ClassVar = "black"
    fmod = opt_prop_def(IntProp)
    traits = traits_def(Transcendental())
    DEFAULTS: ClassVar = {"fmod": 0}

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        if a.prop("fmod") not in (0, 1):
            raise a.fail(f"fmod must be 0 or 1, got {a.prop('fmod')}")
        return super().infer(a)

    def grad_ab(self, g: GradBuilder, dz: SSAValue) -> tuple[SSAValue | None, SSAValue | None]:
        """z = a - q b with q = trunc(a / b) (fmod 1) or floor(a / b) (fmod 0), constant between
        its jumps: da = dz, db = -dz q = -dz (a - z) / b."""
        db = g.neg(g.mul(dz, g.div(g.sub(self.a, self.z), self.b)))
        return g.sum_to(dz, value_shape(self.a)), g.sum_to(db, value_shape(self.b))


@irdl_op_definition
class AbsOp(UnaryElementwiseOp):
    name = "ge.abs"
    ONNX: ClassVar = ("Abs",)
    traits = traits_def(PreservesZero())
    ALLOWED: ClassVar = NUMERIC_TYPES

    def grad_x(self, g: GradBuilder, dy: SSAValue) -> SSAValue:
        return g.mul(dy, g.value(SignOp, {"x": self.x}))  # 0 at 0, as PyTorch's


@irdl_op_definition
class NegOp(UnaryElementwiseOp):
    name = "ge.neg"
    ONNX: ClassVar = ("Neg",)
    traits = traits_def(PreservesZero())
    ALLOWED: ClassVar = SIGNED_NUMERIC

    def grad_x(self, g: GradBuilder, dy: SSAValue) -> SSAValue:
        return g.neg(dy)


@irdl_op_definition
class SignOp(UnaryElementwiseOp):
    """-1, 0 or 1 by the sign of x (0 for NaN's sign is NaN, as numpy's)."""

    name = "ge.sign"
    ONNX: ClassVar = ("Sign",)
    ALLOWED: ClassVar = NUMERIC_TYPES

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """None: piecewise constant, its derivative is zero wherever it exists."""
        return [None]


@irdl_op_definition
class ReciprocalOp(UnaryElementwiseOp):
    name = "ge.reciprocal"
    ONNX: ClassVar = ("Reciprocal",)
    traits = traits_def(Transcendental())

    def grad_x(self, g: GradBuilder, dy: SSAValue) -> SSAValue:
        return g.neg(g.mul(dy, g.mul(self.y, self.y)))  # -dy / x^2


class RoundingOp(UnaryElementwiseOp):
    """Floor, Ceil: piecewise constant, no gradient (zero wherever it exists)."""

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        return [None]


@irdl_op_definition
class FloorOp(RoundingOp):
    name = "ge.floor"
    ONNX: ClassVar = ("Floor",)


@irdl_op_definition
class CeilOp(RoundingOp):
    name = "ge.ceil"
    ONNX: ClassVar = ("Ceil",)


@irdl_op_definition
class HardSigmoidOp(UnaryElementwiseOp):
    """ONNX HardSigmoid: max(0, min(1, alpha x + beta))."""

    name = "ge.hard_sigmoid"
    ONNX: ClassVar = ("HardSigmoid",)
    alpha = opt_prop_def(FloatProp)
    beta = opt_prop_def(FloatProp)
    DEFAULTS: ClassVar = {"alpha": 0.2, "beta": 0.5}

    def grad_x(self, g: GradBuilder, dy: SSAValue) -> SSAValue:
        """alpha dy where 0 < y < 1, else 0."""
        from ge.ge_dialects.ge.logic import GreaterOp, LessOp, LogicalAndOp
        from ge.ge_dialects.ge.tensor_ops import WhereOp

        above = g.value(GreaterOp, {"a": self.y, "b": g.scalar(0.0, self.y)})
        below = g.value(LessOp, {"a": self.y, "b": g.scalar(1.0, self.y)})
        inside = g.value(LogicalAndOp, {"a": above, "b": below})
        return g.value(WhereOp, {"condition": inside, "X": g.scale(dy, self.p("alpha")), "Y": g.scalar(0.0, dy)})


@irdl_op_definition
class LeakyReluOp(UnaryElementwiseOp):
    """ONNX LeakyRelu: x for x >= 0, alpha x below."""

    name = "ge.leaky_relu"
    ONNX: ClassVar = ("LeakyRelu",)
    traits = traits_def(PreservesZero())
    alpha = opt_prop_def(FloatProp)
    DEFAULTS: ClassVar = {"alpha": 0.01}

    def grad_x(self, g: GradBuilder, dy: SSAValue) -> SSAValue:
        from ge.ge_dialects.ge.logic import GreaterEqualOp
        from ge.ge_dialects.ge.tensor_ops import WhereOp

        kept = g.value(GreaterEqualOp, {"a": self.x, "b": g.scalar(0.0, self.x)})
        return g.value(WhereOp, {"condition": kept, "X": dy, "Y": g.scale(dy, self.p("alpha"))})


@irdl_op_definition
class ThresholdedReluOp(UnaryElementwiseOp):
    """ONNX ThresholdedRelu (GE's ThresholdedRelu): x where x > alpha, else 0."""

    name = "ge.thresholded_relu"
    ONNX: ClassVar = ("ThresholdedRelu",)
    traits = traits_def(PreservesZero())
    alpha = opt_prop_def(FloatProp)
    DEFAULTS: ClassVar = {"alpha": 1.0}

    def grad_x(self, g: GradBuilder, dy: SSAValue) -> SSAValue:
        from ge.ge_dialects.ge.logic import GreaterOp
        from ge.ge_dialects.ge.tensor_ops import WhereOp

        kept = g.value(GreaterOp, {"a": self.x, "b": g.scalar(self.p("alpha"), self.x)})
        return g.value(WhereOp, {"condition": kept, "X": dy, "Y": g.zeros(dy)})


def _show_shape(shape: Shape) -> str:
    """(4, ?) for a shape with an unknown dim, (5,) for rank 1."""
    dims = ", ".join("?" if d is None else str(d) for d in shape)
    return f"({dims},)" if len(shape) == 1 else f"({dims})"


class ActivationGradOp(GeOp):
    """dx = dy * f'(...): an activation's gradient fused with its incoming gradient `dy`, from one
    saved forward value (named by `SAVED`) of dy's shape and element type, as GE's *Grad ops.
    Subclasses define both operands, `dy` first (xDSL orders a subclass's fields before its base's)."""

    dx = result_def(TensorType)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR), Elementwise())
    NO_GRADIENT: ClassVar = "it is a backward op, and second derivatives are not built"

    SAVED: ClassVar[str]

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        dtype = a.expect_dtype("dy", FLOAT_TYPES)
        a.expect_same_dtype("dy", cls.SAVED)
        dy_shape, saved_shape = a.shape("dy"), a.shape(cls.SAVED)
        compatible = len(dy_shape) == len(saved_shape) and all(
            d is None or s is None or d == s for d, s in zip(dy_shape, saved_shape)
        )
        if not compatible:
            shown = " and ".join(_show_shape(s) for s in (dy_shape, saved_shape))
            raise a.fail(f"operands 'dy' and '{cls.SAVED}' must have one shape, got {shown}")
        shape = tuple(s if d is None else d for d, s in zip(dy_shape, saved_shape))
        return [tensor(dtype, shape, _same_rank_format(a, ("dy", cls.SAVED), len(shape)))]


@irdl_op_definition
class ReluGradOp(ActivationGradOp):
    """GE's ReluGrad: dy where the ReLU's output y is positive, else 0 (the ReLU mask applied to
    its incoming gradient, one pass instead of a compare, a cast and a multiply)."""

    name = "ge.relu_grad"
    traits = traits_def(StorageFormats(Carries("elementwise", ACTIVATION_FORMATS, ("dy", "y"), ("dx",))))
    DATA_OPERANDS: ClassVar = ("dy", "y")
    dy = operand_def(TensorType)
    y = operand_def(TensorType)
    SAVED: ClassVar = "y"


@irdl_op_definition
class GeluGradOp(ActivationGradOp):
    """GE's GeluGrad: dy * gelu'(x) for the erf form ("none") or the tanh form of the forward."""

    name = "ge.gelu_grad"
    DATA_OPERANDS: ClassVar = ("dy", "x")
    dy = operand_def(TensorType)
    x = operand_def(TensorType)
    approximate = opt_prop_def(StrProp)
    traits = traits_def(
        Transcendental(), StorageFormats(Carries("elementwise", ACTIVATION_FORMATS, ("dy", "x"), ("dx",)))
    )
    DEFAULTS: ClassVar = {"approximate": "none"}
    SAVED: ClassVar = "x"

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        if a.prop("approximate") not in ("none", "tanh"):
            raise a.fail(f'approximate must be "none" or "tanh", got "{a.prop("approximate")}"')
        return super().infer(a)


ELEMENTWISE_OPS = [
    ReluOp,
    ThresholdedReluOp,
    SqrtOp,
    ErfOp,
    TanhOp,
    SigmoidOp,
    HardSwishOp,
    IdentityOp,
    ExpOp,
    LogOp,
    GeluOp,
    AddOp,
    SubOp,
    MulOp,
    DivOp,
    PowOp,
    EqualOp,
    MaximumOp,
    MinimumOp,
    ModOp,
    AbsOp,
    NegOp,
    SignOp,
    ReciprocalOp,
    FloorOp,
    CeilOp,
    HardSigmoidOp,
    LeakyReluOp,
    ReluGradOp,
    GeluGradOp,
]
