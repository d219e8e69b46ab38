"""ONNX -> ge dialect.

Each ONNX node becomes one ge op: inputs map onto the op's operand definitions by position,
attributes onto properties of the same name (`onnx_ops.py` holds the table and the few
version adapters). Result types come from the ge ops' own shape functions. Nodes whose inputs
are all visible constants and whose results are small (shape computations: Shape, Gather,
Concat, Unsqueeze, ...) are evaluated at import with the interpreter's kernels, so a model
with static shapes arrives with its shape chains resolved.

Nothing reads a model before `ge.frontend.validate` has checked it; every size the model
controls (tensors, external data, node results) is held to `max_tensor_bytes`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from google.protobuf.message import DecodeError
from onnx import numpy_helper
from onnx.external_data_helper import uses_external_data
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, StringAttr
from xdsl.interpreter import Interpreter
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.irdl import OptOperandDef, VarOperandDef
from xdsl.utils.exceptions import VerifyException

from ge.frontend.onnx_control_flow import CONTROL_FLOW_OPS, refuse_batch_scan
from ge.frontend.onnx_functions import MAX_EXPANDED_NODES, FunctionBodies
from ge.frontend.onnx_ge_domain import ge_domain_op
from ge.frontend.onnx_ops import (
    DEFAULT_DOMAINS,
    ONNX_DTYPES,
    VARIADIC,
    OnnxImportError,
    adapt_node,
    custom_op_for,
    domain_versions,
    ge_op_for,
    is_native,
    node_name,
    unsupported_operators,
)
from ge.frontend.onnx_sequences import SEQUENCE_OPS, TensorSequence, import_sequence_node
from ge.frontend.onnx_training import TRAINING_DOMAIN, TRAINING_OPSET, import_training_node
from ge.frontend.onnx_upgrade import upgraded
from ge.frontend.onnx_value_dependent import VALUE_DEPENDENT_OPS, import_value_dependent
from ge.frontend.sidecar import SidecarError, confined_path, open_regular_file, read_exactly
from ge.frontend.validate import (
    MAX_TENSOR_BYTES,
    NESTING_LIMIT,
    check_raw_data,
    check_size,
    decode_failure,
    element_count,
    external_data_range,
    model_opset,
    stored_bytes,
    type_name,
    validate_model,
)
from ge.ge_dialects import ge
from ge.ge_dialects.ge.base import constant_value
from ge.ge_dialects.ge.dims import DIMS_ATTR, dims_attr
from ge.ge_dialects.ge.types import element_type_of, is_float, numpy_dtype, shape_of, tensor
from ge.ge_dialects.op_library import CustomOpDef
from ge.interpreter.ge import KernelError, folding_interpreter
from ge.passes.fold_constants import undefined_result

FOLD_LIMIT = 4096
"""Largest result (in elements) that import-time constant evaluation may create."""

_NOT_FOLDED = ("ge.dropout",)

ImportedValue = SSAValue | TensorSequence
"""What an ONNX value name holds at import: a tensor's SSA value, or a sequence of them
(onnx_sequences.py)."""


def load_onnx(path: str | Path, max_tensor_bytes: int = MAX_TENSOR_BYTES) -> onnx.ModelProto:
    """Reads and validates a model file; external data must be regular files in the model's folder."""
    path = Path(path)
    fd = _open_model(path)
    try:
        size = os.fstat(fd).st_size
        data = read_exactly(fd, 0, size)
    except OSError as e:
        raise OnnxImportError(f"{path}: cannot read: {e.strerror}") from None
    finally:
        os.close(fd)
    try:
        model = onnx.load_model_from_string(data)
    except (DecodeError, ValueError, RuntimeError) as e:
        if decode_failure(data) == "nesting":
            raise OnnxImportError(
                f"{path}: model nesting too deep (messages nested more than "
                f"{NESTING_LIMIT} levels: graphs inside attributes inside nodes ...)"
            ) from None
        raise OnnxImportError(f"{path}: not a valid ONNX model (truncated or corrupt file: {e})") from None
    if not model.HasField("graph") or (not model.graph.node and not model.graph.output):
        raise OnnxImportError(f"{path}: not a valid ONNX model (no graph)")
    try:
        validate_model(model, max_tensor_bytes)
        for t, what in _all_tensors(model.graph):
            if uses_external_data(t):
                _load_external(t, what, path.parent, max_tensor_bytes)
    except OnnxImportError as e:
        raise OnnxImportError(f"{path}: {e}") from None
    return model


