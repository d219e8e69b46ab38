"""apply-optimizer: turns a graph with gradient outputs into one training step.

Input: `main` after autodiff, whose outputs include one `<key>_grad` per trained parameter `key`
(a `ge.constant parameter`, inline or in the sidecar). Output: the same graph where

- every constant of such a parameter is a `ge.variable "key"` (GE's Variable: device-resident
  state), whose initial value is the sidecar's `key` (an inline parameter's value is added to the
  module's weights under its key, so `ge-opt -o` writes it to the sidecar);
- the optimizer's slots are variables too, initialised to zeros in the module's weights sidecar:
  `<key>.momentum` (momentum), `<key>.adam_m` and `<key>.adam_v` (adam, adamw) and one shared
  f32 scalar `optimizer.step` (adam, adamw), incremented by one in the graph and fed to every
  update (so the first step's update uses t = 1); the increment is marked `ge.keep_dtype`, as f16
  (force_fp16) cannot count past 2048;
- one update op per parameter (ge.apply_gradient_descent / apply_momentum / apply_adam, GE's
  ApplyGradientDescent / ApplyMomentum / ApplyAdam) sits before the return;
- the `<key>_grad` outputs are gone; after the other outputs (the loss stays) come the new state
  values, one output per variable written, named by its key and marked `ge.state = "<key>"`: GE's
  Assign at the end of the step. The runtime writes the marked outputs back into the state.

    apply-optimizer{kind=sgd|momentum|adam|adamw lr=0.01 momentum=0.9 nesterov=false
                    beta1=0.9 beta2=0.999 eps=1e-8 weight_decay=0}

weight_decay is adam's L2 term (g += wd * var) and adamw's decoupled decay (var *= 1 - lr * wd,
as PyTorch's AdamW); sgd and momentum take none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, FunctionType, ModuleOp, StringAttr, TensorType, f32
from xdsl.ir import Attribute, Block, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException

from ge.ge_dialects import ge
from ge.ge_dialects.ge.base import name_after, name_loc
from ge.ge_dialects.ge.layout import storage_shape
from ge.ge_dialects.ge.types import numpy_dtype, tensor
from ge.ge_dialects.ge.weights import ModuleWeights, weights_of
from ge.passes.graph_main import main_of
from ge.passes.mixed_precision import mark_keep_dtype

PASS = "apply-optimizer"
KINDS = ("sgd", "momentum", "adam", "adamw")
GRAD_SUFFIX = "_grad"
STEP_KEY = "optimizer.step"
STATE_ATTR = "ge.state"
NAME_ATTR = "ge.name"
SLOTS = {"sgd": (), "momentum": ("momentum",), "adam": ("adam_m", "adam_v"), "adamw": ("adam_m", "adam_v")}
"""The slot keys' suffixes per kind: parameter `k` has slots `k.<suffix>`."""


def _error(message: str) -> DiagnosticException:
    return DiagnosticException(f"{PASS}: {message}")


@dataclass(frozen=True)
class Gradient:
    """One `<key>_grad` output: the parameter's key, the gradient value and the output's index."""

    key: str
    value: SSAValue
    index: int


@dataclass
class _Step:
    """What the rewrite builds: the new state outputs, (key, value) in output order."""

    outputs: list[tuple[str, SSAValue]] = field(default_factory=list)


