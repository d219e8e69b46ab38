"""Rules of `cancel-casts` (and the no-op cast `simplify` shares): casts that do nothing, pairs
that undo each other, chains that are one cast.

* `noop`: a cast to the type its input already has is its input.
* `symmetric-pair`: `cast(cast(x : A -> B) : B -> A)` is `x` when A -> B is a widening, or a
  narrowing between the ordinary floats. This is GE's TransOpSymmetryElimination rule: a float
  narrowing (f32 -> f16 -> f32) *does* cancel; the pair is replaced by the exact value, so the
  result can only gain precision. A truth test (to i1), float -> integer truncation, integer
  narrowing (it wraps) and quantization to f8/f4/i4/i2 change what the value means: refused.
* `compose`: `cast(cast(x : A -> B) : B -> C)` is `cast(x : A -> C)` when the middle step cannot
  change the final value: A -> B is exact (f16 -> f32, i16 -> f32, ...), or A is an integer type,
  B is f32/f64 and C is f16 (every integer f16 can hold finitely is exact in f32).

* `dequantize-to`: `cast(DequantizeLinear(q) : f32 -> f16)` is `DequantizeLinear(q)` with
  `output_dtype` f16 (also bf16): the op computes in f32 and rounds once to its result type.
* `quantize-from`: `QuantizeLinear(cast(x : f16 -> f32))` is `QuantizeLinear(x)`: the widening
  is exact and the op divides in f32 whatever its input's type.
The last two keep a quantized model's float casts (mixed precision puts them around every
DequantizeLinear and QuantizeLinear) out of the layouts, where a cast between types of two C0
sizes would need its own TransData.

A first cast other ops also read stays (the rules are not `private`, except `dequantize-to`,
which takes the place of the DequantizeLinear).
"""

from __future__ import annotations

import dataclasses

from xdsl.dialects.builtin import TensorType, bf16, f16, f32, f64, i1, i8, i16, i32, i64
from xdsl.ir import Attribute, Operation

from ge.ge_dialects.ge.base import location_name
from ge.ge_dialects.ge.quantize import DequantizeLinearOp, QuantizeLinearOp
from ge.ge_dialects.ge.tensor_ops import ONNX_ELEMENT_TYPES, CastOp
from ge.ge_dialects.ge.types import FLOAT_TYPES, type_name, ui8, ui16, ui32, ui64
from ge.passes.rewrite import Builder, Match, Op, Reject, Rule, copy_props

#: ge element type -> the ONNX data type number `ge.cast`'s `to` holds.
ONNX_NUMBER: dict[Attribute, int] = {t: n for n, t in ONNX_ELEMENT_TYPES.items()}

#: Significand bits (including the implicit one) of the float types.
_MANTISSA = {f16: 11, bf16: 8, f32: 24, f64: 53}
#: Largest exponent of the float types (the max finite value is below 2**(emax + 1)).
_EMAX = {f16: 15, bf16: 127, f32: 127, f64: 1023}
#: Value bits of the integer types (i1 is a 0/1 integer here).
_INT_BITS = {i1: 1, i8: 7, i16: 15, i32: 31, i64: 63, ui8: 8, ui16: 16, ui32: 32, ui64: 64}
_SIGNED = {i8, i16, i32, i64}


def elem(value) -> Attribute:
    t = value.type
    return t.element_type if isinstance(t, TensorType) else t


def is_exact(src: Attribute, dst: Attribute) -> bool:
    """Whether converting src -> dst keeps every value exactly (a widening)."""
    if src == dst:
        return True
    if src in _MANTISSA and dst in _MANTISSA:
        return _MANTISSA[src] <= _MANTISSA[dst] and _EMAX[src] <= _EMAX[dst]
    if src in _INT_BITS and dst in _MANTISSA:
        return _INT_BITS[src] <= _MANTISSA[dst]
    if src in _INT_BITS and dst in _INT_BITS and dst != i1:
        if src == i1:
            return True
        if (src in _SIGNED) and (dst not in _SIGNED):
            return False  # negative values
        return _INT_BITS[src] <= _INT_BITS[dst]
    return False


def changes_meaning(src: Attribute, dst: Attribute) -> bool:
    """Whether undoing src -> dst would change what the program means. Only a widening or a
    narrowing between the ordinary floats (GE's symmetry elimination) may be undone; a truth
    test, float -> integer truncation, integer narrowing (it wraps) and quantization to the narrow
    types (f8, f4, i4, i2) may not."""
    if is_exact(src, dst):
        return False
    return not (src in FLOAT_TYPES and dst in FLOAT_TYPES)


def composable(a: Attribute, b: Attribute, c: Attribute) -> bool:
    """Whether cast(cast(x: a -> b): b -> c) equals cast(x: a -> c) for every x."""
    if is_exact(a, b):
        return True
    # Integers up to f16's largest finite value (65504) are exact in f32 and f64; beyond it
    # both paths overflow.
    return a in _INT_BITS and a != i1 and b in (f32, f64) and c == f16


