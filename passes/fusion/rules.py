"""The fusion rule table: which ops make one kernel on an Ascend AI Core.

GE's UB fusion groups ops by pattern class; these rules follow its classes: a Cube op with its
elementwise epilogue, attention with the layout ops around it (what a fused attention kernel reads
through its addressing), a reduction with elementwise neighbours, and elementwise chains. Rules are
tried in table order, so a Cube op claims its epilogue before a chain could.

Add a rule by appending a `FusionRule` here, or name a file of your own on the command line:
`ge-opt --load-fusion-rules my_rules.py` (the file defines `RULES`, a list of FusionRule).
"""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from ge.ge_dialects import ge
from ge.ge_dialects.ge.facts import Engine
from ge.ge_dialects.ge.types import format_of, is_float, shape_of
from ge.passes.fusion.engine import Candidate, Constraint, FusionRule, Step, ops
from ge.passes.tensor_values import tensor_type

CUBE = ops(*(op for op in ge.ALL_OPS if op.engine_class() is Engine.CUBE))
"""The Cube ops (their `RunsOn` trait); attention is Cube+Vector and has a rule of its own."""
EPILOGUE_BINARY = ops(ge.AddOp, ge.SubOp, ge.MulOp, ge.DivOp)
ACTIVATIONS = ops(ge.ReluOp, ge.GeluOp, ge.ClipOp, ge.SigmoidOp, ge.TanhOp, ge.HardSwishOp)
ACTIVATION_GRADS = ops(ge.ReluGradOp, ge.GeluGradOp)
"""The backward's fused activation gradients: elementwise, they chain like their forwards."""
ELEMENTWISE = (
    EPILOGUE_BINARY
    | ACTIVATIONS
    | ACTIVATION_GRADS
    | ops(ge.SqrtOp, ge.ErfOp, ge.PowOp, ge.CastOp, ge.WhereOp, ge.ExpOp, ge.LogOp)
)
REDUCTIONS = ops(ge.SoftmaxOp, ge.LayerNormOp, ge.ReduceMeanOp, ge.ReduceSumOp)
LAYOUT = ops(ge.TransposeOp, ge.ReshapeOp)


def keeps_shape(op: Operation, value: SSAValue) -> bool:
    """The op does not broadcast the group's tensor to a bigger one (the kernel's tiles stay put)."""
    return shape_of(tensor_type(op.results[0])) == shape_of(tensor_type(value))


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

RULES: list[FusionRule] = [
    FusionRule(
        name="cube_epilogue",
        pattern="cube+elementwise",
        anchor=CUBE,
        followers=(Step(EPILOGUE_BINARY, max_count=2, when=keeps_shape), Step(ACTIVATIONS, when=keeps_shape)),
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
        name="reduce_elementwise",
        pattern="reduce+elementwise",
        anchor=REDUCTIONS,
        producers=(Step(ELEMENTWISE),),
        followers=(Step(ELEMENTWISE, max_count=4, when=keeps_shape),),
        constraints=(ONE_FORMAT,),
    ),
    FusionRule(
        name="elementwise_chain",
        pattern="elementwise",
        anchor=ELEMENTWISE,
        followers=(Step(ELEMENTWISE, max_count=16, when=keeps_shape),),
        constraints=(ONE_FORMAT,),
    ),
]
