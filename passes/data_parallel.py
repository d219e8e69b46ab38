"""`data-parallel{devices=N bucket_mib=M split="idx:..."|"size:..." local="p1,p2" fusion_tensor_size=B}`:
one training step run by N replicas, each on a shard of the batch, their gradients summed over
the replicas by HCCL's AllReduce (GE's data-parallel training with HcomAllReduce in the graph).

It runs after `autodiff`, before `apply-optimizer`. The graph becomes the program each replica runs:

- the graph inputs whose leading dim is the batch size B (the first input's) are split on dim 0:
  each replica gets B/N rows (B must divide), recorded as `ge.replica_split = 0` on the input and
  `ge.replicas = N` on `main`; the other inputs go whole to every replica;
- the forward is rebuilt at B/N rows and differentiated again (autodiff's own backward, from each
  op's vjp): a backward's shapes and constants are fixed when it is built, so it cannot be
  re-inferred for another batch;
- every gradient except those of the `local` parameters goes through a `ge.hcom_all_reduce`
  (sum), then is multiplied by 1/N, so with a mean loss it equals the full batch's gradient;
  `local` parameters keep the replica's own gradient (each replica trains its own copy);
- the reduced gradients are packed into buckets in backward order (passes/gradient_buckets.py:
  GE's split strategies, DDP's bucket size, `ge.fusionTensorSize` as the cap): one fused
  collective per bucket, placed right after the bucket's last gradient, so it can overlap the rest
  of the backward.

The replicas are identical programs in lock step; `ge-run` runs all N on their shards, the
collective really summing their gradients (interpreter/replicas.py). devices=1 leaves the graph as
it is. A graph differentiated by accumulate-gradients is refused: its micro-batches would have to
be rebuilt from a forward it no longer holds.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IntegerAttr, ModuleOp, TensorType
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ge.ge_dialects import ge
from ge.ge_dialects.ge.base import describe, location_name
from ge.ge_dialects.ge.collective import REPLICAS_ATTR, SPLIT_ATTR, WORLD_GROUP
from ge.ge_dialects.ge.grad import GradBuilder
from ge.ge_dialects.ge.sizes import device_bytes
from ge.ge_dialects.ge.target_attr import module_pass_target
from ge.ge_dialects.ge.types import tensor_type_of, type_name
from ge.interpreter.runner import output_names
from ge.passes import gradient_buckets
from ge.passes.autodiff import SEED_NAME, add_outputs, build_backward, parameters
from ge.passes.batch_split import batch_size, erase_unused_literal_values, has_batch, rebuilt_for_rows
from ge.passes.gradient_buckets import FUSION_TENSOR_SIZE, Gradient, SplitStrategy
from ge.passes.graph_main import main_of
from ge.passes.pipeline import require_graph_level

PASS = "data-parallel"
GRAD_SUFFIX = "_grad"
BUCKET_NAME = "/data_parallel/bucket"


def _error(message: str) -> DiagnosticException:
    return DiagnosticException(f"{PASS}: {message}")


@dataclass(frozen=True)
class DataParallelPass(ModulePass):
    name = "data-parallel"

    devices: int = 1
    """How many replicas (chips) run the step."""
    bucket_mib: int | None = None
    """Buckets of at most this many MiB (DDP's bucket_cap_mb); exclusive with `split`."""
    split: str | None = None
    """GE's split strategy: "idx:I1,I2,..." (last gradient index of each bucket, backward order) or
    "size:P1,P2,..." (percentages of the gradient bytes); default GE's "size:96.54,3.46"."""
    local: str | None = None
    """Comma-separated parameter keys whose gradients are not reduced (each replica keeps its own)."""
    fusion_tensor_size: int = FUSION_TENSOR_SIZE
    """GE's `ge.fusionTensorSize`: the most bytes of one fused collective."""
    loss: str = "loss"
    """The loss output autodiff differentiated."""
    target: str | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_graph_level(PASS, op)
        strategy = SplitStrategy.parse(self.split, self.bucket_mib, PASS)
        if self.devices < 1:
            raise _error(f"devices must be at least 1, got {self.devices}")
        cluster = module_pass_target(PASS, op, self.target, record=False).cluster
        if self.devices > cluster.chips:
            raise _error(
                f"devices={self.devices} is more than the target's cluster holds ({cluster.servers} servers of "
                f"{cluster.chips_per_server} chips = {cluster.chips})"
            )
        fn = main_of(op, PASS)
        if REPLICAS_ATTR in fn.attributes:
            raise _error("the graph is already data-parallel")
        step = _Step.of(fn, self.loss)
        local = _local_keys(self.local, step.keys)
        if self.devices == 1:
            return
        batch = batch_size(fn, PASS)
        if batch % self.devices:
            raise _error(f"the batch size {batch} does not divide over devices={self.devices}")
        step.strip_backward()
        _shard(fn, batch, batch // self.devices)
        step.differentiate_again()
        grads = step.gradients
        reduced = [k for k in step.order_of_production() if k not in local]
        infos = [
            Gradient(i, device_bytes(grads[k]), type_name(tensor_type_of(grads[k]).element_type))
            for i, k in enumerate(reduced)
        ]
        packed = gradient_buckets.buckets(infos, strategy, PASS, self.fusion_tensor_size)
        final = dict(grads)
        for number, bucket in enumerate(packed):
            keys = [reduced[g.index] for g in bucket]
            final.update(_all_reduce(step.block, [grads[k] for k in keys], keys, number, self.devices))
        add_outputs(fn, step.ret, [(f"{k}{GRAD_SUFFIX}", final[k]) for k in step.keys], PASS)
        fn.attributes[REPLICAS_ATTR] = IntegerAttr(self.devices, 64)


def _local_keys(text: str | None, keys: list[str]) -> set[str]:
    names = [n.strip() for n in (text or "").split(",") if n.strip()]
    for name in names:
        if name not in keys:
            shown = ", ".join(f"'{k}'" for k in keys[:8]) + (f" and {len(keys) - 8} more" if len(keys) > 8 else "")
            raise _error(f"local names '{name}', which is not a trained parameter (parameters with gradients: {shown})")
    return set(names)


@dataclass
class _Step:
    """The differentiated graph: its forward, its gradients' keys (in output order) and its loss."""

    fn: func.FuncOp
    block: Block
    ret: func.ReturnOp
    loss: str
    keys: list[str]
    gradients: dict[str, SSAValue]

    @staticmethod
    def of(fn: func.FuncOp, loss: str) -> _Step:
        block = fn.body.block
        ret = block.last_op
        assert isinstance(ret, func.ReturnOp)
        names = output_names(fn)
        keys = [n.removesuffix(GRAD_SUFFIX) for n in names if n.endswith(GRAD_SUFFIX)]
        if not keys:
            raise _error("the graph has no gradient outputs ('<parameter>_grad'); run autodiff first")
        if loss not in names:
            raise _error(f"the graph has no output '{loss}' (the loss autodiff differentiated)")
        seeds = [o for o in block.ops if location_name(o) == SEED_NAME]
        if len(seeds) != 1:
            raise _error(
                "the graph was differentiated by accumulate-gradients (one backward per micro-batch); "
                "data-parallel runs after autodiff"
            )
        grads = {n.removesuffix(GRAD_SUFFIX): v for n, v in zip(names, ret.operands) if n.endswith(GRAD_SUFFIX)}
        return _Step(fn, block, ret, loss, keys, grads)

    def strip_backward(self) -> None:
        """Drops the gradient outputs and every op from the backward's seed on."""
        names = output_names(self.fn)
        kept = [i for i, n in enumerate(names) if not n.endswith(GRAD_SUFFIX)]
        attrs = self.fn.res_attrs.data if self.fn.res_attrs is not None else None
        self.ret.operands = [self.ret.operands[i] for i in kept]
        if attrs is not None:
            self.fn.res_attrs = ArrayAttr([attrs[i] for i in kept])
        self.fn.update_function_type()
        ops = list(self.block.ops)
        seed = next(i for i, o in enumerate(ops) if location_name(o) == SEED_NAME)
        for o in reversed(ops[seed:]):
            if o is self.ret:
                continue
            if any(r.uses for r in o.results):
                raise _error(f"{describe(o)} of the backward is read by the forward; the graph cannot be split")
            o.detach()
            o.erase()
        self.gradients = {}

    def differentiate_again(self) -> None:
        """autodiff's backward of the (resharded) forward, for the same parameters."""
        forward = [o for o in self.block.ops if o is not self.ret]
        loss_value = self.ret.operands[output_names(self.fn).index(self.loss)]
        weights = {k: v for k, v in parameters(self.fn).items() if k in self.keys}
        self.gradients = build_backward(forward, self.ret, loss_value, weights, PASS)
        missing = [k for k in self.keys if k not in self.gradients]
        if missing:
            raise _error(f"parameter '{missing[0]}' gets no gradient at the replica's batch")

    def order_of_production(self) -> list[str]:
        """The keys in the order the backward produces their gradients (last layer first)."""
        position = {o: i for i, o in enumerate(self.block.ops)}

        def made_at(key: str) -> int:
            owner = self.gradients[key].owner
            return position[owner] if isinstance(owner, Operation) else -1

        return sorted(self.keys, key=made_at)


def _shard(fn: func.FuncOp, batch: int, rows: int) -> None:
    """Gives every input with a leading dim of `batch` `rows` rows instead and rebuilds the ops
    (all of them the forward, the backward being stripped) for the new shapes."""
    block = fn.body.block
    mapping: dict[SSAValue, SSAValue] = {}
    arg_attrs = list(fn.arg_attrs.data) if fn.arg_attrs is not None else [DictionaryAttr({}) for _ in block.args]
    for i, arg in enumerate(list(block.args)):
        t = arg.type
        if not has_batch(arg, batch):
            continue
        assert isinstance(t, TensorType)
        new = TensorType(t.element_type, [rows, *t.get_shape()[1:]], t.encoding)
        mapping[arg] = _replace_arg(block, arg, new)
        arg_attrs[i] = DictionaryAttr({**arg_attrs[i].data, SPLIT_ATTR: IntegerAttr(0, 64)})
    fn.arg_attrs = ArrayAttr(arg_attrs)
    ret = block.last_op
    for op in list(block.ops):
        if op is ret or isinstance(op, ge.ConstantOp) or not any(v in mapping for v in op.operands):
            continue
        block.insert_op_before(rebuilt_for_rows(op, mapping, batch // rows, PASS), op)
    assert ret is not None
    ret.operands = [mapping.get(v, v) for v in ret.operands]
    for op in reversed(list(block.ops)):
        if op is not ret and any(r in mapping for r in op.results):
            op.detach()
            op.erase()
    erase_unused_literal_values(block)
    for old in [a for a in list(block.args) if a in mapping]:
        block.erase_arg(old)
    fn.update_function_type()


def _replace_arg(block: Block, old: BlockArgument, new_type: TensorType) -> BlockArgument:
    """A new argument of `new_type` beside `old` (which stays until its users are rebuilt)."""
    new = block.insert_arg(new_type, old.index + 1)
    new.name_hint = old.name_hint
    return new


def _all_reduce(block: Block, grads: list[SSAValue], keys: list[str], number: int, devices: int) -> dict[str, SSAValue]:
    """One fused AllReduce of `grads` right after the last of them; each result scaled by 1/devices
    at the end of the step."""
    position = {o: i for i, o in enumerate(block.ops)}
    last = max((g.owner for g in grads if isinstance(g.owner, Operation)), key=lambda o: position[o])
    anchor = last.next_op
    assert anchor is not None
    g = GradBuilder(block, anchor)
    g.name = f"{BUCKET_NAME}.{number}"
    reduce = g.emit(
        ge.HcomAllReduceOp,
        {"inputs": grads},
        {"reduction": "sum", "rank_size": devices, "group": WORLD_GROUP, "fusion": 1, "fusion_id": number},
        num_results=len(grads),
    )
    g.name = f"{BUCKET_NAME}.{number}/mean"
    end = block.last_op
    assert end is not None
    g.anchor = end  # the means at the end, where the updates read them: a stream running the
    return {k: g.scale(r, 1.0 / devices) for k, r in zip(keys, reduce.results)}  # backward never waits there