def _open_model(path: Path) -> int:
    try:
        return open_regular_file(path, "model", OnnxImportError)
    except OnnxImportError as e:
        raise OnnxImportError(str(e).removeprefix("model ")) from None


def _load_external(t: onnx.TensorProto, what: str, folder: Path, max_tensor_bytes: int) -> None:
    """Reads an external tensor's bytes into it: a regular file inside `folder`, range checked."""
    location, offset, length = external_data_range(t, what, max_tensor_bytes)
    try:
        file = confined_path(folder, location, f"external data of '{t.name}'")
    except SidecarError as e:
        raise OnnxImportError(str(e)) from None
    fd = open_regular_file(file, f"{what}: external data", OnnxImportError)
    try:
        size = os.fstat(fd).st_size
        if offset + length > size:
            raise OnnxImportError(
                f"{what}: external data needs bytes {offset} to {offset + length} of {location}, which has {size} bytes"
            )
        t.raw_data = read_exactly(fd, offset, length)
    except OSError as e:
        raise OnnxImportError(f"{what}: external data {location}: {e.strerror}") from None
    finally:
        os.close(fd)
    t.data_location = onnx.TensorProto.DEFAULT
    del t.external_data[:]


def _all_tensors(graph: onnx.GraphProto):
    """(tensor, where it is) for the initializers and the tensor attributes of the main graph."""
    for t in graph.initializer:
        yield t, f"initializer '{t.name}'"
    for index, node in enumerate(graph.node):
        name = node_name(node, index)
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.TENSOR:
                yield attr.t, f"node '{name}' attribute '{attr.name}'"


