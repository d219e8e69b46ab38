"""The layout rules of `assign-formats`: derived from what each op declares (`StorageFormats` on the
op class, ge_dialects/ge/facts.py), with the conditions those declarations name defined here.

Two kinds of declaration, each made a rewrite-engine `Rule` by the constructors of `planning.py`:

- `ComputesIn` -> `anchor(...)`: an op that wants a format. Its listed operands are converted to
  the format (a TransData goes in front when the producer stores the value otherwise) and its
  listed results are produced in it. E.g. Conv computes on NC1HWC0 activations with FRACTAL_Z
  weights.
- `Carries` -> `follow(...)`: a format-agnostic op (GE propagates formats through them). When one
  of its full-shape operands arrives in a format it carries, all its full-shape operands and its
  listed results take that format; operands that broadcast must be scalars or vectors the format
  keeps whole (`BROADCASTS`), and they are read as they are.

A condition is named on the op (`("weight", "W")`) and defined in `CONDITIONS` as a constructor of
a check `fn(op, options) -> None | reason`: None when the constraint holds, else the reason the
rule does not apply, which the pass reports as a `rejected` remark. Besides its own checks, every
rule checks that every value it would relayout can have the format (rank, element type with a C0,
static block dims: `ge.ge_dialects.ge.layout.cannot_store`). An op class has anchor rules or one
follow rule, never both (`test_rule_tables.py` checks it).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

from xdsl.dialects.builtin import bf16, f16, f32

from ge.ge_dialects import ge
from ge.ge_dialects.ge.base import GeOp, constant_value, describe
from ge.ge_dialects.ge.facts import Carries, ComputesIn, Condition, StorageFormats
from ge.ge_dialects.ge.layout import FRACTAL_NZ, NC1HWC0, c0_of
from ge.ge_dialects.ge.tensor_ops import pad_widths, slice_bounds
from ge.ge_dialects.ge.types import Shape, shape_of, type_name
from ge.passes.layout.insert_trans_data import annotation, operand_names
from ge.passes.layout.planning import Broadcast, LayoutCheck, Options, ShapeMatch, anchor, follow, same_shape
from ge.passes.rewrite import Rule
from ge.passes.tensor_values import tensor_type

Check = LayoutCheck


# -- checks ----------------------------------------------------------------------------------------


def _shape(op: GeOp, name: str) -> Shape:
    return shape_of(getattr(op, name).type)


def _product(dims: Shape) -> int | None:
    """The product of `dims`; None when one is unknown."""
    known = [d for d in dims if d is not None]
    return math.prod(known) if len(known) == len(dims) else None


def is_weight(name: str) -> Check:
    """A constant (its TransData is folded) or a training variable: its TransData runs once per step
    and the forward and backward convs share it, or none runs when the variable is stored in the
    format (`variable_formats.py`). Mixed precision's f16 cast of a variable is neither: kept ND."""

    def check(op: GeOp, options: Options) -> str | None:
        value = getattr(op, name)
        if isinstance(value.owner, (ge.ConstantOp, ge.VariableOp)):
            return None
        return f"operand '{name}' is not a constant or a variable (a TransData would run on every call)"

    return check


def prop_is(prop: str, want, why: str) -> Check:
    def check(op: GeOp, options: Options) -> str | None:
        got = op.p(prop)
        return None if got == want else f"{prop} = {got}: {why}"

    return check


def nz_enabled(op: GeOp, options: Options) -> str | None:
    return None if options.nz else "FRACTAL_NZ is disabled (nz=false)"


CUBE_TYPES = (f16, bf16, f32)


def cube_type(name: str) -> Check:
    def check(op: GeOp, options: Options) -> str | None:
        t = getattr(op, name).type.element_type
        return None if t in CUBE_TYPES else f"element type {type_name(t)} does not run on the Cube"

    return check


def matmul_dims(op: GeOp) -> tuple[int | None, int | None, int | None, int | None]:
    """(batch, M, K, N) of a matmul or gemm; batch is the product of the result's leading dims."""
    a, b = _shape(op, "A"), _shape(op, "B")
    if isinstance(op, ge.GemmOp):
        m, k = a[::-1] if op.p("transA") else a
        n = b[0] if op.p("transB") else b[1]
        return 1, m, k, n
    out = _shape(op, "Y")
    batch = _product(out[:-2])
    m = a[-2] if len(a) >= 2 else 1
    n = b[-1] if len(b) >= 2 else 1
    return batch, m, a[-1], n


