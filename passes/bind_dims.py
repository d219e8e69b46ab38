"""bind-dims: `@main` bound to the sizes its inputs have when it runs, as GE's dynamic-shape
executor does on the host before each launch.

    bind-dims{sizes="batch=1,seq=128"}

Every named dim of `@main`'s inputs (`ge.dims`) takes its size; one program-order sweep then
re-infers each op's types from its operands and folds what becomes constant (`settle`), through
fused groups too, so a graph optimized on symbolic shapes (fold-symbolic-shapes, fusion) becomes
the static graph its kernels run as at these sizes, ready for lower-to-tasks. The function is
marked `ge.bound_at_run_time`: its shapes and tiling were the host's work at run time, which
`lower-to-streams{mode=dynamic}` and the device model charge per launch. Sizes outside the
function's `ge.dim_ranges`, names the inputs do not have and names left without a size are one
line each.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, FunctionType, ModuleOp, StringAttr, SymbolRefAttr, TensorType, UnitAttr
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException

from ge.ge_dialects import fused
from ge.ge_dialects.ge.base import GeOp
from ge.ge_dialects.ge.constant import ConstantOp
from ge.ge_dialects.ge.control_flow import IfOp, LoopOp, holds, lookup_function
from ge.ge_dialects.ge.dims import DimsError, input_dims, parse_sizes, ranges_of, sized, symbols
from ge.ge_dialects.ge.types import format_of, shape_of, tensor
from ge.interpreter.ge import folding_interpreter
from ge.passes import remarks
from ge.passes.fold_constants import FoldConstantsPass
from ge.passes.graph_main import main_of
from ge.passes.infer_shapes import refine, update_signature

PASS = "bind-dims"
BOUND_ATTR = "ge.bound_at_run_time"
"""Function attribute: its dims were bound when it ran (the host inferred shapes and tiling)."""


def make_static(fn: func.FuncOp, names: Sequence[Sequence[str | None]], sizes: Mapping[str, int]) -> None:
    """Gives `fn`'s arguments the static types `sizes` make of their named dims."""
    shapes = [
        sized(shape_of(a.type), dims, sizes) if isinstance(a.type, TensorType) and dims else None
        for a, dims in zip(fn.body.block.args, names)
    ]
    set_argument_shapes(fn, shapes)


def set_argument_shapes(fn: func.FuncOp, shapes: Sequence[Sequence[int | None] | None]) -> None:
    """Gives each tensor argument of `fn` its shape in `shapes` (None: left as it is), in its own
    element type and format, and `fn` the signature that follows."""
    block = fn.body.block
    for arg, shape in zip(list(block.args), shapes):
        t = arg.type
        if isinstance(t, TensorType) and shape is not None and list(shape) != list(t.get_shape()):
            Rewriter.replace_value_with_new_type(arg, tensor(t.element_type, shape, format_of(t)))
    fn.function_type = FunctionType.from_lists(list(block.arg_types), list(fn.function_type.outputs.data))


