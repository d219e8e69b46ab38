"""What the host does at run time for a function whose dims are known only then (GE's
unknown-shape subgraph, marked `ge.unknown_shape` by partition-dynamic): bind it to its
arguments' sizes and lower it for dynamic execution, each kernel launched after its shape
inference and tiling (`lower-to-streams{mode=dynamic}`). `run_dynamic` runs a module so, at the
stream level; the interpreter's host (interpreter/host_program.py) calls `bind` on first use of
each set of sizes and keeps the result.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType, UnitAttr
from xdsl.utils.exceptions import DiagnosticException

from ge.ge_dialects.context import make_context
from ge.ge_dialects.ge.control_flow import UNKNOWN_SHAPE_ATTR
from ge.ge_dialects.ge.target_attr import TARGET_KEY
from ge.ge_dialects.ge.types import format_of, shape_of
from ge.ge_dialects.ge.weights import ModuleWeights, attach_weights, weights_of
from ge.interpreter.host_program import HostRecord, run_host
from ge.passes.bind_dims import BOUND_ATTR, set_argument_shapes, settle
from ge.passes.pipeline import apply_all, parse_passes

LOWERING = "lower-to-tasks,plan-memory,lower-to-streams{mode=dynamic}"


class BindError(ValueError):
    """A function that cannot be bound to the sizes it is called with."""


def bind(fn: func.FuncOp, shapes: tuple[tuple[int, ...], ...]) -> tuple[ModuleOp, func.FuncOp]:
    """A copy of `fn` with arguments of `shapes`, settled and lowered in a module of its own (the
    parent's target and weights): the module and the function."""
    module = fn.parent_op()
    assert isinstance(module, ModuleOp)
    copy = fn.clone()
    del copy.attributes[UNKNOWN_SHAPE_ATTR]
    alone = ModuleOp([copy])
    if TARGET_KEY in module.attributes:
        alone.attributes[TARGET_KEY] = module.attributes[TARGET_KEY]
    table = weights_of(module)
    attach_weights(alone, ModuleWeights(table.base)).added.update(table.added)
    unknown = [isinstance(a.type, TensorType) and None in shape_of(a.type) for a in copy.body.block.args]
    for arg, bound in zip(copy.body.block.args, unknown):
        fmt = format_of(arg.type) if bound and isinstance(arg.type, TensorType) else None
        if fmt is not None and fmt.storage != fmt.origin:  # its array is stored, not logical
            raise BindError(f"@{fn.sym_name.data}: an argument stored in {fmt.storage.data} cannot be bound")
    set_argument_shapes(copy, [shape if bound else None for shape, bound in zip(shapes, unknown)])
    try:  # a constraint the sizes break (a reshape's element count, a broadcast): one line naming the op
        settle(alone, [copy])
        copy.attributes[BOUND_ATTR] = UnitAttr()
        apply_all(make_context(), alone, parse_passes(LOWERING))
    except DiagnosticException as e:
        raise BindError(f"@{fn.sym_name.data} at {', '.join(map(str, map(list, shapes)))}: {e}") from None
    return alone, copy


def run_dynamic(
    module: ModuleOp, inputs: Mapping[str, np.ndarray], weights: Mapping[str, np.ndarray] | None = None
) -> tuple[dict[str, np.ndarray], HostRecord]:
    """Runs `module` at the stream level, binding each function of unknown shapes when it is
    called: its outputs by name, and what the host did."""
    return run_host(module, inputs, weights, bind=bind)
