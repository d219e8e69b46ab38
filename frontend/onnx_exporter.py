"""ge dialect -> ONNX: a ge-level or fused-level module as a model onnxruntime runs and Netron shows.

- Each ge op becomes the ONNX node(s) of the reverse table (frontend/onnx_export_rules.py), named
  by the op's location (the importer keeps ONNX node names there, so names survive a round trip);
  results are `<node>_output_<i>`, the graph's inputs and outputs keep their names.
- Constants become initializers (weights keep their names); a constant held in a physical layout
  (a folded FRACTAL_Z / FRACTAL_NZ weight) is converted back to its logical array.
- Storage formats are dropped: the shape in a ge type is the logical one, `ge.trans_data` exports as
  an Identity, and each value's storage format, where it has one, is the doc string of its value_info.
- Each `fused.group` becomes a call of a model-local ONNX function in the domain `ai.ge.fused`
  (named after its rule), whose body is the group's ops: Netron draws the kernel as one node that
  opens, onnxruntime inlines it. `onnx.inliner.inline_local_functions` gives back a plain graph.
- An op without an ONNX form is refused in one line naming the op and its node; nothing is written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp, TensorType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.irdl import OptOperandDef, VarOperandDef

from ge.frontend.onnx_export_rules import REFUSED, RULES, custom_domain_versions
from ge.frontend.onnx_ops import ONNX_DTYPES
from ge.ge_dialects import fused, ge
from ge.ge_dialects.ge.base import describe, location_name, to_python
from ge.ge_dialects.ge.constant import numpy_from_dense
from ge.ge_dialects.ge.layout import is_stored_logically, storage_of
from ge.ge_dialects.ge.types import numpy_dtype, shape_of
from ge.ge_dialects.ge.weights import weights_of
from ge.ge_dialects.messages import one_line
from ge.interpreter.layouts import to_logical
from ge.interpreter.runner import InputError, input_names, main_function, output_names

EXPORT_OPSET = 21
"""The default-domain opset written: LayerNormalization (17), Gelu (20), ReduceMean's axes input (18)
are native there; the importer reads it (frontend/onnx_ops.py MAX_OPSET is onnx's newest)."""

FUSED_DOMAIN = "ai.ge.fused"
"""The domain of the functions fused groups become."""

_TO_ONNX_TYPE = {dtype: code for code, dtype in ONNX_DTYPES.items()}


class OnnxExportError(Exception):
    """The module cannot be written as ONNX; one line naming the op (and its node) and the reason."""

    def __init__(self, message: str):
        super().__init__(one_line(message))


def onnx_type(element_type) -> int:
    return _TO_ONNX_TYPE[numpy_dtype(element_type)]


def value_info(name: str, t: TensorType) -> onnx.ValueInfoProto:
    """The logical type (ONNX has no storage formats); a non-trivial storage format is the doc string."""
    info = helper.make_tensor_value_info(name, onnx_type(t.element_type), list(shape_of(t)))
    if not is_stored_logically(t):
        info.doc_string = f"storage format {storage_of(t)}"
    return info


def tensor_proto(array: np.ndarray, name: str) -> onnx.TensorProto:
    array = np.require(array, requirements="C")
    try:
        return numpy_helper.from_array(array, name)
    except (KeyError, ValueError):  # an onnx that does not know an ml_dtypes type (KeyError before 1.17, then
        # ValueError): raw little-endian bytes of the declared ONNX type
        t = onnx.TensorProto(name=name, data_type=_TO_ONNX_TYPE[array.dtype], dims=array.shape)
        t.raw_data = array.tobytes()
        return t


@dataclass
class Scope:
    """One ONNX graph being built: the main graph, or the body of a fused group's function.

    Tensor names are unique within the scope; the main graph's constants are initializers, a
    function's are Constant nodes (functions have no initializers)."""

    opset: int
    is_function: bool
    names: dict[SSAValue, str] = field(default_factory=dict)
    used: set[str] = field(default_factory=set)
    node_names: set[str] = field(default_factory=set)
    nodes: list[onnx.NodeProto] = field(default_factory=list)
    initializers: list[onnx.TensorProto] = field(default_factory=list)
    value_infos: list[onnx.ValueInfoProto] = field(default_factory=list)

    def fresh(self, base: str) -> str:
        name, n = base, 0
        while name in self.used or not name:
            n += 1
            name = f"{base}_{n}"
        self.used.add(name)
        return name

    def fresh_node(self, base: str) -> str:
        name, n = base, 0
        while name in self.node_names:
            n += 1
            name = f"{base}_{n}"
        self.node_names.add(name)
        return name

    def node(
        self,
        op_type: str,
        inputs: Sequence[str],
        outputs: Sequence[str] | None,
        name: str,
        domain: str = "",
        **attrs: Any,
    ) -> list[str]:
        """Adds a node; `outputs` None makes one fresh output named after the node. Returns the outputs."""
        doc = attrs.pop("doc", None)
        node_name = self.fresh_node(name)
        outs = list(outputs) if outputs is not None else [self.fresh(f"{node_name}_output_0")]
        made = {k: v for k, v in attrs.items() if isinstance(v, onnx.AttributeProto)}
        plain = {k: v for k, v in attrs.items() if k not in made}
        node = helper.make_node(op_type, list(inputs), outs, name=node_name, domain=domain or None, **plain)
        node.attribute.extend(made[k] for k in sorted(made))
        if doc:
            node.doc_string = doc
        self.nodes.append(node)
        return outs

    def constant(self, array: np.ndarray, name: str) -> str:
        out = self.fresh(name)
        if self.is_function:
            self.node("Constant", [], [out], name, value=tensor_proto(array, "value"))
        else:
            self.initializers.append(tensor_proto(array, out))
        return out


@dataclass
class _Exporter:
    weights: Mapping[str, np.ndarray]
    opset: int
    functions: list[onnx.FunctionProto] = field(default_factory=list)
    function_names: set[str] = field(default_factory=set)
    custom_versions: Mapping[str, int] = field(default_factory=dict)
    """The version each custom op domain is imported at (`custom_domain_versions`), by the model
    and by each function holding an op of the domain."""

    def block(self, scope: Scope, block: Block) -> list[SSAValue]:
        """Exports the ops of `block` into `scope`; returns the values its terminator yields."""
        for op in block.ops:
            if isinstance(op, (func.ReturnOp, fused.YieldOp)):
                return list(op.operands)
            if isinstance(op, ge.ConstantOp):
                scope.names[op.output] = self.constant(scope, op)
            elif isinstance(op, fused.GroupOp):
                self.group(scope, op)
            elif isinstance(op, ge.GeOp):
                self.op(scope, op)
            else:
                raise OnnxExportError(f"{_where(op)}: {op.name} has no ONNX form (ge-level or fused-level IR only)")
            if not scope.is_function and not isinstance(op, ge.ConstantOp):
                for r in op.results:
                    if isinstance(r.type, TensorType):
                        scope.value_infos.append(value_info(scope.names[r], r.type))
        raise OnnxExportError("the function body has no terminator")

    def constant(self, scope: Scope, op: ge.ConstantOp) -> str:
        array = op.inline_value()
        t = op.output.type
        assert isinstance(t, TensorType)
        if array is None:
            key = op.weight_key
            assert key is not None, "a ge.constant is inline or a weight"
            if key not in self.weights:
                raise OnnxExportError(f"{_where(op)}: weight '{key}' is not in the module's weights (no sidecar?)")
            array = np.asarray(self.weights[key])
            if not is_stored_logically(t):
                array = to_logical(array, t)
        name = op.parameter_key or location_name(op) or op.weight_key or "const"  # a parameter keeps its key
        return scope.constant(np.asarray(array, dtype=numpy_dtype(t.element_type)), name)

    def results(self, scope: Scope, op: Operation, node_name: str) -> list[str]:
        outs = []
        for i, r in enumerate(op.results):
            name = scope.names.get(r) or scope.fresh(f"{node_name}_output_{i}")
            scope.names[r] = name
            outs.append(name)
        return outs

    def op(self, scope: Scope, op: ge.GeOp) -> None:
        rule = RULES.get(op.name)
        if rule is None:
            reason = REFUSED.get(op.name, "no ONNX form in the export table (frontend/onnx_export_rules.py)")
            raise OnnxExportError(f"{_where(op)}: {op.name} cannot be exported: {reason}")
        name = location_name(op) or _node_base(op)
        ins = self.inputs(scope, op, rule.operands)
        outs = self.results(scope, op, name)
        if rule.export is not None:
            rule.export(scope, op, ins, outs, name)
            return
        self.check_types(op, rule.op_type, rule.operands)
        attrs = self.attributes(op, rule.op_type)
        scope.node(rule.op_type, ins, outs, name, **attrs)

    def check_types(self, op: ge.GeOp, op_type: str, order: tuple[str, ...] | None) -> None:
        """Refuses an element type the ONNX operator does not take at this opset (bf16 Conv at 21):
        the model would fail onnx.checker or onnxruntime's loading, far from the op's name."""
        schema = onnx.defs.get_schema(op_type, self.opset)
        allowed = {c.type_param_str: set(c.allowed_type_strs) for c in schema.type_constraints}
        names = order if order is not None else tuple(n for n, _ in op.get_irdl_definition().operands)
        values = [v for n in names for v in _as_list(getattr(op, n))]
        formals = list(schema.inputs)
        for i, value in enumerate(values):
            if value is None or not formals:
                continue
            formal = formals[min(i, len(formals) - 1)]
            types = allowed.get(formal.type_str)
            t = value.type
            if types is None or not isinstance(t, TensorType):
                continue
            got = f"tensor({onnx.TensorProto.DataType.Name(onnx_type(t.element_type)).lower()})"
            if got not in types:
                raise OnnxExportError(
                    f"{_where(op)}: ONNX {op_type} (opset {self.opset}) does not take {got} "
                    f"for its input '{formal.name}'"
                )

    def inputs(self, scope: Scope, op: ge.GeOp, order: tuple[str, ...] | None) -> list[str]:
        defs = op.get_irdl_definition().operands
        names = order if order is not None else tuple(n for n, _ in defs)
        kinds = dict(defs)
        ins: list[str] = []
        for n in names:
            value = getattr(op, n)
            if isinstance(kinds[n], VarOperandDef) and not isinstance(kinds[n], OptOperandDef):
                ins += [scope.names[v] for v in value]
            elif value is None:
                ins.append("")
            else:
                ins.append(scope.names[value])
        while ins and not ins[-1]:
            ins.pop()
        return ins

    def attributes(self, op: ge.GeOp, op_type: str) -> dict[str, Any]:
        """The op's properties as the ONNX schema's attributes; a non-default property the schema
        lacks is refused (the exported model would compute something else)."""
        schema = onnx.defs.get_schema(op_type, self.opset)
        attrs: dict[str, Any] = {}
        for pname, attr in op.properties.items():
            if pname.endswith("SegmentSizes"):
                continue
            if isinstance(attr, DenseIntOrFPElementsAttr):
                value: object = tensor_proto(numpy_from_dense(attr), pname)
            else:
                value = to_python(attr)
            if pname not in schema.attributes:
                if value == type(op).DEFAULTS.get(pname):
                    continue
                raise OnnxExportError(
                    f"{_where(op)}: property {pname} = {value!r} has no attribute "
                    f"in ONNX {op_type} (opset {self.opset})"
                )
            attrs[pname] = helper.make_attribute(pname, value, attr_type=int(schema.attributes[pname].type))  # type: ignore[call-overload]  # a pybind enum
        if isinstance(op, ge.SplitOp) and op.split is None and "num_outputs" not in attrs:
            attrs["num_outputs"] = len(op.results)  # required without the split input since opset 18
        return attrs

    def group(self, scope: Scope, group: fused.GroupOp) -> None:
        """A model-local function in FUSED_DOMAIN, called by one node named like the group."""
        name = location_name(group) or group.rule.data
        fn_name = _unique(f"{group.rule.data}_{len(self.functions)}", self.function_names)
        body = Scope(self.opset, is_function=True)
        formal_ins = []
        for arg, outer in zip(group.body.block.args, group.inputs):
            formal = body.fresh(scope.names[outer])
            body.names[arg] = formal
            formal_ins.append(formal)
        yielded = self.block(body, group.body.block)
        outs = self.results(scope, group, name)
        formal_outs = []
        for i, v in enumerate(yielded):
            if v in group.body.block.args or body.names[v] in formal_outs:
                formal = body.fresh(f"{fn_name}_out_{i}")
                body.node("Identity", [body.names[v]], [formal], f"{fn_name}/out_{i}")
            else:
                formal = body.names[v]
            formal_outs.append(formal)
        domains = sorted(
            {op.domain.data for op in group.members if isinstance(op, ge.CustomOp)} & set(self.custom_versions)
        )
        self.functions.append(
            helper.make_function(
                FUSED_DOMAIN,
                fn_name,
                formal_ins,
                formal_outs,
                body.nodes,
                opset_imports=[
                    helper.make_opsetid("", self.opset),
                    *(helper.make_opsetid(d, self.custom_versions[d]) for d in domains),
                ],
                doc_string=f"fused.group {group.pattern.data} (rule {group.rule.data})",
            )
        )
        scope.node(fn_name, [scope.names[v] for v in group.inputs], outs, name, domain=FUSED_DOMAIN)


def _as_list(value) -> list:
    if value is None or isinstance(value, SSAValue):
        return [value]
    return list(value)


def _where(op: Operation) -> str:
    return describe(op)


def _node_base(op: Operation) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", op.name.removeprefix("ge."))


def _unique(base: str, taken: set[str]) -> str:
    name, n = base, 0
    while name in taken:
        n += 1
        name = f"{base}_{n}"
    taken.add(name)
    return name


def export_module(
    module: ModuleOp, weights: Mapping[str, np.ndarray] | None = None, opset: int = EXPORT_OPSET
) -> onnx.ModelProto:
    """The module's @main as an ONNX model (checked with onnx.checker, full check)."""
    try:
        fn = main_function(module)
    except InputError:
        raise OnnxExportError("the module has no func.func @main") from None
    for op in module.walk():
        if op.name.split(".", 1)[0] in ("task", "stream"):
            raise OnnxExportError(
                f"the module is lowered ({op.name} found); ONNX export reads ge-level or fused-level IR"
            )
    if weights is None:
        weights = weights_of(module)
    custom = custom_domain_versions([op for op in fn.walk() if isinstance(op, ge.CustomOp)])
    exporter = _Exporter(weights, opset, custom_versions=custom)
    scope = Scope(opset, is_function=False)
    graph_inputs = []
    for arg, name, t in zip(fn.body.block.args, input_names(fn), fn.function_type.inputs.data):
        assert isinstance(t, TensorType)
        scope.names[arg] = name
        scope.used.add(name)
        graph_inputs.append(value_info(name, t))
    out_names = output_names(fn)
    returned = fn.body.block.last_op
    assert returned is not None
    # a returned op result takes the output's name directly; an input, a constant or a value returned
    # twice gets an Identity to it (a graph output is one tensor with one name)
    claimed: set[SSAValue] = set()
    for value, name in zip(returned.operands, out_names):
        owner = value.owner
        direct = isinstance(owner, Operation) and not isinstance(owner, ge.ConstantOp)
        if direct and value not in claimed and name not in scope.used:
            scope.names[value] = name
            scope.used.add(name)
            claimed.add(value)
    yielded = exporter.block(scope, fn.body.block)
    graph_outputs = []
    for value, name, t in zip(yielded, out_names, fn.function_type.outputs.data):
        assert isinstance(t, TensorType)
        if scope.names[value] != name:
            scope.used.add(name)
            scope.node("Identity", [scope.names[value]], [name], f"{name}/Identity")
        graph_outputs.append(value_info(name, t))
    outputs = set(out_names)
    graph = helper.make_graph(
        scope.nodes,
        "main",
        graph_inputs,
        graph_outputs,
        scope.initializers,
        value_info=[v for v in scope.value_infos if v.name not in outputs],
    )
    opsets = [helper.make_opsetid("", opset)]
    if exporter.functions:
        opsets.append(helper.make_opsetid(FUSED_DOMAIN, 1))
    opsets += [helper.make_opsetid(domain, version) for domain, version in custom.items()]
    model = helper.make_model(graph, opset_imports=opsets, functions=exporter.functions, producer_name="ge-translate")
    model.ir_version = max(helper.find_min_ir_version_for([opsets[0]]), 8)  # 8: model-local functions
    onnx.checker.check_model(model, full_check=True)  # a failure is the exporter's bug: an internal error
    return model
