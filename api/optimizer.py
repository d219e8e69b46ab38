"""`ge.GraphOptimizer` and `ge.MemoryOptimizer`: the graph passes `ge-opt` runs, called from Python.

Every method copies its input graph, runs a pipeline of registered passes on the copy and returns
it as a new `ge.Graph`; the docstring of each method names that pipeline, and after each call
`optimizer.last_pipeline` holds the exact `ge-opt` command line that does the same to the graph's
IR file. User fusion patterns (`ge.FusionPattern`) join every `fuse-ops` the pipelines run, as
`--load-fusion-rules` makes them join it on the command line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import DYNAMIC_INDEX, FunctionType, ModuleOp, TensorType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination
from xdsl.transforms.dead_code_elimination import DeadCodeElimination
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from ge.api.errors import GEError, user_errors
from ge.api.executor import check_graph, chip_name, lower_graph, pipeline_text, run_passes
from ge.api.fusion_pattern import FusionPattern
from ge.api.graph import Graph
from ge.ge_dialects import fused
from ge.ge_dialects.ge.base import GeOp, describe, location_name
from ge.ge_dialects.ge.target_attr import module_target
from ge.ge_dialects.ge.types import shape_of
from ge.interpreter.runner import main_function
from ge.interpreter.stream_executor import memory_figures, simulate_module
from ge.passes.autodiff import SEED_NAME
from ge.passes.checkpoint import POLICIES, CheckpointPass
from ge.passes.fuse_ops import RuleFileError, merged_table, user_fusion_rules
from ge.passes.ge_optimize import FUSION, GeOptimizePass, stage_passes
from ge.passes.infer_shapes import InferShapesPass
from ge.passes.merge_constants import MergeConstantsPass
from ge.passes.mixed_precision import MixedPrecisionPass, mark_keep_dtype
from ge.target import DEFAULT_TARGET, load_target

#: target_precision -> mixed-precision mode (GE's precision_mode names).
MIXED_MODES = {
    "float16": "allow_mix_precision",
    "fp16": "allow_mix_precision",
    "bfloat16": "allow_mix_precision_bf16",
    "bf16": "allow_mix_precision_bf16",
}
#: preserve_precision_layers names that stand for a place in the graph rather than a node name.
BOUNDARY_LAYERS = ("input", "output")


class GraphOptimizer:
    """Graph-level optimization (ge-optimize and its stages). `target` (a chip name; None or
    "npu": the module's, else the default) is what fusion and layouts read (hardware-aware);
    `fusion_patterns` are `ge.FusionPattern`s tried before the built-in fusion rules."""

    def __init__(self, fusion_patterns: Sequence[FusionPattern] = (), target: str | None = None):
        self.target = chip_name(target, "GraphOptimizer")
        self.fusion_patterns: list[FusionPattern] = []
        self.last_pipeline: str | None = None
        """The `ge-opt` command line of the last call (None before the first)."""
        for p in fusion_patterns:
            self.add_fusion_pattern(p)

    def add_fusion_pattern(self, pattern: FusionPattern) -> GraphOptimizer:
        """Registers a pattern for every later `fuse-ops` (in front of the built-in rules)."""
        where = "GraphOptimizer.add_fusion_pattern"
        if not isinstance(pattern, FusionPattern):
            raise GEError(f"{where}: expected a ge.FusionPattern, got {type(pattern).__name__}")
        try:
            merged_table([p.rule() for p in [*self.fusion_patterns, pattern]])
        except RuleFileError as e:
            raise GEError(f"{where}: {e}") from None
        self.fusion_patterns.append(pattern)
        return self

    # -- running a pipeline on a copy -------------------------------------------------------------

    def _apply(self, graph: Graph, passes: Sequence[ModulePass], where: str) -> Graph:
        check_graph(graph, where)  # an empty ge.Graph() has no @main: nothing to optimize
        out = graph.copy()
        with user_errors(where), user_fusion_rules([p.rule() for p in self.fusion_patterns]):
            run_passes(out.module, passes, where)
        rules = " --load-fusion-rules <patterns>" if self.fusion_patterns else ""
        self.last_pipeline = f"ge-opt -p '{pipeline_text(passes)}'{rules}"
        return out

    def _level(self, level: int, precision_mode: str) -> GeOptimizePass:
        return GeOptimizePass(level=level, precision_mode=precision_mode, target=self.target)

    def apply_standard_optimizations(self, graph: Graph) -> Graph:
        """`ge-optimize{level=3 precision_mode=must_keep_origin_dtype}` (GE's default O3, types kept):
        shape inference; folding (fold-constants, merge-constants, fold-conv-bn, fold-bias-add), cse,
        simplify and dce; graph fusion (LayerNorm / GELU / attention recognition); data layouts
        (assign-formats and the TransData passes); UB fusion into fused.group kernels (fuse-ops).
        Level 3, not 2: UB fusion is part of the "fusion" asked for and GE's default. "Memory" at
        graph level is what merge-constants and dce remove; buffers are planned at lowering."""
        return self._apply(
            graph, [self._level(3, "must_keep_origin_dtype")], "GraphOptimizer.apply_standard_optimizations"
        )

    def apply_advanced_optimizations(self, graph: Graph, precision_mode: str = "allow_mix_precision") -> Graph:
        """`ge-optimize{level=3 precision_mode=allow_mix_precision}`: the standard pipeline with GE's
        mixed precision (white/gray/black op lists) between graph fusion and layouts, so fusion and
        the layout choice see the f16 types, and fuse-ops sizes its groups for this optimizer's
        `target` (hardware-aware). `precision_mode` takes any of GE's modes."""
        return self._apply(graph, [self._level(3, precision_mode)], "GraphOptimizer.apply_advanced_optimizations")

    def apply_operator_fusion(self, graph: Graph) -> Graph:
        """`infer-shapes,fold-conv-bn,fold-bias-add,recognize-layer-norm,recognize-gelu,
        recognize-attention,simplify,cse,dce,fuse-ops,fuse-trans-data,fuse-views,dce`: fusion alone,
        ge-optimize's stages `FUSION` (passes/ge_optimize.py): graph fusion (a BatchNorm after a conv folded into its
        weights, a constant bias Add into the conv or gemm, LayerNorm / GELU / attention recognized),
        then UB fusion into fused.group kernels with the registered patterns in front of the
        built-in rules, so Conv+BN+ReLU becomes one kernel. The patterns see the graph after graph
        fusion: a pattern whose follower a rewrite removed (a BatchNorm folded into its conv) has
        nothing left to match. No cleanup, precision or layout stage runs (those are
        `apply_standard_optimizations`')."""
        options = self._level(3, "must_keep_origin_dtype").options()
        return self._apply(graph, stage_passes(FUSION, options), "GraphOptimizer.apply_operator_fusion")

    def apply_memory_optimization(self, graph: Graph, checkpoint_policy: str = "sqrt") -> Graph:
        """The graph passes that lower the planned memory: `infer-shapes,merge-constants,cse,dce`
        (one copy of every repeated weight or constant, no duplicate or dead value to plan a buffer
        for; on a training graph each parameter keeps its own constant) and, on a training graph
        (one `autodiff` differentiated), `checkpoint{policy=sqrt}` (recompute instead of stash: the
        backward's activations; bit-equal gradients). Buffer reuse itself is planned at lowering
        (plan-memory); `MemoryOptimizer.calculate_memory_usage` reads its figures before and after."""
        where = "GraphOptimizer.apply_memory_optimization"
        training = _is_training_graph(check_graph(graph, where))
        passes: list[ModulePass] = [
            InferShapesPass(),
            MergeConstantsPass(parameters=not training),  # a training graph's parameters stay apart
            CommonSubexpressionElimination(),
            DeadCodeElimination(),
        ]
        if training:
            if checkpoint_policy not in POLICIES or checkpoint_policy in ("nodes", "budget"):
                raise GEError(f"{where}: checkpoint_policy '{checkpoint_policy}' is not one of none, layer, sqrt")
            passes.append(CheckpointPass(policy=checkpoint_policy))
        return self._apply(graph, passes, where)

    def apply_mixed_precision_optimization(
        self,
        graph: Graph,
        target_precision: str = "float16",
        preserve_precision_layers: Sequence[str] = ("input", "output"),
    ) -> Graph:
        """`infer-shapes,mixed-precision{mode=allow_mix_precision keep_dtype="<names>"}`
        (`allow_mix_precision_bf16` for bfloat16): GE's mixed precision by its op lists, the ops of
        `preserve_precision_layers` keeping their types. Names there are node names (locations);
        "input" stands for the ops that read a graph input, "output" for the ops whose results
        the graph returns (the first and last layers, the usual f32 keepers). The graph's own
        inputs and outputs keep their types under every mode."""
        where = "GraphOptimizer.apply_mixed_precision_optimization"
        check_graph(graph, where)
        mode = MIXED_MODES.get(target_precision) if isinstance(target_precision, str) else None
        if mode is None:
            raise GEError(f"{where}: target_precision {target_precision!r} is not one of {', '.join(MIXED_MODES)}")
        if isinstance(preserve_precision_layers, str) or not all(
            isinstance(n, str) and n for n in preserve_precision_layers
        ):
            raise GEError(
                f"{where}: preserve_precision_layers must be a list of node names, not {preserve_precision_layers!r}"
            )
        names = [n for n in preserve_precision_layers if n not in BOUNDARY_LAYERS]
        boundary = [n for n in preserve_precision_layers if n in BOUNDARY_LAYERS]
        out = graph.copy()
        with user_errors(where):
            kept = _boundary_ops(out.module, boundary)
        for op in kept:
            mark_keep_dtype(op)  # what keep_dtype=<its name> does, also for ops without a name
        shown = [*names, *(location_name(op) or op.name for op in kept)]
        mp = MixedPrecisionPass(mode=mode, keep_dtype=",".join(names) if names else None)
        passes = [InferShapesPass(), mp]
        with user_errors(where):
            run_passes(out.module, passes, where)
        shown_mp = MixedPrecisionPass(mode=mode, keep_dtype=",".join(shown) if shown else None)
        self.last_pipeline = f"ge-opt -p '{pipeline_text([InferShapesPass(), shown_mp])}'"
        return out

    def estimate_speedup(self, baseline: Graph, optimized: Graph, mode: str = "graph", streams: int = 0) -> Speedup:
        """How much faster `optimized` runs than `baseline` on the modeled device: each is compiled
        as it stands, `ge-optimize{level=0},lower-to-tasks,plan-memory,lower-to-streams{mode=graph}`
        (lowering/compile.py at level 0: no further optimization), then simulated
        (`ge-run --timing-only`); the ratio of the two latencies, with both kept on the result."""
        where = "GraphOptimizer.estimate_speedup"
        check_graph(baseline, where)
        check_graph(optimized, where)
        lowered = [
            lower_graph(g, where, level=0, target=self.target, streams=streams, mode=mode)
            for g in (baseline, optimized)
        ]
        with user_errors(where):
            chips = [module_target(low.module) or DEFAULT_TARGET for low in lowered]
        if chips[0] != chips[1]:
            raise GEError(
                f"{where}: the baseline is for {chips[0]}, the optimized graph for {chips[1]}; compare on one chip"
            )
        spec = load_target(chips[0])
        latencies = []
        for low in lowered:
            with user_errors(where):
                latencies.append(simulate_module(low.module, spec).latency)
        self.last_pipeline = lowered[1].pipeline
        return Speedup(latencies[0] / latencies[1], latencies[0], latencies[1], chips[0])

    def __repr__(self) -> str:
        patterns = ", ".join(p.rule_name for p in self.fusion_patterns) or "none"
        last = f", last: {self.last_pipeline}" if self.last_pipeline else ""
        return f"GraphOptimizer(target={self.target or 'default'}, fusion_patterns=[{patterns}]{last})"


class Speedup(float):
    """A speedup (baseline latency / optimized latency) with both modeled latencies, in seconds."""

    baseline_s: float
    optimized_s: float
    target: str

    def __new__(cls, ratio: float, baseline_s: float, optimized_s: float, target: str) -> Speedup:
        value = super().__new__(cls, ratio)
        value.baseline_s, value.optimized_s, value.target = baseline_s, optimized_s, target
        return value

    def __repr__(self) -> str:
        return (
            f"Speedup({float(self):.2f}x: {self.baseline_s * 1e6:.1f} us -> {self.optimized_s * 1e6:.1f} us "
            f"on {self.target})"
        )


def _is_training_graph(graph: Graph) -> bool:
    """A graph `autodiff` differentiated: its backward starts at the loss's seed."""
    return any(location_name(op) == SEED_NAME for op in graph.module.walk())


def _boundary_ops(module: ModuleOp, which: Sequence[str]) -> list[Operation]:
    """The ge ops reading a graph input ("input") and those producing a graph output ("output")."""
    fn = main_function(module)
    ret = fn.body.block.last_op
    found: dict[Operation, None] = {}
    if "input" in which:
        for arg in fn.body.block.args:
            for use in arg.uses:
                if isinstance(use.operation, GeOp):
                    found[use.operation] = None
    if "output" in which and ret is not None:
        for v in ret.operands:
            if isinstance(v.owner, GeOp):
                found[v.owner] = None
    return list(found)


# -- memory ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MemoryUsage:
    """Planned device bytes of a graph at a batch size, from plan-memory's figures (`task.memory`).

    `weights`: constants and variables; `activations`: the intermediates' arena (after reuse)
    plus the inputs and outputs; `total`: both, what the device holds (`device_total`)."""

    batch_size: int
    weights: int
    activations: int
    intermediates: int
    io: int
    no_reuse: int
    """The intermediates without buffer reuse (what reuse saves: no_reuse - intermediates)."""
    target: str
    pipeline: str

    @property
    def total(self) -> int:
        return self.weights + self.activations

    def as_dict(self) -> dict[str, int]:
        return {"weights": self.weights, "activations": self.activations, "total": self.total}

    def __getitem__(self, key: str) -> int:
        return self.as_dict()[key]

    def __repr__(self) -> str:
        mib = 2**20
        return (
            f"MemoryUsage(batch {self.batch_size} on {self.target}: total {self.total / mib:.2f} MiB = "
            f"weights {self.weights / mib:.2f} + activations {self.activations / mib:.2f} MiB "
            f"(intermediates {self.intermediates / mib:.2f}, no reuse {self.no_reuse / mib:.2f}; "
            f"inputs/outputs {self.io / mib:.2f}))"
        )


class MemoryOptimizer:
    """Planned memory of a graph (plan-memory's figures)."""

    @staticmethod
    def calculate_memory_usage(
        graph: Graph, batch_size: int | None = 32, level: int = 0, target: str | None = None
    ) -> MemoryUsage:
        """Planned bytes of `graph` with its batch set to `batch_size` (None: as it is), lowered by
        `ge-optimize{level=0},lower-to-tasks,plan-memory` (plan-memory's `task.memory` figures;
        `level` optimizes first, as `compile_pipeline(level)` would; the O3 relax-reuse step is not
        run, it trades memory for time).

        The batch is the leading dim of the first input; every input with that leading dim gets
        `batch_size` and the shapes are re-inferred op by op. A graph whose shapes do not follow
        (a reshape to a fixed shape folded at import) is refused in one line."""
        where = "MemoryOptimizer.calculate_memory_usage"
        check_graph(graph, where)
        if batch_size is not None and (
            not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1
        ):
            raise GEError(f"{where}: batch_size must be a positive integer, not {batch_size!r}")
        chip = chip_name(target, where) or DEFAULT_TARGET
        if level not in (0, 1, 2, 3):
            raise GEError(f"{where}: level {level!r} is not one of 0, 1, 2, 3")
        copy = graph.copy()
        if batch_size is not None:
            rebatch(copy.module, batch_size, where)
        passes = [GeOptimizePass(level=level, target=chip), *_lowering_to_memory()]
        with user_errors(where):
            run_passes(copy.module, passes, where)
        figures = memory_figures(copy.module)
        assert figures is not None, "plan-memory writes task.memory"
        fn = main_function(copy.module)
        batch = _batch_dim(fn) if batch_size is None else batch_size
        return MemoryUsage(
            batch_size=batch or 1,
            weights=figures.weights + figures.state,
            activations=figures.pool + figures.io,
            intermediates=figures.pool,
            io=figures.io,
            no_reuse=figures.no_reuse,
            target=chip,
            pipeline=f"ge-opt -p '{pipeline_text(passes)}'",
        )


def _lowering_to_memory() -> list[ModulePass]:
    from ge.lowering.plan_memory import PlanMemoryPass
    from ge.lowering.to_tasks import LowerToTasksPass

    return [LowerToTasksPass(), PlanMemoryPass()]


def _batch_dim(fn: func.FuncOp) -> int | None:
    inputs = [t for t in fn.function_type.inputs.data if isinstance(t, TensorType) and shape_of(t)]
    return shape_of(inputs[0])[0] if inputs else None


def rebatch(module: ModuleOp, batch_size: int, where: str) -> None:
    """Sets the batch (the first input's leading dim) of every input that has it to `batch_size`
    and re-infers each ge op's result types from its operands (`GeOp.rebuilt`), in program order,
    inside fused groups too (a group's block arguments take its operands' new types, its results
    the types its body now yields)."""
    with user_errors(where):
        fn = main_function(module)
    block = fn.body.block
    args = [(a, a.type) for a in block.args if isinstance(a.type, TensorType) and shape_of(a.type)]
    if not args:
        raise GEError(f"{where}: the graph has no input with a batch dimension")
    batch = shape_of(args[0][1])[0]
    if batch == batch_size:
        return
    changed: set[SSAValue] = set()
    for arg, t in args:
        dims = shape_of(t)
        if dims[0] == batch:
            new = TensorType(
                t.element_type, [batch_size, *(DYNAMIC_INDEX if d is None else d for d in dims[1:])], t.encoding
            )
            changed.add(Rewriter.replace_value_with_new_type(arg, new))
    _Rebatcher(where, f"batch {batch} -> {batch_size}", changed).block(block)
    ret = block.last_op
    assert isinstance(ret, func.ReturnOp)
    fn.function_type = FunctionType.from_lists([a.type for a in block.args], [v.type for v in ret.operands])


@dataclass
class _Rebatcher:
    where: str
    change: str
    changed: set[SSAValue]

    def block(self, block: Block) -> None:
        for op in list(block.ops):
            if any(v in self.changed for v in op.operands):
                self.op(op)

    def op(self, op: Operation) -> None:
        if isinstance(op, (func.ReturnOp, fused.YieldOp)):
            return
        if isinstance(op, fused.GroupOp):
            body = op.body.block
            for arg, value in zip(list(body.args), op.operands):
                if arg.type != value.type:
                    self.changed.add(Rewriter.replace_value_with_new_type(arg, value.type))
            self.block(body)
            yielded = body.last_op
            assert isinstance(yielded, fused.YieldOp)
            for result, value in zip(list(op.results), yielded.operands):
                if result.type != value.type:
                    self.changed.add(Rewriter.replace_value_with_new_type(result, value.type))
            return
        if not isinstance(op, GeOp):
            raise GEError(f"{self.where}: {op.name} reads a batched value and is not a ge op; it cannot be re-batched")
        try:
            new_op = op.rebuilt()
        except (VerifyException, DiagnosticException) as e:
            raise GEError(
                f"{self.where}: the shapes do not follow the batch at {describe(op)} ({self.change}): "
                f"{str(e).strip().splitlines()[0]}"
            ) from None
        Rewriter.replace_op(op, new_op)
        self.changed.update(r for r, old in zip(new_op.results, op.results) if r.type != old.type)
