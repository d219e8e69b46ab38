"""loss-scale: GE's static and dynamic loss scaling of a training step (mixed precision with f32
master weights).

In f16 small gradients round to zero or to a few bits of a subnormal. Scaling the loss's cotangent
(the autodiff seed, `/autodiff/seed`; accumulate-gradients makes one per micro-batch) by S moves
every backward value S times up into f16's range; each gradient is divided by S again, in f32 (the
op is marked `ge.keep_dtype`), just before its update op, so the update and the f32 master weights
see the true gradient. Runs after
`apply-optimizer` and before `ge-optimize` (whose mixed precision makes the backward f16):

    loss-scale{kind=static scale=1024}
    loss-scale{kind=dynamic scale=32768 growth_interval=2000 growth_factor=2.0 backoff_factor=0.5}

`static` multiplies by a constant (default 1024). `dynamic` (default scale 2^15) keeps the scale in
state: `ge.variable "loss_scale.scale"` and the count of finite steps since the last change,
`ge.variable "loss_scale.good_steps"` (f32 scalars, initial values in the sidecar). `ge.all_finite`
over the unscaled gradients is GE's overflow check (NPUGetFloatStatus); on an overflowing step
every state value the step writes (parameters, optimizer slots, adam's step count) is selected
back to its variable's value by a `ge.where` (GE's SelectV2, also `ge.keep_dtype`), so the state
is bit for bit unchanged, as GE's loss-scale cell skips the optimizer; `ge.loss_scale_update`
computes the next scale and count, returned as state outputs like the optimizer's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, FunctionType, ModuleOp, StringAttr, TensorType, f32
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException

from ge.ge_dialects import ge
from ge.ge_dialects.ge.base import location_name, name_loc
from ge.ge_dialects.ge.types import numpy_dtype, tensor
from ge.ge_dialects.ge.weights import weights_of
from ge.passes.apply_optimizer import NAME_ATTR, STATE_ATTR
from ge.passes.autodiff import SEED_NAME
from ge.passes.graph_main import main_of
from ge.passes.mixed_precision import mark_keep_dtype

PASS = "loss-scale"
KINDS = ("static", "dynamic")
DEFAULT_SCALE = {"static": 1024.0, "dynamic": 2.0**15}
SCALE_KEY = "loss_scale.scale"
GOOD_STEPS_KEY = "loss_scale.good_steps"
F32_MAX = float(np.finfo(np.float32).max)
UPDATE_OPS = (ge.ApplyGradientDescentOp, ge.ApplyMomentumOp, ge.ApplyAdamOp, ge.ApplyAdagradOp)
"""The update ops whose `grad` operand is unscaled."""


def _error(message: str) -> DiagnosticException:
    return DiagnosticException(f"{PASS}: {message}")


@dataclass(frozen=True)
class LossScalePass(ModulePass):
    name = "loss-scale"

    kind: str = "static"
    scale: float | int | None = None
    """The (initial) scale; None: 1024 for static, 2^15 for dynamic (an int is taken: scale=1024)."""
    growth_interval: int = 2000
    growth_factor: float = 2.0
    backoff_factor: float = 0.5

    def __post_init__(self) -> None:
        self.check_options()

    def initial_scale(self) -> float:
        return DEFAULT_SCALE[self.kind] if self.scale is None else float(self.scale)

    def check_options(self) -> None:
        if self.kind not in KINDS:
            raise _error(f"unknown kind '{self.kind}'; expected one of {', '.join(KINDS)}")
        scale = self.initial_scale()
        if not 0 < scale <= F32_MAX:
            raise _error(f"scale={self.scale} must be a positive finite f32")
        if self.growth_interval < 1:
            raise _error(f"growth_interval={self.growth_interval} must be >= 1")
        if not self.growth_factor >= 1:
            raise _error(f"growth_factor={self.growth_factor} must be >= 1")
        if not 0 < self.backoff_factor <= 1:
            raise _error(f"backoff_factor={self.backoff_factor} must be in (0, 1]")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.check_options()
        fn = main_of(op, PASS)
        block = fn.body.block
        ret = block.last_op
        assert isinstance(ret, func.ReturnOp)  # a verified func.func ends in func.return
        seeds = _seeds(block)
        seed = seeds[0]
        updates = [o for o in block.ops if isinstance(o, UPDATE_OPS)]
        if not updates:
            raise _error("@main has no optimizer update ops; run apply-optimizer first")
        _refuse_applied(block)
        loss_type = seed.output.type
        assert isinstance(loss_type, TensorType)  # the ge.constant verifier holds
        if self.kind == "dynamic" and loss_type.element_type != f32:
            raise _error(f"kind=dynamic keeps its scale in f32; the loss is {loss_type.element_type}")
        if self.kind == "dynamic":
            weights = weights_of(op)
            for key in (SCALE_KEY, GOOD_STEPS_KEY):
                if key in weights:
                    raise _error(f"the weights sidecar already holds '{key}', a key of the loss scale's state")
            weights.add(SCALE_KEY, np.array(self.initial_scale(), np.float32))
            weights.add(GOOD_STEPS_KEY, np.array(0.0, np.float32))
            scale = _variable(SCALE_KEY, seed)
        else:
            const = ge.ConstantOp.inline(np.array(self.initial_scale(), numpy_dtype(loss_type.element_type)))
            const.location = name_loc("/loss_scale/scale")
            Rewriter.insert_op(const, InsertPoint.after(seed))
            scale = const.output
        scale_op = scale.owner
        assert isinstance(scale_op, Operation)
        for each in seeds:  # accumulate-gradients differentiates each micro-batch from its own seed
            scaled = _keep(ge.MulOp.create({"a": each.output, "b": scale}, name="/loss_scale/seed"))
            Rewriter.insert_op(scaled, InsertPoint.after(scale_op if each is seed else each))
            _replace_except(each.output, scaled)
        grads = [self._unscale(u, scale) for u in updates]
        if self.kind == "dynamic":
            self._skip_overflow(block, fn, ret, grads)

    def _unscale(
        self,
        update: ge.ApplyGradientDescentOp | ge.ApplyMomentumOp | ge.ApplyAdamOp | ge.ApplyAdagradOp,
        scale: SSAValue,
    ) -> SSAValue:
        """grad / scale before `update`, in f32 whatever the precision mode: the true gradient."""
        grad = update.grad
        grad_type, scale_type = grad.type, scale.type
        assert isinstance(grad_type, TensorType) and isinstance(scale_type, TensorType)  # the verifiers hold
        if grad_type.element_type != scale_type.element_type:
            raise _error(f"the gradient '{location_name(update)}' reads is {grad_type}; the loss is {scale_type}")
        div = _keep(ge.DivOp.create({"a": grad, "b": scale}, name=f"{location_name(update)}/loss_scale/unscale"))
        Rewriter.insert_op(div, InsertPoint.before(update))
        grad.replace_uses_with_if(div.results[0], lambda use: use.operation is update)
        return div.results[0]

    def _skip_overflow(self, block: Block, fn: func.FuncOp, ret: func.ReturnOp, grads: list[SSAValue]) -> None:
        """The overflow check, each state output selected back to its variable's value on an
        overflowing step, and the scale's update as two more state outputs."""
        finite = ge.AllFiniteOp.create({"inputs": grads}, name="/loss_scale/all_finite")
        Rewriter.insert_op(finite, InsertPoint.before(ret))
        flag = finite.results[0]
        variables = {o.state_key: o.output for o in block.ops if isinstance(o, ge.VariableOp)}
        values = list(ret.operands)
        attrs = _result_attrs(fn, len(values))
        for i, attr in enumerate(attrs):
            mark = attr.data.get(STATE_ATTR)
            if not isinstance(mark, StringAttr) or mark.data not in variables:
                continue
            old = variables[mark.data]
            where = _keep(
                ge.WhereOp.create({"condition": flag, "X": values[i], "Y": old}, name=f"{mark.data}/loss_scale/skip")
            )
            Rewriter.insert_op(where, InsertPoint.before(ret))
            values[i] = where.results[0]
        scale = variables[SCALE_KEY]
        assert isinstance(scale.owner, Operation)
        good = _variable(GOOD_STEPS_KEY, scale.owner)
        props = {
            "growth_interval": self.growth_interval,
            "growth_factor": self.growth_factor,
            "backoff_factor": self.backoff_factor,
        }
        update = ge.LossScaleUpdateOp.create(
            {"scale": scale, "good_steps": good, "finite": flag}, props, name="/loss_scale/update"
        )
        Rewriter.insert_op(update, InsertPoint.before(ret))
        for key, value in ((SCALE_KEY, update.results[0]), (GOOD_STEPS_KEY, update.results[1])):
            values.append(value)
            attrs.append(DictionaryAttr({NAME_ATTR: StringAttr(key), STATE_ATTR: StringAttr(key)}))
        Rewriter.replace_op(ret, func.ReturnOp(*values))
        outputs: list[Attribute] = [v.type for v in values]
        fn.function_type = FunctionType.from_lists(list(fn.function_type.inputs.data), outputs)
        fn.res_attrs = ArrayAttr(attrs)


