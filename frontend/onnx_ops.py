"""The ONNX operator table: which ge op each ONNX operator becomes, the data types ge accepts,
and the adapters that bring older opsets' forms to the one form each ge op has."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import ml_dtypes
import numpy as np
import onnx
from xdsl.ir import SSAValue

from ge.ge_dialects import ge
from ge.ge_dialects.messages import one_line
from ge.ge_dialects.op_library import CustomOpDef, OpLibrary, OpLibraryError, mapping


class OnnxImportError(Exception):
    """The model cannot be imported; the message names the node (or file) and the reason.

    Names come from the model, so control characters in them are escaped: the message stays
    one line whatever the model holds."""

    def __init__(self, message: str):
        super().__init__(one_line(message))


MIN_OPSET = 13
"""The oldest default-domain opset the importer reads natively; older models are upgraded to it
(frontend/onnx_upgrade.py)."""
OLDEST_OPSET = 1
"""The oldest opset a model may import: onnx's version converter upgrades from any opset, and names
the operator it has no adapter for (the model zoo's files are at 7 to 12)."""
MAX_OPSET = onnx.defs.onnx_opset_version()

ONNX_DTYPES: dict[int, np.dtype] = {
    onnx.TensorProto.FLOAT: np.dtype(np.float32),
    onnx.TensorProto.FLOAT16: np.dtype(np.float16),
    onnx.TensorProto.BFLOAT16: np.dtype(ml_dtypes.bfloat16),
    onnx.TensorProto.DOUBLE: np.dtype(np.float64),
    onnx.TensorProto.INT64: np.dtype(np.int64),
    onnx.TensorProto.INT32: np.dtype(np.int32),
    onnx.TensorProto.INT16: np.dtype(np.int16),
    onnx.TensorProto.INT8: np.dtype(np.int8),
    onnx.TensorProto.UINT8: np.dtype(np.uint8),
    onnx.TensorProto.UINT16: np.dtype(np.uint16),
    onnx.TensorProto.UINT32: np.dtype(np.uint32),
    onnx.TensorProto.UINT64: np.dtype(np.uint64),
    onnx.TensorProto.BOOL: np.dtype(np.bool_),
    # The narrow storage types (ge converts them with Cast and moves them, computes nothing in them).
    # numpy_helper.to_array unpacks the 4- and 2-bit ones to one element per byte.
    onnx.TensorProto.FLOAT8E4M3FN: np.dtype(ml_dtypes.float8_e4m3fn),
    onnx.TensorProto.FLOAT8E4M3FNUZ: np.dtype(ml_dtypes.float8_e4m3fnuz),
    onnx.TensorProto.FLOAT8E5M2: np.dtype(ml_dtypes.float8_e5m2),
    onnx.TensorProto.FLOAT8E5M2FNUZ: np.dtype(ml_dtypes.float8_e5m2fnuz),
    onnx.TensorProto.FLOAT8E8M0: np.dtype(ml_dtypes.float8_e8m0fnu),
    onnx.TensorProto.FLOAT4E2M1: np.dtype(ml_dtypes.float4_e2m1fn),
    onnx.TensorProto.INT4: np.dtype(ml_dtypes.int4),
    onnx.TensorProto.UINT4: np.dtype(ml_dtypes.uint4),
    onnx.TensorProto.INT2: np.dtype(ml_dtypes.int2),
    onnx.TensorProto.UINT2: np.dtype(ml_dtypes.uint2),
}


def _onnx_to_ge() -> dict[str, type[ge.GeOp]]:
    """Each op's `ONNX` names, gathered; a name claimed by two ops is a bug in the dialect."""
    table: dict[str, type[ge.GeOp]] = {}
    for op in ge.ALL_OPS:
        for onnx_type in vars(op).get("ONNX", ()):
            if onnx_type in table:
                raise AssertionError(f"ONNX {onnx_type} is claimed by {table[onnx_type].__name__} and {op.__name__}")
            table[onnx_type] = op
    return table


ONNX_TO_GE: dict[str, type[ge.GeOp]] = _onnx_to_ge()
"""ONNX operator -> the ge op it imports as (each op's `ONNX`)."""


VARIADIC: dict[str, tuple[str, bool]] = {
    "Sum": ("AddOp", False),
    "Max": ("MaximumOp", False),
    "Min": ("MinimumOp", False),
    "Mean": ("AddOp", True),
}
"""ONNX's n-ary elementwise operators -> (the binary ge op they chain, whether the chain is divided
by n): Sum(a, b, c) is (a + b) + c, left to right as onnxruntime adds; one input is itself."""


def ge_op_for(op_type: str) -> type[ge.GeOp] | None:
    return ONNX_TO_GE.get(op_type)


DEFAULT_DOMAINS = ("", "ai.onnx")
IMPORTED_BY_NAME = {
    "Constant",
    # control flow whose path is known at import, inlined or unrolled (onnx_control_flow.py)
    "If",
    "Scan",
    "Loop",
    # sequences, folded to tensors at import (onnx_sequences.py)
    "SequenceConstruct",
    "SequenceEmpty",
    "SequenceAt",
    "SequenceInsert",
    "SequenceErase",
    "SequenceLength",
    "SplitToSequence",
    "ConcatFromSequence",
    "SequenceMap",
    # value-dependent shapes, evaluated when their inputs are constants (onnx_value_dependent.py)
    "NonZero",
    "Unique",
    "Compress",
    "NonMaxSuppression",
}
"""Default-domain operators the importer reads itself instead of mapping them to one ge op."""


SUPPORTED_TYPES = frozenset(ONNX_TO_GE) | frozenset(VARIADIC) | frozenset(IMPORTED_BY_NAME)
"""Every default-domain operator the importer reads."""


def node_name(node: onnx.NodeProto, index: int) -> str:
    """A node's name in messages and locations: its own, else its first output, else type and index."""
    return node.name or (node.output[0] if node.output else f"{node.op_type}_{index}")


def is_native(node: onnx.NodeProto) -> bool:
    """Whether the importer reads the node itself (as a ge op, or a reading of its own): its
    operator is one it reads, and the node sets nothing its ge op takes only absent or at one value
    (`GeOp.ONNX_ONLY_AS`: such a node imports through its function body)."""
    if node.domain not in DEFAULT_DOMAINS or node.op_type not in SUPPORTED_TYPES:
        return False
    only = getattr(ONNX_TO_GE.get(node.op_type), "ONNX_ONLY_AS", {})
    if not only:
        return True
    inputs = [formal.name for formal in onnx.defs.get_schema(node.op_type).inputs]
    set_inputs = {name for name, value in zip(inputs, node.input) if value}
    return not any(name in only for name in set_inputs) and not any(
        a.name in only and (only[a.name] is None or onnx.helper.get_attribute_value(a) != only[a.name])
        for a in node.attribute
    )


def unsupported_operators(
    nodes: Iterable[onnx.NodeProto], opset: int, supported: Callable[[onnx.NodeProto], bool]
) -> str | None:
    """One line naming every operator among `nodes` (a graph's or a function body's) that is not
    `supported`, with its node count and a node, in the order they first occur: "2 operators are
    not supported at opset 13: LRN (3 nodes, e.g. 'conv1/norm'), com.acme.Fused (1 node: 'f')".
    None when every operator is supported."""
    found: dict[str, list[str]] = {}
    for index, node in enumerate(nodes):
        if not supported(node):
            op = node.op_type if node.domain in DEFAULT_DOMAINS else f"{node.domain}.{node.op_type}"
            found.setdefault(op, []).append(node_name(node, index))
    if not found:
        return None
    listed = ", ".join(
        f"{op} ({len(names)} nodes, e.g. '{names[0]}')" if len(names) > 1 else f"{op} (1 node: '{names[0]}')"
        for op, names in found.items()
    )
    count = f"{len(found)} operators are" if len(found) > 1 else "1 operator is"
    return f"{count} not supported at opset {opset}: {listed}; {REGISTER_HINT}"


REGISTER_HINT = "register a custom operator with --load-op-library (docs/custom_ops.md)"
"""How the list of unsupported operators ends: the way to add one."""


def domain_versions(model: onnx.ModelProto, opset: int) -> dict[str, int]:
    """The version of each domain the model imports ("" for the default domain, at `opset`)."""
    versions = {o.domain: o.version for o in model.opset_import if o.domain not in DEFAULT_DOMAINS}
    versions[""] = opset
    return versions


def custom_op_for(node: onnx.NodeProto, versions: dict[str, int]) -> CustomOpDef | None:
    """The loaded registration (ge_dialects/op_library.py) the node imports as: of its domain and
    type, mapping the version of its domain the model imports."""
    definition = mapping(node.domain, node.op_type)
    if definition is None:
        return None
    version = versions.get("" if node.domain in DEFAULT_DOMAINS else node.domain)
    return definition if version is not None and definition.maps(version) else None


def check_claims(library: OpLibrary) -> None:
    """Refuses a registration of a default-domain operator the importer reads itself: a model's
    meaning may not change with a plugin (another registration of a type is refused by `op_library`)."""
    for definition in library.ops.values():
        if definition.domain in DEFAULT_DOMAINS and definition.op_type in SUPPORTED_TYPES:
            raise OpLibraryError(
                f"plugin {library.plugin}: {definition.op_type} is a built-in ONNX operator; "
                "register an operator ge does not import, or one of your own domain"
            )


Inputs = list[SSAValue | None]
Attrs = dict[str, Any]
MakeConstant = Callable[[np.ndarray, str], SSAValue]


def _reduce_axes_to_input(inputs: Inputs, attrs: Attrs, make_constant: MakeConstant, name: str):
    """ReduceMean, ReduceMax, ReduceMin and ReduceProd before opset 18 (ReduceSum before 13) take
    `axes` as an attribute; ge takes an operand."""
    axes = attrs.pop("axes", None)
    if axes is not None:
        inputs = [inputs[0], make_constant(np.asarray(axes, dtype=np.int64), f"{name}/axes")]
    return inputs, attrs


def _axis_attribute_to_input(inputs: Inputs, attrs: Attrs, make_constant: MakeConstant, name: str):
    """DFT before opset 20 takes `axis` as an attribute (default 1); ge takes it as its last operand."""
    axis = attrs.pop("axis", 1)
    inputs = [*inputs, None][:2] + [make_constant(np.asarray(axis, dtype=np.int64), f"{name}/axis")]
    return inputs, attrs


def _drop(*names: str):
    def adapt(inputs: Inputs, attrs: Attrs, make_constant: MakeConstant, name: str):
        for n in names:
            attrs.pop(n, None)
        return inputs, attrs

    return adapt


def _grid_sample_mode_names(inputs: Inputs, attrs: Attrs, make_constant: MakeConstant, name: str):
    """GridSample before opset 20 names its modes "bilinear" and "bicubic"."""
    attrs["mode"] = {"bilinear": "linear", "bicubic": "cubic"}.get(attrs.get("mode", "bilinear"), attrs.get("mode"))
    return inputs, attrs


#: (ONNX operator, first opset where the adapter no longer applies) -> adapter.
ADAPTERS: dict[tuple[str, int], Callable] = {
    ("ReduceMean", 18): _reduce_axes_to_input,
    ("ReduceMax", 18): _reduce_axes_to_input,
    ("ReduceMin", 18): _reduce_axes_to_input,
    ("ReduceProd", 18): _reduce_axes_to_input,
    ("ReduceSum", 13): _reduce_axes_to_input,
    # `spatial` left BatchNormalization in opset 9; `is_test`-style leftovers are ignored likewise.
    ("BatchNormalization", 14): _drop("spatial"),
    ("GridSample", 20): _grid_sample_mode_names,
    ("DFT", 20): _axis_attribute_to_input,
}


def adapt_node(
    op_type: str, opset: int, inputs: Inputs, attrs: Attrs, where: str, make_constant: MakeConstant
) -> tuple[Inputs, Attrs]:
    for (adapter_op, until), adapter in ADAPTERS.items():
        if adapter_op == op_type and opset < until:
            inputs, attrs = adapter(inputs, attrs, make_constant, where.split("'")[1])
    return inputs, attrs
