"""Control flow whose path is known only at run time: `ge.if` and `ge.loop`, GE's If and While
(ONNX If and Loop).

As GE keeps an If's branches and a While's body as subgraphs of the graph, these ops name
functions of the module: the branches and the body are graphs of their own, and every value they
read from the enclosing graph is an operand of the op (an ONNX subgraph's implicit captures made
explicit). So each function is optimized as a graph is, and its signature is the op's contract.

    %r = ge.if @then, @else (%cond, %x) : (tensor<i1>, tensor<4xf32>) -> tensor<4xf32>

runs `@then(%x)` when `%cond` holds, else `@else(%x)`: both take the operands after the condition
and return the op's results (a result's dim may be unknown where the branches' differ).

    %v, %scan = ge.loop @body (%trip, %cond, %v0, %x) {carried = 1 : i64}
        : (tensor<i64>, tensor<i1>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<?x4xf32>)

is ONNX's Loop: while the iteration number is below `%trip` and the condition holds, `@body(i,
cond, carried..., captures...)` returns the next condition, the next carried values and one
element of each scan output; the results are the last carried values and the scan outputs
stacked along a new first axis. `carried` says how many operands after the condition are
carried (the rest are captures). A Loop without a trip count runs until its condition fails: the
importer gives it the largest int64.

    %y = ge.gears [@"main.gear0", @"main.gear1"] (%ids) {sizes = ["batch=1,seq=128", "batch=2,seq=64"]}
        : (tensor<?x?xi64>) -> tensor<?x?x768xf32>

runs the gear whose function takes exactly the inputs' shapes (`specialize-gears`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, FunctionType, IntegerAttr, StringAttr, SymbolRefAttr, TensorType, i1, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, opt_prop_def, prop_def, var_operand_def, var_result_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import VerifyException

from ge.ge_dialects.ge.types import shape_of, tensor
from ge.ge_dialects.stream import is_control_program


def scalar(element: Attribute) -> TensorType:
    return tensor(element, [])


CONDITIONS = (scalar(i1), tensor(i1, [1]))
"""The types a condition may have: a bool, or a tensor of one (as exporters write it)."""


def merged_type(a: TensorType, b: TensorType) -> TensorType | None:
    """The type both `a` and `b` have: dims kept where they agree, unknown where not (None: the
    element types or ranks differ)."""
    sa, sb = shape_of(a), shape_of(b)
    if a.element_type != b.element_type or len(sa) != len(sb):
        return None
    return tensor(a.element_type, [x if x == y else None for x, y in zip(sa, sb)])


def holds(general: Attribute, specific: Attribute) -> bool:
    """Whether a value of type `specific` is one of type `general` (same element type and rank,
    each known dim of `general` equal)."""
    if not isinstance(general, TensorType) or not isinstance(specific, TensorType):
        return general == specific
    merged = merged_type(general, specific)
    return merged is not None and shape_of(merged) == shape_of(general)


def lookup_function(op: IRDLOperation, ref: Attribute) -> func.FuncOp:
    """The function of `op`'s module that `ref` names; VerifyException when there is none."""
    found = SymbolTable.lookup_symbol(op, ref) if isinstance(ref, SymbolRefAttr) else None
    if not isinstance(found, func.FuncOp) or not found.body.blocks:
        shown = f"@{ref.root_reference.data}" if isinstance(ref, SymbolRefAttr) else str(ref)
        raise VerifyException(f"{op.name}: {shown} is not a function of the module")
    return found


