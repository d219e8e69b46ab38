"""The symbolic shape of every value of a function: unknown dims as expressions over the graph's
named dims (ge_dialects/ge/symbolic.py), and the symbolic value of the small integer tensors that
compute shapes (`ge.shape` of a `[batch, seq, 768]` tensor is `[batch, seq, 768]`).

Nothing here is a second definition of an op: shapes come from each op's own shape function, run
on `Dim`s instead of `?`, and shape values from the interpreter's kernels, run on arrays of `Dim`s.
The sources are the function's arguments (a dim named in `ge.dims` is that symbol, in its range
from `ge.dim_ranges`; an unnamed unknown dim is a fresh symbol of its own, `arg0.1`). Where an
op's shape function or kernel cannot decide on symbols (whether `batch == 1` for a broadcast,
`int(seq)`), its unknown result dims are fresh symbols: unknown, never guessed. A static dim of
a declared type always wins.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType
from xdsl.interpreter import Interpreter
from xdsl.ir import SSAValue
from xdsl.traits import is_side_effect_free

from ge.ge_dialects import ge
from ge.ge_dialects.ge.base import GeOp, InferArgs, constant_value
from ge.ge_dialects.ge.dims import input_dims, ranges_of
from ge.ge_dialects.ge.symbolic import Dim, symbol
from ge.ge_dialects.ge.tensor_ops import shape_range
from ge.ge_dialects.ge.types import numpy_dtype, shape_of
from ge.interpreter.ge import can_evaluate, folding_interpreter

Size = int | Dim
SymbolicShape = tuple[Size, ...]

VALUE_LIMIT = 64
"""Largest integer tensor whose symbolic value is tracked (shape vectors, not data)."""


@dataclass
class SymbolicShapes:
    """Per value of one function: its symbolic shape and, for small integer tensors that depend on
    symbolic dims, their symbolic value (an object array of ints and `Dim`s)."""

    shapes: dict[SSAValue, SymbolicShape] = field(default_factory=dict)
    values: dict[SSAValue, np.ndarray] = field(default_factory=dict)
    _fresh: int = 0

    def shape(self, value: SSAValue) -> SymbolicShape:
        """The value's symbolic shape (fresh symbols for the unknown dims of a value not analyzed)."""
        known = self.shapes.get(value)
        if known is None:
            known = self.shapes[value] = self._declared(value, None)
        return known

    def value(self, value: SSAValue) -> np.ndarray | None:
        """The value's contents when they are known: a symbolic value, or an inline constant."""
        symbolic = self.values.get(value)
        return symbolic if symbolic is not None else constant_value(value)

    def fresh(self, hint: str) -> Dim:
        self._fresh += 1
        return symbol(f"{hint}.{self._fresh}")

    def _declared(self, value: SSAValue, inferred: tuple[object, ...] | None) -> SymbolicShape:
        """The declared shape, its unknown dims taken from `inferred` where that is a size."""
        t = value.type
        if not isinstance(t, TensorType):
            return ()
        dims = shape_of(t)
        if inferred is None or len(inferred) != len(dims):
            inferred = (None,) * len(dims)
        return tuple(
            d if d is not None else s if isinstance(s, (int, Dim)) and not isinstance(s, bool) else self.fresh("?")
            for d, s in zip(dims, inferred)
        )


class SymbolicInferArgs(InferArgs):
    """What a shape function sees on symbols: operand shapes with `Dim`s, and the symbolic values
    of shape operands."""

    def __init__(self, op: GeOp, known: SymbolicShapes):
        base = InferArgs.of(op)
        super().__init__(base.op_cls, base.operands, base.props, base.num_results, base.where)
        self.known = known

    def shape(self, name: str):
        self.type(name)  # checks that it is a tensor
        value = self.value(name)
        assert value is not None
        return self.known.shape(value)

    def const(self, name: str) -> np.ndarray | None:
        v = self.value(name)
        return None if v is None else self.known.value(v)

    def const_ints(self, name: str) -> list[int] | None:
        c = self.const(name)
        if c is None:
            return None
        return [x if isinstance(x, Dim) else int(x) for x in np.asarray(c).reshape(-1)]  # type: ignore[misc]


