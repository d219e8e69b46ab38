"""`ge.Graph`: a view of one ge-level module with its weights (no graph structure of its own).

The module is the graph: a `func.func @main` of ge ops, its weights attached
(ge_dialects/ge/weights.py). Everything the API does (optimizing, compiling, running) reads and
rewrites that module through the same passes the tools run, so nothing can drift between a
Python user's graph and a `ge-opt` user's file.

Building appends ge ops to @main, typed by the ops' own shape functions, exactly the ops
`ge-translate --import-onnx` makes of the equivalent ONNX nodes; GE operator type names reach them
through one table (api/op_types.py). After every call @main's return is up to date, so `g.module`
is always a complete module that verifies and `ge-opt`, `ge-run` and the passes take as it is.
"""

from __future__ import annotations

import importlib
import math
import os
import re
import zlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import ml_dtypes  # noqa: F401  (registers bfloat16 and the float8 types with numpy, for dtype names)
import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, FunctionType, ModuleOp, StringAttr, TensorType
from xdsl.ir import Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.utils.exceptions import VerifyException

from ge.api import op_types
from ge.api.errors import GEError
from ge.api.node import Node, Value, value_name
from ge.ge_dialects.ge.base import GeOp, constant_value, location_name, name_loc
from ge.ge_dialects.ge.constant import ConstantOp
from ge.ge_dialects.ge.optimizer import VariableOp
from ge.ge_dialects.ge.types import element_type_of, is_float, numpy_dtype, shape_of, tensor
from ge.ge_dialects.ge.weights import attach_weights, clone_with_weights, make_constant, parameter_keys, weights_of
from ge.interpreter.runner import input_names, main_function, output_names


class _Parameter:
    """An input given as data that is a trainable parameter (the `add_*` layers' weights), where
    other data given as an input is a literal."""

    __slots__ = ("array",)

    def __init__(self, array: np.ndarray):
        self.array = array


InputLike = Value | np.ndarray | Sequence[Any] | float | int | _Parameter | None


def _empty_main() -> func.FuncOp:
    block = Block()
    block.add_op(func.ReturnOp())
    return func.FuncOp("main", ([], []), Region(block))


def _names_attr(names: Iterable[str]) -> ArrayAttr[DictionaryAttr]:
    return ArrayAttr([DictionaryAttr({"ge.name": StringAttr(n)}) for n in names])


def _ssa_hint(name: str) -> str | None:
    hint = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return hint if hint and not hint[0].isdigit() else None


def parse_dtype(dtype: Any) -> np.dtype:
    """A dtype as numpy, ml_dtypes or GE name it ("float16", np.float32, "bfloat16")."""
    try:
        result = np.dtype(dtype)
        element_type_of(result)
    except (TypeError, ValueError, KeyError, VerifyException):
        raise GEError(f"dtype {dtype!r} is not a ge element type (float32, float16, bfloat16, int64, ...)") from None
    return result