class CallsFunctions(IRDLOperation):
    """An op that runs functions of the module: `ge.<op> @f, @g (operands) {props} : type`."""

    SYMBOLS: ClassVar[tuple[str, ...]] = ()
    """The properties naming the functions, in the order they print."""

    def function(self, prop: str) -> func.FuncOp:
        """The function a property names; VerifyException when the module has none of that name."""
        return lookup_function(self, self.properties[prop])

    def _symbol(self, prop: str) -> str:
        attr = self.properties[prop]
        assert isinstance(attr, SymbolRefAttr)
        return attr.root_reference.data

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list([self._symbol(p) for p in self.SYMBOLS], printer.print_symbol_name)
        printer.print_string(" (")
        printer.print_list(self.operands, printer.print_operand)
        printer.print_string(")")
        extra = {k: v for k, v in self.properties.items() if k not in self.SYMBOLS}
        if extra:
            printer.print_string(" ")
            printer.print_attr_dict(extra)
        if self.attributes:
            printer.print_string(" attributes ")
            printer.print_attr_dict(self.attributes)
        printer.print_string(" : ")
        printer.print_function_type(self.operand_types, self.result_types)

    @classmethod
    def parse(cls, parser: Parser):
        symbols = [parser.parse_symbol_name()]
        for _ in cls.SYMBOLS[1:]:
            parser.parse_punctuation(",")
            symbols.append(parser.parse_symbol_name())
        operands = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_unresolved_operand)
        props = dict(parser.parse_optional_attr_dict())
        extra = parser.parse_optional_attr_dict_with_keyword()
        attributes = dict(extra.data) if extra is not None else {}
        parser.parse_punctuation(":")
        pos = parser.pos
        fn_type = parser.parse_function_type()
        values = parser.resolve_operands(operands, fn_type.inputs.data, pos)
        for name, symbol in zip(cls.SYMBOLS, symbols):
            props[name] = SymbolRefAttr(symbol.data)
        op = cls.create(operands=values, result_types=fn_type.outputs.data, properties=props)
        op.attributes.update(attributes)
        return op

    def _check_call(self, prop: str, operand_types: Sequence[Attribute], result_types: Sequence[Attribute]) -> None:
        """The function takes `operand_types` (or types that hold them: a specialized caller may know
        more dims) and returns `result_types` or types they hold."""
        fn = self.function(prop)
        where = f"{self.name} @{self._symbol(prop)}"
        fn_type: FunctionType = fn.function_type
        takes = list(fn_type.inputs.data)
        if len(takes) != len(operand_types) or not all(holds(t, o) for t, o in zip(takes, operand_types)):
            raise VerifyException(
                f"{where} takes ({', '.join(map(str, fn_type.inputs.data))}), the op gives it "
                f"({', '.join(map(str, operand_types))})"
            )
        returned = list(fn_type.outputs.data)
        if len(returned) != len(result_types) or not all(holds(r, f) for r, f in zip(result_types, returned)):
            raise VerifyException(
                f"{where} returns ({', '.join(map(str, returned))}), the op needs ({', '.join(map(str, result_types))})"
            )


@irdl_op_definition
class IfOp(CallsFunctions):
    """`ge.if @then, @else (%cond, inputs...)`: the branch the condition selects, on the inputs."""

    name = "ge.if"
    args = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    then_branch = prop_def(SymbolRefAttr)
    else_branch = prop_def(SymbolRefAttr)
    SYMBOLS: ClassVar = ("then_branch", "else_branch")

    def __init__(
        self, then: str, otherwise: str, cond: SSAValue, inputs: Sequence[SSAValue], results: Sequence[Attribute]
    ):
        super().__init__(
            operands=[[cond, *inputs]],
            result_types=[list(results)],
            properties={"then_branch": SymbolRefAttr(then), "else_branch": SymbolRefAttr(otherwise)},
        )

    @property
    def cond(self) -> SSAValue:
        return self.args[0]

    @property
    def inputs(self) -> Sequence[SSAValue]:
        return self.args[1:]

    def verify_(self) -> None:
        if not self.args or self.args[0].type != scalar(i1):
            raise VerifyException(
                f"ge.if: the condition must be a tensor<i1>, got {self.args[0].type if self.args else 'none'}"
            )
        for prop in self.SYMBOLS:
            self._check_call(prop, [v.type for v in self.inputs], self.result_types)


