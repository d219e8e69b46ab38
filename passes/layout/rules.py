"""The layout rules of `assign-formats`, as data: which op puts which operand or result in which
storage format, under which constraints, and which ops carry a format through unchanged.

Two kinds of rules, both rewrite-engine `Rule`s made by the constructors of `planning.py`:

- `anchor(...)`: an op that wants a format. Its listed operands are converted to the format (a
  TransData goes in front when the producer stores the value otherwise) and its listed results are
  produced in it. E.g. Conv computes on NC1HWC0 activations with FRACTAL_Z weights.
- `follow(...)`: a format-agnostic op (GE propagates formats through them). When one of its
  full-shape operands arrives in a format the rule carries, all its full-shape operands and its
  listed results take that format; operands that broadcast must be scalars or vectors the format
  keeps whole (`BROADCASTS`), and they are read as they are.

A check is `fn(op, options) -> None | reason`: None when the constraint holds, else the reason the
rule does not apply, which the pass reports as a `rejected` remark. Besides its own checks, every
rule checks that every value it would relayout can have the format (rank, element type with a C0,
static block dims: `ge.ge_dialects.ge.layout.cannot_store`). An op class has anchor rules or one
follow rule, never both (`test_layout_rules.py` checks it).
"""

from __future__ import annotations

import math

from xdsl.dialects.builtin import bf16, f16, f32

from ge.ge_dialects import ge
from ge.ge_dialects.ge.base import GeOp, constant_value, describe
from ge.ge_dialects.ge.layout import FRACTAL_NZ, FRACTAL_Z, NC1HWC0, c0_of
from ge.ge_dialects.ge.tensor_ops import pad_widths, slice_bounds
from ge.ge_dialects.ge.types import Shape, shape_of, type_name
from ge.passes.layout.insert_trans_data import annotation, operand_names
from ge.passes.layout.planning import Broadcast, LayoutCheck, Options, anchor, follow
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


def _per_tensor(scale: str) -> Check:
    def check(op: GeOp, options: Options) -> str | None:
        dims = _shape(op, scale)
        return None if _product(dims) == 1 else f"'{scale}' has {len(dims)} dims (a scale per axis)"

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


# -- the tables ------------------------------------------------------------------------------------

_IMAGE_POOLS = (ge.MaxPoolOp, ge.AvgPoolOp, ge.GlobalAvgPoolOp)
_UNGROUPED = prop_is("group", 1, "grouped conv weights need FRACTAL_Z with group packing (not modeled)")

ANCHORS: tuple[Rule, ...] = (
    anchor("conv-nc1hwc0", (ge.ConvOp,), NC1HWC0, ("X",), ("Y",)),
    anchor(
        "conv-weight-fractal-z",
        (ge.ConvOp,),
        FRACTAL_Z,
        ("W",),
        (),
        (is_weight("W"), _UNGROUPED),
    ),
    # GE's Conv2DTranspose computes as Conv2DBackpropInput (its arithmetic): NC1HWC0 activations,
    # a FRACTAL_Z filter
    anchor("conv-transpose-nc1hwc0", (ge.ConvTransposeOp,), NC1HWC0, ("X",), ("Y",)),
    anchor(
        "conv-transpose-weight-fractal-z",
        (ge.ConvTransposeOp,),
        FRACTAL_Z,
        ("W",),
        (),
        (is_weight("W"), _UNGROUPED),
    ),
    # the integer convolution: GE's Conv2D with int8 operands, x in NC1HWC0 and w in FRACTAL_Z
    # with C0 = 32 int8 elements (the 32-byte C0 block, ge_dialects/ge/layout.py). The integer
    # matmuls stay ND: their factors come from reshapes and transposes, and the device model
    # charges an ND Cube operand nothing (the MTE's ND-to-NZ load), so FRACTAL_NZ there would only
    # add TransData kernels (BERT-base int8: 567 kernels with it, 359 without)
    anchor("qlinear-conv-nc1hwc0", (ge.QLinearConvOp,), NC1HWC0, ("x",), ("y",)),
    anchor(
        "qlinear-conv-weight-fractal-z",
        (ge.QLinearConvOp,),
        FRACTAL_Z,
        ("w",),
        (),
        (is_weight("w"), _UNGROUPED),
    ),
    anchor("pool-nc1hwc0", _IMAGE_POOLS, NC1HWC0, ("X",), ("Y",)),
    anchor("batch-norm-nc1hwc0", (ge.BatchNormOp,), NC1HWC0, ("X",), ("Y",)),
    anchor(
        "matmul-fractal-nz",
        (ge.MatMulOp,),
        FRACTAL_NZ,
        ("A", "B"),
        ("Y",),
        (nz_enabled, cube_type("A"), cube_dims),
        benefit=cube_macs,
    ),
    anchor(
        "gemm-fractal-nz",
        (ge.GemmOp,),
        FRACTAL_NZ,
        ("A", "B"),
        ("Y",),
        (nz_enabled, cube_type("A"), cube_dims),
        benefit=cube_macs,
    ),
)