@dataclass(frozen=True)
class ApplyOptimizerPass(ModulePass):
    name = "apply-optimizer"

    kind: str = "sgd"
    lr: float = 0.01
    momentum: float = 0.9
    nesterov: bool = False
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    weight_decay: float = 0.0

    def __post_init__(self) -> None:
        self.check_options()

    def check_options(self) -> None:
        if self.kind not in KINDS:
            raise _error(f"unknown optimizer kind '{self.kind}'; expected one of {', '.join(KINDS)}")
        if not self.lr >= 0:
            raise _error(f"lr={self.lr} must be >= 0")
        if self.kind == "momentum" and not 0 <= self.momentum < 1:
            raise _error(f"momentum={self.momentum} must be in [0, 1)")
        for name in ("beta1", "beta2"):
            if self.kind.startswith("adam") and not 0 <= getattr(self, name) < 1:
                raise _error(f"{name}={getattr(self, name)} must be in [0, 1)")
        if self.kind.startswith("adam") and not self.eps > 0:
            raise _error(f"eps={self.eps} must be > 0")
        if not self.weight_decay >= 0:
            raise _error(f"weight_decay={self.weight_decay} must be >= 0")
        if self.weight_decay and not self.kind.startswith("adam"):
            raise _error(f"weight_decay={self.weight_decay} is for adam and adamw; {self.kind} takes none")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.check_options()
        fn = main_of(op, PASS)
        block = fn.body.block
        ret = block.last_op
        assert isinstance(ret, func.ReturnOp)  # a verified func.func ends in func.return
        grads = _gradients(fn, ret)
        weights = weights_of(op)
        params = {g.key: _parameter(block, g) for g in grads}
        _refuse_existing_state(op, weights, list(params), self._slot_keys(params))
        step = _Step()
        counter = self._step_counter(block, ret, weights, step)
        for g in grads:
            self._update(block, ret, weights, g, params[g.key], counter, step)
        if counter is not None:
            step.outputs.append((STEP_KEY, counter))
        _rewrite_outputs(fn, ret, grads, step.outputs)

    def _slot_keys(self, params: dict[str, TensorType]) -> list[str]:
        """The keys of the state this pass creates (slots and the step count)."""
        keys = [f"{key}.{suffix}" for key in params for suffix in SLOTS[self.kind]]
        return [*keys, *([STEP_KEY] if self.kind.startswith("adam") else [])]

    # -- building the step ---------------------------------------------------------------------
    def _step_counter(self, block: Block, ret: func.ReturnOp, weights: ModuleWeights, step: _Step) -> SSAValue | None:
        """adam's `optimizer.step + 1` (this update's 1-based count), else None."""
        if not self.kind.startswith("adam"):
            return None
        scalar = tensor(f32, ())
        count = _slot(block, ret, weights, STEP_KEY, scalar)
        one = name_after(ge.ConstantOp.inline(np.array(1.0, np.float32)), count, "one")
        Rewriter.insert_op(one, InsertPoint.before(ret))
        add = ge.AddOp.create({"a": count, "b": one.output}, name=f"{STEP_KEY}/increment")
        mark_keep_dtype(add)  # in f16, 2048 + 1 rounds to 2048: the count would stop
        Rewriter.insert_op(add, InsertPoint.before(ret))
        return add.results[0]

    def _update(
        self,
        block: Block,
        ret: func.ReturnOp,
        weights: ModuleWeights,
        g: Gradient,
        t: TensorType,
        counter: SSAValue | None,
        step: _Step,
    ) -> None:
        """Emits the update of parameter `g.key` and records its new state values."""
        var = _variables_for(block, weights, g.key)
        slots = [_slot(block, ret, weights, f"{g.key}.{s}", t) for s in SLOTS[self.kind]]
        name = f"{g.key}/{self.kind}"
        if self.kind == "sgd":
            update = ge.ApplyGradientDescentOp.create({"var": var, "grad": g.value}, {"alpha": self.lr}, name=name)
        elif self.kind == "momentum":
            props = {"lr": self.lr, "momentum": self.momentum, "use_nesterov": int(self.nesterov)}
            update = ge.ApplyMomentumOp.create({"var": var, "accum": slots[0], "grad": g.value}, props, name=name)
        else:
            props = {
                "lr": self.lr,
                "beta1": self.beta1,
                "beta2": self.beta2,
                "epsilon": self.eps,
                "weight_decay": self.weight_decay,
                "decoupled": int(self.kind == "adamw"),
            }
            operands: dict[str, SSAValue | Sequence[SSAValue] | None] = {
                "var": var,
                "m": slots[0],
                "v": slots[1],
                "step": counter,
                "grad": g.value,
            }
            update = ge.ApplyAdamOp.create(operands, props, name=name)
        Rewriter.insert_op(update, InsertPoint.before(ret))
        keys = [g.key, *(f"{g.key}.{s}" for s in SLOTS[self.kind])]
        step.outputs.extend(zip(keys, update.results))


# -- reading the graph ---------------------------------------------------------------------------


def _output_names(fn: func.FuncOp) -> list[str | None]:
    count = len(fn.function_type.outputs.data)
    if fn.res_attrs is None:
        return [None] * count
    names: list[str | None] = []
    for attrs in fn.res_attrs.data:
        name = attrs.data.get(NAME_ATTR)
        names.append(name.data if isinstance(name, StringAttr) else None)
    return names


def _gradients(fn: func.FuncOp, ret: func.ReturnOp) -> list[Gradient]:
    grads = [
        Gradient(name[: -len(GRAD_SUFFIX)], ret.operands[i], i)
        for i, name in enumerate(_output_names(fn))
        if name is not None and name.endswith(GRAD_SUFFIX) and len(name) > len(GRAD_SUFFIX)
    ]
    if not grads:
        raise _error("@main has no '<parameter>_grad' outputs; run autodiff first")
    seen: set[str] = set()
    for g in grads:
        if g.key in seen:
            raise _error(f"@main has two outputs named '{g.key}{GRAD_SUFFIX}'")
        seen.add(g.key)
    return grads


