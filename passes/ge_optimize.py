"""`ge-optimize{level=0..3}`: the optimization levels, as GE's `ge.oo.level` defines them.

  O0  nothing but the precision mode (a build option, not an optimization): the imported graph.
  O1  cleanup, simplification, mixed precision and data layouts; no fusion (GE's O1 turns graph
      and UB fusion off).
  O2  O1 plus graph fusion: QDQ folding (before the cleanup, whose constant folding would turn the
      weights' DequantizeLinear into float constants), Conv+BN folding, bias folding, LayerNorm /
      GELU / attention recognition.
  O3  O2 plus loops of a small constant trip count unrolled, and UB fusion into fused.group
      kernels (GE's default).

Each level in `LEVELS` is a list of stages; a stage builds pass objects from the options. The
options become fields of those objects and are never pasted into pipeline text, so an option's
value cannot add a pass. Every stage is also a pass (or a few) that `ge-opt -p` runs alone. GE's
option names are accepted too (passes/ge_options.py, ge-opt `--ge-option ge.oo.level=O1`).

ge-optimize is a composite pass (passes/pipeline.py): a pipeline holds its sub-passes, which
`sub_passes()` builds from the options, first `require-graph-level`, then the level's stages.

It optimizes the graph as it will run: a parameter still a constant (an inference graph's, or a
frozen one in a training step, where apply-optimizer made the trained ones variables) is folded
and merged as any constant (`merge-constants{parameters=true}`). Training runs it after
apply-optimizer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.passes import ModulePass
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination
from xdsl.transforms.dead_code_elimination import DeadCodeElimination
from xdsl.utils.exceptions import DiagnosticException

from ge.passes.fold_bias_add import FoldBiasAddPass
from ge.passes.fold_constants import FoldConstantsPass
from ge.passes.fold_conv_bn import FoldConvBnPass
from ge.passes.fold_qdq import FoldQdqPass
from ge.passes.fold_symbolic_shapes import FoldSymbolicShapesPass
from ge.passes.fuse_ops import FuseOpsPass
from ge.passes.fuse_trans_data import FuseTransDataPass
from ge.passes.fuse_views import FuseViewsPass
from ge.passes.infer_shapes import InferShapesPass
from ge.passes.inline_control_flow import InlineControlFlowPass
from ge.passes.input_shape import InputShapePass
from ge.passes.layout.adjust_hw_layout import AdjustHwLayoutPass
from ge.passes.layout.assign_formats import CHOICES as LAYOUT_CHOICES
from ge.passes.layout.assign_formats import AssignFormatsPass
from ge.passes.layout.cancel_trans_data import CancelTransDataPass
from ge.passes.layout.fold_trans_data import FoldTransDataPass
from ge.passes.layout.merge_trans_data import MergeTransDataPass
from ge.passes.merge_constants import MergeConstantsPass
from ge.passes.mixed_precision import MixedPrecisionPass
from ge.passes.pipeline import CompositePass
from ge.passes.recognize_attention import RecognizeAttentionPass
from ge.passes.recognize_gelu import RecognizeGeluPass
from ge.passes.recognize_layer_norm import RecognizeLayerNormPass
from ge.passes.require_graph_level import RequireGraphLevelPass
from ge.passes.set_target import SetTargetPass
from ge.passes.simplify import SimplifyPass
from ge.passes.specialize_gears import SpecializeGearsPass
from ge.target import TargetError, check_target_name

PRECISION_MODES = (
    "force_fp16",
    "force_fp32",
    "allow_fp32_to_fp16",
    "must_keep_origin_dtype",
    "allow_mix_precision",
    "allow_mix_precision_bf16",
)


@dataclass(frozen=True)
class LevelOptions:
    """What a stage may read: the validated options of ge-optimize."""

    precision_mode: str
    target: str | None
    layout_choice: str = "whole-graph"
    adjust_input_hw_layout: bool = False
    adjust_output_hw_layout: bool = False
    dim_ranges: str = ""


Stage = Callable[[LevelOptions], list[ModulePass]]


def shapes(options: LevelOptions) -> list[ModulePass]:
    return [FoldSymbolicShapesPass(dim_ranges=options.dim_ranges), InferShapesPass()]


def cleanup(_: LevelOptions) -> list[ModulePass]:
    return [
        FoldConstantsPass(),
        InlineControlFlowPass(),  # a condition folding made constant (a gear's shape test)
        MergeConstantsPass(parameters=True),  # the graph as it runs: a parameter left a constant is one
        CommonSubexpressionElimination(),
        SimplifyPass(),
        DeadCodeElimination(),
    ]


UNROLL_LIMIT = 16
"""O3 unrolls a loop of a constant trip count up to this many iterations (inline-control-flow)."""


def unroll(_: LevelOptions) -> list[ModulePass]:
    """O3: small constant loops unrolled, then what their iteration numbers make constant folded."""
    return [
        InlineControlFlowPass(unroll_limit=UNROLL_LIMIT),
        FoldConstantsPass(),
        CommonSubexpressionElimination(),
        DeadCodeElimination(),
    ]


def quantized(_: LevelOptions) -> list[ModulePass]:
    """Before the cleanup, whose constant folding turns a weight's DequantizeLinear into a float
    constant; simplify first, so an Identity between a DQ and its product (exporters put one on
    a shared bias) does not hide the group."""
    return [SimplifyPass(), FoldQdqPass()]


def graph_fusion(_: LevelOptions) -> list[ModulePass]:
    return [
        FoldConvBnPass(),
        FoldBiasAddPass(),
        RecognizeLayerNormPass(),
        RecognizeGeluPass(),
        RecognizeAttentionPass(),
        SimplifyPass(),
        CommonSubexpressionElimination(),
        DeadCodeElimination(),
    ]


def precision(options: LevelOptions) -> list[ModulePass]:
    return [MixedPrecisionPass(mode=options.precision_mode)]


def layout(options: LevelOptions) -> list[ModulePass]:
    inputs, outputs = options.adjust_input_hw_layout, options.adjust_output_hw_layout
    boundary = [AdjustHwLayoutPass(inputs=inputs, outputs=outputs)] if inputs or outputs else []
    return [
        AssignFormatsPass(choice=options.layout_choice),
        *boundary,
        CancelTransDataPass(),
        MergeTransDataPass(),
        FoldTransDataPass(),
        DeadCodeElimination(),
    ]


def ub_fusion(options: LevelOptions) -> list[ModulePass]:
    return [
        FuseOpsPass(target=options.target),
        FuseTransDataPass(target=options.target),
        FuseViewsPass(),
        DeadCodeElimination(),
    ]


LEVELS: dict[int, tuple[Stage, ...]] = {
    0: (precision,),
    1: (shapes, cleanup, precision, layout),
    2: (shapes, quantized, cleanup, graph_fusion, precision, layout),
    3: (shapes, quantized, cleanup, unroll, graph_fusion, precision, layout, ub_fusion),
}

FUSION: tuple[Stage, ...] = (shapes, graph_fusion, ub_fusion)
"""Fusion alone (`GraphOptimizer.apply_operator_fusion`): O3's graph fusion (Conv+BN and bias
folding, the recognitions) and then its UB fusion, without the cleanup, precision and layout stages."""


def stage_passes(stages: tuple[Stage, ...], options: LevelOptions) -> list[ModulePass]:
    """The passes of `stages`, in order, built from `options`."""
    return [p for stage in stages for p in stage(options)]


@dataclass(frozen=True)
class GeOptimizePass(CompositePass):
    name = "ge-optimize"

    level: int = 3
    precision_mode: str = "must_keep_origin_dtype"
    target: str | None = None  # None: the module's ge.target, else the default
    layout_choice: str = "whole-graph"  # assign-formats' choice: whole-graph or greedy
    adjust_input_hw_layout: bool = False  # the graph's inputs given in NC1HWC0 (adjust-hw-layout)
    adjust_output_hw_layout: bool = False  # its outputs returned in NC1HWC0
    dynamic_dims: str = ""  # gears: "batch=1,seq=128;batch=2,seq=64" (specialize-gears)
    dynamic_batch_size: str = ""  # gears over the inputs' dim 0: "1,2,4,8"
    dynamic_image_size: str = ""  # gears over dims 2 and 3 (NCHW): "224,224;448,448"
    compile_hybrid_mode: bool = False  # inputs that fit no gear run the dynamic graph
    dim_ranges: str = ""  # "batch=1:64,seq=1:512": the named dims' ranges (fold-symbolic-shapes)
    input_shape: str = ""  # GE's ge.inputShape: "x:1~8,128;mask:-1,128" (input-shape)

    def options(self) -> LevelOptions:
        """The options, each checked against its closed set before any pass is built from it."""
        if self.level not in LEVELS:
            raise DiagnosticException(f"ge-optimize: level {self.level} is not one of 0, 1, 2, 3")
        if self.precision_mode not in PRECISION_MODES:
            raise DiagnosticException(
                f"ge-optimize: precision_mode '{self.precision_mode}' is not one of {', '.join(PRECISION_MODES)}"
            )
        try:
            if self.target is not None:
                check_target_name(self.target)
        except TargetError as e:
            raise DiagnosticException(f"ge-optimize: {e}") from None
        if self.compile_hybrid_mode and not (self.dynamic_dims or self.dynamic_batch_size or self.dynamic_image_size):
            raise DiagnosticException(
                "ge-optimize: compile_hybrid_mode falls back from gears; give dynamic_dims, dynamic_batch_size "
                "or dynamic_image_size"
            )
        if self.layout_choice not in LAYOUT_CHOICES:
            raise DiagnosticException(
                f"ge-optimize: layout_choice '{self.layout_choice}' is not one of {', '.join(LAYOUT_CHOICES)}"
            )
        return LevelOptions(
            self.precision_mode,
            self.target,
            self.layout_choice,
            self.adjust_input_hw_layout,
            self.adjust_output_hw_layout,
            self.dim_ranges,
        )

    def sub_passes(self) -> list[ModulePass]:
        """The level's passes, after a check that refuses a lowered module and (when the target is
        given) the recording of the target, both in ge-optimize's name."""
        options = self.options()
        first: list[ModulePass] = [RequireGraphLevelPass(owner=self.name)]
        if self.target is not None:  # recorded at every level, so that a later lowering follows it
            first.append(SetTargetPass(target=self.target, owner=self.name))
        gears = SpecializeGearsPass(
            self.dynamic_dims, self.dynamic_batch_size, self.dynamic_image_size, self.compile_hybrid_mode
        )
        if self.input_shape:  # the inputs' sizes and ranges first: everything after sees them
            first.append(InputShapePass(shape=self.input_shape))
        if gears.dims or gears.batch_sizes or gears.image_sizes:  # the gears first: the levels see static shapes
            first.append(gears)
        return [*first, *stage_passes(LEVELS[self.level], options)]

    def pipeline(self) -> str:
        """The sub-passes as `ge-opt -p` text, for showing (never parsed here)."""
        return ",".join(str(p.pipeline_pass_spec()) for p in self.sub_passes())
