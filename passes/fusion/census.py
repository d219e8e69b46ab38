"""Counting kernels: what the device would launch for a graph, as the optimization figures count it.

A kernel is a fused group or a remaining op; constants (weights in memory), `ge.shape` of a static
tensor (folded by then) and the function's return are not kernels. TransData is counted apart:
GE reports format conversions separately from compute kernels.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from ge.device.engines import stays_outside_tasks
from ge.ge_dialects import fused
from ge.ge_dialects.ge.layout import TransDataOp


@dataclass
class Census:
    kernels: int = 0
    trans_data: int = 0
    groups: Counter = field(default_factory=Counter)
    ops: Counter = field(default_factory=Counter)


def census(module: ModuleOp) -> Census:
    result = Census()
    for fn in module.ops:
        if not isinstance(fn, func.FuncOp):
            continue
        for op in fn.body.block.ops:
            if stays_outside_tasks(op):
                continue
            if isinstance(op, TransDataOp):
                result.trans_data += 1
                continue
            result.kernels += 1
            if isinstance(op, fused.GroupOp):
                result.groups[op.rule.data] += 1
            else:
                result.ops[op.name] += 1
    return result