def _parameter_constants(block: Block, key: str) -> list[ge.ConstantOp]:
    return [op for op in block.ops if isinstance(op, ge.ConstantOp) and op.parameter_key == key]


def _parameter(block: Block, g: Gradient) -> TensorType:
    """The type of parameter `g.key`, checked against its gradient's; its constants hold one value."""
    constants = _parameter_constants(block, g.key)
    if not constants:
        plain = any(isinstance(op, ge.ConstantOp) and op.weight_key == g.key for op in block.ops)
        hint = f' (the constant #ge.weight<"{g.key}"> is not marked parameter)' if plain else ""
        raise _error(f"output '{g.key}{GRAD_SUFFIX}' has no parameter '{g.key}' in @main{hint}")
    for const in constants:
        t = const.output.type
        assert isinstance(t, TensorType)  # the ge.constant verifier holds
        if g.value.type != t:
            raise _error(f"gradient '{g.key}{GRAD_SUFFIX}' has type {g.value.type}, parameter '{g.key}' has {t}")
        if const.value != constants[0].value:
            raise _error(f"parameter '{g.key}' is read by constants of different values; one parameter has one value")
    t = constants[0].output.type
    assert isinstance(t, TensorType)
    return t


def _refuse_existing_state(module: ModuleOp, weights: ModuleWeights, params: list[str], new: list[str]) -> None:
    """Refuses to run twice (variables of these keys exist) or to shadow a sidecar entry with a slot
    or with an inline parameter's initial value."""
    wanted = {*params, *new}
    for op in module.walk():
        if isinstance(op, ge.VariableOp) and op.state_key in wanted:
            raise _error(f"the module already has the variable '{op.state_key}' (was apply-optimizer applied twice?)")
    for key in new:
        if key in weights:
            raise _error(f"the weights sidecar already holds '{key}', a key of the optimizer's state")
    inline = {op.parameter_key for op in module.walk() if isinstance(op, ge.ConstantOp) and op.weight_key is None}
    for key in params:
        if key in inline and key in weights:
            raise _error(
                f"the weights sidecar already holds '{key}', the key of an inline parameter "
                "whose value becomes the variable's initial state"
            )


# -- rewriting -----------------------------------------------------------------------------------


def _variables_for(block: Block, weights: ModuleWeights, key: str) -> SSAValue:
    """Turns every constant of parameter `key` into `ge.variable key` (same type and location);
    returns the first one's value (the parameter the update reads). An inline parameter's value
    becomes the weights' `key`: the variable's initial state."""
    first: SSAValue | None = None
    for const in _parameter_constants(block, key):
        t = const.output.type
        assert isinstance(t, TensorType)
        value = const.inline_value()
        if value is not None and key not in weights.added:
            weights.added[key] = np.require(value, requirements="C")  # _refuse_existing_state: the key is free
        var = ge.VariableOp.of(key, t)
        var.location = const.location
        Rewriter.replace_op(const, var)
        first = first or var.output
    assert first is not None  # _parameter found at least one
    return first


def _slot(block: Block, ret: func.ReturnOp, weights: ModuleWeights, key: str, t: TensorType) -> SSAValue:
    """A new variable `key` of type `t`, zero in the sidecar."""
    shape = storage_shape(t)
    assert None not in shape  # a variable's shape is static (its verifier)
    stored = weights.add(key, np.zeros(tuple(d or 0 for d in shape), dtype=numpy_dtype(t.element_type)))
    assert stored == key  # _refuse_existing_state made sure the key is free
    var = ge.VariableOp.of(key, t)
    var.location = name_loc(key)
    Rewriter.insert_op(var, InsertPoint.before(ret))
    return var.output


def _rewrite_outputs(
    fn: func.FuncOp, ret: func.ReturnOp, grads: list[Gradient], state: list[tuple[str, SSAValue]]
) -> None:
    """The return without the gradient outputs, the new state values (named and marked) after the rest."""
    dropped = {g.index for g in grads}
    old_attrs = fn.res_attrs.data if fn.res_attrs is not None else [DictionaryAttr({})] * len(ret.operands)
    values: list[SSAValue] = []
    attrs: list[DictionaryAttr] = []
    for i, (value, attr) in enumerate(zip(ret.operands, old_attrs)):
        if i not in dropped:
            values.append(value)
            attrs.append(attr)
    for key, value in state:
        values.append(value)
        attrs.append(DictionaryAttr({NAME_ATTR: StringAttr(key), STATE_ATTR: StringAttr(key)}))
    Rewriter.replace_op(ret, func.ReturnOp(*values))
    outputs: list[Attribute] = [v.type for v in values]
    fn.function_type = FunctionType.from_lists(list(fn.function_type.inputs.data), outputs)
    fn.res_attrs = ArrayAttr(attrs)
