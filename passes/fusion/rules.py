"""The fusion rule table: which ops make one kernel on an Ascend AI Core.

GE's UB fusion groups ops by pattern class; these rules follow its classes: a Cube op with its
elementwise epilogue, attention with the layout ops around it (what a fused attention kernel reads
through its addressing), a reduction with elementwise neighbours, and elementwise chains; for
training, a batch_norm with its ReLU and the backward's reductions (norm grads, bias sums) with the
gradient ops that feed them. Rules are tried in table order, so a Cube op claims its epilogue before
a chain could, and a backward reduction its producers before they chain among themselves.

Add a rule by appending a `FusionRule` here, or name a file of your own on the command line:
`ge-opt --load-fusion-rules my_rules.py` (the file defines `RULES`, a list of FusionRule).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Operation, SSAValue

from ge.ge_dialects import ge
from ge.ge_dialects.ge.base import GeOp, constant_value
from ge.ge_dialects.ge.elementwise import ActivationGradOp
from ge.ge_dialects.ge.facts import Elementwise, Engine, Reshapes
from ge.ge_dialects.ge.types import format_of, is_float, shape_of
from ge.passes.fusion.engine import Candidate, Constraint, FusionRule, Step, is_one_of, ops
from ge.passes.tensor_values import tensor_type

CUBE = ops(*(op for op in ge.ALL_OPS if op.engine_class() is Engine.CUBE))
"""The Cube ops (their `RunsOn` trait); attention is Cube+Vector and has a rule of its own."""
EPILOGUE_BINARY = ops(ge.AddOp, ge.SubOp, ge.MulOp, ge.DivOp)
ACTIVATIONS = ops(ge.ReluOp, ge.GeluOp, ge.ClipOp, ge.SigmoidOp, ge.TanhOp, ge.HardSwishOp)
ACTIVATION_GRADS = ops(ge.ReluGradOp, ge.GeluGradOp)
"""The backward's fused activation gradients: elementwise, they chain like their forwards."""
ELEMENTWISE = ops(*(op for op in ge.ALL_OPS if op.has_trait(Elementwise)))
"""The ops whose `Elementwise` trait says element i of a result reads element i of the operands only."""
REDUCTIONS = ops(ge.SoftmaxOp, ge.LayerNormOp, ge.ReduceMeanOp, ge.ReduceSumOp)
LAYOUT = ops(ge.TransposeOp, ge.ReshapeOp)
RESHAPES = ops(*(op for op in ge.ALL_OPS if op.has_trait(Reshapes)))
"""The ops whose `Reshapes` trait says they keep their operand's elements in order."""
CUSTOM = ops(ge.CustomOp)
"""Plugin ops: followers where elementwise ops follow, when their registration declares
fusion="elementwise" (`elementwise_follower`); never anchors."""
QUANTIZE = ops(ge.QuantizeLinearOp)
DEQUANTIZE = ops(ge.DequantizeLinearOp)


def all_operands(op: Operation) -> Sequence[int]:
    return range(len(op.operands))


QUANTIZED_CUBE = ops(ge.QLinearConvOp, ge.QLinearMatMulOp, ge.MatMulIntegerOp, ge.ConvIntegerOp)


def is_dequantize(op: Operation) -> bool:
    """A DequantizeLinear may be shared: one read by several members (x in GELU's x * Phi(x)) is
    computed once in the kernel, and written out for a reader outside."""
    return isinstance(op, ge.DequantizeLinearOp)


def product_factors(op: Operation) -> Sequence[int]:
    """The operand indices of an integer product's factors (its `FACTORS`)."""
    names = [n for n, _ in op.get_irdl_definition().operands]  # type: ignore[attr-defined]  # ge ops
    return [names.index(n) for n in op.FACTORS]  # type: ignore[attr-defined]


