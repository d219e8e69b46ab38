"""`add-loss{output=logits labels=labels kind=softmax_cross_entropy reduction=mean ignore_index=N}`:
appends a training loss to `main`.

The loss is computed from the graph output named `output` (its `ge.name` result attribute; by
default the only output) and a new graph input named `labels`, and returned as a new scalar f32
output named `loss`; the original outputs stay. Kinds:

- `softmax_cross_entropy`: `ge.softmax_cross_entropy_loss` of logits (N, C, d1..dk) against int64
  labels (N, d1..dk) (class indices, `ignore_index` skipped);
- `nll`: `ge.nll_loss` of log-probabilities (N, C, d1..dk) against the same labels;
- `mse`: the mean (or sum) of (y - t)^2 with ge.sub, ge.mul and ge.reduce_mean / ge.reduce_sum;
  the labels are targets of the output's type.

A loss computed in another float type than f32 is cast to f32 (the scalar the optimizer reads).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, StringAttr, TensorType, f32, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ge.ge_dialects import ge
from ge.ge_dialects.ge.types import is_float, shape_of, tensor, type_name
from ge.passes.graph_main import main_of

PASS = "add-loss"
KINDS = ("softmax_cross_entropy", "nll", "mse")
REDUCTIONS = ("mean", "sum")
LOSS_NAME = "loss"
ONNX_FLOAT = 1
"""TensorProto.FLOAT: ge.cast's `to` for f32."""


def _error(message: str) -> DiagnosticException:
    return DiagnosticException(f"{PASS}: {message}")


def _names(attrs: ArrayAttr[DictionaryAttr] | None, count: int) -> list[str | None]:
    """The `ge.name` of each argument or result (None where there is none)."""
    names: list[str | None] = []
    for i in range(count):
        entry = attrs.data[i] if attrs is not None else None
        name = entry.data.get("ge.name") if isinstance(entry, DictionaryAttr) else None
        names.append(name.data if isinstance(name, StringAttr) else None)
    return names


def _with_name(attrs: ArrayAttr[DictionaryAttr] | None, count: int, name: str) -> ArrayAttr[DictionaryAttr]:
    """The argument (result) attributes with one more entry, named `name`."""
    entries = list(attrs.data) if attrs is not None else [DictionaryAttr({}) for _ in range(count)]
    return ArrayAttr[DictionaryAttr]([*entries, DictionaryAttr({"ge.name": StringAttr(name)})])


@dataclass(frozen=True)
class AddLossPass(ModulePass):
    name = "add-loss"

    output: str | None = None
    """The graph output the loss is computed from (its ge.name); by default the only output."""
    labels: str = "labels"
    """The name of the new graph input that holds the labels (targets)."""
    kind: str = "softmax_cross_entropy"
    reduction: str = "mean"
    ignore_index: int | None = None
    """Labels with this value add nothing to the loss (classification kinds only)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self._check_options()
        fn = main_of(op, PASS)
        ret = fn.body.block.last_op
        assert isinstance(ret, func.ReturnOp)  # func's verifier makes the return the terminator
        value = self._chosen_output(fn, ret)
        self._check_free_names(fn)
        labels = fn.body.block.insert_arg(self._labels_type(value), len(fn.body.block.args))
        if self.labels.isidentifier():
            labels.name_hint = self.labels
        loss = self._build_loss(fn, ret, value, labels)
        ret.operands = [*ret.operands, loss]
        fn.arg_attrs = _with_name(fn.arg_attrs, len(fn.args) - 1, self.labels)
        fn.res_attrs = _with_name(fn.res_attrs, len(ret.operands) - 1, LOSS_NAME)
        fn.update_function_type()

    # -- checks --------------------------------------------------------------------------------
    def _check_options(self) -> None:
        if self.kind not in KINDS:
            raise _error(f"unknown kind '{self.kind}'; expected one of {', '.join(KINDS)}")
        if self.reduction not in REDUCTIONS:
            raise _error(f"unknown reduction '{self.reduction}'; expected one of {', '.join(REDUCTIONS)}")
        if self.kind == "mse" and self.ignore_index is not None:
            raise _error("ignore_index applies to the classification kinds, not mse")
        if self.labels == LOSS_NAME:
            raise _error(f"the labels input cannot be named '{LOSS_NAME}', the name of the loss output")

    def _chosen_output(self, fn: func.FuncOp, ret: func.ReturnOp) -> SSAValue:
        names = _names(fn.res_attrs, len(ret.operands))
        if self.output is None:
            if len(ret.operands) != 1:
                raise _error(
                    f"the graph has {len(ret.operands)} outputs; name the one to compute the loss from with output=NAME"
                )
            index = 0
        elif self.output in names:
            index = names.index(self.output)
        else:
            known = ", ".join(f"'{n}'" for n in names if n is not None) or "none named"
            raise _error(f"the graph has no output named '{self.output}' (outputs: {known})")
        value = ret.operands[index]
        self._check_output_type(names[index] or f"#{index}", value.type)
        return value

    def _check_output_type(self, name: str, t: Attribute) -> None:
        if not isinstance(t, TensorType) or not is_float(t.element_type):
            shown = type_name(t.element_type) if isinstance(t, TensorType) else str(t)
            raise _error(f"output '{name}' is {shown}; a {self.kind} loss needs a float tensor")
        rank = len(t.get_shape())
        if self.kind != "mse" and rank < 2:
            needs = "(N, C, d1..dk) logits of rank 2 or more"
            raise _error(f"output '{name}' has rank {rank}; a {self.kind} loss needs {needs}")

    def _check_free_names(self, fn: func.FuncOp) -> None:
        inputs = _names(fn.arg_attrs, len(fn.args))
        outputs = _names(fn.res_attrs, len(fn.function_type.outputs))
        for name in (self.labels, LOSS_NAME):
            if name in inputs:
                raise _error(f"the graph already has an input named '{name}'")
            if name in outputs:
                raise _error(f"the graph already has an output named '{name}'")

    # -- building ------------------------------------------------------------------------------
    def _labels_type(self, value: SSAValue) -> TensorType:
        t = value.type
        assert isinstance(t, TensorType)  # checked by _check_output_type
        shape = shape_of(t)
        if self.kind == "mse":
            return tensor(t.element_type, shape)
        return tensor(i64, (shape[0], *shape[2:]))

    def _build_loss(self, fn: func.FuncOp, ret: func.ReturnOp, value: SSAValue, labels: SSAValue) -> SSAValue:
        ops: list[ge.GeOp] = []

        def add(cls, operands, props=None) -> SSAValue:
            ops.append(cls.create(operands, props, name=f"{PASS}/{cls.name.removeprefix('ge.')}"))
            return ops[-1].results[0]

        losses = {"reduction": self.reduction, "ignore_index": self.ignore_index}
        if self.kind == "softmax_cross_entropy":
            loss = add(ge.SoftmaxCrossEntropyLossOp, {"scores": value, "labels": labels}, losses)
        elif self.kind == "nll":
            loss = add(ge.NllLossOp, {"input": value, "target": labels}, losses)
        else:
            diff = add(ge.SubOp, {"a": value, "b": labels})
            reduce = ge.ReduceMeanOp if self.reduction == "mean" else ge.ReduceSumOp
            loss = add(reduce, {"data": add(ge.MulOp, {"a": diff, "b": diff})}, {"keepdims": 0})
        assert isinstance(loss.type, TensorType)
        if loss.type.element_type != f32:
            loss = add(ge.CastOp, {"input": loss}, {"to": ONNX_FLOAT})
        fn.body.block.insert_ops_before(ops, ret)
        return loss
