"""fold-symbolic-shapes: shape computations on unknown dims become constants a kernel reads
relative to its input.

An exported model computes the target of a Reshape from its input's shape at run time
(`Shape -> Gather -> Unsqueeze -> Concat -> Reshape`, `[batch, seq, 768] -> [batch, seq, 12, 64]`),
since batch and seq are unknown when it is exported. The symbolic shape analysis
(passes/symbolic_shapes.py) knows that target as `[batch, seq, 12, 64]`; written relative to the
input it is a constant: Reshape's 0 copies the input's dim, one -1 takes the elements left. So the
shape subgraph dies, the Reshape has a constant target and a result of known rank and static dims
(`?x?x12x64`), and the fusion rules that need both see it as they see the static graph's.

- Reshape (allowzero 0): an entry equal to the input's dim at the same place becomes 0; one other
  entry becomes -1 when the input's and the target's element counts are the same expression (so
  -1 is that entry at every binding, and a binding the original would refuse is refused too) and
  the target has no -1 of its own; the target's integers (an exporter's 0 and -1) stay.
- Expand: an entry equal to the input's dim it broadcasts with becomes 1.

Every other entry must be an integer. Named dims take their ranges from `dim_ranges`
(`batch=1:64,seq=1:512`, recorded on the function as `ge.dim_ranges` for later passes): a
position-embedding slice `[0, seq)` of a 512-row table is `seq` rows only when seq is at most 512.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException

from ge.ge_dialects import ge
from ge.ge_dialects.ge.base import describe, name_after
from ge.ge_dialects.ge.dims import DimsError, input_dims, parse_ranges, record_ranges, symbols
from ge.ge_dialects.ge.symbolic import Dim, Undecided
from ge.interpreter.ge import folding_interpreter
from ge.passes import remarks
from ge.passes.infer_shapes import refine, update_signature
from ge.passes.symbolic_shapes import SymbolicShape, SymbolicShapes, analyze

PASS = "fold-symbolic-shapes"


def _show(sizes) -> str:
    return "[" + ", ".join(str(s) for s in sizes) + "]"


def _same(a: int | Dim, b: int | Dim) -> bool:
    if isinstance(a, Dim):
        return a.same(b)
    return not isinstance(b, Dim) and a == b


def reshape_target(source: SymbolicShape, target: list[int | Dim]) -> list[int] | None:
    """Reshape's target written relative to `source`, or None if it cannot be. The target's own
    integers stay (an exporter's 0 copies, its -1 infers)."""
    relative: list[int | None] = []
    for i, entry in enumerate(target):
        if not isinstance(entry, Dim):
            relative.append(int(entry))
        elif i < len(source) and _same(entry, source[i]):
            relative.append(0)
        else:
            relative.append(None)
    left = [i for i, r in enumerate(relative) if r is None]
    if not left:
        return relative  # type: ignore[return-value]
    if len(left) > 1 or -1 in relative:
        return None
    resolved = [
        source[i] if not isinstance(entry, Dim) and entry == 0 and i < len(source) else entry
        for i, entry in enumerate(target)
    ]
    try:
        counts_agree = _same(math.prod(source), math.prod(resolved))
    except Undecided:
        return None
    if not counts_agree:
        return None
    relative[left[0]] = -1
    return relative  # type: ignore[return-value]


def expand_target(source: SymbolicShape, target: list[int | Dim]) -> list[int] | None:
    """Expand's target with each symbolic entry that equals the input's dim it meets as 1."""
    offset = len(target) - len(source)
    relative: list[int] = []
    for i, entry in enumerate(target):
        if not isinstance(entry, Dim):
            relative.append(int(entry))
        elif i >= offset and _same(entry, source[i - offset]):
            relative.append(1)
        else:
            return None
    return relative


@dataclass(frozen=True)
class FoldSymbolicShapesPass(ModulePass):
    """Replaces symbolic Reshape and Expand targets by constants (see the module docstring)."""

    name = "fold-symbolic-shapes"

    dim_ranges: str = ""
    """`batch=1:64,seq=1:512`: the range of each named dim, recorded on the functions naming it."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:
            ranges = parse_ranges(self.dim_ranges)
        except DimsError as e:
            raise DiagnosticException(f"{PASS}: {e}") from None
        functions = [f for f in op.walk() if isinstance(f, func.FuncOp)]
        if ranges:
            named = {n for fn in functions for n in symbols(input_dims(fn.arg_attrs, len(fn.args)))}
            unknown = sorted(set(ranges) - named)
            if unknown:
                listed = ", ".join(sorted(named)) or "none"
                raise DiagnosticException(
                    f"{PASS}: dim_ranges names {', '.join(unknown)}, which no input has (its named dims: {listed})"
                )
            for fn in functions:
                if set(ranges) & set(symbols(input_dims(fn.arg_attrs, len(fn.args)))):
                    record_ranges(fn, ranges)
        interpreter = folding_interpreter(op)
        for fn in functions:
            known = analyze(fn, interpreter)
            for inner in list(fn.body.walk()):
                if isinstance(inner, ge.ReshapeOp) and not inner.p("allowzero"):
                    self._rewrite(inner, inner.data, inner.shape, known, reshape_target)
                elif isinstance(inner, ge.ExpandOp):
                    self._rewrite(inner, inner.input, inner.shape, known, expand_target)
            update_signature(fn)

    @staticmethod
    def _rewrite(op, data, shape, known: SymbolicShapes, relative_to) -> None:
        value = known.values.get(shape)
        if value is None:
            return
        target = list(value.reshape(-1))
        relative = relative_to(known.shape(data), target)
        if relative is None:
            remarks.emit(
                PASS,
                "rejected",
                "relative-target",
                [op],
                f"{describe(op)}: target {_show(target)} is not expressible relative to its input "
                f"{_show(known.shape(data))}",
            )
            return
        const = name_after(ge.ConstantOp.inline(np.asarray(relative, dtype=np.int64)), op, "shape")
        Rewriter.insert_op(const, InsertPoint.before(op))
        op.operands[1] = const.output  # `shape`, the second operand of both ops
        refine(op)
        remarks.emit(PASS, "applied", "relative-target", [op], f"{describe(op)}: target {_show(target)} is {relative}")