# -- helpers -------------------------------------------------------------------------------------


def _seeds(block: Block) -> list[ge.ConstantOp]:
    seeds = [op for op in block.ops if isinstance(op, ge.ConstantOp) and location_name(op) == SEED_NAME]
    if seeds:
        return seeds
    raise _error(f"@main has no autodiff seed ('{SEED_NAME}'); run autodiff and apply-optimizer first")


def _refuse_applied(block: Block) -> None:
    for op in block.ops:
        if location_name(op) == "/loss_scale/seed":
            raise _error("the loss is already scaled (was loss-scale applied twice?)")


def _replace_except(value: SSAValue, user: Operation) -> None:
    """Every use of `value` reads `user`'s result instead, but `user`'s own."""
    value.replace_uses_with_if(user.results[0], lambda use: use.operation is not user)


def _keep(op: ge.GeOp) -> ge.GeOp:
    mark_keep_dtype(op)
    return op


def _variable(key: str, after: Operation) -> SSAValue:
    var = ge.VariableOp.of(key, tensor(f32, ()))
    var.location = name_loc(key)
    Rewriter.insert_op(var, InsertPoint.after(after))
    return var.output


def _result_attrs(fn: func.FuncOp, count: int) -> list[DictionaryAttr]:
    if fn.res_attrs is None:
        return [DictionaryAttr({})] * count
    return list(fn.res_attrs.data)