def make_cast(value, dtype: Attribute) -> CastOp:
    """A new (unattached) `ge.cast` of `value` to `dtype`."""
    cast = CastOp.create({"input": value}, {"to": ONNX_NUMBER[dtype]})
    assert isinstance(cast, CastOp)  # GeOp.create makes an op of the class it is called on
    return cast


# -- the rules -------------------------------------------------------------------------------------


def _keeps_type(op: Operation) -> bool:
    return op.results[0].type == op.operands[0].type


def _returns_to_source(op: Operation) -> bool:
    """cast(cast(x)) whose result has x's type."""
    inner = op.operands[0].owner
    return isinstance(inner, CastOp) and inner.input.type == op.results[0].type


def _composes(op: Operation) -> bool:
    inner = op.operands[0].owner
    return (
        isinstance(inner, CastOp)
        and not _returns_to_source(op)
        and composable(elem(inner.input), elem(op.operands[0]), elem(op.results[0]))
    )


def _steps(m: Match) -> str:
    """The element types along the pair: "a -> b -> c"."""
    return " -> ".join(type_name(elem(v)) for v in (m["x"], m["inner"], m["cast"]))


def _input(m: Match, b):
    return m["x"]


def _one_cast(m: Match, b):
    new = b.add(make_cast(m["x"], elem(m["cast"])))
    new.location = m.root.location
    return new.results[0]


NOOP_CAST = Rule(
    "noop",
    Op(CastOp, "x", where=_keeps_type),
    _input,
    says=lambda m: f"the value already is {type_name(elem(m['x']))}",
    doc="a cast to the type it has",
)

RULES: list[Rule] = [
    NOOP_CAST,
    Rule(
        "symmetric-pair",
        Op(CastOp, Op(CastOp, "x", name="inner", any_block=True), name="cast", where=_returns_to_source),
        _input,
        rejects=[
            Reject(
                lambda m: f"{type_name(elem(m['x']))} -> {type_name(elem(m['inner']))} changes the value's meaning",
                lambda m: changes_meaning(elem(m["x"]), elem(m["inner"])),
            )
        ],
        says=lambda m: f"{_steps(m)} is the original value",
        shows=("inner", "cast"),
        private=False,
        doc="cast(cast(x: A -> B): B -> A) -> x unless A -> B changes what the value means",
    ),
    Rule(
        "compose",
        Op(CastOp, Op(CastOp, "x", name="inner", any_block=True), name="cast", where=_composes),
        _one_cast,
        says=lambda m: f"{_steps(m)} is one cast",
        shows=("inner", "cast"),
        private=False,
        doc="cast(cast(x: A -> B): B -> C) -> cast(x: A -> C) when the middle step cannot matter",
    ),
]


def _dequantized_to_half(op: Operation) -> bool:
    """A cast of a DequantizeLinear's f32 result to f16 or bf16."""
    source = op.operands[0]
    return isinstance(source.owner, DequantizeLinearOp) and elem(source) == f32 and elem(op.results[0]) in (f16, bf16)


def _dequantize_to(m: Match, b: Builder):
    dq = m.op_as("dq", DequantizeLinearOp)
    operands = {"x": dq.x, "x_scale": dq.x_scale, "x_zero_point": dq.x_zero_point}
    props = copy_props(dq, output_dtype=ONNX_NUMBER[elem(m["cast"])])
    present = {k: v for k, v in operands.items() if v is not None}
    return b.op(DequantizeLinearOp, present, props, name=location_name(dq)).results[0]


def _widened_to_f32(op: Operation) -> bool:
    return elem(op.results[0]) == f32 and elem(op.operands[0]) in (f16, bf16)


def _quantize_from(m: Match, b: Builder):
    q = m.root_as(QuantizeLinearOp)
    operands = {"x": m["x"], "y_scale": q.y_scale, "y_zero_point": q.y_zero_point}
    return b.op(QuantizeLinearOp, {k: v for k, v in operands.items() if v is not None}, copy_props(q)).results[0]


RULES += [
    Rule(
        "dequantize-to",
        Op(CastOp, Op(DequantizeLinearOp, name="dq"), name="cast", where=_dequantized_to_half),
        _dequantize_to,
        says=lambda m: f"the DequantizeLinear rounds to {type_name(elem(m['cast']))} itself",
        doc="cast(DequantizeLinear(q): f32 -> f16) -> DequantizeLinear(q) with output_dtype f16",
    ),
    Rule(
        "quantize-from",
        Op(QuantizeLinearOp, Op(CastOp, "x", name="cast", where=_widened_to_f32)),
        _quantize_from,
        says=lambda m: f"the QuantizeLinear divides {type_name(elem(m['x']))} in f32 itself",
        private=False,
        doc="QuantizeLinear(cast(x: f16 -> f32)) -> QuantizeLinear(x)",
    ),
]

SIMPLIFY_NOOP_CAST = dataclasses.replace(NOOP_CAST, name="noop-cast", says=None)
"""The same rule in `simplify`'s table, under the name (and the plain remark) simplify reports."""
