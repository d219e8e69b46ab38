"""`cancel-casts`: removes casts that do nothing and pairs of casts that undo each other.

Three rules on `ge.cast`, applied until none matches:

* `noop`: a cast to the element type its input already has is its input.
* `symmetric-pair`: `cast(cast(x : A -> B) : B -> A)` is `x` when A -> B is a widening, or a
  narrowing between the ordinary floats. This is GE's TransOpSymmetryElimination rule: a float
  narrowing (f32 -> f16 -> f32) *does* cancel; the pair is replaced by the exact value, so the
  result can only gain precision. A truth test (to i1), float -> integer truncation, integer
  narrowing (it wraps) and quantization to f8/f4/i4/i2 change what the value means: kept.
* `compose`: `cast(cast(x : A -> B) : B -> C)` is `cast(x : A -> C)` when the middle step cannot
  change the final value: A -> B is exact (f16 -> f32, i16 -> f32, ...), or A is an integer type,
  B is f32/f64 and C is f16 (every integer f16 can hold finitely is exact in f32).

A first cast left without users is erased. One remark per rewrite.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType, bf16, f16, f32, f64, i1, i8, i16, i32, i64
from xdsl.ir import Attribute
from xdsl.passes import ModulePass

from ge.ge_dialects.ge.tensor_ops import ONNX_ELEMENT_TYPES, CastOp
from ge.ge_dialects.ge.types import FLOAT_TYPES, type_name, ui8, ui16, ui32, ui64
from ge.passes import remarks

PASS = "cancel-casts"

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
    return CastOp.create({"input": value}, {"to": ONNX_NUMBER[dtype]})


def _rewrite(op: CastOp, refused: set[CastOp]) -> bool:
    """Applies the first rule that matches `op`; whether one did."""
    src, dst = elem(op.input), elem(op.output)
    block = op.parent
    if src == dst and op.input.type == op.output.type:
        remarks.emit(PASS, "applied", "noop", [op], f"the value already is {type_name(src)}")
        op.output.replace_all_uses_with(op.input)
        block.erase_op(op)
        return True
    inner = op.input.owner
    if not isinstance(inner, CastOp):
        return False
    a = elem(inner.input)
    if a == dst and inner.input.type == op.output.type:
        if changes_meaning(a, src):
            if op not in refused:
                refused.add(op)
                remarks.emit(PASS, "rejected", "symmetric-pair", [inner, op],
                             f"{type_name(a)} -> {type_name(src)} changes the value's meaning")
            return False
        remarks.emit(PASS, "applied", "symmetric-pair", [inner, op],
                     f"{type_name(a)} -> {type_name(src)} -> {type_name(dst)} is the original value")
        op.output.replace_all_uses_with(inner.input)
    elif composable(a, src, dst):
        new = make_cast(inner.input, dst)
        new.location = op.location
        remarks.emit(PASS, "applied", "compose", [inner, op],
                     f"{type_name(a)} -> {type_name(src)} -> {type_name(dst)} is one cast")
        block.insert_op_before(new, op)
        op.output.replace_all_uses_with(new.output)
    else:
        return False
    block.erase_op(op)
    if not inner.output.uses:
        inner.parent.erase_op(inner)
    return True


def cancel_casts(module: ModuleOp) -> None:
    """Applies the rules to every `ge.cast` until none matches (other ops are left alone)."""
    refused: set[CastOp] = set()
    changed = True
    while changed:
        changed = False
        for op in [o for o in module.walk() if isinstance(o, CastOp)]:
            if op.parent is not None and _rewrite(op, refused):
                changed = True


@dataclass(frozen=True)
class CancelCastsPass(ModulePass):
    name = "cancel-casts"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        cancel_casts(op)
