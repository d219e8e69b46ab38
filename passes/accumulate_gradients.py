"""`accumulate-gradients{micro_batches=K reduction=mean}`: one launch runs forward and backward on K
micro-batches of a batch and accumulates the gradients, so a batch K times what fits in memory
trains with one launch (GE inserts the accumulation ops at the end of the backward graph).

Runs after `autodiff`. The graph inputs whose leading dim is the batch size B are split into K
slices of B/K along axis 0; the others (hyper-parameters, masks shared by every sample) are given
whole to each micro-batch. The body is rebuilt once per micro-batch with shapes re-inferred for
B/K, weights shared. After each micro-batch its `*_grad` outputs are added to one accumulator per
gradient, so only one micro-batch's activations are alive at a time (the memory planner reuses
their buffers for the next). With `reduction=mean` (the losses' default) the accumulated
gradients and the loss are divided by K, which makes them the full batch's mean; with `sum` they
are summed. Per-sample outputs (logits) are concatenated back to B rows.

The micro-batches are an unrolled sequence, not a loop region: the ge dialect has no loop op yet,
and unrolled, every later pass (fusion, layout, memory planning, streams) applies unchanged; the
IR grows linearly in K. Models with batch statistics (BatchNorm in training mode) get each
micro-batch's statistics, as on a device that accumulates; their gradient then differs from the
full batch's, as it does in every framework.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from ge.ge_dialects import ge
from ge.ge_dialects.ge.base import describe
from ge.ge_dialects.ge.grad import GradBuilder
from ge.ge_dialects.ge.types import shape_of
from ge.interpreter.runner import InputError, main_function, output_names
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

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_graph_level(PASS, op)
        if self.micro_batches < 1:
            raise _error(f"micro_batches must be at least 1, got {self.micro_batches}")
        if self.reduction not in REDUCTIONS:
            raise _error(f"reduction must be one of {', '.join(REDUCTIONS)}, got '{self.reduction}'")
        try:
            fn = main_function(op)
        except InputError as e:
            raise _error(str(e)) from None
        names = output_names(fn)
        if not any(n.endswith("_grad") for n in names):
            raise _error("the graph has no gradient outputs (<weight>_grad); run autodiff first")
        if self.micro_batches == 1:
            return
        batch = _batch_size(fn)
        if batch % self.micro_batches:
            raise _error(f"the batch size {batch} is not a multiple of micro_batches={self.micro_batches}")
        _Unroller(fn, names, batch, self).run()


def _batch_size(fn: func.FuncOp) -> int:
    inputs = [a for a in fn.body.block.args if isinstance(a.type, TensorType) and a.type.get_shape()]
    if not inputs:
        raise _error("the graph has no input with a batch dimension")
    batch = shape_of(inputs[0].type)[0]
    if batch is None:
        raise _error("the batch dimension of the first input is dynamic; micro-batches need a static one")
    return batch


class _Unroller:
    """Rebuilds the body once per micro-batch and combines the outputs."""

    def __init__(self, fn: func.FuncOp, names: list[str], batch: int, options: AccumulateGradientsPass):
        self.fn = fn
        self.names = names
        self.batch = batch
        self.k = options.micro_batches
        self.mean = options.reduction == "mean"
        self.loss = options.loss
        self.block = fn.body.block
        self.ret = self.block.last_op
        assert isinstance(self.ret, func.ReturnOp)
        self.body = [op for op in self.block.ops if op is not self.ret]
        self.g = GradBuilder(self.block, self.ret)

    def run(self) -> None:
        shared = {op.results[0]: op.results[0] for op in self.body if isinstance(op, ge.ConstantOp)}
        micro = self.batch // self.k
        per_output: list[list[SSAValue]] = [[] for _ in self.names]
        accumulated: dict[int, SSAValue] = {}
        for step in range(self.k):
            self.g.name = f"/micro_batch.{step}"
            mapping = dict(shared)
            for arg in self.block.args:
                mapping[arg] = self._slice(arg, step * micro, micro)
            for op in self.body:
                if not isinstance(op, ge.ConstantOp):
                    self._rebuild(op, mapping)
            for i, (name, value) in enumerate(zip(self.names, self.ret.operands)):
                new = mapping.get(value, value)
                if name.endswith("_grad") or name == self.loss:
                    accumulated[i] = new if step == 0 else self.g.add(accumulated[i], new)
                else:
                    per_output[i].append(new)
        self.g.name = "/accumulate"
        outputs = []
        for i, name in enumerate(self.names):
            if i in accumulated:
                outputs.append(self.g.scale(accumulated[i], 1.0 / self.k) if self.mean else accumulated[i])
            else:
                outputs.append(self._concat(name, per_output[i]))
        self.ret.operands = outputs
        for op in reversed(self.body):
            if not isinstance(op, ge.ConstantOp):
                op.detach()
                op.erase(safe_erase=False)

    def _slice(self, arg: SSAValue, start: int, size: int) -> SSAValue:
        shape = shape_of(arg.type) if isinstance(arg.type, TensorType) else ()
        if not shape or shape[0] != self.batch:
            return arg
        g = self.g
        return g.value(
            ge.SliceOp, {"data": arg, "starts": g.ints([start]), "ends": g.ints([start + size]), "axes": g.ints([0])}
        )

    def _rebuild(self, op: Operation, mapping: dict[SSAValue, SSAValue]) -> None:
        if not isinstance(op, ge.GeOp):
            raise _error(f"{op.name} is not a ge op; the body cannot be split into micro-batches")
        try:
            new = op.rebuilt(mapping)
        except VerifyException as e:
            raise _error(f"{describe(op)} does not fit a micro-batch of {self.batch // self.k}: {e}") from None
        self.g.insert(new)
        mapping.update(zip(op.results, new.results))

    def _concat(self, name: str, parts: list[SSAValue]) -> SSAValue:
        shape = shape_of(parts[0].type)
        if not shape or shape[0] != self.batch // self.k:
            raise _error(f"output '{name}' has no batch dimension to join the micro-batches on ({parts[0].type})")
        return self.g.value(ge.ConcatOp, {"inputs": parts}, {"axis": 0})
