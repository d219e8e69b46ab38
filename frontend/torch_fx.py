"""PyTorch 2 to ge: an ATen FX graph (torch.export's ExportedProgram after `core_aten`,
or the graph AOT autograd hands a torch.compile backend) imported through ge's ONNX importer.

Each ATen overload has one converter (`torch_converters.py` beside this file: the rule table,
apart from this engine), which writes the overload's meaning as ONNX nodes; the graph they make,
with the program's parameters and buffers as initializers under their `state_dict` names, is
imported by `import_model` as any model is, so shape and dtype inference, folding, names and
errors are the ONNX importer's. No torch.onnx: the graph is built here, node by node, from the FX graph.

- Names: each node is named `<module path>/<fx name>` (from `nn_module_stack`), as the ONNX
  importer keeps an exporter's node names.
- Sizes: a symbolic size (a SymInt) is a one-element int64 tensor computed from the shape of an
  input (`aten.sym_size.int` -> Shape); an input's symbolic dim is a dim_param named after its
  symbol (`s0`), whose range torch.export recorded becomes the dim's `ge.dim_ranges`.
- Every overload without a converter is named at once, in one line (`TorchImportError`).

torch is imported here and in the converters only (an optional extra).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ge.frontend.onnx_ge_domain import GE_DOMAIN, GE_DOMAIN_VERSION

OPSET = 21


class TorchImportError(ValueError):
    """An FX graph ge cannot import (one line)."""


@dataclass(frozen=True)
class Case:
    """A test a converter declares: `make()` gives a module whose exported graph holds the
    overload, run on inputs of `shapes` (and `dtype`); `dynamic` names dims exported as symbols."""

    make: Callable[[], Any]
    shapes: tuple[tuple[int, ...], ...]
    dtype: str = "float32"
    dynamic: tuple[tuple[int, int], ...] = ()  # (input, dim) pairs exported as symbolic


@dataclass(frozen=True)
class Converter:
    overload: str
    convert: Callable[[Graph, Any], Any]
    cases: tuple[Case, ...]


CONVERTERS: dict[str, Converter] = {}
"""Filled by the converter modules as they are imported; read it through `converter_table()`."""

REFUSALS: dict[str, str] = {}
"""Core overloads ge refuses on purpose, with the reason (`refuses`); read through `refusal_table()`."""


def converter_table() -> dict[str, Converter]:
    """Every registered converter by overload name (the rule tables imported first)."""
    from ge.frontend import (  # noqa: F401  (their decorators fill CONVERTERS and REFUSALS)
        torch_converters,
        torch_more_converters,
        torch_recurrent_converters,
        torch_training_converters,
    )

    return CONVERTERS


def refusal_table() -> dict[str, str]:
    """The overloads refused on purpose, each with its reason."""
    converter_table()
    return REFUSALS


def refuses(reason: str, *overloads: str) -> None:
    """Records that ge refuses `overloads` on purpose, and why (named when one is met)."""
    for overload in overloads:
        REFUSALS[overload] = reason


def missing_operators(overloads: Iterable[str]) -> str:
    """One line naming each overload without a converter, with the reason where ge refuses it."""
    missing = sorted(set(overloads) - set(converter_table()))
    reasons = refusal_table()
    named = [f"{o} ({reasons[o]})" if o in reasons else o for o in missing]
    return f"{len(missing)} operator{'s' if len(missing) > 1 else ''} without a ge converter: {', '.join(named)}"


def converts(*overloads: str, cases: Sequence[Case] = (), whole: bool = False) -> Callable[[Callable], Callable]:
    """Registers `fn(graph, node)` as the converter of each overload (`aten.add.Tensor`), with the
    cases its tests run. `whole`: the overload is one ge op (an LSTM layer), so torch.export's core
    decompositions leave it whole (`core_aten`)."""

    def register(fn: Callable) -> Callable:
        for overload in overloads:
            CONVERTERS[overload] = Converter(overload, fn, tuple(cases))
            if whole:
                KEPT_WHOLE.add(overload)
        return fn

    return register


KEPT_WHOLE: set[str] = set()
"""Overloads the core decompositions leave whole: a converter makes each one ge op (`converts(whole=True)`)."""


def core_aten(program: Any) -> Any:
    """`program` decomposed to core ATen, but for the overloads kept whole (`KEPT_WHOLE`)."""
    import torch

    converter_table()
    table = torch.export.default_decompositions()
    for name in KEPT_WHOLE:
        _, op, overload = name.split(".")
        table.pop(getattr(getattr(torch.ops.aten, op), overload), None)
    return program.run_decompositions(table)


def overload_name(target: Any) -> str:
    """`aten.add.Tensor` for torch.ops.aten.add.Tensor; `getitem` for operator.getitem."""
    name = getattr(target, "_name", None)
    if isinstance(name, str) and "::" in name:
        namespace, _, rest = name.partition("::")
        op, _, overload = rest.partition(".")
        return f"{namespace}.{op}.{overload or 'default'}"
    return getattr(target, "__name__", str(target))


ONNX_TYPES = {
    "float32": onnx.TensorProto.FLOAT,
    "float16": onnx.TensorProto.FLOAT16,
    "bfloat16": onnx.TensorProto.BFLOAT16,
    "float64": onnx.TensorProto.DOUBLE,
    "int64": onnx.TensorProto.INT64,
    "int32": onnx.TensorProto.INT32,
    "int8": onnx.TensorProto.INT8,
    "uint8": onnx.TensorProto.UINT8,
    "bool": onnx.TensorProto.BOOL,
}


def dtype_name(dtype: Any) -> str:
    return str(dtype).removeprefix("torch.")


def onnx_type(dtype: Any, where: str) -> int:
    name = dtype_name(dtype)
    if name not in ONNX_TYPES:
        raise TorchImportError(f"{where}: dtype {name} has no ge type")
    return ONNX_TYPES[name]


@dataclass
class Graph:
    """The ONNX graph being written: nodes, initializers, and the value of each FX node (an ONNX
    value name, a Python number or list, or a tuple of those for a node of several results)."""

    nodes: list[onnx.NodeProto] = field(default_factory=list)
    initializers: list[onnx.TensorProto] = field(default_factory=list)
    values: dict[Any, Any] = field(default_factory=dict)
    prefix: str = ""
    _count: int = 0

    def fresh(self, hint: str) -> str:
        self._count += 1
        return f"{self.prefix}{hint}_{self._count}"

    def op(self, op_type: str, inputs: Sequence[str], outputs: int = 1, **attrs: Any) -> Any:
        """Appends an ONNX node; its output name (or names)."""
        names = [self.fresh(op_type.lower()) for _ in range(outputs)]
        self.nodes.append(helper.make_node(op_type, list(inputs), names, name=self.fresh(op_type), **attrs))
        return names[0] if outputs == 1 else names

    def const(self, value: Any, dtype: Any = None) -> str:
        """A literal (a Constant node: never a trained parameter, as the program's weights are)."""
        array = np.asarray(value, dtype=dtype)
        name = self.fresh("const")
        self.nodes.append(helper.make_node("Constant", [], [name], name=name, value=numpy_helper.from_array(array)))
        return name

    def ints(self, values: Iterable[Any]) -> str:
        """A 1-D int64 tensor of `values`: Python ints, and sizes (one-element tensors) concatenated."""
        parts: list[str] = []
        run: list[int] = []
        for v in values:
            if isinstance(v, str):
                if run:
                    parts.append(self.const(run, np.int64))
                    run = []
                parts.append(v)
            else:
                run.append(int(v))
        if run or not parts:  # (an empty list: a scalar's shape)
            parts.append(self.const(run, np.int64))
        return parts[0] if len(parts) == 1 else self.op("Concat", parts, axis=0)

    def tensor(self, value: Any, dtype: Any = None) -> str:
        """An operand as a tensor name: a name stays, a number becomes a scalar constant."""
        if isinstance(value, str):
            return value
        if dtype is None:
            dtype = np.float32 if isinstance(value, float) else np.int64
        return self.const(value, dtype)

    def arg(self, value: Any) -> Any:
        """An FX argument's value here: nodes by their value, lists element by element."""
        if isinstance(value, (list, tuple)):
            return [self.arg(v) for v in value]
        if hasattr(value, "op") and hasattr(value, "target"):  # an fx.Node
            return self.values[value]
        return value


def _where(node: Any) -> str:
    return f"node '{node.name}' ({overload_name(node.target)})"


def module_path(node: Any) -> str:
    stack = node.meta.get("nn_module_stack") or {}
    if not stack:
        return ""
    path = list(stack.values())[-1][0]
    return f"{path}/" if path else ""


def to_onnx(
    graph_module: Any,
    inputs: Sequence[tuple[Any, str]],
    weights: dict[Any, tuple[str, np.ndarray]],
    outputs: Sequence[Any],
    name: str = "torch",
    output_names: Sequence[str] | None = None,
) -> onnx.ModelProto:
    """The ONNX model of an ATen FX graph: `inputs` the placeholders the graph takes at run time
    with their input names, `weights` the placeholders that are parameters, buffers or constants
    (node -> (state_dict name, value)), `outputs` the nodes it returns."""
    table = converter_table()
    held = {overload_name(n.target) for n in graph_module.graph.nodes if n.op == "call_function"}
    if not held <= set(table):
        raise TorchImportError(missing_operators(held))
    g = Graph()
    value_infos = []
    for node, input_name in inputs:
        g.values[node] = input_name
        value_infos.append(_value_info(input_name, node))
    for node, (key, array) in weights.items():
        g.values[node] = key
        g.initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), key))
    for node in graph_module.graph.nodes:
        if node.op != "call_function":
            continue
        g.prefix = f"{module_path(node)}{node.name}/"
        before = len(g.nodes)
        try:
            g.values[node] = table[overload_name(node.target)].convert(g, node)
        except TorchImportError:
            raise
        except Exception as e:  # a converter's refusal of its arguments
            raise TorchImportError(f"{_where(node)}: {e}") from None
        if len(g.nodes) > before:  # the FX node's name on the ONNX node giving its value
            g.nodes[-1].name = f"{module_path(node)}{node.name}"
    out_infos = []
    for i, node in enumerate(outputs):
        value = g.values[node]
        if not isinstance(value, str):
            value = g.tensor(value)
        name_out = output_names[i] if output_names else f"output{i}" if len(outputs) > 1 else "output"
        g.nodes.append(helper.make_node("Identity", [value], [name_out], name=f"{name_out}/Identity"))
        out_infos.append(onnx.ValueInfoProto(name=name_out))
    model_graph = helper.make_graph(g.nodes, name, value_infos, out_infos, g.initializers)
    opsets = [helper.make_opsetid("", OPSET), helper.make_opsetid(GE_DOMAIN, GE_DOMAIN_VERSION)]
    return helper.make_model(model_graph, opset_imports=opsets)