BACKWARD_ANCHORS: tuple[Rule, ...] = (
    # GE's Conv2DBackpropInput/Filter run on the Cube with the forward conv's formats: activation
    # gradients NC1HWC0, the filter (read, or dW produced) FRACTAL_Z, so the backward of a conv
    # net stays in the formats its forward computed in.
    anchor("conv-backprop-input-nc1hwc0", (ge.ConvBackpropInputOp,), NC1HWC0, ("dy",), ("dx",)),
    anchor(
        "conv-backprop-input-weight-fractal-z",
        (ge.ConvBackpropInputOp,),
        FRACTAL_Z,
        ("W",),
        (),
        (is_weight("W"), _UNGROUPED),
    ),
    anchor("conv-backprop-filter-nc1hwc0", (ge.ConvBackpropFilterOp,), NC1HWC0, ("x", "dy"), ()),
    anchor(
        "conv-backprop-filter-dw-fractal-z",
        (ge.ConvBackpropFilterOp,),
        FRACTAL_Z,
        (),
        ("dW",),
        (_UNGROUPED, read_in("dW", FRACTAL_Z)),
    ),
    anchor("max-pool-grad-nc1hwc0", (ge.MaxPoolGradOp,), NC1HWC0, ("x", "dy"), ("dx",)),
    anchor("avg-pool-grad-nc1hwc0", (ge.AvgPoolGradOp,), NC1HWC0, ("dy",), ("dx",)),
    # dscale and dbias stay ND channel vectors, like the forward's parameters
    anchor("batch-norm-grad-nc1hwc0", (ge.BatchNormGradOp,), NC1HWC0, ("dy", "x"), ("dx",)),
)
"""The backward ops' anchors (a table apart: the elementwise gradients, ReluGrad and GeluGrad, are
followers below, as the forward elementwise ops are)."""


def declared_formats(op: GeOp) -> tuple[str, ...]:
    """The storage formats a custom op computes in: those its registration declares (`formats`)."""
    assert isinstance(op, ge.CustomOp)
    return op.formats()


_UNARY = tuple(op for op in ge.ALL_OPS if issubclass(op, ge.UnaryElementwiseOp))
_BINARY = tuple(op for op in ge.ALL_OPS if issubclass(op, ge.BinaryElementwiseOp))
_ANY = (NC1HWC0, FRACTAL_NZ)

FOLLOWERS: tuple[Rule, ...] = (
    follow("elementwise", _UNARY, _ANY, ("x",), ("y",)),
    follow("elementwise", _BINARY, _ANY, ("a", "b"), ("z",)),
    # the backward's activation gradients: GE keeps a conv backward's NC1HWC0 through ReluGrad
    follow("elementwise", (ge.ReluGradOp,), _ANY, ("dy", "y"), ("dx",)),
    follow("elementwise", (ge.GeluGradOp,), _ANY, ("dy", "x"), ("dx",)),
    follow("clip", (ge.ClipOp,), _ANY, ("input", "min", "max"), ("output",)),
    follow("dropout", (ge.DropoutOp,), _ANY, ("data",), ("output",)),
    follow(
        "reduce-mean-spatial",
        (ge.ReduceMeanOp,),
        (NC1HWC0,),
        ("data",),
        ("reduced",),
        full_shape=keeps_channels,
    ),
    # DenseNet's and Inception's concats of conv outputs: C1 blocks copied in NC1HWC0
    follow(
        "concat-channels",
        (ge.ConcatOp,),
        (NC1HWC0,),
        ("inputs",),
        ("concat_result",),
        (channel_blocks,),
        full_shape=along_concat_axis,
        all_arrive=True,
    ),
    # RAFT's instance norms, DPT's and DeepLabV3's resizes, and spatial pads: per channel, so lane
    # by lane in a C0 block (the norm's scale and bias stay ND channel vectors, as BN's do)
    follow("instance-norm-nc1hwc0", (ge.InstanceNormOp,), (NC1HWC0,), ("input",), ("output",)),
    follow(
        "resize-spatial",
        (ge.ResizeOp,),
        (NC1HWC0,),
        ("X",),
        ("Y",),
        (resizes_spatially,),
        full_shape=spatial_only,
    ),
    follow("pad-spatial", (ge.PadOp,), (NC1HWC0,), ("data",), ("output",), (pads_spatially,), full_shape=spatial_only),
    # FocalNet's and EdgeNeXt's channel splits and slices: C1 blocks taken in NC1HWC0
    follow(
        "split-channels",
        (ge.SplitOp,),
        (NC1HWC0,),
        ("input",),
        ("outputs",),
        (split_channel_blocks,),
        full_shape=along_split_axis,
    ),
    follow(
        "slice-channels",
        (ge.SliceOp,),
        (NC1HWC0,),
        ("data",),
        ("output",),
        (slice_channel_blocks,),
        full_shape=same_rank,
    ),
    # one scale and zero point: elementwise, re-blocking the channels from the float's C0 to
    # the integer's (GE's AscendQuant / AscendDequant); a scale per axis stays ND
    follow("quantize", (ge.QuantizeLinearOp,), _ANY, ("x",), ("y",), (_per_tensor("y_scale"),), changes_c0=True),
    follow("dequantize", (ge.DequantizeLinearOp,), _ANY, ("x",), ("y",), (_per_tensor("x_scale"),), changes_c0=True),
    follow("softmax-last-axis", (ge.SoftmaxOp,), (FRACTAL_NZ,), ("input",), ("output",), (last_axis("axis", "input"),)),
    follow(
        "layer-norm-last-axis", (ge.LayerNormOp,), (FRACTAL_NZ,), ("X", "Scale", "B"), ("Y",), (last_axis("axis", "X"),)
    ),
    # a plugin's op, into the formats its registration declares (its inputs share one annotation:
    # it follows when they all have its outputs' shape)
    follow("custom-formats", (ge.CustomOp,), declared_formats, ("inputs",), ("outputs",)),
)

RULES: tuple[Rule, ...] = ANCHORS + BACKWARD_ANCHORS + FOLLOWERS
"""The table assign-formats applies: an op's anchor rules all apply (each adds its formats), a
follow rule applies to ops no anchor rule names."""

__all__ = ["ANCHORS", "BACKWARD_ANCHORS", "BROADCASTS", "FOLLOWERS", "RULES", "Options"]
