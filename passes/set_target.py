"""`set-target{target=NAME}`: writes the module's `ge.target`, or refuses one that contradicts it.

A sub-pass of `ge-optimize` when its `target` option is given (in ge-optimize's name,
`set-target{target=ascend910 owner=ge-optimize}`), so that the lowering after an optimization
follows the target it was optimized for even at levels where no sub-pass reads a target.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ge.ge_dialects.ge.target_attr import module_pass_target


@dataclass(frozen=True)
class SetTargetPass(ModulePass):
    name = "set-target"

    target: str
    owner: str = "set-target"
    """The pass the error names."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        module_pass_target(self.owner, op, self.target)