def _value_info(name: str, node: Any) -> onnx.ValueInfoProto:
    value = node.meta.get("val")
    if value is None or not hasattr(value, "shape"):
        raise TorchImportError(f"input '{name}' has no tensor value recorded (export with example tensors)")
    dims: list[Any] = []
    for d in value.shape:
        dims.append(int(d) if isinstance(d, int) or str(d).isdigit() else str(d))
    return helper.make_tensor_value_info(name, onnx_type(value.dtype, f"input '{name}'"), dims)


def import_exported_program(
    program: Any,
    input_names: Sequence[str] | None = None,
    output_names: Sequence[str] | None = None,
    decompose: bool = True,
):
    """A torch.export ExportedProgram as a ge module and its weights (decomposed to core ATen first).
    The graph's inputs take the forward's argument names (or `input_names`), its outputs `output`,
    `output0`, ... (or `output_names`). `decompose=False`: the program is core ATen already."""
    from torch.export.graph_signature import InputKind

    from ge.frontend.onnx_importer import import_model
    from ge.ge_dialects.ge.dims import record_ranges
    from ge.interpreter.runner import main_function

    ep = core_aten(program) if decompose else program
    gm = ep.graph_module
    placeholders = {n.name: n for n in gm.graph.nodes if n.op == "placeholder"}
    inputs: list[tuple[Any, str]] = []
    weights: dict[Any, tuple[str, np.ndarray]] = {}
    for spec in ep.graph_signature.input_specs:
        node = placeholders[spec.arg.name]
        if spec.kind == InputKind.USER_INPUT:
            inputs.append((node, spec.arg.name))
        elif spec.kind in (InputKind.PARAMETER, InputKind.BUFFER):
            tensor = ep.state_dict[spec.target] if spec.target in ep.state_dict else ep.constants[spec.target]
            weights[node] = (spec.target, tensor.detach().cpu().numpy())
        elif spec.kind == InputKind.CONSTANT_TENSOR:
            weights[node] = (spec.target, ep.constants[spec.target].detach().cpu().numpy())
        else:
            raise TorchImportError(f"input '{spec.arg.name}' is a {spec.kind.name}, which ge does not import")
    if input_names is not None:
        if len(input_names) != len(inputs):
            raise TorchImportError(f"{len(input_names)} input names for {len(inputs)} inputs")
        inputs = [(node, name) for (node, _), name in zip(inputs, input_names)]
    output_node = next(n for n in gm.graph.nodes if n.op == "output")
    user = [s.arg for s in ep.graph_signature.output_specs if s.kind.name == "USER_OUTPUT"]
    strange = [f"#{i} ({getattr(a, 'value', a)!r})" for i, a in enumerate(user) if type(a).__name__ != "TensorArgument"]
    if strange:
        raise TorchImportError(f"the program returns values that are not tensors: output {', '.join(strange)}")
    returned = {getattr(v, "name", None): v for v in output_node.args[0]}
    outputs = [returned[a.name] for a in user]
    if output_names is not None and len(output_names) != len(outputs):
        raise TorchImportError(f"{len(output_names)} output names for {len(outputs)} outputs")
    model = to_onnx(gm, inputs, weights, outputs, output_names=output_names)
    module, table = import_model(model)
    ranges = {}
    for symbol, bounds in ep.range_constraints.items():
        low, high = bounds.lower, bounds.upper
        if str(high).lstrip("-").isdigit() and str(low).lstrip("-").isdigit():
            ranges[str(symbol)] = (max(int(low), 0), int(high))
    named = {str(d) for n, _ in inputs for d in n.meta["val"].shape if not str(d).isdigit()}
    ranges = {k: v for k, v in ranges.items() if k in named}
    if ranges:
        record_ranges(main_function(module), ranges)
    return module, table