@irdl_op_definition
class LoopOp(CallsFunctions):
    """`ge.loop @body (%trip, %cond, carried..., captures...) {carried = N}`: ONNX's Loop."""

    name = "ge.loop"
    args = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    body = prop_def(SymbolRefAttr)
    carried = opt_prop_def(IntegerAttr)
    SYMBOLS: ClassVar = ("body",)

    def __init__(
        self,
        body: str,
        trip: SSAValue,
        cond: SSAValue,
        carried: Sequence[SSAValue],
        captures: Sequence[SSAValue],
        results: Sequence[Attribute],
    ):
        super().__init__(
            operands=[[trip, cond, *carried, *captures]],
            result_types=[list(results)],
            properties={"body": SymbolRefAttr(body), "carried": IntegerAttr(len(carried), i64)},
        )

    @property
    def carried_count(self) -> int:
        return self.carried.value.data if self.carried is not None else 0

    @property
    def initial(self) -> Sequence[SSAValue]:
        return self.args[2 : 2 + self.carried_count]

    @property
    def captures(self) -> Sequence[SSAValue]:
        return self.args[2 + self.carried_count :]

    def verify_(self) -> None:
        n = self.carried_count
        if len(self.args) < 2 + n or n < 0:
            raise VerifyException(
                f"ge.loop: {len(self.args)} operands, fewer than the trip count, condition and {n} carried"
            )
        if self.args[0].type != scalar(i64) or self.args[1].type != scalar(i1):
            raise VerifyException(
                f"ge.loop: the trip count and the condition must be tensor<i64> and tensor<i1>, got "
                f"{self.args[0].type} and {self.args[1].type}"
            )
        if len(self.results) < n:
            raise VerifyException(f"ge.loop: {len(self.results)} results, fewer than its {n} carried values")
        carried = list(self.result_types[:n])
        if not all(holds(r, v.type) for r, v in zip(carried, self.initial)):
            raise VerifyException("ge.loop: a carried result does not hold its initial value's type")
        scans = [t for t in self.result_types[n:] if isinstance(t, TensorType)]
        if len(scans) != len(self.results) - n or any(not shape_of(t) for t in scans):
            raise VerifyException("ge.loop: a scan output must be a tensor of rank >= 1 (its iterations stacked)")
        elements = [tensor(t.element_type, shape_of(t)[1:]) for t in scans]
        step_inputs = [scalar(i64), scalar(i1), *carried, *(v.type for v in self.captures)]
        returned = self.function("body").function_type.outputs.data
        condition = returned[0] if returned and returned[0] in CONDITIONS else scalar(i1)
        self._check_call("body", step_inputs, [condition, *carried, *elements])


