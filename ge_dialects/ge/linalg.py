"""Linear algebra beyond matmul: Einsum (GE's Einsum: a contraction of two or more operands runs on
the Cube, one operand's transpose, trace or sum on the Vector unit), Det (GE's
MatrixDeterminant, an AI CPU op) and the DFT (an AI CPU op: GE has no Fourier transform of its own)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Pure

from ge.ge_dialects.ge.base import GeOp, InferArgs, IntProp, StrProp
from ge.ge_dialects.ge.facts import Engine, RunsOn
from ge.ge_dialects.ge.grad import GradBuilder, NotDifferentiable
from ge.ge_dialects.ge.types import FLOAT_TYPES, NUMERIC_TYPES, Shape, shape_of, tensor, tensor_type_of, type_name

ELLIPSIS = "..."


class EinsumError(ValueError):
    """The equation does not fit the operands (the verifier's message)."""


@dataclass(frozen=True)
class Equation:
    """An einsum equation with its ellipses spelled out: one string of index letters per operand
    and for the result ("ij,jk->ik"); the ellipsis dims become `ellipsis` letters that appear in
    no term of the equation as written."""

    terms: tuple[str, ...]
    output: str

    @classmethod
    def parse(cls, equation: str, ranks: Sequence[int]) -> Equation:
        text = equation.replace(" ", "")
        lhs, arrow, rhs = text.partition("->")
        written = lhs.split(",")
        if len(written) != len(ranks):
            raise EinsumError(f"equation '{equation}' has {len(written)} operand terms, {len(ranks)} operands given")
        letters = set(text.replace(ELLIPSIS, "").replace(",", "").replace("->", ""))
        if not all(c.isalpha() for c in letters):
            raise EinsumError(f"equation '{equation}' may hold only letters, ',', '->' and '...'")
        spare = iter(c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if c not in letters)
        widest = 0
        counts = []
        for term, rank in zip(written, ranks):
            if term.count(ELLIPSIS) > 1 or (ELLIPSIS not in term and len(term) != rank):
                raise EinsumError(f"term '{term}' of equation '{equation}' does not fit an operand of rank {rank}")
            count = rank - len(term.replace(ELLIPSIS, ""))
            if count < 0:
                raise EinsumError(
                    f"term '{term}' of equation '{equation}' has more indices than its operand's rank {rank}"
                )
            counts.append(count if ELLIPSIS in term else 0)
            widest = max(widest, counts[-1])
        dims = "".join(next(spare) for _ in range(widest))
        terms = tuple(t.replace(ELLIPSIS, dims[widest - n :]) for t, n in zip(written, counts))
        if arrow:
            if rhs.count(ELLIPSIS) > 1:
                raise EinsumError(f"the result term of equation '{equation}' has more than one '...'")
            output = rhs.replace(ELLIPSIS, dims)
            unknown = set(output) - set("".join(terms))
            if unknown or len(set(output)) != len(output):
                raise EinsumError(f"the result term of equation '{equation}' repeats or invents an index")
        else:  # implicit: the ellipsis dims, then the letters seen once, in ASCII order
            joined = "".join(written).replace(ELLIPSIS, "")
            output = dims + "".join(sorted(c for c in set(joined) if joined.count(c) == 1))
        return cls(terms, output)

    def sizes(self, shapes: Sequence[Shape]) -> dict[str, int | None]:
        """Each index letter's size: sizes must agree, except that a size-1 dim broadcasts."""
        sizes: dict[str, int | None] = {}
        for term, shape in zip(self.terms, shapes):
            for letter, dim in zip(term, shape):
                if letter not in sizes or sizes[letter] == 1:
                    sizes[letter] = dim
                elif sizes[letter] is None:
                    sizes[letter] = None if dim == 1 else dim
                elif dim not in (None, 1, sizes[letter]):
                    raise EinsumError(f"index '{letter}' has sizes {sizes[letter]} and {dim}")
        return sizes

    def text(self) -> str:
        return ",".join(self.terms) + "->" + self.output


def _shapes(values: Sequence[SSAValue]) -> list[Shape]:
    return [shape_of(tensor_type_of(v)) for v in values]


@irdl_op_definition
class EinsumOp(GeOp):
    """ONNX Einsum: `equation` over the `Inputs`, ellipses and the implicit form included."""

    name = "ge.einsum"
    ONNX: ClassVar = ("Einsum",)
    PRECISION: ClassVar = "white"  # a Cube contraction, as BatchMatMul (true); Einsum's own flag not found
    DATA_OPERANDS: ClassVar = ("Inputs",)
    Inputs = var_operand_def(TensorType)
    Output = result_def(TensorType)
    equation = opt_prop_def(StrProp)
    traits = traits_def(Pure(), RunsOn(Engine.CUBE))

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        values = a.values("Inputs")
        if not values:
            raise a.fail("needs at least one input")
        if a.prop("equation") is None:
            raise a.fail("property 'equation' is required")
        types = [tensor_type_of(v) for v in values]
        for i, t in enumerate(types):
            if t.element_type not in NUMERIC_TYPES:
                raise a.fail(f"input {i} has element type {type_name(t.element_type)}; expected a number")
            if t.element_type != types[0].element_type:
                first, other = type_name(types[0].element_type), type_name(t.element_type)
                raise a.fail(f"inputs 0 and {i} have element types {first} and {other}")
        shapes = _shapes(values)
        try:
            equation = Equation.parse(a.prop("equation"), [len(s) for s in shapes])
            sizes = equation.sizes(shapes)
        except EinsumError as e:
            raise a.fail(str(e)) from None
        return [tensor(types[0].element_type, [sizes[c] for c in equation.output])]

    def parsed(self) -> Equation:
        return Equation.parse(self.p("equation"), [len(s) for s in _shapes(self.Inputs)])

    def engine(self) -> Engine:
        """A contraction of two or more operands runs on the Cube; one operand's transpose, trace
        or sum on the Vector unit."""
        return Engine.CUBE if len(self.Inputs) > 1 else Engine.VECTOR

    def macs(self) -> int:
        """One multiply-accumulate per point of the product's index space (every letter's size)."""
        if len(self.Inputs) < 2:
            return 0
        sizes = self.parsed().sizes(_shapes(self.Inputs))
        return math.prod(d or 1 for d in sizes.values())

    def vector_elements(self) -> int:
        if len(self.Inputs) > 1:
            return 0
        return math.prod(d or 1 for d in _shapes(self.Inputs)[0])

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """Operand i's cotangent is the einsum of dy with the other operands onto operand i's term,
        expanded over the indices only operand i has (summed away in the forward). Terms that
        repeat an index (a diagonal, a trace) and broadcast ellipsis dims have no gradient here."""
        (dy,) = cotangents
        if dy is None:
            return [None] * len(self.Inputs)
        if not all(v.type.element_type in FLOAT_TYPES for v in self.Inputs):  # type: ignore[attr-defined]
            return [None] * len(self.Inputs)
        equation = self.parsed()
        shapes = _shapes(self.Inputs)
        for term, shape in zip(equation.terms, shapes):
            sizes = equation.sizes(shapes)
            if len(set(term)) != len(term) or any(d != sizes[c] for c, d in zip(term, shape)):
                raise NotDifferentiable(f"{self.name}: no gradient for a repeated index or a broadcast dim")
        out = []
        for i, (term, shape) in enumerate(zip(equation.terms, shapes)):
            others = [(t, v) for j, (t, v) in enumerate(zip(equation.terms, self.Inputs)) if j != i]
            seen = set(equation.output).union(*(set(t) for t, _ in others))
            kept = "".join(c for c in term if c in seen)
            spec = ",".join([equation.output, *(t for t, _ in others)]) + "->" + kept
            grad = g.value(EinsumOp, {"Inputs": [dy, *(v for _, v in others)]}, {"equation": spec})
            if kept != term:
                grad = g.expand(g.reshape(grad, tuple(d if c in seen else 1 for c, d in zip(term, shape))), shape)
            out.append(grad)
        return out


@irdl_op_definition
class DetOp(GeOp):
    """ONNX Det: the determinants of the [*, M, M] input's matrices, of shape [*]."""

    name = "ge.det"
    ONNX: ClassVar = ("Det",)
    DATA_OPERANDS: ClassVar = ("X",)
    X = operand_def(TensorType)
    Y = result_def(TensorType)
    traits = traits_def(Pure(), RunsOn(Engine.AICPU))
    NO_GRADIENT: ClassVar = "its gradient needs a matrix inverse, which ge has no op for"

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        dtype = a.expect_dtype("X", FLOAT_TYPES)
        shape = a.shape("X")
        if len(shape) < 2:
            raise a.fail(f"needs [*, M, M] matrices, got rank {len(shape)}")
        m, n = shape[-2:]
        if m is not None and n is not None and m != n:
            raise a.fail(f"needs square matrices, got {m}x{n}")
        return [tensor(dtype, shape[:-2])]


@irdl_op_definition
class DftOp(GeOp):
    """ONNX DFT (opset 20 form: `axis` an operand; the attribute of opsets 17 and 19 is adapted
    to it at import). The input's last dim holds one (real) or two (real, imaginary) parts; the
    transform runs along `axis` (default -2, counted with that last dim) over `dft_length` points
    (the axis's length by default, zero-padded or cut to it), forward or `inverse` (scaled by
    1/n). `onesided` keeps the n//2 + 1 non-negative frequencies of a forward transform; an
    inverse one takes them and gives the real signal of 2 * (len - 1) points by default."""

    name = "ge.dft"
    ONNX: ClassVar = ("DFT",)
    DATA_OPERANDS: ClassVar = ("input",)
    input = operand_def(TensorType)
    dft_length = opt_operand_def(TensorType)
    axis = opt_operand_def(TensorType)
    output = result_def(TensorType)
    inverse = opt_prop_def(IntProp)
    onesided = opt_prop_def(IntProp)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(Pure(), RunsOn(Engine.AICPU))
    DEFAULTS: ClassVar = {"inverse": 0, "onesided": 0}
    NO_GRADIENT: ClassVar = "not built: its gradient is the adjoint transform, which no model here trains through"

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        dtype = a.expect_dtype("input", FLOAT_TYPES)
        shape = list(a.shape("input"))
        if len(shape) < 2 or shape[-1] not in (None, 1, 2):
            raise a.fail(f"the input must be [..., 1] (real) or [..., 2] (complex), got shape {shape}")
        inverse, onesided = bool(a.prop("inverse")), bool(a.prop("onesided"))
        length = a.const_ints("dft_length") if a.has("dft_length") else None
        axis_values = a.const_ints("axis") if a.has("axis") else [-2]
        out: list[int | None] = [*shape[:-1], 1 if inverse and onesided else 2]
        if axis_values is None:  # a runtime axis: only a transform that keeps its length is known
            if a.has("dft_length") or onesided:
                out = [*(None for _ in shape[:-1]), out[-1]]
            return [tensor(dtype, out)]
        (axis,) = axis_values
        if not -len(shape) <= axis <= len(shape) - 2 or axis == -1:
            raise a.fail(f"axis {axis} must name a signal dim of a rank-{len(shape)} input (not its last)")
        axis %= len(shape)
        n = dft_points(shape[axis], length[0] if length else None, inverse, onesided, bool(a.has("dft_length")))
        out[axis] = n // 2 + 1 if (onesided and not inverse and n is not None) else n
        return [tensor(dtype, out)]


def dft_points(along: int | None, length: int | None, inverse: bool, onesided: bool, given: bool) -> int | None:
    """The transform's length: `dft_length` when given (None when it is not a constant), else the
    axis's length, or 2 * (len - 1) for an inverse of one-sided frequencies."""
    if given:
        return length
    if along is None:
        return None
    return 2 * (along - 1) if inverse and onesided else along


LINALG_OPS = [EinsumOp, DetOp, DftOp]

__all__ = ["EinsumOp", "DetOp", "DftOp", "Equation", "EinsumError", "LINALG_OPS", "dft_points"]