@dataclass
class _Importer:
    opset: int
    inline_limit: int
    max_tensor_bytes: int = MAX_TENSOR_BYTES
    training: bool = False
    """Float initializers of rank >= 1 go to the sidecar whatever their size."""
    weights: dict[str, np.ndarray] = field(default_factory=dict)
    values: dict[str, SSAValue] = field(default_factory=dict)
    sequences: dict[str, TensorSequence] = field(default_factory=dict)
    """The sequence values, by name: they exist only at import (onnx_sequences.py)."""
    interpreter: Interpreter = field(default_factory=folding_interpreter)
    """Evaluates the nodes whose inputs are all constants (`try_fold`)."""
    training_opset: int | None = None
    """The version of ai.onnx.preview.training the model imports (its update ops), if any."""
    functions: FunctionBodies = field(default_factory=lambda: FunctionBodies({}))
    """The function bodies operators without a ge op expand to."""
    domain_versions: dict[str, int] = field(default_factory=dict)
    """The version of each domain the model imports, for the custom operators' opset ranges."""
    subgraphs: list[func.FuncOp] = field(default_factory=list)
    """The functions data-dependent control flow runs (an If's branches, a Loop's body)."""

    def constant(self, array: np.ndarray, name: str, key: str | None = None) -> SSAValue:
        """A constant; `key` is an initializer's name: a float initializer is the parameter of that
        key, and a large one (or, with `training`, any float one of rank >= 1) the sidecar weight of
        that key. Without a key (Constant nodes, values folded at import) a literal."""
        parameter = key is not None and is_float(element_type_of(array.dtype))
        small = array.size <= self.inline_limit and not (self.training and parameter and array.ndim >= 1)
        if key is not None and not small:
            self.weights[key] = array
            t = tensor(element_type_of(array.dtype), array.shape)
            op = ge.ConstantOp.weight(key, t, name, parameter=parameter)
        else:
            op = ge.ConstantOp.inline(array, name, parameter=key if parameter else None)
        self.block.add_op(op)
        return op.output

    def run(self, graph: onnx.GraphProto) -> ModuleOp:
        initializer_names = {t.name for t in graph.initializer}
        inputs = [vi for vi in graph.input if vi.name not in initializer_names]
        arg_types = [self.value_type(vi, "input") for vi in inputs]
        for vi in graph.output:
            kind = vi.type.WhichOneof("value")
            if kind not in (None, "tensor_type"):
                raise OnnxImportError(
                    f"graph output '{vi.name}' is {_KINDS.get(kind, kind)}, not a tensor (ge graphs return tensors)"
                )
        self.block = Block(arg_types=arg_types)
        for vi, arg in zip(inputs, self.block.args):
            self.values[vi.name] = arg
            arg.name_hint = _ssa_name(vi.name)
        for t in graph.initializer:
            self.values[t.name] = self.constant(self.tensor_value(t), t.name, key=t.name)
        for index, node in enumerate(graph.node):
            self.node(node, index)
        results = []
        for vi in graph.output:
            if vi.name in self.sequences:
                raise OnnxImportError(
                    f"graph output '{vi.name}' is a sequence, not a tensor (ge graphs return tensors)"
                )
            if vi.name not in self.values:
                raise OnnxImportError(f"graph output '{vi.name}' is produced by no node")
            results.append(self.values[vi.name])
        self.block.add_op(func.ReturnOp(*results))
        fn = func.FuncOp(
            "main",
            (arg_types, [r.type for r in results]),
            Region(self.block),
            arg_attrs=_input_attrs(inputs),
            res_attrs=_names_attr(vi.name for vi in graph.output),
        )
        return ModuleOp([fn, *self.subgraphs])

    def value_type(self, vi: onnx.ValueInfoProto, what: str):
        tt = vi.type.tensor_type
        if not vi.type.HasField("tensor_type"):
            raise OnnxImportError(f"{what} '{vi.name}' is not a tensor (sequences, maps and optionals are unsupported)")
        dtype = ONNX_DTYPES.get(tt.elem_type)
        if dtype is None:
            raise OnnxImportError(
                f"{what} '{vi.name}' has data type {type_name(tt.elem_type)}, which ge does not support"
            )
        if not tt.HasField("shape"):
            raise OnnxImportError(f"{what} '{vi.name}' has no shape (unknown rank is unsupported)")
        dims = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
        return tensor(element_type_of(dtype), dims)

    def tensor_value(self, t: onnx.TensorProto) -> np.ndarray:
        if t.data_type not in ONNX_DTYPES:
            raise OnnxImportError(
                f"tensor '{t.name}' has data type {type_name(t.data_type)}, which ge does not support"
            )
        if uses_external_data(t):  # numpy_helper would read it relative to the working folder
            raise OnnxImportError(
                f"tensor '{t.name}' has external data that is not loaded (load the model file with load_onnx)"
            )
        check_size(
            element_count(t.dims), ONNX_DTYPES[t.data_type].itemsize, f"tensor '{t.name}'", self.max_tensor_bytes
        )
        dtype = ONNX_DTYPES[t.data_type]
        if t.HasField("raw_data"):
            raw = t.raw_data  # one copy out of the message
            check_raw_data(t, raw, f"tensor '{t.name}'")
            if stored_bytes(t.dims, t.data_type) == element_count(t.dims) * dtype.itemsize:
                # little-endian values of the numpy type, one after another (not packed)
                return np.frombuffer(raw, dtype=dtype.newbyteorder("<")).astype(dtype, copy=False).reshape(t.dims)
        try:
            array = numpy_helper.to_array(t)
        except Exception as e:
            raise OnnxImportError(f"tensor '{t.name}' cannot be read: {e}") from None
        return np.require(array.astype(dtype, copy=False), requirements="C")

    def node(self, node: onnx.NodeProto, index: int) -> None:
        name = node_name(node, index)
        where = f"node '{name}' ({node.op_type}, opset {self.opset})"
        if node.domain == TRAINING_DOMAIN:
            if self.training_opset != TRAINING_OPSET:
                raise OnnxImportError(
                    f"node '{name}': {TRAINING_DOMAIN} {node.op_type} needs the model to import "
                    f"{TRAINING_DOMAIN} version {TRAINING_OPSET}, it imports {self.training_opset}"
                )
            import_training_node(self, node, name)
            return
        if node.op_type == "Constant":
            self.values[node.output[0]] = self.constant(self.constant_node_value(node, where), name)
            return
        for i, input_name in enumerate(node.input):
            if input_name and input_name not in self.values and input_name not in self.sequences:
                raise OnnxImportError(f"{where}: input #{i} '{input_name}' is not defined before the node")
        if node.domain in DEFAULT_DOMAINS and node.op_type in SEQUENCE_OPS:
            import_sequence_node(self, node, name, where)
            return
        if node.domain in DEFAULT_DOMAINS and node.op_type in CONTROL_FLOW_OPS:
            CONTROL_FLOW_OPS[node.op_type](self, node, name, where)
            return
        if node.domain in DEFAULT_DOMAINS and node.op_type in VALUE_DEPENDENT_OPS:
            import_value_dependent(self, node, name, where)
            return
        for i, input_name in enumerate(node.input):
            if input_name in self.sequences:
                raise OnnxImportError(f"{where}: input #{i} '{input_name}' is a sequence; the operator takes tensors")
        ge_op = ge_domain_op(node)
        if ge_op is not None:
            inputs = [self.values[n] if n else None for n in node.input]
            attrs = {a.name: self.attribute_value(a, where) for a in node.attribute}
            produced = self.emit(ge_op, self.map_operands(ge_op, inputs, where), attrs, len(node.output), name, where)
            self.values.update(zip(node.output, produced))
            return
        custom = custom_op_for(node, self.domain_versions)
        if custom is not None:
            self.custom(node, custom, name)
            return
        if not is_native(node):
            self.expand(node, name, where)
            return
        inputs = [self.values[n] if n else None for n in node.input]
        attrs = {a.name: self.attribute_value(a, where) for a in node.attribute}
        outputs = list(node.output)
        while outputs and not outputs[-1]:
            outputs.pop()
        if node.op_type in VARIADIC:
            produced = [self.chain(node.op_type, inputs, name, where)]
        else:
            op_cls = ge_op_for(node.op_type)
            assert op_cls is not None, where  # import_model refused every unsupported operator first
            inputs, attrs = adapt_node(node.op_type, self.opset, inputs, attrs, where, self.constant_for)
            operands = self.map_operands(op_cls, inputs, where)
            produced = self.emit(op_cls, operands, attrs, len(outputs), name, where)
        for out_name, value in zip(outputs, produced):
            if out_name:
                self.values[out_name] = value

    def bind(self, name: str, value: ImportedValue) -> None:
        """Gives an ONNX value name its tensor or sequence."""
        if isinstance(value, TensorSequence):
            self.sequences[name] = value
            self.values.pop(name, None)
        else:
            self.values[name] = value
            self.sequences.pop(name, None)

    def lookup(self, name: str, what: str) -> ImportedValue:
        if name in self.sequences:
            return self.sequences[name]
        if name not in self.values:
            raise OnnxImportError(f"{what} '{name}' is produced by no node")
        return self.values[name]

    def defined_names(self) -> list[str]:
        return [*self.values, *self.sequences]

    def tensor_input(self, node: onnx.NodeProto, index: int, where: str) -> SSAValue:
        """The node's input `index`, which must be a tensor."""
        name = node.input[index]
        if name in self.sequences:
            raise OnnxImportError(f"{where}: input #{index} '{name}' is a sequence; the operator takes a tensor there")
        return self.values[name]

    def expand(self, node: onnx.NodeProto, name: str, where: str) -> None:
        """The node as its function body's nodes (`onnx_functions`), imported in its place at the
        body's opset; every operator of the body must import."""
        types = [_type_proto(self.values[v].type) if v else onnx.TypeProto() for v in node.input]
        fn, opset, local = self.functions.body(node, self.opset, types, where)
        body = self.functions.instantiate(node, self.opset, fn, name, where)
        missing = unsupported_operators(body, opset, lambda n: self.functions.is_supported(n, opset))
        if missing is not None:
            raise OnnxImportError(f"{where}: its function body cannot be imported: {missing}")
        self.functions.enter(node.op_type, local, where)
        caller_opset, self.opset = self.opset, opset
        try:
            for index, inner in enumerate(body):
                self.node(inner, index)
        finally:
            self.opset = caller_opset
            self.functions.leave()
        for out in node.output:
            if out and out not in self.values:
                raise OnnxImportError(f"{where}: its function body does not produce output '{out}'")

    def custom(self, node: onnx.NodeProto, definition: CustomOpDef, name: str) -> None:
        """The node as the `ge.custom` op of its registration (ge_dialects/ge/custom.py)."""
        where = f"node '{name}' ({definition.qualified})"
        for i, input_name in enumerate(node.input):
            if not input_name:
                raise OnnxImportError(f"{where}: input #{i} is left out; a custom operator takes every input")
        attrs = {a.name: self.attribute_value(a, where) for a in node.attribute}
        inputs = [self.tensor_input(node, i, where) for i in range(len(node.input))]
        try:
            op = ge.CustomOp.build_for(definition, inputs, attrs, name)
        except VerifyException as e:
            raise OnnxImportError(f"{where}: {_strip_op_prefix(str(e))}") from None
        for out_name, value in zip(node.output, self.add(op, name, where)):
            if out_name:
                self.values[out_name] = value

    def emit(self, op_cls: type[ge.GeOp], operands, attrs, num_results: int, name: str, where: str) -> list[SSAValue]:
        """The op typed by its shape function, its results' sizes checked, folded when its inputs
        are constants (else added to the graph): its result values."""
        try:
            op = op_cls.create(operands, attrs, num_results=num_results, name=name)
        except VerifyException as e:
            raise OnnxImportError(f"{where}: {_strip_op_prefix(str(e))}") from None
        return self.add(op, name, where)

    def add(self, op: ge.GeOp, name: str, where: str) -> list[SSAValue]:
        """`op`, built, with its results' sizes checked, folded when its inputs are constants (else
        added to the graph): its result values."""
        for i, result in enumerate(op.results):
            self.check_result_size(result.type, f"{where}: result #{i}")
        folded = self.try_fold(op, name, where)
        if folded is None:
            self.block.add_op(op)
            return list(op.results)
        return folded

    def chain(self, op_type: str, inputs: list[SSAValue | None], name: str, where: str) -> SSAValue:
        """An n-ary Sum, Max, Min or Mean as its chain of binary ops (`VARIADIC`); the last op
        carries the node's name, the ones before it `name/1`, `name/2`, ..."""
        values = [v for v in inputs if v is not None]
        if not values:
            raise OnnxImportError(f"{where}: needs at least one input")
        op_name, mean = VARIADIC[op_type]
        op_cls = getattr(ge, op_name)
        steps = len(values) - 1 + (1 if mean and len(values) > 1 else 0)
        result = values[0]
        for i, value in enumerate(values[1:], start=1):
            step = name if i == steps else f"{name}/{i}"
            (result,) = self.emit(op_cls, {"a": result, "b": value}, {}, 1, step, where)
        if mean and len(values) > 1:
            count = np.asarray(len(values), dtype=numpy_dtype(result.type.element_type))
            divisor = self.constant(count, f"{name}/count")
            (result,) = self.emit(ge.DivOp, {"a": result, "b": divisor}, {}, 1, name, where)
        return result

    def constant_for(self, array: np.ndarray, name: str) -> SSAValue:
        """Adapters turn attributes of older opsets into constant operands with this."""
        return self.constant(array, name)

    def map_operands(self, op_cls: type[ge.GeOp], inputs: list[SSAValue | None], where: str):
        defs = op_cls.get_irdl_definition().operands
        operands: dict[str, object] = {}
        if any(isinstance(d, VarOperandDef) and not isinstance(d, OptOperandDef) for _, d in defs):
            ((name, _),) = defs  # variadic ops (Concat) take every input
            operands[name] = [v for v in inputs if v is not None]
            return operands
        if len(inputs) > len(defs):
            raise OnnxImportError(f"{where}: {len(inputs)} inputs given, the operator takes at most {len(defs)}")
        for (name, d), value in zip(defs, inputs + [None] * (len(defs) - len(inputs))):
            if value is None and not isinstance(d, OptOperandDef):
                raise OnnxImportError(f"{where}: required input '{name}' is missing")
            operands[name] = value
        return operands

    def check_result_size(self, t, what: str) -> None:
        """A static result larger than max_tensor_bytes could never be allocated: refused now."""
        dims = shape_of(t)
        if all(d is not None for d in dims):
            check_size(element_count(dims), numpy_dtype(t.element_type).itemsize, what, self.max_tensor_bytes)

    def try_fold(self, op: ge.GeOp, name: str, where: str) -> list[SSAValue] | None:
        """Evaluates `op` now if its inputs are visible constants and its results are small.

        Results ONNX leaves undefined (integer division by zero) stay unfolded; a kernel that
        refuses the constant inputs (a KernelError: a Gather index out of range) is the model's
        error. Any other exception from a kernel is a compiler bug, left to the internal-error report.
        An op that reads a parameter stays an op: its result changes when training changes the
        parameter (the shape of one is a constant all the same)."""
        if op.name in _NOT_FOLDED:
            return None
        results = None
        if isinstance(op, ge.ShapeOp):
            results = _static_shape(op)
        elif isinstance(op, ge.SizeOp) and (count := op.static_size()) is not None:
            results = [np.asarray(count, dtype=np.int64)]  # like Shape, whatever the tensor's value
        if results is None and any(_is_parameter(v) for v in op.operands):
            return None
        if results is None:
            values = [constant_value(v) for v in op.operands]
            if any(v is None for v in values):
                return None
            if any(not _static_and_small(r.type) for r in op.results):
                return None
            if undefined_result(op, values) is not None:
                return None
            try:
                with np.errstate(all="ignore"):  # 0/0 folds to NaN, as it computes at run time
                    results = self.interpreter.run_op(op, tuple(values))
            except KernelError as e:  # the kernels' refusals of these values; anything else is a kernel bug
                raise OnnxImportError(f"{where}: cannot be evaluated on its constant inputs: {e}") from None
        op.erase(safe_erase=False)  # detached, but its operand uses must go
        return [self.constant(np.asarray(r), name) for r in results]

    def constant_node_value(self, node: onnx.NodeProto, where: str) -> np.ndarray:
        attr = node.attribute[0] if len(node.attribute) == 1 else None
        if attr is None:
            raise OnnxImportError(f"{where}: a Constant node needs exactly one value attribute")
        if attr.name == "value":
            return self.tensor_value(attr.t)
        scalars = {"value_float": np.float32, "value_int": np.int64, "value_floats": np.float32, "value_ints": np.int64}
        if attr.name in scalars:
            return np.asarray(onnx.helper.get_attribute_value(attr), dtype=scalars[attr.name])
        raise OnnxImportError(f"{where}: Constant attribute '{attr.name}' is not supported")

    def attribute_value(self, attr: onnx.AttributeProto, where: str):
        if attr.type == onnx.AttributeProto.TENSOR:
            return self.tensor_value(attr.t)
        if attr.type in (
            onnx.AttributeProto.GRAPH,
            onnx.AttributeProto.GRAPHS,
            onnx.AttributeProto.SPARSE_TENSOR,
            onnx.AttributeProto.TYPE_PROTO,
        ):
            raise OnnxImportError(
                f"{where}: attribute '{attr.name}' of type "
                f"{onnx.AttributeProto.AttributeType.Name(attr.type)} is not supported"
            )
        value = onnx.helper.get_attribute_value(attr)
        if isinstance(value, bytes):
            return value.decode()
        if isinstance(value, list) and value and isinstance(value[0], bytes):
            return [v.decode() for v in value]
        return value