@irdl_op_definition
class GearsOp(IRDLOperation):
    """`ge.gears [@g0, @g1] (inputs...) {sizes = ["batch=1,seq=128", ...]}`: the gear whose
    function takes exactly the inputs' shapes (GE's gears: a Case selected through MapIndex from
    the actual shape); `sizes` says each gear's dims, for messages. With `else @fn` (GE's hybrid
    mode, `ge.compileHybridMode`), inputs that fit no gear run `@fn`, the dynamic graph."""

    name = "ge.gears"
    args = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    gears = prop_def(ArrayAttr)
    sizes = prop_def(ArrayAttr)
    fallback = opt_prop_def(SymbolRefAttr)

    def __init__(
        self,
        gears: Sequence[str],
        sizes: Sequence[str],
        inputs: Sequence[SSAValue],
        results: Sequence[Attribute],
        fallback: str | None = None,
    ):
        properties: dict[str, Attribute] = {
            "gears": ArrayAttr([SymbolRefAttr(g) for g in gears]),
            "sizes": ArrayAttr([StringAttr(t) for t in sizes]),
        }
        if fallback is not None:
            properties["fallback"] = SymbolRefAttr(fallback)
        super().__init__(operands=[list(inputs)], result_types=[list(results)], properties=properties)

    def functions(self) -> list[func.FuncOp]:
        """The gears' functions, then the fallback's if there is one."""
        refs = [*self.gears.data, *([self.fallback] if self.fallback is not None else [])]
        return [lookup_function(self, ref) for ref in refs]

    def size_texts(self) -> list[str]:
        return [t.data for t in self.sizes.data if isinstance(t, StringAttr)]

    def verify_(self) -> None:
        if not self.gears.data or len(self.gears.data) != len(self.size_texts()):
            raise VerifyException(
                f"ge.gears: {len(self.gears.data)} gears and {len(self.sizes.data)} sizes; one of each per gear"
            )
        for fn in self.functions():
            fn_type: FunctionType = fn.function_type
            where = f"ge.gears @{fn.sym_name.data}"
            takes, gives = list(fn_type.inputs.data), list(fn_type.outputs.data)
            if len(takes) != len(self.args) or not all(holds(v.type, t) for v, t in zip(self.args, takes)):
                raise VerifyException(
                    f"{where} takes ({', '.join(map(str, takes))}), which the inputs' types do not hold"
                )
            if len(gives) != len(self.results) or not all(holds(r, t) for r, t in zip(self.result_types, gives)):
                raise VerifyException(f"{where} returns ({', '.join(map(str, gives))}), which the results do not hold")

    def print(self, printer: Printer) -> None:
        printer.print_string(" [")
        printer.print_list(
            [r.root_reference.data for r in self.gears.data if isinstance(r, SymbolRefAttr)], printer.print_symbol_name
        )
        printer.print_string("] ")
        if self.fallback is not None:
            printer.print_string("else ")
            printer.print_symbol_name(self.fallback.root_reference.data)
            printer.print_string(" ")
        printer.print_string("(")
        printer.print_list(self.operands, printer.print_operand)
        printer.print_string(") ")
        printer.print_attr_dict({"sizes": self.sizes})
        printer.print_string(" : ")
        printer.print_function_type(self.operand_types, self.result_types)

    @classmethod
    def parse(cls, parser: Parser) -> GearsOp:
        gears = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_symbol_name)
        fallback = parser.parse_symbol_name() if parser.parse_optional_keyword("else") else None
        operands = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_unresolved_operand)
        props = dict(parser.parse_optional_attr_dict())
        if fallback is not None:
            props["fallback"] = SymbolRefAttr(fallback.data)
        parser.parse_punctuation(":")
        pos = parser.pos
        fn_type = parser.parse_function_type()
        values = parser.resolve_operands(operands, fn_type.inputs.data, pos)
        props["gears"] = ArrayAttr([SymbolRefAttr(g.data) for g in gears])
        if "sizes" not in props:
            parser.raise_error("ge.gears needs {sizes = [...]} (each gear's dims)")
        return cls.create(operands=values, result_types=fn_type.outputs.data, properties=props)


CONTROL_FLOW_OPS: list[type[IRDLOperation]] = [IfOp, LoopOp, GearsOp]


UNKNOWN_SHAPE_ATTR = "ge.unknown_shape"
"""Function attribute (partition-dynamic): the function has dims known only when it runs; the host
binds them then (GE's unknown-shape subgraph), so lowering leaves it as it is."""


def lowering_leaves(fn: func.FuncOp) -> bool:
    """Whether lowering leaves `fn` whole: a program of calls (a host program, or control flow sunk
    to the device: ge_dialects/stream.py) or a function of unknown shapes bound when it runs. The
    runner interprets it, running the lowered functions it calls (interpreter/host_program.py)."""
    return UNKNOWN_SHAPE_ATTR in fn.attributes or is_host_program(fn) or is_control_program(fn)


def is_host_program(fn: func.FuncOp) -> bool:
    """A function of host work only: control flow, calls of functions, the constants they read and
    the return (partition-dynamic's result, which lowering leaves to the host)."""
    if len(fn.body.blocks) != 1:
        return False
    ops = list(fn.body.block.ops)
    host = (IfOp, LoopOp, GearsOp, func.CallOp)
    return any(isinstance(o, host) for o in ops) and all(
        isinstance(o, (*host, func.ReturnOp)) or o.name == "ge.constant" for o in ops
    )


__all__ = [
    "CONDITIONS",
    "CONTROL_FLOW_OPS",
    "GearsOp",
    "IfOp",
    "LoopOp",
    "holds",
    "UNKNOWN_SHAPE_ATTR",
    "is_host_program",
    "lowering_leaves",
    "merged_type",
    "scalar",
]