def cube_dims(op: GeOp, options: Options) -> str | None:
    """The benefit rule of FRACTAL_NZ: M, K and N are static and each at least `nz_min_dim` (16:
    every operand fills at least one 16 x C0 fractal in both dims, so the relayout is not spent on
    padding a tiny tensor)."""
    _, m, k, n = matmul_dims(op)
    for dim, size in (("M", m), ("K", k), ("N", n)):
        if size is None:
            return f"{dim} is dynamic"
        if size < options.nz_min_dim:
            return f"{dim} = {size} < nz-min-dim={options.nz_min_dim} (the tile would be mostly padding)"
    return None


def cube_macs(op: GeOp) -> float:
    """The benefit a remark reports: the multiply-accumulates the op runs on the Cube (`GeOp.macs`)."""
    return float(op.macs())


def last_axis(prop: str, operand: str) -> Check:
    def check(op: GeOp, options: Options) -> str | None:
        rank = len(_shape(op, operand))
        axis = op.p(prop)
        if axis in (-1, rank - 1):
            return None
        return f"{prop} = {axis} is not the last axis (FRACTAL_NZ splits the last two dims)"

    return check


def read_in(name: str, storage: str) -> Check:
    """Every reader of result `name` asks for it in `storage` (the weight gradient: an update op
    that `variable_formats.py` planned in FRACTAL_Z before the sweep). Otherwise a TransData would
    convert it back to its logical layout on every step for nothing: the Cube writes dW in either."""

    def check(op: GeOp, options: Options) -> str | None:
        for use in getattr(op, name).uses:
            reader = use.operation
            names = operand_names(reader)
            asked = annotation(reader).get(names[use.index]) if use.index < len(names) else None
            if asked != storage:
                return f"result '{name}' is read by {describe(reader)} in another layout ({asked or 'its own'})"
        return None

    return check


def _concat_axis(op: GeOp) -> int:
    rank = len(_shape(op, "concat_result"))
    return op.p("axis") % rank if rank else 0


def along_concat_axis(op: GeOp, a: Shape, b: Shape) -> bool:
    """A concat's operands are full-shape: the result's shape but for the concatenated axis."""
    axis = _concat_axis(op)
    return len(a) == len(b) and all(x == y for i, (x, y) in enumerate(zip(a, b)) if i != axis)


def channel_blocks(op: GeOp, options: Options) -> str | None:
    """A concat along C in NC1HWC0 copies whole C1 blocks when every channel offset is a multiple
    of C0 (every operand but the last has C % C0 = 0); otherwise a C0 block would mix two operands."""
    shape = _shape(op, "concat_result")
    if len(shape) != 4 or _concat_axis(op) != 1:
        return f"axis = {op.p('axis')} is not the channel axis of an image (NC1HWC0 splits C)"
    c0 = c0_of(tensor_type(op.results[0]).element_type)
    for i, value in enumerate(op.operands[:-1]):
        channels = shape_of(tensor_type(value))[1]
        if channels is None or c0 is None or channels % c0:
            return f"operand {i} has {channels} channels, not a multiple of C0 = {c0} (the next offset splits a block)"
    return None


def _split_axis(op: GeOp) -> int:
    rank = len(_shape(op, "input"))
    return op.p("axis") % max(rank, 1)


def along_split_axis(op: GeOp, a: Shape, b: Shape) -> bool:
    """A split's input is full-shape: its results' shape but for the split axis."""
    axis = _split_axis(op)
    return len(a) == len(b) and all(x == y for i, (x, y) in enumerate(zip(a, b)) if i != axis)


def split_channel_blocks(op: GeOp, options: Options) -> str | None:
    """A split along C in NC1HWC0 copies whole C1 blocks when every result but the last has
    C % C0 = 0 (each channel offset a multiple of C0, as concat-channels asks)."""
    if len(_shape(op, "input")) != 4 or _split_axis(op) != 1:
        return f"axis = {op.p('axis')} is not the channel axis of an image (NC1HWC0 splits C)"
    c0 = c0_of(tensor_type(op.operands[0]).element_type)
    for i, value in enumerate(op.results[:-1]):
        channels = shape_of(tensor_type(value))[1]
        if channels is None or c0 is None or channels % c0:
            return f"result {i} has {channels} channels, not a multiple of C0 = {c0} (the next offset splits a block)"
    return None


