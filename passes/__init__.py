"""The pass registry: pass name -> factory that imports the pass's module when first asked for it.

Importing this package imports nothing else, so a tool pays only for the passes its pipeline
names (as xDSL's `get_all_passes`). `PROJECT_PASSES` lists this project's passes (graph passes
under `passes/`, dialect-to-dialect conversions under `lowering/`); `XDSL_PASSES` the few xDSL
passes a pipeline may name (the pipelines and tests use cse and dce). xDSL's others are not
offered: one of them, `mlir-opt`, runs an arbitrary executable. A test walks both packages and
fails when a pass module is missing from the table.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from ge import refuse_bare_import

if TYPE_CHECKING:
    from xdsl.passes import ModulePass

refuse_bare_import(__name__)

#: Pass name -> (module, class), for the passes this project defines.
PROJECT_PASSES: dict[str, tuple[str, str]] = {
    "accumulate-gradients": ("ge.passes.accumulate_gradients", "AccumulateGradientsPass"),
    "data-parallel": ("ge.passes.data_parallel", "DataParallelPass"),
    "add-loss": ("ge.passes.add_loss", "AddLossPass"),
    "adjust-hw-layout": ("ge.passes.layout.adjust_hw_layout", "AdjustHwLayoutPass"),
    "apply-optimizer": ("ge.passes.apply_optimizer", "ApplyOptimizerPass"),
    "assign-formats": ("ge.passes.layout.assign_formats", "AssignFormatsPass"),
    "autodiff": ("ge.passes.autodiff", "AutodiffPass"),
    "cancel-casts": ("ge.passes.cancel_casts", "CancelCastsPass"),
    "cancel-trans-data": ("ge.passes.layout.cancel_trans_data", "CancelTransDataPass"),
    "checkpoint": ("ge.passes.checkpoint", "CheckpointPass"),
    "bind-dims": ("ge.passes.bind_dims", "BindDimsPass"),
    "fold-bias-add": ("ge.passes.fold_bias_add", "FoldBiasAddPass"),
    "fold-constants": ("ge.passes.fold_constants", "FoldConstantsPass"),
    "fold-qdq": ("ge.passes.fold_qdq", "FoldQdqPass"),
    "fold-symbolic-shapes": ("ge.passes.fold_symbolic_shapes", "FoldSymbolicShapesPass"),
    "fold-conv-bn": ("ge.passes.fold_conv_bn", "FoldConvBnPass"),
    "fold-trans-data": ("ge.passes.layout.fold_trans_data", "FoldTransDataPass"),
    "fuse-ops": ("ge.passes.fuse_ops", "FuseOpsPass"),
    "fuse-trans-data": ("ge.passes.fuse_trans_data", "FuseTransDataPass"),
    "fuse-views": ("ge.passes.fuse_views", "FuseViewsPass"),
    "ge-optimize": ("ge.passes.ge_optimize", "GeOptimizePass"),
    "inline-control-flow": ("ge.passes.inline_control_flow", "InlineControlFlowPass"),
    "infer-shapes": ("ge.passes.infer_shapes", "InferShapesPass"),
    "insert-trans-data": ("ge.passes.layout.insert_trans_data", "InsertTransDataPass"),
    "loss-scale": ("ge.passes.loss_scale", "LossScalePass"),
    "lower-to-streams": ("ge.lowering.to_streams", "LowerToStreamsPass"),
    "lower-to-tasks": ("ge.lowering.to_tasks", "LowerToTasksPass"),
    "merge-constants": ("ge.passes.merge_constants", "MergeConstantsPass"),
    "merge-trans-data": ("ge.passes.layout.merge_trans_data", "MergeTransDataPass"),
    "mixed-precision": ("ge.passes.mixed_precision", "MixedPrecisionPass"),
    "partition-dynamic": ("ge.passes.partition_dynamic", "PartitionDynamicPass"),
    "sink-control-flow": ("ge.passes.sink_control_flow", "SinkControlFlowPass"),
    "input-shape": ("ge.passes.input_shape", "InputShapePass"),
    "plan-memory": ("ge.lowering.plan_memory", "PlanMemoryPass"),
    "recognize-attention": ("ge.passes.recognize_attention", "RecognizeAttentionPass"),
    "recognize-gelu": ("ge.passes.recognize_gelu", "RecognizeGeluPass"),
    "recognize-layer-norm": ("ge.passes.recognize_layer_norm", "RecognizeLayerNormPass"),
    "relax-reuse": ("ge.lowering.relax_reuse", "RelaxReusePass"),
    "require-graph-level": ("ge.passes.require_graph_level", "RequireGraphLevelPass"),
    "set-target": ("ge.passes.set_target", "SetTargetPass"),
    "specialize-gears": ("ge.passes.specialize_gears", "SpecializeGearsPass"),
    "simplify": ("ge.passes.simplify", "SimplifyPass"),
    "verify-streams": ("ge.lowering.verify_streams", "VerifyStreamsPass"),
}

#: The xDSL passes this compiler offers, by name -> (module, class).
XDSL_PASSES: dict[str, tuple[str, str]] = {
    "cse": ("xdsl.transforms.common_subexpression_elimination", "CommonSubexpressionElimination"),
    "dce": ("xdsl.transforms.dead_code_elimination", "DeadCodeElimination"),
    "canonicalize": ("xdsl.transforms.canonicalize", "CanonicalizePass"),
}

PassFactory = Callable[[], "type[ModulePass]"]


def _loader(name: str, module: str, class_name: str) -> PassFactory:
    def load() -> type[ModulePass]:
        cls = getattr(importlib.import_module(module), class_name)
        if cls.name != name:  # a renamed pass whose table entry was not updated
            raise ValueError(f"the pass registered as '{name}' ({module}.{class_name}) is named '{cls.name}'")
        return cls

    return load


def _factories(table: dict[str, tuple[str, str]]) -> dict[str, PassFactory]:
    return {name: _loader(name, module, cls) for name, (module, cls) in table.items()}


def all_passes() -> dict[str, PassFactory]:
    """This project's passes: name -> factory returning the pass class (its module imported then)."""
    return _factories(PROJECT_PASSES)


def xdsl_passes() -> dict[str, PassFactory]:
    """The xDSL passes offered (`XDSL_PASSES`): name -> factory returning the pass class."""
    return _factories(XDSL_PASSES)