_KINDS = {"sequence_type": "a sequence", "optional_type": "an optional", "map_type": "a map"}
"""ONNX's kinds of value other than a tensor, as messages name them."""

_ONNX_TYPE_OF = {dtype: code for code, dtype in ONNX_DTYPES.items()}


def _type_proto(t) -> onnx.TypeProto:
    """A ge tensor type as ONNX's (context-dependent function bodies are built from input types)."""
    return onnx.helper.make_tensor_type_proto(_ONNX_TYPE_OF[numpy_dtype(t.element_type)], list(shape_of(t)))


def _static_shape(op) -> list[np.ndarray] | None:
    """Shape of a tensor with a static shape is a constant, whatever the tensor's value."""
    dims = shape_of(op.operands[0].type)
    if any(d is None for d in dims):
        return None
    start, end = op.p("start") or 0, op.p("end")
    rank = len(dims)
    start = max(0, min(rank, start + rank if start < 0 else start))
    end = rank if end is None else max(0, min(rank, end + rank if end < 0 else end))
    return [np.asarray(dims[start:end], dtype=np.int64)]


def _is_parameter(value: SSAValue) -> bool:
    return isinstance(value.owner, ge.ConstantOp) and value.owner.parameter_key is not None


def _static_and_small(t) -> bool:
    dims = shape_of(t)
    return all(d is not None for d in dims) and element_count(dims) <= FOLD_LIMIT