QUANTIZED_PRODUCERS = (
    Step(
        ELEMENTWISE | QUANTIZE | DEQUANTIZE | ops(ge.ReshapeOp), max_count=12, inputs=all_operands, shared=is_dequantize
    ),
    Step(QUANTIZED_CUBE, min_count=0, inputs=product_factors),
    Step(LAYOUT, max_count=2, min_count=0),
)
"""What a QuantizeLinear's kernel computes before it: up to twelve elementwise ops, quantizations
and reshapes along each path (a residual add, the casts around it, a GELU whose every step
quantize_static requantizes: the kernel requantizes on chip), the DequantizeLinear ops, and the
integer Cube op that path dequantizes when the DQ is its only reader, with the reshapes and
transposes of its factors (read through the Cube's addressing, as attention_layout's are): DQ,
DQ -> Add -> Q is one Vector kernel (onnxruntime's QLinearAdd), or the epilogue of the QLinearConv
before it (GE fuses the dequantize, the residual add and the requantize into the conv's UB
epilogue)."""


def _has_cube(c: Candidate) -> str | None:
    return None if any(is_one_of(op, CUBE) for op in c.members) else "no Cube op among the members"


HAS_CUBE = Constraint("has-cube", _has_cube)


def keeps_shape(op: Operation, value: SSAValue) -> bool:
    """The op does not broadcast the group's tensor to a bigger one (the kernel's tiles stay put)."""
    return shape_of(tensor_type(op.results[0])) == shape_of(tensor_type(value))


def fuses_as_elementwise(op: Operation) -> bool:
    """A built-in op of the step's classes, or a custom op whose registration declares
    fusion="elementwise" (`ge.custom` is one class for every plugin's op: the op is asked)."""
    return not isinstance(op, ge.CustomOp) or op.fusion() == "elementwise"


def elementwise_follower(op: Operation, value: SSAValue) -> bool:
    """`keeps_shape`, for a custom op only when declared elementwise."""
    return fuses_as_elementwise(op) and keeps_shape(op, value)


def reshape_view(op: Operation, _: SSAValue) -> bool:
    """A reshape that is a view (`is_view`: between arrays stored as their logical ones) moves no
    element: the elementwise kernel it feeds reads the same array through it (GE removes such
    reshapes from the graph altogether). One that reads a TransData stays a copy of its own, which
    the conversion joins (fuse-trans-data: the copy converts as it moves, on every target)."""
    assert isinstance(op, GeOp)  # RESHAPES are ge ops
    return op.is_view() and not isinstance(op.operands[0].owner, ge.TransDataOp)


def _float_results(c: Candidate) -> str | None:
    for op in c.members:
        for r in op.results:
            if not is_float(tensor_type(r).element_type):
                return f"{op.name} yields {tensor_type(r).element_type}, a Cube epilogue works on floats"
    return None


def _one_storage_format(c: Candidate) -> str | None:
    """A Vector kernel walks one layout; a format change inside the group needs a TransData."""
    formats = set()
    for op in c.members:
        for r in op.results:
            fmt = format_of(tensor_type(r))
            if fmt is not None and len(shape_of(tensor_type(r))) == len(
                shape_of(tensor_type(c.members[-1].results[0]))
            ):
                formats.add(fmt.storage.data)
    if len(formats) > 1:
        return f"members use storage formats {', '.join(sorted(formats))}"
    return None


FLOAT_ONLY = Constraint("float-dtype", _float_results)
ONE_FORMAT = Constraint("one-storage-format", _one_storage_format)

# -- backward patterns --------------------------------------------------------------------------

NORM_GRADS = ops(ge.BatchNormGradOp, ge.LayerNormGradOp)
TRANS_DATA = ops(ge.TransDataOp)


def gradient_inputs(op: Operation) -> Sequence[int]:
    """The operands of a backward elementwise op that carry the gradient: an activation grad's `dy`
    (not the forward value it was saved from), every operand of the other elementwise ops."""
    if isinstance(op, ActivationGradOp):
        return (0,)
    return range(len(op.operands))


def reduced_axes(op: Operation) -> list[int] | None:
    """The static axes a reduce_sum sums over (None when not constant; all axes when absent)."""
    assert isinstance(op, ge.ReduceSumOp)
    rank = len(shape_of(tensor_type(op.data)))
    if op.axes is None:
        return list(range(rank))
    values = constant_value(op.axes)
    if values is None:
        return None
    return sorted({int(a) % max(rank, 1) for a in values.reshape(-1)})