class Graph:
    """A ge-level graph. `Graph()` starts an empty one to build (`seed` draws the `add_*` weights);
    `Graph.from_module(m)` wraps an existing module (sharing it, not copying)."""

    def __init__(self, name: str = "main", seed: int = 0):
        self.name = name
        self.seed = seed
        self._module = ModuleOp([_empty_main()])
        attach_weights(self._module, {})
        self._default_outputs = True
        self._counters: dict[str, int] = {}

    @classmethod
    def from_module(cls, module: ModuleOp, name: str = "main") -> Graph:
        graph = cls.__new__(cls)
        graph.name = name
        graph.seed = 0
        graph._module = module
        graph._default_outputs = False  # the module's return is what it returns
        graph._counters = {}
        weights_of(module)  # an empty table when none is attached yet
        return graph

    @property
    def module(self) -> ModuleOp:
        """The ge-level module (weights attached): what `ge-opt` would read from this graph's IR file."""
        return self._module

    def copy(self) -> Graph:
        """An independent graph: passes applied to the copy leave this one unchanged."""
        clone = Graph.from_module(clone_with_weights(self.module), self.name)
        clone.seed = self.seed
        clone._default_outputs = self._default_outputs
        clone._counters = dict(self._counters)
        return clone

    def _main(self) -> func.FuncOp:
        try:
            return main_function(self.module)
        except Exception:
            raise GEError(f"graph '{self.name}': no func.func @main (nothing was built)") from None

    # -- reading -------------------------------------------------------------------------------
    @property
    def inputs(self) -> list[str]:
        """The graph's input names, in order."""
        return input_names(self._main())

    @property
    def outputs(self) -> list[str]:
        """The graph's output names, in order."""
        return output_names(self._main())

    @property
    def input_values(self) -> list[Value]:
        return [Value(self, a) for a in self._main().body.block.args]

    @property
    def output_values(self) -> list[Value]:
        return [Value(self, v) for v in self._return().operands]

    @property
    def nodes(self) -> list[Node]:
        """The ops of @main in program order (constants included, the return not), as views: the lines
        `ge-opt` prints for this graph."""
        return [Node(self, op) for op in self._main().body.block.ops if not isinstance(op, func.ReturnOp)]

    def node(self, name: str) -> Node:
        """The node called `name`."""
        for node in self.nodes:
            if node.name == name:
                return node
        raise GEError(f"graph '{self.name}': no node named '{name}'")

    def value(self, name: str) -> Value:
        """The input or node result called `name` (a node's first result has the node's name)."""
        block = self._main().body.block
        for arg in block.args:
            if value_name(arg) == name:
                return Value(self, arg)
        for op in block.ops:
            for result in op.results:
                if value_name(result) == name:
                    return Value(self, result)
        raise GEError(f"graph '{self.name}': no value named '{name}'")

    @property
    def parameter_bytes(self) -> int:
        """Bytes of the constants and variables (weights, inline literals), from their types."""
        total = 0
        for op in self._main().body.block.ops:
            if isinstance(op, ConstantOp | VariableOp):
                t = op.results[0].type
                if isinstance(t, TensorType):
                    total += math.prod(d or 0 for d in shape_of(t)) * numpy_dtype(t.element_type).itemsize
        return total

    def __repr__(self) -> str:
        try:
            nodes = self.nodes
        except GEError:
            return f"Graph('{self.name}', empty)"
        constants = sum(1 for n in nodes if isinstance(n.op, ConstantOp))
        size = self.parameter_bytes
        return (
            f"Graph('{self.name}', {len(nodes)} nodes ({constants} constants), "
            f"inputs={self.inputs}, outputs={self.outputs}, parameters={size:,} bytes ({size / 2**20:.1f} MiB))"
        )

    def visualize(self, path: str | os.PathLike, remarks: bool = False) -> Path:
        """Writes the graph as .dot (always) and .svg/.png (with Graphviz), returning the file written:
        `ge-translate --export-dot`. `remarks` adds why rejected fusions were rejected (api/visualize.py)."""
        return importlib.import_module("ge.api.visualize").visualize(self, path, remarks=remarks)

    def _repr_svg_(self) -> str | None:
        """The graph drawn in a notebook (None, so the repr shows, where Graphviz is missing)."""
        return importlib.import_module("ge.api.visualize").svg(self)

    # -- building: inputs, constants, ops ------------------------------------------------------
    def placeholder(self, shape: Sequence[int | None], dtype: Any = "float32", name: str | None = None) -> Value:
        """A graph input (GE's Data node): a new argument of @main named by `ge.name`, as `ge-translate
        --import-onnx` imports an ONNX graph input. A dim of None or -1 is unknown (`?`)."""
        name = self._fresh_name(name, "input")
        dims = self._dims(shape, f"input '{name}'")
        t = tensor(element_type_of(parse_dtype(dtype)), dims)
        fn = self._main()
        block = fn.body.block
        names = [*input_names(fn), name]
        arg = block.insert_arg(t, len(block.args))
        arg.name_hint = _ssa_hint(name)
        fn.function_type = FunctionType.from_lists([a.type for a in block.args], fn.function_type.outputs.data)
        fn.arg_attrs = _names_attr(names)
        return Value(self, arg)

    def add_input(self, name: str, shape: Sequence[int | None], dtype: Any = "float32") -> Value:
        """`placeholder` with the name first, as the layer calls have it."""
        return self.placeholder(shape, dtype, name)

    def const(self, value: Any, name: str | None = None, dtype: Any = None, parameter: bool | None = None) -> Value:
        """A constant (GE's Const): a `ge.constant`, inline when small, else a weight the module
        carries (written to the sidecar by `ge-opt -o`, as `ge-translate` writes initializers).

        A float constant is a trainable parameter, as an ONNX initializer is, whatever its size: its
        key is its name (`ge.grad` adds `<key>_grad`, apply-optimizer makes it a variable).
        `parameter=False` makes it a literal (a fixed scale, a mask); other dtypes are literals.
        Data given directly as an input of `op` is a literal too (an ONNX Constant node)."""
        name = self._fresh_name(name, "const")
        array = self._array(value, dtype, f"constant '{name}'")
        is_parameter = is_float(element_type_of(array.dtype)) if parameter is None else parameter
        op = self._make_constant(array, name, is_parameter)
        self._append(op)
        return Value(self, op.results[0])

    def op(
        self,
        type_name: str,
        inputs: Sequence[InputLike] = (),
        attrs: Mapping[str, Any] | None = None,
        name: str | None = None,
        num_outputs: int | None = None,
    ) -> Value | tuple[Value, ...]:
        """A node of GE operator type `type_name` (Conv2D, BatchNorm, MatMul, SoftmaxV2, ...): the ge op
        op_types.py maps it to, as `ge-translate --import-onnx` builds it from the ONNX operator, result
        types from the op's shape function. `inputs` are values of this graph, or arrays/lists/numbers
        (made constants); `None` skips an optional input. The parameters a framework creates itself
        are created where they are left out (or given as `None`), as the `add_*` layers create them:
        named constants `node/input` (`bn_1/scale`) at the usual initial values, in the first
        input's dtype: BatchNorm's scale 1, offset 0, mean 0 and variance 1 per channel, LayerNorm's
        gamma 1 and beta 0 over the normalized dims (the op-type table's `Initial`s, api/op_types.py;
        an optional one such as beta only when not passed at all, `None` leaves it out). A filter,
        a weight or a bias is never made up: its shape or values are the caller's. Returns the
        result (a tuple for several: `num_outputs` asks for optional ones, such as MaxPool's indices)."""
        entry = op_types.OP_TYPES.get(type_name)
        if entry is None:
            raise GEError(f"unknown GE operator type {type_name!r} ({_suggest(type_name)})")
        name = self._fresh_name(name, entry.name)
        where = f"node '{name}' ({entry.name})"
        staged: list[ConstantOp] = []  # inserted only once the op is built: a refused call changes nothing
        try:
            operands, props, left_out = self._operands(entry, list(inputs), where, name, staged)
            self._attrs(entry, attrs or {}, where, name, operands, props, staged)
            self._initial_inputs(entry, left_out, where, name, operands, props, staged)
            count = num_outputs
            if count is None and entry.results is not None:
                count = props.get(entry.results)
            op = self._create(entry.op_class, operands, props, count, name, where)
        except GEError:
            table = weights_of(self.module)
            for c in staged:
                if c.weight_key is not None:
                    table.added.pop(c.weight_key, None)
            raise
        for c in staged:
            self._append(c)
        self._append(op)
        results = tuple(Value(self, r) for r in op.results)
        return results[0] if len(results) == 1 else results

    def _stage_constant(
        self, array: np.ndarray, base: str, staged: list[ConstantOp], parameter: bool = False
    ) -> SSAValue:
        """A constant for an input given as data, named `node/input` (made unique), not yet inserted."""
        taken = self._taken_names() | {location_name(c) for c in staged}
        name, n = base, 1
        while name in taken:
            n += 1
            name = f"{base}_{n}"
        op = self._make_constant(array, name, parameter, {k for c in staged if (k := c.parameter_key)})
        staged.append(op)
        return op.results[0]

    def _attrs(
        self,
        entry: op_types.OpType,
        attrs: Mapping[str, Any],
        where: str,
        name: str,
        operands: dict[str, Any],
        props: dict[str, Any],
        staged: list[ConstantOp],
    ) -> None:
        """GE's attributes (GE's defaults first) as ge properties, or constant operands."""
        props.update(entry.fixed)
        given = {**entry.defaults, **attrs}
        for key in entry.required:
            if key not in given:
                raise GEError(f"{where}: attribute '{key}' is required")
        for key, value in given.items():
            attr = entry.attrs.get(key)
            if attr is None:
                known = ", ".join(entry.attrs) or "none"
                raise GEError(f"{where}: unknown attribute '{key}' (attributes of {entry.name}: {known})")
            try:
                converted = attr.convert(value)
            except op_types.AttrError as e:
                raise GEError(f"{where}: attribute '{key}' {e}") from None
            if attr.prop is None or converted is None:
                continue
            if attr.operand:
                operands[attr.prop] = self._stage_constant(np.asarray(converted, np.int64), f"{name}/{key}", staged)
            else:
                props[attr.prop] = converted

    def _initial_inputs(
        self,
        entry: op_types.OpType,
        left_out: list[op_types.Input],
        where: str,
        name: str,
        operands: dict[str, Any],
        props: dict[str, Any],
        staged: list[ConstantOp],
    ) -> None:
        """The parameter inputs left out, created at their `Initial` values, shaped from the first input."""
        if not left_out:
            return
        first = operands.get(entry.inputs[0].operand)
        assert isinstance(first, SSAValue)  # the first input of an entry with initials is required
        t = first.type
        dims = list(shape_of(t)) if isinstance(t, TensorType) else []
        defaults = entry.op_class.DEFAULTS

        def prop(key: str) -> Any:  # the attributes as converted (Python values), else the ge op's defaults
            return props.get(key, defaults.get(key))

        for spec in left_out:
            assert spec.initial is not None  # _operands leaves out only inputs with an initial value
            try:
                shape = spec.initial.dims(dims, prop)
            except op_types.AttrError as e:
                raise GEError(f"{where}: input '{spec.name}' is not given and cannot be created: {e}") from None
            dtype = numpy_dtype(t.element_type) if isinstance(t, TensorType) else np.dtype(np.float32)
            array = np.full(shape, spec.initial.value, dtype)
            parameter = array.dtype.kind == "f"  # on a non-float input the op refuses the input, not this
            operands[spec.operand] = self._stage_constant(array, f"{name}/{spec.name}", staged, parameter=parameter)

    def _operands(
        self, entry: op_types.OpType, inputs: list[InputLike], where: str, name: str, staged: list[ConstantOp]
    ) -> tuple[dict[str, Any], dict[str, Any], list[op_types.Input]]:
        """GE's positional inputs on the entry's inputs: ge operands, properties from constant
        inputs, and the parameter inputs left out that are to be created (`Initial`)."""
        specs = list(entry.inputs)
        variadic = next((i for i, s in enumerate(specs) if s.variadic), None)
        if variadic is not None:  # one variadic input takes what the others leave
            extra = len(inputs) - (len(specs) - 1)
            if extra < 1:
                raise GEError(f"{where}: takes at least {len(specs)} inputs ({_input_list(entry)}), got {len(inputs)}")
            specs = specs[:variadic] + [specs[variadic]] * extra + specs[variadic + 1 :]
        required = sum(1 for s in specs if s.required)
        if not required <= len(inputs) <= len(specs) or any(
            v is None and s.required for s, v in zip(specs, inputs, strict=False)
        ):
            count = f"{required}" if required == len(specs) else f"{required} to {len(specs)}"
            plural = "input" if count == "1" else "inputs"
            none = [s.name for s, v in zip(specs, inputs, strict=False) if v is None and s.required]
            absent = [s.name for s in specs[len(inputs) :] if s.required]
            why = f", '{absent[0]}' is not given" if absent else f", '{none[0]}' is None" if none else ""
            got = f"got {len(inputs)}{why}"
            raise GEError(f"{where}: takes {count} {plural} ({_input_list(entry)}), {got}")
        operands: dict[str, Any] = {}
        props: dict[str, Any] = {}
        given_as = [*inputs, *[_NOT_GIVEN] * (len(specs) - len(inputs))]
        left_out = [  # created: not passed at all, or None where only an optional input may be skipped
            s
            for s, v in zip(specs, given_as)
            if s.initial is not None and (v is _NOT_GIVEN or (v is None and not s.optional))
        ]
        for spec, given in zip(specs, inputs, strict=False):
            if given is None:
                continue
            if spec.constant is not None:
                value = self._constant_input(given, spec.name, where)
                try:
                    props[spec.operand] = spec.constant(value if value.ndim else value.item())
                except op_types.AttrError as e:
                    raise GEError(f"{where}: input '{spec.name}' {e}") from None
                continue
            if isinstance(given, Value):
                ssa = self._ssa(given, where)
            elif isinstance(given, _Parameter):
                ssa = self._stage_constant(given.array, f"{name}/{spec.name}", staged, parameter=True)
            else:
                ssa = self._stage_constant(self._array(given, None, where), f"{name}/{spec.name}", staged)
            if spec.variadic:
                operands.setdefault(spec.operand, []).append(ssa)
            else:
                operands[spec.operand] = ssa
        return operands, props, left_out

    def _constant_input(self, given: InputLike, what: str, where: str) -> np.ndarray:
        if isinstance(given, Value):
            value = constant_value(self._ssa(given))
            if value is None:
                raise GEError(f"{where}: input '{what}' must be a constant (a list, an array or a small g.const)")
            return np.asarray(value)
        return self._array(given, None, where)

    def _create(
        self,
        op_class: type[GeOp],
        operands: dict[str, Any],
        props: dict[str, Any],
        count: int | None,
        name: str,
        where: str,
    ) -> Operation:
        for key, _ in op_class.get_irdl_definition().operands:
            operands.setdefault(key, None)
        try:
            return op_class.create(operands, props, num_results=count, name=name)
        except VerifyException as e:
            message = str(e)
            head, sep, rest = message.partition(": ")
            raise GEError(f"{where}: {rest if sep and head.startswith('ge.') else message}") from None

    # -- building: layers ----------------------------------------------------------------------
    def _rng(self, key: str) -> np.random.Generator:
        """Draws that depend only on the graph's seed and the weight's name (not the call order)."""
        return np.random.default_rng([self.seed, zlib.crc32(key.encode())])

    def _draw(self, key: str, like: Value, kind: str, *args: Any) -> np.ndarray:
        """A weight drawn from the seed (uniform / normal with `args`), in `like`'s dtype."""
        return getattr(self._rng(key), kind)(*args).astype(np.dtype(like.dtype))

    def _channels(self, x: Value, where: str) -> int:
        shape = x.shape
        if len(shape) < 2 or shape[1] is None:
            raise GEError(f"{where}: needs a known channel dim (dim 1) of its input, got {x!r}")
        return shape[1]

    def add_conv2d(
        self,
        x: Value,
        out_channels: int,
        kernel_size: int | Sequence[int],
        stride: int | Sequence[int] = 1,
        padding: int | Sequence[int] | str = 0,
        dilation: int | Sequence[int] = 1,
        groups: int = 1,
        bias: bool = True,
        name: str | None = None,
    ) -> Value:
        """torch's nn.Conv2d as GE's Conv2D (`ge.conv`, what `ge-translate --import-onnx` makes of its
        export): He-normal filter and uniform bias from the seed. `padding` is an int, (h, w), or
        "same" / "valid"."""
        name = self._fresh_name(name, "conv")
        where = f"node '{name}' (Conv2D)"
        try:
            kh, kw = op_types.spatial(kernel_size)
        except op_types.AttrError as e:
            raise GEError(f"{where}: kernel_size {e}") from None
        channels = self._channels(x, where)
        if groups < 1 or channels % groups:
            raise GEError(f"{where}: input channels {channels} do not divide into {groups} groups")
        fan_in = channels // groups * kh * kw
        shape = (out_channels, channels // groups, kh, kw)
        filter_ = self._draw(f"{name}.filter", x, "normal", 0.0, math.sqrt(2.0 / fan_in), shape)
        inputs: list[InputLike] = [x, _Parameter(filter_)]
        if bias:
            bound = 1.0 / math.sqrt(fan_in)
            inputs.append(_Parameter(self._draw(f"{name}.bias", x, "uniform", -bound, bound, out_channels)))
        attrs: dict[str, Any] = {"strides": stride, "dilations": dilation, "groups": groups}
        if isinstance(padding, str):
            attrs["padding"] = padding.upper()
        else:
            attrs["pads"] = _pads_hw(padding, where)
        return self._single(self.op("Conv2D", inputs, attrs, name=name))

    def add_batchnorm(self, x: Value, eps: float = 1e-5, name: str | None = None) -> Value:
        """Inference BatchNorm (`ge.batch_norm`) with trained-looking statistics from the seed (scale in
        [0.7, 1.3], offset and mean ~ N(0, 0.1), variance in [0.5, 1.5]), so Conv+BN folding has work."""
        name = self._fresh_name(name, "bn")
        channels = self._channels(x, f"node '{name}' (BatchNorm)")
        inputs: list[InputLike] = [
            x,
            _Parameter(self._draw(f"{name}.scale", x, "uniform", 0.7, 1.3, channels)),
            _Parameter(self._draw(f"{name}.offset", x, "normal", 0.0, 0.1, channels)),
            _Parameter(self._draw(f"{name}.mean", x, "normal", 0.0, 0.1, channels)),
            _Parameter(self._draw(f"{name}.variance", x, "uniform", 0.5, 1.5, channels)),
        ]
        return self._single(self.op("BatchNorm", inputs, {"epsilon": eps}, name=name))

    def add_relu(self, x: Value, name: str | None = None) -> Value:
        """Relu (`ge.relu`, as ge-translate imports ONNX Relu)."""
        return self._single(self.op("Relu", [x], name=self._fresh_name(name, "relu")))

    def add_sigmoid(self, x: Value, name: str | None = None) -> Value:
        """Sigmoid (`ge.sigmoid`, as ge-translate imports ONNX Sigmoid)."""
        return self._single(self.op("Sigmoid", [x], name=self._fresh_name(name, "sigmoid")))

    def add_gelu(self, x: Value, approximate: str = "none", name: str | None = None) -> Value:
        """GeluV2 (`ge.gelu`): the erf form (torch's nn.GELU()), or approximate="tanh"."""
        return self._single(self.op("GeluV2", [x], {"approximate": approximate}, name=self._fresh_name(name, "gelu")))

    def add_add(self, a: Value, b: Value, name: str | None = None) -> Value:
        """Add (`ge.add`, broadcasting): a residual connection."""
        return self._single(self.op("Add", [a, b], name=self._fresh_name(name, "add")))

    def add_maxpool(
        self,
        x: Value,
        kernel_size: int | Sequence[int],
        stride: int | Sequence[int] | None = None,
        padding: int | Sequence[int] = 0,
        ceil_mode: bool = False,
        name: str | None = None,
    ) -> Value:
        """torch's nn.MaxPool2d as GE's MaxPoolV3 (`ge.max_pool`); stride defaults to the kernel size."""
        name = self._fresh_name(name, "maxpool")
        attrs = {"ksize": kernel_size, "strides": kernel_size if stride is None else stride}
        attrs.update(pads=_pads_hw(padding, f"node '{name}' (MaxPoolV3)"), ceil_mode=ceil_mode)
        return self._single(self.op("MaxPoolV3", [x], attrs, name=name))

    def add_avgpool(
        self,
        x: Value,
        kernel_size: int | Sequence[int],
        stride: int | Sequence[int] | None = None,
        padding: int | Sequence[int] = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        name: str | None = None,
    ) -> Value:
        """torch's nn.AvgPool2d as GE's AvgPoolV2 (`ge.avg_pool`); stride defaults to the kernel size."""
        name = self._fresh_name(name, "avgpool")
        attrs = {"ksize": kernel_size, "strides": kernel_size if stride is None else stride}
        attrs.update(pads=_pads_hw(padding, f"node '{name}' (AvgPoolV2)"), ceil_mode=ceil_mode)
        attrs["exclusive"] = not count_include_pad
        return self._single(self.op("AvgPoolV2", [x], attrs, name=name))

    def add_global_avgpool(self, x: Value, name: str | None = None) -> Value:
        """GlobalAveragePool (`ge.global_avg_pool`): torch's AdaptiveAvgPool2d(1)."""
        return self._single(self.op("GlobalAveragePool", [x], name=self._fresh_name(name, "gap")))

    def add_flatten(self, x: Value, axis: int = 1, name: str | None = None) -> Value:
        """Flatten (`ge.flatten`) to 2-D: dims before `axis`, dims from it."""
        return self._single(self.op("Flatten", [x], {"axis": axis}, name=self._fresh_name(name, "flatten")))

    def add_linear(self, x: Value, out_features: int, bias: bool = True, name: str | None = None) -> Value:
        """torch's nn.Linear as GE's GemmV2 (`ge.gemm`, weight [out, in] with transpose_b, as
        torch.onnx exports it), uniform weights from the seed. An input of rank > 2 is flattened to
        (N, rest) first, as a CNN's classifier head does."""
        name = self._fresh_name(name, "linear")
        if len(x.shape) > 2:
            x = self.add_flatten(x, 1, name=f"{name}_flatten")
        if len(x.shape) != 2 or x.shape[1] is None:
            raise GEError(f"node '{name}' (GemmV2): needs an input of rank >= 2 with known features, got {x!r}")
        in_features = x.shape[1]
        bound = 1.0 / math.sqrt(in_features)
        # named as torch names them (GemmV2's own input names, b and c, say less); nothing below can fail
        w = self._draw(f"{name}.weight", x, "uniform", -bound, bound, (out_features, in_features))
        inputs: list[InputLike] = [x, self.const(w, name=f"{name}/weight"), None, None]
        if bias:
            b = self._draw(f"{name}.bias", x, "uniform", -bound, bound, out_features)
            inputs.append(self.const(b, name=f"{name}/bias"))
        return self._single(self.op("GemmV2", inputs, {"transpose_b": True}, name=name))

    def add_layernorm(self, x: Value, eps: float = 1e-5, name: str | None = None) -> Value:
        """LayerNorm over the last dim (`ge.layer_norm`), gamma ones and beta zeros as torch starts them
        (the values `op` creates for LayerNorm's parameters when they are left out)."""
        name = self._fresh_name(name, "layernorm")
        attrs = {"begin_norm_axis": -1, "begin_params_axis": -1, "epsilon": eps}
        return self._single(self.op("LayerNorm", [x], attrs, name=name))

    def add_softmax(self, x: Value, axis: int = -1, name: str | None = None) -> Value:
        """SoftmaxV2 along `axis` (`ge.softmax`, as ge-translate imports ONNX Softmax)."""
        return self._single(self.op("SoftmaxV2", [x], {"axes": [axis]}, name=self._fresh_name(name, "softmax")))

    # -- outputs -------------------------------------------------------------------------------
    def set_outputs(self, values: Sequence[Value], names: Sequence[str] | None = None) -> None:
        """Makes `values` the graph's outputs: @main's return and its result `ge.name`s (default: the
        values' names), as `ge-translate` imports ONNX graph outputs. From then on new nodes are not
        outputs until `output` adds them."""
        if names is not None and len(names) != len(values):
            raise GEError(f"graph '{self.name}': {len(values)} outputs but {len(names)} names")
        ssas = [self._ssa(v) for v in values]
        self._set_return(ssas, list(names) if names is not None else [v.name for v in values])
        self._default_outputs = False

    def output(self, value: Value, name: str | None = None) -> None:
        """Adds `value` to @main's return (the first call replaces the default outputs)."""
        ssa = self._ssa(value)
        if self._default_outputs:
            self._default_outputs = False
            self._set_return([], [])
        self._set_return([*self._return().operands, ssa], [*self.outputs, name or value.name])

    def _return(self) -> func.ReturnOp:
        last = self._main().body.block.last_op
        if not isinstance(last, func.ReturnOp):
            raise GEError(f"graph '{self.name}': @main does not end in func.return")
        return last

    def _set_return(self, values: Sequence[SSAValue], names: Sequence[str]) -> None:
        seen: set[str] = set()
        for n in names:
            if n in seen:
                raise GEError(f"graph '{self.name}': two outputs named '{n}'")
            seen.add(n)
        fn = self._main()
        self._return().operands = list(values)
        fn.function_type = FunctionType.from_lists(fn.function_type.inputs.data, [v.type for v in values])
        fn.res_attrs = _names_attr(names)

    def _append(self, op: Operation) -> None:
        """Inserts `op` before the return; with default outputs, the return becomes the values no op uses."""
        ret = self._return()
        self._main().body.block.insert_op_before(op, ret)
        hint = _ssa_hint(location_name(op) or "")
        for i, r in enumerate(op.results):
            r.name_hint = hint if i == 0 or hint is None else f"{hint}_{i}"
        if not self._default_outputs or isinstance(op, ConstantOp):
            return
        used = set(op.operands)
        kept = [(v, n) for v, n in zip(ret.operands, self.outputs) if v not in used]
        new = [(r, value_name(r)) for r in op.results]
        self._set_return([v for v, _ in kept + new], [n for _, n in kept + new])

    # -- helpers -------------------------------------------------------------------------------
    def _fresh_name(self, name: str | None, base: str) -> str:
        """`name` if given (an error when a node or an input has it); otherwise base_1, base_2, ..."""
        taken = self._taken_names()
        if name is not None:
            if not isinstance(name, str) or not name:
                raise GEError(f"graph '{self.name}': a name must be a non-empty string, got {name!r}")
            if name in taken:
                raise GEError(f"graph '{self.name}': the name '{name}' is already used")
            return name
        n = self._counters.get(base, 0)
        while True:
            n += 1
            candidate = f"{base}_{n}"
            if candidate not in taken:
                self._counters[base] = n
                return candidate

    def _taken_names(self) -> set[str]:
        fn = self._main()
        names = set(input_names(fn))
        names.update(n for op in fn.body.block.ops if (n := location_name(op)))
        return names

    def _dims(self, shape: Sequence[int | None], what: str) -> list[int | None]:
        if isinstance(shape, str) or not isinstance(shape, Sequence):
            raise GEError(f"{what}: shape must be a list of dims, got {shape!r}")
        dims: list[int | None] = []
        for d in shape:
            if d is None or (isinstance(d, int | np.integer) and d == -1):
                dims.append(None)
            elif isinstance(d, int | np.integer) and not isinstance(d, bool) and d >= 0:
                dims.append(int(d))
            else:
                raise GEError(f"{what}: dims must be non-negative ints (None or -1: unknown), got {list(shape)!r}")
        return dims

    def _array(self, value: Any, dtype: Any, where: str) -> np.ndarray:
        """A constant's array: numpy arrays keep their dtype; Python floats become float32, ints int64."""
        if dtype is not None:
            return np.asarray(value, dtype=parse_dtype(dtype))
        if isinstance(value, np.ndarray | np.generic):
            return np.asarray(value)
        try:
            array = np.asarray(value)
        except ValueError as e:
            raise GEError(f"{where}: not an array: {e}") from None
        if array.dtype == np.float64:
            return array.astype(np.float32)
        if array.dtype.kind in "iu":
            return array.astype(np.int64)
        if array.dtype.kind not in "fb":
            raise GEError(f"{where}: cannot make a constant of {value!r}")
        return array

    def _make_constant(
        self, array: np.ndarray, name: str, parameter: bool = False, staged_keys: Iterable[str] = ()
    ) -> ConstantOp:
        """A `ge.constant` named `name` (not inserted): inline when small, else a weight of the module;
        with `parameter`, the parameter keyed by `name` (made a free key: not a weight's nor another
        parameter's, `staged_keys` included)."""
        try:
            element_type = element_type_of(array.dtype)
        except VerifyException:
            raise GEError(f"constant '{name}': dtype {array.dtype} is not a ge element type") from None
        key = None
        if parameter:
            if not is_float(element_type):
                raise GEError(f"constant '{name}': a parameter is a float tensor, got dtype {array.dtype}")
            taken = frozenset(parameter_keys(self.module)) | frozenset(staged_keys)
            key = weights_of(self.module).fresh_key(name, taken)
        op = make_constant(self.module, array, hint=name, parameter=key)
        op.location = name_loc(name)
        return op

    def _ssa(self, value: Value, where: str | None = None) -> SSAValue:
        """The IR value behind a handle, after checking it is this graph's and still in it."""
        place = where or f"graph '{self.name}'"
        if not isinstance(value, Value):
            raise GEError(f"{place}: expected a value of the graph, got {value!r}")
        if value.graph is not self:
            raise GEError(f"{place}: value '{value.name}' belongs to another graph")
        ssa = value.ssa
        block = self._main().body.block
        inside = (
            ssa.block is block
            if isinstance(ssa, BlockArgument)
            else isinstance(ssa, OpResult) and ssa.op.parent_block() is block
        )
        if not inside:
            raise GEError(f"{place}: value '{value.name}' is no longer in the graph (a pass replaced it)")
        return ssa

    @staticmethod
    def _single(result: Value | tuple[Value, ...]) -> Value:
        assert isinstance(result, Value)
        return result


_NOT_GIVEN = object()


def _pads_hw(padding: int | Sequence[int], where: str) -> list[int]:
    """torch's padding (int or (h, w)) as GE's pads [top, bottom, left, right]."""
    try:
        h, w = op_types.spatial(padding)
    except op_types.AttrError as e:
        raise GEError(f"{where}: padding {e}") from None
    return [h, h, w, w]


def _input_list(entry: op_types.OpType) -> str:
    """The entry's inputs as an error shows them: `bias?` optional, `x...` variadic, `scale=1` created
    at 1 when left out."""

    def shown(s: op_types.Input) -> str:
        if s.initial is not None:
            return f"{s.name}={s.initial.describe()}"
        return s.name + ("?" if s.optional else "") + ("..." if s.variadic else "")

    return ", ".join(shown(s) for s in entry.inputs)


def _suggest(type_name: str) -> str:
    import difflib

    close = difflib.get_close_matches(type_name, op_types.OP_TYPES, n=3)
    if close:
        return "did you mean " + " or ".join(close) + "?"
    return f"{len(op_types.OP_TYPES)} types are known: see ge.api.op_types.OP_TYPES"


__all__ = ["Graph", "Node", "Value", "parse_dtype"]
