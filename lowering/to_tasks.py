"""`lower-to-tasks`: one `task.kernel` per fused group or remaining op, with engine and geometry.

    // before
    %2 = fused.group "cube+elementwise" "cube_epilogue" (%x, %w) : (...) -> T {...}
    // after
    %2 = task.kernel "/conv" (%x, %w) : (...) -> T attributes {engine = "cube+vector",
           block_dim = 24 : i64, workspace = 0 : i64, tiling = "m=36 n=8 k=36 fractals=3",
           pattern = "cube_epilogue"} {...}

Constants stay outside (weights live in device memory, not in a kernel); scalar constants a
kernel reads, and constants read through an op's `IMMEDIATE_OPERANDS` (Col2Im's shapes), are
cloned into it as immediates.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ge.device.engines import engine_of, launch_geometry, stays_outside_tasks
from ge.ge_dialects import fused, ge, stream, task
from ge.ge_dialects.ge.base import describe, location_name
from ge.ge_dialects.ge.control_flow import lowering_leaves
from ge.ge_dialects.ge.target_attr import module_pass_target
from ge.ge_dialects.outlined import outline_into
from ge.interpreter.runner import signature_problem
from ge.target import Target


def task_properties(op: Operation, target: Target) -> dict:
    engine = engine_of(op)
    block_dim, tiling = launch_geometry(op, engine, target)
    pattern = op.rule.data if isinstance(op, fused.GroupOp) else op.name.removeprefix("ge.")
    return {
        "engine": StringAttr(engine),
        "block_dim": IntegerAttr(block_dim, 64),
        "workspace": IntegerAttr(0, 64),
        "tiling": StringAttr(tiling),
        "pattern": StringAttr(pattern),
    }


def lower_op(op: Operation, name: str, target: Target) -> task.KernelOp:
    props = task_properties(op, target)
    if isinstance(op, fused.GroupOp):
        body = op.body.clone()
        terminator = body.block.last_op
        assert terminator is not None, "fused.group's verifier requires its fused.yield terminator"
        terminator.detach()
        body.block.add_op(task.YieldOp(list(terminator.operands)))
        terminator.erase(drop_references=True)
        kernel = task.KernelOp(name, list(op.inputs), [r.type for r in op.outputs], body, props)
        kernel.location = op.location
        parent = op.parent_block()
        assert parent is not None, "lower_op takes ops of a function body"
        parent.insert_op_before(kernel, op)
        for old, new in zip(op.results, kernel.results):
            old.replace_all_uses_with(new)
        op.detach()
        op.erase()
        return kernel
    return outline_into(
        [op],
        list(op.results),
        lambda ins, types, body: task.KernelOp(name, ins, types, body, props),
        task.YieldOp,
        _is_immediate,
    )


def _is_immediate(op: Operation) -> bool:
    """A scalar constant, or a constant an op reads through one of its `IMMEDIATE_OPERANDS`."""
    if fused.is_scalar_constant(op):
        return True
    if not isinstance(op, ge.ConstantOp) or op.inline_value() is None:
        return False
    return any(_read_as_immediate(use.operation, use.index) for use in op.results[0].uses)


def _read_as_immediate(user: Operation, index: int) -> bool:
    if not isinstance(user, ge.GeOp) or not (names := user.IMMEDIATE_OPERANDS):
        return False
    definitions = user.get_irdl_definition().operands  # ops with immediates have no variadic operands
    return index < len(definitions) and definitions[index][0] in names


@dataclass(frozen=True)
class LowerToTasksPass(ModulePass):
    name = "lower-to-tasks"

    target: str | None = None  # None: the module's ge.target, else the default

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = module_pass_target(self.name, op, self.target)
        for fn in op.ops:
            if not isinstance(fn, func.FuncOp) or not fn.body.blocks:
                continue
            problem = signature_problem(fn)
            if problem is not None:
                raise DiagnosticException(f"{self.name}: {problem}")
            if lowering_leaves(fn):
                continue  # a host program, or a function bound when it runs (partition-dynamic)
            if any(
                isinstance(o, (stream.RecordOp, stream.WaitOp))
                or (isinstance(o, task.KernelOp) and o.stream is not None)
                for o in fn.body.block.ops
            ):
                raise DiagnosticException(f"{self.name}: @{fn.sym_name.data} is already on streams")
            flow = next((o for o in fn.body.block.ops if isinstance(o, (ge.IfOp, ge.LoopOp, ge.GearsOp))), None)
            if flow is not None:
                raise DiagnosticException(
                    f"{self.name}: @{fn.sym_name.data}: {describe(flow)} decides at run time which function "
                    "runs; run partition-dynamic first (the host runs the control flow between sunk subgraphs)"
                )
            used: dict[str, int] = {}
            for inner in list(fn.body.block.ops):
                if stays_outside_tasks(inner) or isinstance(inner, task.KernelOp):
                    continue
                lower_op(inner, unique_name(inner, used), target)


def unique_name(op: Operation, used: dict[str, int]) -> str:
    """The op's node name, or `name#2`, `name#3`, ... when taken. `used` maps each name given to the
    last suffix tried for it as a base: names are never freed, so the search for a base resumes
    there instead of walking `#2, #3, ...` again for every op that shares it."""
    base = location_name(op) or op.name
    n = used.get(base, 1)
    name = base if n == 1 else f"{base}#{n}"
    while name in used:
        n += 1
        name = f"{base}#{n}"
    used[base] = n
    used.setdefault(name, 1)
    return name