def _bias_reduction(c: Candidate) -> str | None:
    return _bias_axes_reason(c.anchor)


def _bias_axes_reason(op: Operation) -> str | None:
    """Whether `op` sums a gradient to a bias's shape, as sum-to-shape emits it: over the leading
    (batch, sequence) axes, or over all axes but the channel axis 1 (N, C, spatial). Such a sum
    accumulates tile by tile while its producer streams through, a kernel's epilogue reduction."""
    axes = reduced_axes(op)
    rank = len(shape_of(tensor_type(op.operands[0])))
    if axes is None:
        return "reduce_sum axes are not constant"
    kept = [a for a in range(rank) if a not in axes]
    if axes and kept and (axes == list(range(len(axes))) or kept == [1]):
        return None
    return f"reduce_sum over axes {axes} of a rank-{rank} tensor is not a bias gradient (batch or per-channel sum)"


def _read_through(c: Candidate, op: Operation) -> bool:
    """`op`'s result reaches the anchor alone, through unary elementwise ops (a cast) at most."""
    value = op.results[0]
    while True:
        readers = {u.operation for u in value.uses}
        if len(readers) != 1:
            return False
        (reader,) = readers
        if reader is c.anchor:
            return True
        if reader not in c.member_set() or not is_one_of(reader, ELEMENTWISE) or len(reader.operands) != 1:
            return False
        value = reader.results[0]


def _layout_at_reduction(c: Candidate) -> str | None:
    """A format change inside a backward group only where the reduction reads it: the anchor reads
    the producer's tiles in their storage layout (GE's BiasAddGrad and BNTrainingReduceGrad read
    FRACTAL_NZ / NC1HWC0 directly), so a trans_data whose result reaches only the anchor (through a
    unary op such as a cast, which works tile by tile in any layout) is addressing. Anywhere else a
    group would need the layout both ways (a TransData kernel of its own), so the other producers
    share one storage format."""
    producers = c.members[: c.members.index(c.anchor)]  # the followers take the reduced tensor
    through: set[Operation] = set()
    for op in producers:
        if isinstance(op, ge.TransDataOp):
            if not _read_through(c, op):
                return f"{op.name} {op.src_format.data}->{op.dst_format.data} feeds more than the reduction"
            value = op.results[0]
            while (reader := next(iter(value.uses)).operation) is not c.anchor:
                through.add(reader)
                value = reader.results[0]
    formats: set[str] = set()
    for op in producers:
        if isinstance(op, ge.TransDataOp) or op in through:
            continue
        for r in op.results:
            fmt = format_of(tensor_type(r))
            formats.add(fmt.storage.data if fmt is not None else "ND")
    if len(formats) > 1:
        return f"members use storage formats {', '.join(sorted(formats))}"
    return None


def _training_batch_norm(c: Candidate) -> str | None:
    """Only training-mode batch_norm computes its statistics in the kernel it fuses into; an
    inference batch_norm is folded into its conv (fold-conv-bn) or is an elementwise scale."""
    anchor = c.anchor
    assert isinstance(anchor, ge.BatchNormOp)
    if anchor.p("training_mode") != 1:
        return "batch_norm is in inference mode (training_mode=0)"
    return None


BIAS_REDUCTION = Constraint("bias-reduction", _bias_reduction)
LAYOUT_AT_REDUCTION = Constraint("layout-at-reduction", _layout_at_reduction)
TRAINING_BATCH_NORM = Constraint("training-batch-norm", _training_batch_norm)
GRADIENT_PRODUCERS = (Step(ELEMENTWISE | TRANS_DATA, max_count=4, inputs=gradient_inputs, shared=True),)
"""What a backward reduction fuses with: elementwise ops (relu_grad, gelu_grad, residual adds,
casts) up to four deep along each path of the gradient, whose results may also feed the next Cube backprop (shared: the
group writes them out), and the layout change the reduction reads through (layout-at-reduction)."""
BIAS_FOLLOWERS = (Step(ops(ge.ReshapeOp)),)
"""sum-to-shape's reshape of the kept dims to the bias's shape."""


