"""Collective communication between the replicas of a data-parallel program (GE's HCCL ops).

`ge.hcom_all_reduce` is GE's HcomAllReduce: each of the `rank_size` replicas of the group gives
its operands, and each gets back their elementwise reduction over the replicas (`sum`, `prod`,
`max` or `min`, HCCL's reductions). Several operands make one fused collective: GE's gradient
fusion packs them into one buffer and reduces it with one HCCL call, so they must share a dtype
(only ops with the same group, dtype and reduction fuse). `fusion` and `fusion_id` keep GE's
meaning (0: not fused; 1: fused by the split strategy; 2: fused by `fusion_id`).

    %g0, %g1 = ge.hcom_all_reduce %d0, %d1 {reduction = "sum", group = "hccl_world_group",
                 rank_size = 8 : i64, fusion = 1 : i64, fusion_id = 0 : i64}
                 : (tensor<64x3x7x7xf32>, tensor<64xf32>) -> (tensor<64x3x7x7xf32>, tensor<64xf32>)

The op is not pure: its result depends on what the other replicas hold, so no pass folds it,
merges two of them or moves it into a fused kernel, and it runs on the communication engine
(HCCL), not on an AI Core unit.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import TensorType, bf16, f16, f32, f64, i8, i16, i32, i64
from xdsl.irdl import irdl_op_definition, opt_prop_def, prop_def, traits_def, var_operand_def, var_result_def
from xdsl.traits import EffectInstance, MemoryEffect, MemoryEffectKind

from ge.ge_dialects.ge.base import GeOp, InferArgs, IntProp, StrProp
from ge.ge_dialects.ge.facts import Engine, RunsOn
from ge.ge_dialects.ge.types import type_name, ui8, ui16, ui32, ui64

REDUCTIONS = ("sum", "prod", "max", "min")
"""HCCL's reduction operations (HcclReduceOp)."""
COLLECTIVE_TYPES = (f64, f32, f16, bf16, i8, i16, i32, i64, ui8, ui16, ui32, ui64)
"""The element types HCCL reduces (HcclDataType)."""
WORLD_GROUP = "hccl_world_group"
"""HCCL's name of the group of every rank of the job."""
REPLICAS_ATTR = "ge.replicas"
"""On `main` of a data-parallel program: how many replicas run it, each on its shard of the batch."""
SPLIT_ATTR = "ge.replica_split"
"""On an input of a data-parallel program: the dim cut into one slice per replica (the batch, 0)."""
FUSION_KINDS = (0, 1, 2)
"""GE's `fusion` attribute: 0 not fused, 1 fused by the split strategy, 2 fused by `fusion_id`."""


class Communicates(MemoryEffect):
    """The op exchanges data with the other replicas: it reads and writes memory outside the graph,
    so it is never folded, deduplicated or removed as unused."""

    @classmethod
    def get_effects(cls, op) -> set[EffectInstance]:
        return {EffectInstance(MemoryEffectKind.READ), EffectInstance(MemoryEffectKind.WRITE)}


@irdl_op_definition
class HcomAllReduceOp(GeOp):
    """GE's HcomAllReduce: every replica's operands reduced elementwise over the group's ranks."""

    name = "ge.hcom_all_reduce"
    NO_GRADIENT: ClassVar = "the collective of data-parallel training comes after the gradients"
    PRECISION: ClassVar = "keep"  # it reduces the gradients in the dtype the backward computed them in

    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    reduction = prop_def(StrProp)
    rank_size = prop_def(IntProp)
    group = opt_prop_def(StrProp)
    fusion = opt_prop_def(IntProp)
    fusion_id = opt_prop_def(IntProp)
    DEFAULTS: ClassVar = {"group": WORLD_GROUP, "fusion": 1, "fusion_id": 0}

    traits = traits_def(Communicates(), RunsOn(Engine.HCCL))

    def vector_elements(self) -> int:
        """None on the AI Cores: the links carry the collective, and its reduction is the gamma
        term of its cost (the device model's cluster)."""
        return 0

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        reduction = a.prop("reduction")
        if reduction not in REDUCTIONS:
            raise a.fail(f"reduction must be one of {', '.join(REDUCTIONS)}, got '{reduction}'")
        rank_size = a.prop("rank_size")
        if not isinstance(rank_size, int) or rank_size < 2:
            raise a.fail(f"rank_size must be at least 2 (a group of one has nothing to reduce), got {rank_size}")
        if a.prop("fusion") not in FUSION_KINDS:
            raise a.fail(f"fusion must be 0, 1 or 2, got {a.prop('fusion')}")
        if not a.prop("group"):
            raise a.fail("the group name is empty")
        values = a.values("inputs")
        if not values:
            raise a.fail("needs at least one operand")
        types: list[TensorType] = []
        for i, v in enumerate(values):
            t = v.type
            if not isinstance(t, TensorType):
                raise a.fail(f"operand #{i} must be a tensor, got {t}")
            if t.element_type not in COLLECTIVE_TYPES:
                raise a.fail(f"operand #{i} has element type {type_name(t.element_type)}, which HCCL does not reduce")
            if types and t.element_type != types[0].element_type:
                raise a.fail(
                    f"operand #{i} is {type_name(t.element_type)} but operand #0 is "
                    f"{type_name(types[0].element_type)}: one fused collective reduces one dtype"
                )
            if any(d < 0 for d in t.get_shape()):
                raise a.fail(f"operand #{i} must have a static shape, got {t}")
            types.append(t)
        return types


COLLECTIVE_OPS: list[type[GeOp]] = [HcomAllReduceOp]

__all__ = ["HcomAllReduceOp", "COLLECTIVE_OPS"]