def same_rank(op: GeOp, a: Shape, b: Shape) -> bool:
    """A slice's data is full-shape: the result's rank, any dim cut (`slice_channel_blocks` checks C)."""
    return len(a) == len(b)


def slice_channel_blocks(op: GeOp, options: Options) -> str | None:
    """A slice of an image in NC1HWC0 takes N, H and W as they are and C in whole C0 blocks: a
    channel range that starts at a multiple of C0 with step 1 and ends at a multiple of C0 or at
    C (where the operand's own padding is)."""
    assert isinstance(op, ge.SliceOp)
    dims = _shape(op, "data")
    if len(dims) != 4:
        return f"a rank-{len(dims)} slice is not of an image"
    values = {n: None if getattr(op, n) is None else constant_value(getattr(op, n)) for n in ("axes", "steps")}
    starts, ends = constant_value(op.starts), constant_value(op.ends)
    if starts is None or ends is None or any(getattr(op, n) is not None and values[n] is None for n in values):
        return "its bounds are not constants"
    axes, steps = values["axes"], values["steps"]
    bounds = slice_bounds(
        dims,
        [int(v) for v in starts.reshape(-1)],
        [int(v) for v in ends.reshape(-1)],
        None if axes is None else [int(v) for v in axes.reshape(-1)],
        None if steps is None else [int(v) for v in steps.reshape(-1)],
    )
    if 1 not in bounds:
        return None  # C untouched
    channel, c0 = bounds[1], c0_of(tensor_type(op.data).element_type)
    if channel is None or c0 is None:
        return "its channel count is not static" if channel is None else "its element type has no C0"
    start, end, step = channel
    if step != 1 or start % c0 or (end % c0 and end != dims[1]):
        return f"channels [{start}:{end}:{step}] are not whole C0 = {c0} blocks"
    return None


def keeps_channels(op: GeOp, a: Shape, b: Shape) -> bool:
    """A mean of [N, C, H, W] to [N, C, 1, 1] (over H and W, dims kept: a squeeze-excite block's
    pooling) reduces each C0 block's lanes apart, so its input counts as full-shape in NC1HWC0."""
    return len(a) == len(b) == 4 and tuple(a[:2]) == tuple(b[:2]) and tuple(b[2:]) == (1, 1)


def leaves_matrix(op: GeOp, a: Shape, b: Shape) -> bool:
    """A reduction of a matrix (or a batch of them) to a matrix (`keeps_last_axis` checks which
    axes): its operand counts as full-shape in FRACTAL_NZ."""
    return len(a) >= 2 and len(b) >= 2


def keeps_last_axis(op: GeOp, options: Options) -> str | None:
    """A reduction over axes other than the last: in FRACTAL_NZ whole fractals (batch dims) or the
    rows of each column block's fractals (a token mixer's mean over tokens) are summed, C0 lanes
    apart. A reduction along the last axis cuts across the lanes: refused."""
    assert isinstance(op, (ge.ReduceMeanOp, ge.ReduceSumOp))
    rank = len(_shape(op, "data"))
    values = None if op.axes is None else constant_value(op.axes)
    if values is None:
        return "it reduces every axis" if op.axes is None else "its axes are not constants"
    if values.size == 0:
        return "its axes are empty (every axis, or none)"
    if any(int(a) % rank == rank - 1 for a in values.reshape(-1)):
        return f"it reduces the last axis {rank - 1} (FRACTAL_NZ keeps it in C0 lanes)"
    return None


def spatial_only(op: GeOp, a: Shape, b: Shape) -> bool:
    """An op that changes H and W only (a resize, a pad): its image operand counts as full-shape,
    so NC1HWC0 carries through it when N and C stay (each C0 block's lanes move together)."""
    return len(a) == len(b) == 4 and tuple(a[:2]) == tuple(b[:2])