def _is_bias_sum(op: Operation, _: SSAValue) -> bool:
    return _bias_axes_reason(op) is None


NORM_GRAD_FOLLOWERS = (Step(ops(ge.ReduceSumOp), when=_is_bias_sum), *BIAS_FOLLOWERS)
"""The bias gradient summed from a norm grad's dx (a residual block's output projection): the same
per-feature sums the norm grad already makes for its dscale and dbias."""

RULES: list[FusionRule] = [
    FusionRule(
        name="cube_epilogue",
        pattern="cube+elementwise",
        anchor=CUBE,
        followers=(
            Step(EPILOGUE_BINARY, max_count=2, when=keeps_shape),
            Step(ACTIVATIONS | CUSTOM, when=elementwise_follower),
            # the store's type: the Cube writes its f32 accumulator as f16 or f32 alike (float-dtype
            # leaves a cast to an integer type out)
            Step(ops(ge.CastOp)),
        ),
        constraints=(FLOAT_ONLY, ONE_FORMAT),
    ),
    FusionRule(
        name="attention_layout",
        pattern="attention",
        anchor=ops(ge.AttentionOp),
        producers=(Step(ops(ge.TransposeOp)), Step(ops(ge.ReshapeOp))),
        followers=(Step(ops(ge.TransposeOp)), Step(ops(ge.ReshapeOp))),
    ),
    FusionRule(
        name="batch_norm_activation",
        pattern="reduce+elementwise",
        anchor=ops(ge.BatchNormOp),
        followers=(Step(ops(ge.ReluOp), when=keeps_shape),),
        constraints=(TRAINING_BATCH_NORM, ONE_FORMAT),
    ),
    FusionRule(
        name="norm_grad",
        pattern="reduce+elementwise",
        anchor=NORM_GRADS,
        anchor_inputs=(0,),
        producers=GRADIENT_PRODUCERS,
        followers=NORM_GRAD_FOLLOWERS,
        constraints=(LAYOUT_AT_REDUCTION,),
    ),
    FusionRule(
        name="bias_grad",
        pattern="reduce+elementwise",
        anchor=ops(ge.ReduceSumOp),
        anchor_inputs=(0,),
        producers=GRADIENT_PRODUCERS,
        followers=BIAS_FOLLOWERS,
        constraints=(BIAS_REDUCTION, LAYOUT_AT_REDUCTION),
    ),
    FusionRule(
        name="reduce_elementwise",
        pattern="reduce+elementwise",
        anchor=REDUCTIONS,
        # in a quantized graph the kernel also dequantizes what it reads and quantizes what it writes
        producers=(Step(ELEMENTWISE, min_count=0), Step(DEQUANTIZE, min_count=0)),
        followers=(Step(ELEMENTWISE | CUSTOM, max_count=4, when=elementwise_follower), Step(QUANTIZE)),
        constraints=(ONE_FORMAT,),
    ),
    FusionRule(
        name="quantized_cube_epilogue",
        pattern="cube+elementwise",
        anchor=QUANTIZE,
        anchor_inputs=(0,),
        producers=QUANTIZED_PRODUCERS,
        constraints=(HAS_CUBE, ONE_FORMAT),
        shrink=False,  # the Cube op is the farthest producer: a smaller candidate has none
        from_last=True,
    ),
    FusionRule(
        name="quantized_elementwise",
        pattern="elementwise",
        anchor=QUANTIZE,
        anchor_inputs=(0,),
        producers=QUANTIZED_PRODUCERS[:1],
        constraints=(ONE_FORMAT,),
        from_last=True,
    ),
    FusionRule(
        name="elementwise_chain",
        pattern="elementwise",
        anchor=ELEMENTWISE,
        producers=(Step(RESHAPES, min_count=0, when=reshape_view),),
        followers=(Step(ELEMENTWISE | CUSTOM, max_count=16, when=elementwise_follower),),
        constraints=(ONE_FORMAT,),
    ),
]