def _strip_op_prefix(message: str) -> str:
    """`ge.conv 'n': msg` -> `msg` (the importer names the node itself)."""
    head, sep, rest = message.partition(": ")
    return rest if sep and head.startswith("ge.") else message


def _ssa_name(name: str) -> str | None:
    """An SSA name hint from an ONNX value name, when one can be made (`input.1` -> `input_1`)."""
    hint = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return hint if hint and not hint[0].isdigit() else None


def _names_attr(names) -> ArrayAttr:
    return ArrayAttr([DictionaryAttr({"ge.name": StringAttr(n)}) for n in names])


def _input_attrs(inputs: list[onnx.ValueInfoProto]) -> ArrayAttr:
    """Each input's name, and the names of its unknown dims (`ge.dims`, ge_dialects/ge/dims.py):
    its dim_params, a fresh `<input>.dim<i>` for an unknown dim without one."""
    attrs = []
    for vi in inputs:
        entry: dict[str, Attribute] = {"ge.name": StringAttr(vi.name)}
        dims = vi.type.tensor_type.shape.dim
        names = [
            None if d.HasField("dim_value") else (d.dim_param or f"{vi.name}.dim{axis}") for axis, d in enumerate(dims)
        ]
        if any(names):
            entry[DIMS_ATTR] = dims_attr(names)
        attrs.append(DictionaryAttr(entry))
    return ArrayAttr(attrs)