def resizes_spatially(op: GeOp, options: Options) -> str | None:
    """A resize of H and W only: each channel is resampled at the same positions, lane by lane in
    a C0 block. tf_crop_and_resize's roi may move along N or C: refused."""
    if op.p("coordinate_transformation_mode") == "tf_crop_and_resize":
        return "coordinate_transformation_mode = tf_crop_and_resize (its roi may cut along N or C)"
    return None


def pads_spatially(op: GeOp, options: Options) -> str | None:
    """A pad of H and W only (constant pads, none along N or C): every C0 block is padded alike."""
    assert isinstance(op, ge.PadOp)
    pads = constant_value(op.pads)
    axes = None if op.axes is None else constant_value(op.axes)
    if pads is None or (op.axes is not None and axes is None):
        return "its pads are not constants"
    widths = pad_widths(
        4, [int(v) for v in pads.reshape(-1)], None if axes is None else [int(v) for v in axes.reshape(-1)]
    )
    if widths[0] != (0, 0) or widths[1] != (0, 0):
        return f"it pads N or C ({list(widths[0])}, {list(widths[1])}): not whole C0 blocks"
    return None


# -- broadcasting in a storage format --------------------------------------------------------------


def _aligned(shape: Shape, rank: int) -> Shape | None:
    return None if len(shape) > rank else (1,) * (rank - len(shape)) + tuple(shape)


def channel_vector(shape: Shape, result: Shape) -> bool:
    """A [C, 1, 1] (or [1, C, 1, 1]) vector: NC1HWC0 reads it as C1 x C0 runs, like BN's parameters."""
    s = _aligned(shape, len(result))
    return s is not None and len(result) == 4 and s[0] == 1 and s[2] == 1 and s[3] == 1 and s[1] in (1, result[1])


def row_vector(shape: Shape, result: Shape) -> bool:
    """A [..., 1, W] vector along the last dim (a bias, an attention mask row): FRACTAL_NZ reads it
    as W1 x C0 runs repeated over the fractal rows."""
    s = _aligned(shape, len(result))
    return s is not None and all(d == 1 for d in s[:-1]) and s[-1] in (1, result[-1])


def whole_channel_blocks(shape: Shape, result: Shape) -> bool:
    """An operand stored in NC1HWC0 itself that broadcasts along N, H or W only (a squeeze-excite
    scale [N, C, 1, 1]): each of its C0 blocks repeats whole over the broadcast dims."""
    return len(shape) == len(result) == 4 and shape[1] == result[1]


def whole_fractals(shape: Shape, result: Shape) -> bool:
    """An operand stored in FRACTAL_NZ itself that broadcasts along the batch dims only: whole
    fractals repeat."""
    return len(shape) == len(result) >= 2 and tuple(shape[-2:]) == tuple(result[-2:])


BROADCASTS: dict[str, Broadcast] = {
    NC1HWC0: Broadcast("channel vectors", channel_vector, whole_channel_blocks),
    FRACTAL_NZ: Broadcast("row vectors", row_vector, whole_fractals),
}
"""Broadcast operands a format-agnostic op may read beside its full-shape operands: scalars always;
logical operands of the first kind, read as they are; operands stored in the op's format whose
broadcast repeats whole C0 blocks (a broadcast along C, inside a block, needs a TransData)."""


# -- the tables, derived from the ops' StorageFormats ---------------------------------------------

_UNGROUPED = prop_is("group", 1, "grouped conv weights need FRACTAL_Z with group packing (not modeled)")


def _per_tensor(scale: str) -> Check:
    def check(op: GeOp, options: Options) -> str | None:
        dims = _shape(op, scale)
        return None if _product(dims) == 1 else f"'{scale}' has {len(dims)} dims (a scale per axis)"

    return check


CONDITIONS: dict[str, Callable[..., Check]] = {
    "weight": is_weight,
    "ungrouped": lambda: _UNGROUPED,
    "nz_enabled": lambda: nz_enabled,
    "cube_type": cube_type,
    "cube_dims": lambda: cube_dims,
    "last_axis": last_axis,
    "per_tensor": _per_tensor,
    "read_in": read_in,
    "channel_blocks": lambda: channel_blocks,
    "split_channel_blocks": lambda: split_channel_blocks,
    "slice_channel_blocks": lambda: slice_channel_blocks,
    "resizes_spatially": lambda: resizes_spatially,
    "pads_spatially": lambda: pads_spatially,
    "keeps_last_axis": lambda: keeps_last_axis,
}
"""The conditions an op's `StorageFormats` names, each a constructor of its check from the
declared arguments (`("weight", "W")` -> `is_weight("W")`)."""