def analyze(fn: func.FuncOp, interpreter: Interpreter | None = None) -> SymbolicShapes:
    """Symbolic shapes and shape values of `fn`'s values, in program order."""
    known = SymbolicShapes()
    block = fn.body.blocks.first
    if block is None:
        return known
    names = input_dims(fn.arg_attrs, len(block.args))
    ranges = ranges_of(fn)
    for index, arg in enumerate(block.args):
        if isinstance(arg.type, TensorType):
            dims = shape_of(arg.type)
            padded = [*names[index], *([None] * (len(dims) - len(names[index])))]
            known.shapes[arg] = tuple(
                d if d is not None else symbol(n, *ranges.get(n, (1, None))) if n else known.fresh(f"arg{index}")
                for d, n in zip(dims, padded)
            )
    interpreter = interpreter or folding_interpreter()
    for op in fn.body.walk():
        if isinstance(op, GeOp):
            _visit(op, known, interpreter)
    return known


def _visit(op: GeOp, known: SymbolicShapes, interpreter: Interpreter) -> None:
    inferred: list[tuple[object, ...] | None] = [None] * len(op.results)
    if op.has_shape_function() and any(v in known.values or _symbolic(known.shape(v)) for v in op.operands):
        try:
            types = type(op).infer(SymbolicInferArgs(op, known))
            inferred = [getattr(t, "dims", None) for t in types[: len(op.results)]]
            inferred += [None] * (len(op.results) - len(inferred))
        except Exception:
            pass
    for result, dims in zip(op.results, inferred):
        known.shapes[result] = known._declared(result, dims)
    value = _symbolic_value(op, known, interpreter)
    if value is not None:
        known.values[op.results[0]] = value


def _symbolic(shape: SymbolicShape) -> bool:
    return any(isinstance(d, Dim) for d in shape)


def _symbolic_value(op: GeOp, known: SymbolicShapes, interpreter: Interpreter) -> np.ndarray | None:
    """The op's single result as an array of sizes, when it is a small integer tensor computed from
    symbolic dims (`ge.shape` of a symbolic shape, or shape arithmetic on such values)."""
    if len(op.results) != 1 or not isinstance(op.results[0].type, TensorType):
        return None
    kind = numpy_dtype(op.results[0].type.element_type).kind
    if kind not in "iub":
        return None
    if isinstance(op, ge.ShapeOp):
        return _dims_value(op, known)
    if not any(v in known.values for v in op.operands) or not is_side_effect_free(op) or not can_evaluate(op):
        return None
    found = [known.value(v) for v in op.operands]
    operands = [v for v in found if v is not None]
    if len(operands) < len(found) or any(v.size > VALUE_LIMIT for v in operands):
        return None
    if isinstance(op, ge.CastOp) and kind in "iu" and operands[0].dtype == object:
        return operands[0]  # sizes cast between integer types: the same sizes
    try:
        (result,) = interpreter.run_op(op, tuple(np.asarray(v) for v in operands))
    except Exception:
        return None
    result = np.asarray(result)
    if result.size > VALUE_LIMIT:
        return None
    return result  # all ints or bools: decided on the symbols (fold-symbolic-shapes makes it a constant)


def _dims_value(op: ge.ShapeOp, known: SymbolicShapes) -> np.ndarray | None:
    dims = known.shape(op.data)
    start, end = shape_range(len(dims), op.p("start"), op.p("end"))
    selected = dims[start:end]
    if not any(isinstance(d, Dim) for d in selected):
        return None  # static: fold-constants folds it
    value = np.empty(len(selected), dtype=object)
    value[:] = list(selected)
    return value


__all__ = ["SymbolicInferArgs", "SymbolicShapes", "analyze"]