def import_model(
    model: onnx.ModelProto,
    inline_limit: int = ge.ConstantOp.INLINE_LIMIT,
    max_tensor_bytes: int = MAX_TENSOR_BYTES,
    training: bool = False,
    max_expanded_nodes: int = MAX_EXPANDED_NODES,
) -> tuple[ModuleOp, Mapping[str, np.ndarray]]:
    """The model as a ge module, and the weights its `#ge.weight` constants refer to.

    The model is validated first (`ge.frontend.validate`); no tensor the model describes or makes
    the importer allocate may exceed `max_tensor_bytes`. Every float initializer is a parameter
    (`ge.constant parameter`, keyed by its name), whatever its size: inline up to `inline_limit`
    elements, else in the sidecar. With `training`, every float initializer of rank >= 1 goes to
    the sidecar however small; scalars and integer initializers stay inline. Operators without a
    ge op expand to their function bodies, adding at most `max_expanded_nodes` nodes."""
    opset = model_opset(model)
    validate_model(model, max_tensor_bytes)
    if any(not onnx.defs.has(n.op_type) for n in model.graph.node if n.domain in DEFAULT_DOMAINS):
        _refuse_unsupported(model, opset)  # the version converter would stop at the first of them
    refuse_batch_scan(model.graph, opset)
    model, opset = upgraded(model, opset)
    _refuse_unsupported(model, opset)
    importer = _Importer(opset, inline_limit, max_tensor_bytes, training=training)
    importer.functions = FunctionBodies.of(model, max_expanded_nodes)
    importer.training_opset = next((o.version for o in model.opset_import if o.domain == TRAINING_DOMAIN), None)
    importer.domain_versions = domain_versions(model, opset)
    module = importer.run(model.graph)
    try:
        module.verify()
    except VerifyException as e:
        raise OnnxImportError(f"the imported graph does not verify: {e}") from None
    return module, importer.weights


def _refuse_unsupported(model: onnx.ModelProto, opset: int) -> None:
    """Every operator the importer lacks, named in one line before any node is imported."""
    functions = FunctionBodies.of(model)
    versions = domain_versions(model, opset)
    message = unsupported_operators(
        model.graph.node,
        opset,
        lambda n: (
            n.domain == TRAINING_DOMAIN
            or ge_domain_op(n) is not None
            or custom_op_for(n, versions) is not None
            or functions.is_supported(n, opset)
        ),
    )
    if message is not None:
        raise OnnxImportError(message)
