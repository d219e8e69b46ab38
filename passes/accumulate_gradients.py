"""`accumulate-gradients{micro_batches=K reduction=mean wrt=... frozen=...}`: one launch runs forward
and backward on K micro-batches of a batch and accumulates the gradients, so a batch K times what
fits in memory trains with one launch (GE inserts the accumulation ops at the end of the backward graph).

It runs instead of `autodiff`, on the graph with its loss (after `add-loss`), and leaves what
autodiff leaves: one `<key>_grad` output per trained parameter. The graph inputs whose leading
dim is the batch size B are split into K slices of B/K along axis 0; the others are given whole to
each micro-batch. Per micro-batch, the forward is rebuilt with shapes re-inferred for B/K (weights
shared) and differentiated as autodiff does (`build_backward`), and its gradients are added to one
accumulator per weight, so only one micro-batch's activations are alive at a time (the memory
planner reuses their buffers for the next). With `reduction=mean` (the losses' default) the
gradients and the loss are divided by K, which makes them the full batch's mean; with `sum` they
are summed. Per-sample outputs (logits) are concatenated back to B rows.

The micro-batches are an unrolled sequence, not a loop region: the ge dialect has no loop op yet,
and unrolled, every later pass (checkpoint, fusion, layout, memory planning, streams) applies
unchanged; the IR grows linearly in K. Models with batch statistics (BatchNorm in training mode)
get each micro-batch's statistics, as on a device that accumulates; their gradient then differs
from the full batch's, as it does in every framework.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ge.ge_dialects import ge
from ge.ge_dialects.ge.grad import GradBuilder, value_shape
from ge.ge_dialects.ge.types import shape_of
from ge.interpreter.runner import output_names
from ge.passes.autodiff import GradientRequest, add_outputs, build_backward
from ge.passes.batch_split import batch_size, rebuilt_for_rows
from ge.passes.pipeline import require_graph_level

PASS = "accumulate-gradients"
REDUCTIONS = ("mean", "sum")


def _error(message: str) -> DiagnosticException:
    return DiagnosticException(f"{PASS}: {message}")


@dataclass(frozen=True)
class AccumulateGradientsPass(ModulePass):
    name = "accumulate-gradients"

    micro_batches: int = 1
    reduction: str = "mean"
    """How the loss reduces over samples: `mean` averages the micro-batches' gradients, `sum` adds them."""
    loss: str = "loss"
    wrt: str | None = None
    """As autodiff's: the parameters to differentiate (default: every trainable one)."""
    frozen: str | None = None
    """As autodiff's: the parameters not to differentiate."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_graph_level(PASS, op)
        if self.micro_batches < 1:
            raise _error(f"micro_batches must be at least 1, got {self.micro_batches}")
        if self.reduction not in REDUCTIONS:
            raise _error(f"reduction must be one of {', '.join(REDUCTIONS)}, got '{self.reduction}'")
        request = GradientRequest.of(op, self.loss, self.wrt, PASS, self.frozen)
        if any(n.endswith("_grad") for n in output_names(request.fn)):
            raise _error("the graph already has gradient outputs; accumulate-gradients runs instead of autodiff")
        batch = batch_size(request.fn, PASS)
        if batch % self.micro_batches:
            raise _error(f"the batch size {batch} is not a multiple of micro_batches={self.micro_batches}")
        _Unroller(request, batch, self).run()


class _Unroller:
    """Rebuilds the forward once per micro-batch, differentiates it, and combines the outputs."""

    def __init__(self, request: GradientRequest, batch: int, options: AccumulateGradientsPass):
        self.request = request
        self.names = output_names(request.fn)
        self.batch = batch
        self.k = options.micro_batches
        self.mean = options.reduction == "mean"
        self.block = request.fn.body.block
        self.ret = request.ret
        self.body = [op for op in self.block.ops if op is not self.ret]
        self.g = GradBuilder(self.block, self.ret)

    def run(self) -> None:
        request = self.request
        micro = self.batch // self.k
        per_output: list[list[SSAValue]] = [[] for _ in self.names]
        loss_index = self.names.index(request.loss)
        loss_total: SSAValue | None = None
        grads: dict[str, SSAValue] = {}
        for step in range(self.k):
            self.g.name = f"/micro_batch.{step}"
            mapping: dict[SSAValue, SSAValue] = {arg: self._slice(arg, step * micro, micro) for arg in self.block.args}
            forward = [self._rebuild(op, mapping) for op in self.body if not isinstance(op, ge.ConstantOp)]
            loss = mapping[request.loss_value]
            step_grads = build_backward(forward, self.ret, loss, request.selected(), PASS)
            self.g.name = f"/micro_batch.{step}/accumulate"
            for key, grad in step_grads.items():
                grads[key] = grad if key not in grads else self.g.add(grads[key], grad)
            loss_total = loss if loss_total is None else self.g.add(loss_total, loss)
            for i, value in enumerate(self.ret.operands):
                per_output[i].append(mapping.get(value, value))
        request.check_reached(grads)
        assert loss_total is not None
        self.g.name = "/accumulate"
        outputs = [
            self._mean(loss_total) if i == loss_index else self._concat(name, per_output[i])
            for i, name in enumerate(self.names)
        ]
        self.ret.operands = outputs
        for op in reversed(self.body):
            if not isinstance(op, ge.ConstantOp):
                op.detach()
                op.erase(safe_erase=False)
        add_outputs(
            request.fn,
            self.ret,
            [(f"{k}_grad", self._mean(grads[k])) for k in request.wanted if k in grads],
            PASS,
        )

    def _mean(self, total: SSAValue) -> SSAValue:
        return self.g.scale(total, 1.0 / self.k) if self.mean else total

    def _slice(self, arg: SSAValue, start: int, size: int) -> SSAValue:
        shape = shape_of(arg.type) if isinstance(arg.type, TensorType) else ()
        if not shape or shape[0] != self.batch:
            return arg
        g = self.g
        return g.value(
            ge.SliceOp, {"data": arg, "starts": g.ints([start]), "ends": g.ints([start + size]), "axes": g.ints([0])}
        )

    def _rebuild(self, op: Operation, mapping: dict[SSAValue, SSAValue]) -> Operation:
        new = rebuilt_for_rows(op, mapping, self.k, PASS)
        self.g.insert(new)
        return new

    def _concat(self, name: str, parts: list[SSAValue]) -> SSAValue:
        shape = value_shape(parts[0])
        if not shape or shape[0] != self.batch // self.k:
            raise _error(f"output '{name}' has no batch dimension to join the micro-batches on ({parts[0].type})")
        return self.g.value(ge.ConcatOp, {"inputs": parts}, {"axis": 0})