FULL_SHAPES: dict[str, ShapeMatch] = {
    "same_shape": same_shape,
    "along_concat_axis": along_concat_axis,
    "along_split_axis": along_split_axis,
    "same_rank": same_rank,
    "keeps_channels": keeps_channels,
    "leaves_matrix": leaves_matrix,
    "spatial_only": spatial_only,
}
"""Which operands of a format-carrying op count as full-shape, by the name its declaration gives."""

BENEFITS: dict[str, Callable[[GeOp], float]] = {"cube_macs": cube_macs}


def declared_formats(op: GeOp) -> tuple[str, ...]:
    """The storage formats a custom op computes in: those its registration declares (`formats`)."""
    assert isinstance(op, ge.CustomOp)
    return op.formats()


def _check(condition: Condition, where: str) -> Check:
    name, *args = condition
    if name not in CONDITIONS:
        raise KeyError(f"{where} names the condition '{name}', which passes/layout/rules.py does not define")
    return CONDITIONS[name](*args)


def declarations(ops: Iterable[type[GeOp]]) -> list[tuple[ComputesIn | Carries, tuple[type[GeOp], ...]]]:
    """Each storage-format declaration of `ops` (`StorageFormats`, in declaration order) with the op
    classes that make it (a base class's is shared by its subclasses: one rule for all)."""
    grouped: dict[ComputesIn | Carries, list[type[GeOp]]] = {}
    for cls in ops:
        trait = cls.get_trait(StorageFormats)
        for declared in trait.rules if trait is not None else ():
            grouped.setdefault(declared, []).append(cls)
    return [(d, tuple(classes)) for d, classes in grouped.items()]


def rule_of(declared: ComputesIn | Carries, ops: tuple[type[GeOp], ...]) -> Rule:
    """The rewrite-engine rule of one declaration: an anchor for `ComputesIn`, a follower for `Carries`."""
    checks = tuple(_check(c, f"{ops[0].name}'s {declared.rule}") for c in declared.conditions)
    if isinstance(declared, ComputesIn):
        benefit = BENEFITS[declared.benefit] if declared.benefit is not None else None
        return anchor(declared.rule, ops, declared.storage, declared.operands, declared.results, checks, benefit)
    return follow(
        declared.rule,
        ops,
        declared.formats if declared.formats is not None else declared_formats,
        declared.operands,
        declared.results,
        checks,
        changes_c0=declared.changes_c0,
        full_shape=FULL_SHAPES[declared.full_shape],
        all_arrive=declared.all_arrive,
    )


_DECLARED = declarations(ge.ALL_OPS)

ANCHORS: tuple[Rule, ...] = tuple(
    rule_of(d, ops) for d, ops in _DECLARED if isinstance(d, ComputesIn) and not d.backward
)
"""The forward ops that want a format (Conv, pools, BatchNorm, MatMul/Gemm ...)."""

BACKWARD_ANCHORS: tuple[Rule, ...] = tuple(
    rule_of(d, ops) for d, ops in _DECLARED if isinstance(d, ComputesIn) and d.backward
)
"""The backward's kernels (GE's Conv2DBackpropInput/Filter, the pool and BN gradients) in the formats
their forwards computed in; the elementwise gradients, ReluGrad and GeluGrad, are followers."""

FOLLOWERS: tuple[Rule, ...] = tuple(rule_of(d, ops) for d, ops in _DECLARED if isinstance(d, Carries))
"""The ops a format flows through."""

RULES: tuple[Rule, ...] = ANCHORS + BACKWARD_ANCHORS + FOLLOWERS
"""The table assign-formats applies: an op's anchor rules all apply (each adds its formats), a
follow rule applies to ops no anchor rule names."""

__all__ = ["ANCHORS", "BACKWARD_ANCHORS", "BROADCASTS", "CONDITIONS", "FOLLOWERS", "RULES", "Options"]