def settle(module: ModuleOp, functions: Iterable[func.FuncOp]) -> None:
    """Each function's ops in program order, each re-inferred from its (refined) operands and then
    folded if it can be: a static argument makes `ge.shape` a constant, which makes the slice and
    concat after it constants, the reshape after them static, and so on through every layer in one
    sweep (the shape chains an exporter writes: Shape -> Gather -> Concat -> Reshape), inside fused
    groups too (`enter`, `leave`), and into the functions control flow and calls run, each settled
    with the types its call site passes (a loop's carried values keep theirs when the body returns
    them unchanged)."""
    folding, interpreter = FoldConstantsPass(), folding_interpreter(module)
    entered: dict[func.FuncOp, list[Attribute]] = {}
    referrers = Counter(
        ref.root_reference.data
        for op in module.walk()
        for attr in op.properties.values()
        for ref in (attr.data if isinstance(attr, ArrayAttr) else (attr,))
        if isinstance(ref, SymbolRefAttr)
    )

    def call(op: IRDLOperation, prop: str, types: list[Attribute]) -> list[Attribute] | None:
        """The function `op`'s `prop` names, settled with arguments of `types`: in place when `op`
        is the one op naming it, else a copy of its own that `op` then names (other call sites,
        another gear's or the dynamic graph's, keep theirs). Its result types, or None."""
        callee = lookup_function(op, op.properties[prop])
        if callee in entered and entered[callee] == types:
            return list(callee.function_type.outputs.data)
        if callee in entered or referrers[callee.sym_name.data] > 1:
            caller = op.parent_op()
            suffix = caller.sym_name.data if isinstance(caller, func.FuncOp) else "call"
            copy = callee.clone()
            copy.sym_name = StringAttr(f"{callee.sym_name.data}.{suffix}.{len(entered)}")
            Rewriter.insert_op(copy, InsertPoint.after(callee))
            op.properties[prop] = SymbolRefAttr(copy.sym_name.data)
            callee = copy
        entered[callee] = types
        block = callee.body.block
        for arg, t in zip(list(block.args), types):
            if arg.type != t and holds(arg.type, t):
                Rewriter.replace_value_with_new_type(arg, t)
        callee.function_type = FunctionType.from_lists(list(block.arg_types), list(callee.function_type.outputs.data))
        sweep(block.ops)
        update_signature(callee)
        return list(callee.function_type.outputs.data)

    def retype(results: Sequence[SSAValue], types: Sequence[Attribute] | None) -> None:
        for result, t in zip(results, types or ()):
            if result.type != t and holds(result.type, t):
                Rewriter.replace_value_with_new_type(result, t)

    def sweep(ops: Iterable[Operation]) -> None:
        for op in list(ops):
            if op.parent is None:
                continue  # folded away earlier in the sweep
            if isinstance(op, fused.GroupOp):
                enter(op)
                sweep(op.body.block.ops)
                leave(op)
            elif isinstance(op, GeOp):
                if op.has_shape_function():
                    refine(op)
                folding.fold(module, op, interpreter)
            elif isinstance(op, IfOp):
                given = [v.type for v in op.operands[1:]]
                taken = [call(op, b, given) for b in ("then_branch", "else_branch")]
                retype(op.results, taken[0] if taken[0] == taken[1] else None)
            elif isinstance(op, LoopOp):
                n = op.carried_count
                out = call(op, "body", [v.type for v in op.operands])
                carried = [v.type for v in op.initial]
                retype(op.results[:n], carried if out is not None and out[1 : 1 + n] == carried else None)
            elif isinstance(op, func.CallOp):
                retype(op.results, call(op, "callee", [v.type for v in op.operands]))

    for fn in functions:
        entered[fn] = list(fn.function_type.inputs.data)
        sweep(fn.body.block.ops)
        update_signature(fn)


def enter(group: fused.GroupOp) -> None:
    """A fused group's block arguments take its operands' types, and a small constant passed into
    it is cloned into its body (so that the shape chains inside fold as those outside)."""
    body = group.body.block
    for arg, operand in zip(list(body.args), group.inputs):
        if arg.type != operand.type:
            Rewriter.replace_value_with_new_type(arg, operand.type)
        owner = operand.owner
        if arg.uses and isinstance(owner, ConstantOp) and owner.inline_value() is not None:
            inner = owner.clone()
            Rewriter.insert_op(inner, InsertPoint.at_start(body))
            arg.replace_all_uses_with(inner.output)


def leave(group: fused.GroupOp) -> None:
    """A fused group's results take the types its body yields; a group whose body folded to
    constants (shape arithmetic an elementwise chain took in) is replaced by them."""
    yielded = group.body.block.last_op
    assert yielded is not None
    values = list(yielded.operands)
    constants = [v.owner for v in values if isinstance(v.owner, ConstantOp)]
    if len(constants) == len(values):
        for result, constant in zip(list(group.outputs), constants):
            outer = constant.clone()
            Rewriter.insert_op(outer, InsertPoint.before(group))
            result.replace_all_uses_with(outer.output)
        Rewriter.erase_op(group)
        return
    for result, value in zip(list(group.outputs), values):
        if result.type != value.type:
            Rewriter.replace_value_with_new_type(result, value.type)


@dataclass(frozen=True)
class BindDimsPass(ModulePass):
    """Binds `@main`'s named dims to `sizes` (see the module docstring)."""

    name = "bind-dims"

    sizes: str = ""
    """`NAME=SIZE,...`: one size per named dim of the inputs."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        main = main_of(op, PASS)
        names = input_dims(main.arg_attrs, len(main.function_type.inputs.data))
        known = symbols(names)
        try:
            sizes = parse_sizes(self.sizes, known) if self.sizes.strip() else {}
        except DimsError as e:
            raise DiagnosticException(f"{PASS}: {str(e).removeprefix('--dims ')}") from None
        missing = [n for n in known if n not in sizes]
        if missing:
            raise DiagnosticException(f"{PASS}: sizes gives no size for {', '.join(missing)}")
        for name, (low, high) in ranges_of(main).items():
            if name in sizes and not low <= sizes[name] <= high:
                raise DiagnosticException(
                    f"{PASS}: {name} = {sizes[name]} is outside the range [{low}, {high}] the graph was compiled for"
                )
        make_static(main, names, sizes)
        settle(op, [main])
        main.attributes[BOUND_ATTR] = UnitAttr()
        shown = ",".join(f"{n}={v}" for n, v in sizes.items())
        remarks.emit(PASS, "applied", "bind", [main], f"@{main.sym_name.data} bound at {shown}")
