"""GE operator type names -> ge ops: the one table `Graph.op` applies (api/graph.py) and `Node.type`
reads back (api/node.py).

Each entry names an operator as CANN's operator catalogue spells it (Conv2D, BatchNorm, SoftmaxV2,
ReduceMeanD, ...) and says, as data:
- the ONNX operator whose ge op it is: the ge op class comes from the importer's table
  (frontend/onnx_ops.py `ONNX_TO_GE`), so GE and ONNX names reach the ge dialect through one mapping;
- GE's inputs in order, each the ge operand it becomes (or, for an input GE wants constant, such as
  Transpose's perm, the ge property its value sets);
- GE's attributes, each the ge property (or constant operand) it sets and how its value converts
  (GE's 4-element NCHW strides, its [top, bottom, left, right] pads, its padding modes ...);
- the defaults where GE's differ from the ge op's (keep_dims is false in GE, keepdims 1 in ONNX);
- for the parameter inputs a framework creates itself (a norm's scale, offset and statistics), the
  value it starts them at (`Initial`): `Graph.op` creates them when the caller leaves them out.

The first entry of each ge op is its canonical GE type (`type_of`); later ones are aliases (SoftmaxV2
and Softmax are both ge.softmax). Converters raise `AttrError` with the reason; the caller names the node.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np

from ge.frontend.onnx_ops import ONNX_DTYPES, ge_op_for
from ge.ge_dialects import ge


class AttrError(ValueError):
    """An attribute value GE's operator does not accept; the message is the reason only."""


# -- converters: a GE attribute value -> the ge property value (None: sets nothing) ----------------


def _is_int(v: Any) -> bool:
    return isinstance(v, int | np.integer) and not isinstance(v, bool)


def integer(v: Any) -> int:
    if not _is_int(v):
        raise AttrError(f"expects an int, got {v!r}")
    return int(v)


def number(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float | np.number):
        raise AttrError(f"expects a number, got {v!r}")
    return float(v)


def ints(v: Any) -> list[int]:
    values = list(np.asarray(v).reshape(-1)) if isinstance(v, np.ndarray) else v
    if _is_int(values):
        values = [values]
    if not isinstance(values, list | tuple) or not all(_is_int(x) for x in values):
        raise AttrError(f"expects a list of ints, got {v!r}")
    return [int(x) for x in values]


def flag(v: Any) -> int:
    """GE's bools as ge's 0/1 ints."""
    if not isinstance(v, bool | int | np.bool_) or v not in (0, 1):
        raise AttrError(f"expects true or false, got {v!r}")
    return int(bool(v))


def inverted_flag(v: Any) -> int:
    """AvgPoolV2's `exclusive` (padding left out of the divisor) is ge's count_include_pad negated."""
    return 1 - flag(v)


def spatial(v: Any) -> list[int]:
    """An int, [h, w], or GE's NCHW form [1, 1, h, w] (strides, dilations, ksize) -> [h, w]."""
    values = ints(v)
    if len(values) == 1:
        return values * 2
    if len(values) == 2:
        return values
    if len(values) == 4 and values[:2] == [1, 1]:
        return values[2:]
    raise AttrError(f"expects an int, [h, w] or [1, 1, h, w] (NCHW), got {v!r}")


def pads(v: Any) -> list[int]:
    """GE's pads [top, bottom, left, right] (or an int, or [h, w]) -> ONNX's [top, left, bottom, right]."""
    values = ints(v)
    if len(values) == 1:
        return values * 4
    if len(values) == 2:
        return values * 2
    if len(values) == 4:
        top, bottom, left, right = values
        return [top, left, bottom, right]
    raise AttrError(f"expects an int, [h, w] or [top, bottom, left, right], got {v!r}")


_PADDING_MODES = {"SAME": "SAME_UPPER", "VALID": "VALID", "CALCULATED": "NOTSET"}


def padding_mode(v: Any) -> str:
    """GE's padding / padding_mode: SAME (extra padding at the end, as TF), VALID, CALCULATED (the pads)."""
    mode = _PADDING_MODES.get(str(v).upper()) if isinstance(v, str) else None
    if mode is None:
        raise AttrError(f"expects one of {', '.join(_PADDING_MODES)}, got {v!r}")
    return mode


def nchw(v: Any) -> None:
    """data_format: a ge graph's images are NCHW (storage formats are the layout passes' business)."""
    if v not in ("NCHW", "ND"):
        raise AttrError(f"only NCHW is supported (a ge graph is NCHW; layout passes choose storage), got {v!r}")


def one_axis(v: Any) -> int:
    """SoftmaxV2's `axes` (one axis, as a list or an int) -> ge's axis."""
    values = ints(v)
    if len(values) != 1:
        raise AttrError(f"expects one axis, got {v!r}")
    return values[0]


def gelu_approximation(v: Any) -> str:
    if v not in ("none", "tanh"):
        raise AttrError(f"expects 'none' or 'tanh', got {v!r}")
    return str(v)


def false_only(v: Any) -> None:
    """A GE option the ge op has no form of: accepted only when off."""
    if flag(v):
        raise AttrError("only false is supported (the ge op has no such option)")


def int64_only(v: Any) -> None:
    if dtype_code(v) != _ONNX_CODE[np.dtype(np.int64)]:
        raise AttrError(f"only int64 (DT_INT64, 9) is supported (ge.shape yields int64), got {v!r}")


def zero_only(v: Any) -> None:
    if integer(v) != 0:
        raise AttrError(f"only 0 is supported (the ge op has no such option), got {v!r}")


# GE's DataType enum (graph/types.h) for the dtypes ge has.
GE_DATA_TYPES: dict[int, np.dtype] = {
    0: np.dtype(np.float32),
    1: np.dtype(np.float16),
    2: np.dtype(np.int8),
    3: np.dtype(np.int32),
    4: np.dtype(np.uint8),
    6: np.dtype(np.int16),
    7: np.dtype(np.uint16),
    8: np.dtype(np.uint32),
    9: np.dtype(np.int64),
    10: np.dtype(np.uint64),
    11: np.dtype(np.float64),
    12: np.dtype(np.bool_),
    27: ONNX_DTYPES[16],  # DT_BF16
}
_ONNX_CODE = {dtype: code for code, dtype in ONNX_DTYPES.items()}


def dtype_code(v: Any) -> int:
    """Cast's dst_type: GE's DataType number or a dtype name ("float16") -> ONNX's TensorProto code."""
    dtype: np.dtype | None = None
    if _is_int(v):
        dtype = GE_DATA_TYPES.get(int(v))
    elif isinstance(v, str | type | np.dtype):  # np.dtype(None) would be float64
        with contextlib.suppress(TypeError, ValueError):
            dtype = np.dtype(v)
    if dtype is None or dtype not in _ONNX_CODE:
        raise AttrError(f"expects a GE DataType number or a dtype name such as 'float16', got {v!r}")
    return _ONNX_CODE[dtype]


# -- the table ---------------------------------------------------------------------------------


Dims = list[int | None]


@dataclass(frozen=True)
class Initial:
    """The value a framework starts a parameter input at (a BatchNorm's scale 1, offset 0, mean 0,
    variance 1): `Graph.op` creates the input as a constant filled with `value`, in the first
    input's dtype, when the caller does not give it. `dims` gives its shape from the first input's
    dims and the op's properties (`prop(name)`, the ge op's defaults filled in), or raises
    `AttrError` with the reason it cannot (a dim that is not known)."""

    value: float
    dims: Callable[[Dims, Callable[[str], Any]], list[int]]

    def describe(self) -> str:
        return f"{self.value:g}"


def per_channel(x: Dims, prop: Callable[[str], Any]) -> list[int]:
    """One value per channel (dim 1 of an N, C, ... input): BatchNorm's scale, offset and statistics."""
    channels = x[1] if len(x) >= 2 else None
    if channels is None:
        raise AttrError(f"needs the channel dim (dim 1) of x, which has dims {_dims(x)}")
    return [channels]


def normalized(x: Dims, prop: Callable[[str], Any]) -> list[int]:
    """The normalized dims (begin_norm_axis on): LayerNorm's gamma and beta."""
    axis = prop("axis")
    if not x or not -len(x) <= axis < len(x):
        raise AttrError(f"needs begin_norm_axis {axis} to be a dim of x, which has dims {_dims(x)}")
    dims = [d for d in x[axis:] if d is not None]
    if len(dims) != len(x[axis:]):
        raise AttrError(f"needs the normalized dims of x (from dim {axis}), which has dims {_dims(x)}")
    return dims


def _dims(x: Dims) -> str:
    return "[" + ", ".join("?" if d is None else str(d) for d in x) + "]"


@dataclass(frozen=True)
class Input:
    """One of GE's inputs: the ge operand it becomes, or with `constant` the ge property its
    (constant) value sets after that conversion. With `initial`, a parameter a framework creates:
    left out, it is created (an `optional` one only when not passed at all; `None` skips it)."""

    name: str
    operand: str
    optional: bool = False
    variadic: bool = False
    constant: Callable[[Any], Any] | None = None
    initial: Initial | None = None

    @property
    def required(self) -> bool:
        """Whether the caller must give it: neither optional nor created when left out."""
        return not self.optional and self.initial is None


@dataclass(frozen=True)
class Attr:
    """One of GE's attributes: the ge property it sets (None: checked only) after `convert`, or
    with `operand` a constant operand of that name (ReduceMeanD's axes are ge's axes operand)."""

    prop: str | None
    convert: Callable[[Any], Any] = integer
    operand: bool = False


@dataclass(frozen=True)
class OpType:
    name: str
    onnx: str
    """The ONNX operator: its ge op (ONNX_TO_GE) is this GE type's."""
    inputs: tuple[Input, ...]
    attrs: Mapping[str, Attr] = field(default_factory=dict)
    defaults: Mapping[str, Any] = field(default_factory=dict)
    """GE's defaults where they differ from the ge op's (applied when the caller gives none)."""
    required: tuple[str, ...] = ()
    fixed: Mapping[str, Any] = field(default_factory=dict)
    """ge properties GE's operator always has (its Gelu is the tanh form)."""
    results: str | None = None
    """The ge property that gives the result count (Split's num_outputs); else the op's own count."""

    @property
    def op_class(self) -> type[ge.GeOp]:
        op = ge_op_for(self.onnx)
        if op is None:
            raise LookupError(f"GE type {self.name}: ONNX operator {self.onnx} has no ge op")
        return op


def _in(*names: str) -> tuple[Input, ...]:
    """Required inputs, `GE name:ge operand` each."""
    pairs = (n.split(":") for n in names)
    return tuple(Input(name, operand) for name, operand in pairs)


def _opt(name: str, operand: str) -> Input:
    return Input(name, operand, optional=True)


def _param(name: str, operand: str, value: float, dims: Callable[[Dims, Callable[[str], Any]], list[int]]) -> Input:
    """A parameter input created at `value` when left out (`Initial`)."""
    return Input(name, operand, initial=Initial(value, dims))


_UNARY = _in("x:x")
_BINARY = _in("x1:a", "x2:b")
_DATA_FORMAT = {"data_format": Attr(None, nchw)}
_CONV = {
    "strides": Attr("strides", spatial),
    "stride": Attr("strides", spatial),
    "pads": Attr("pads", pads),
    "dilations": Attr("dilations", spatial),
    "groups": Attr("group", integer),
    "padding": Attr("auto_pad", padding_mode),
    "offset_x": Attr(None, zero_only),
    **_DATA_FORMAT,
}
_POOL = {"ksize": Attr("kernel_shape", spatial), "strides": Attr("strides", spatial), **_DATA_FORMAT}
_POOL_TF = {**_POOL, "padding": Attr("auto_pad", padding_mode)}
_POOL_V3 = {
    **_POOL,
    "padding_mode": Attr("auto_pad", padding_mode),
    "pads": Attr("pads", pads),
    "ceil_mode": Attr("ceil_mode", flag),
    "global_pooling": Attr(None, false_only),
}
_REDUCE = {"keep_dims": Attr("keepdims", flag)}
_KEEP_DIMS_FALSE = {"keep_dims": False}


def _types() -> list[OpType]:
    t = OpType
    return [
        # elementwise
        t("Add", "Add", _BINARY),
        t("AddV2", "Add", _BINARY),
        t("Sub", "Sub", _BINARY),
        t("Mul", "Mul", _BINARY),
        t("RealDiv", "Div", _BINARY),
        t("Div", "Div", _BINARY),
        t("Pow", "Pow", _BINARY),
        t("Equal", "Equal", _BINARY),
        t("Relu", "Relu", _UNARY),
        t("Sqrt", "Sqrt", _UNARY),
        t("Erf", "Erf", _UNARY),
        t("Tanh", "Tanh", _UNARY),
        t("Sigmoid", "Sigmoid", _UNARY),
        t("HardSwish", "HardSwish", _UNARY),
        t("Identity", "Identity", _UNARY),
        t("Exp", "Exp", _UNARY),
        t("Log", "Log", _UNARY),
        # CANN's Gelu computes the tanh approximation; GeluV2 chooses (approximate="none" is erf's form)
        t("Gelu", "Gelu", _UNARY, fixed={"approximate": "tanh"}),
        t("GeluV2", "Gelu", _UNARY, {"approximate": Attr("approximate", gelu_approximation)}, {"approximate": "none"}),
        t("ClipByValue", "Clip", _in("x:input", "clip_value_min:min", "clip_value_max:max")),
        # convolution, pooling, normalization
        t("Conv2D", "Conv", (*_in("x:X", "filter:W"), _opt("bias", "B")), _CONV),
        t("MaxPool", "MaxPool", _in("x:X"), _POOL_TF, required=("ksize",)),
        t("MaxPoolV3", "MaxPool", _in("x:X"), _POOL_V3, required=("ksize",)),
        t("AvgPool", "AveragePool", _in("x:X"), _POOL_TF, required=("ksize",)),
        t(
            "AvgPoolV2",
            "AveragePool",
            _in("x:X"),
            {
                **_POOL_V3,
                "exclusive": Attr("count_include_pad", inverted_flag),
                "divisor_override": Attr(None, zero_only),
            },
            required=("ksize",),
        ),
        t("GlobalAveragePool", "GlobalAveragePool", _in("x:X")),
        t(
            "BatchNorm",
            "BatchNormalization",
            # torch's BatchNorm2d starts at weight 1, bias 0, running mean 0, running var 1
            (
                Input("x", "X"),
                _param("scale", "scale", 1.0, per_channel),
                _param("offset", "B", 0.0, per_channel),
                _param("mean", "input_mean", 0.0, per_channel),
                _param("variance", "input_var", 1.0, per_channel),
            ),
            {"epsilon": Attr("epsilon", number), "is_training": Attr("training_mode", flag), **_DATA_FORMAT},
        ),
        t(
            "LayerNorm",
            "LayerNormalization",
            # torch's LayerNorm starts at weight 1, bias 0; beta=None leaves the bias out
            (
                Input("x", "X"),
                _param("gamma", "Scale", 1.0, normalized),
                Input("beta", "B", optional=True, initial=Initial(0.0, normalized)),
            ),
            # begin_params_axis says where gamma's dims start; gamma's own shape says the same
            {"begin_norm_axis": Attr("axis"), "begin_params_axis": Attr(None), "epsilon": Attr("epsilon", number)},
        ),
        t("SoftmaxV2", "Softmax", _in("x:input"), {"axes": Attr("axis", one_axis)}),
        t("Softmax", "Softmax", _in("x:input"), {"axes": Attr("axis", one_axis), "axis": Attr("axis")}),
        # matrix products
        t(
            "MatMul",
            "MatMul",
            _in("x1:A", "x2:B"),
            {"transpose_x1": Attr(None, false_only), "transpose_x2": Attr(None, false_only)},
        ),
        t(
            "MatMulV2",
            "MatMul",
            _in("x1:A", "x2:B"),
            {
                "transpose_x1": Attr(None, false_only),
                "transpose_x2": Attr(None, false_only),
                "offset_x": Attr(None, zero_only),
            },
        ),
        t(
            "BatchMatMul",
            "MatMul",
            _in("x1:A", "x2:B"),
            {"adj_x1": Attr(None, false_only), "adj_x2": Attr(None, false_only)},
        ),
        t(
            "BatchMatMulV2",
            "MatMul",
            _in("x1:A", "x2:B"),
            {"adj_x1": Attr(None, false_only), "adj_x2": Attr(None, false_only)},
        ),
        t(
            "GemmV2",
            "Gemm",
            # GE's alpha and beta are constant inputs; ge keeps them as properties
            (
                *_in("a:A", "b:B"),
                Input("alpha", "alpha", optional=True, constant=number),
                Input("beta", "beta", optional=True, constant=number),
                _opt("c", "C"),
            ),
            {"transpose_a": Attr("transA", flag), "transpose_b": Attr("transB", flag)},
        ),
        # data movement
        t("Reshape", "Reshape", _in("x:data", "shape:shape")),
        t("Transpose", "Transpose", (Input("x", "data"), Input("perm", "perm", constant=ints))),
        t("TransposeD", "Transpose", _in("x:data"), {"perm": Attr("perm", ints)}),
        t("Flatten", "Flatten", _in("x:input"), {"axis": Attr("axis")}),
        t("ConcatD", "Concat", (Input("x", "inputs", variadic=True),), {"concat_dim": Attr("axis"), "N": Attr(None)}),
        t(
            "Concat",
            "Concat",
            (Input("concat_dim", "axis", constant=integer), Input("x", "inputs", variadic=True)),
            {"N": Attr(None)},
        ),
        t(
            "SplitD",
            "Split",
            _in("x:input"),
            {"split_dim": Attr("axis"), "num_split": Attr("num_outputs")},
            required=("num_split",),
            results="num_outputs",
        ),
        t("GatherV2", "Gather", (*_in("x:data", "indices:indices"), Input("axis", "axis", constant=integer))),
        t("Gather", "Gather", _in("x:data", "indices:indices")),
        t("Unsqueeze", "Unsqueeze", _in("x:data"), {"axes": Attr("axes", ints, operand=True)}, required=("axes",)),
        t("Squeeze", "Squeeze", _in("x:data"), {"axis": Attr("axes", ints, operand=True)}),
        t("ReduceMean", "ReduceMean", _in("x:data", "axes:axes"), _REDUCE, _KEEP_DIMS_FALSE),
        t(
            "ReduceMeanD",
            "ReduceMean",
            _in("x:data"),
            {**_REDUCE, "axes": Attr("axes", ints, operand=True)},
            _KEEP_DIMS_FALSE,
            ("axes",),
        ),
        t("ReduceSum", "ReduceSum", _in("x:data", "axes:axes"), _REDUCE, _KEEP_DIMS_FALSE),
        t(
            "ReduceSumD",
            "ReduceSum",
            _in("x:data"),
            {**_REDUCE, "axes": Attr("axes", ints, operand=True)},
            _KEEP_DIMS_FALSE,
            ("axes",),
        ),
        t("Cast", "Cast", _in("x:input"), {"dst_type": Attr("to", dtype_code)}, required=("dst_type",)),
        t("SelectV2", "Where", _in("condition:condition", "then:X", "else:Y")),
        t("Select", "Where", _in("condition:condition", "x1:X", "x2:Y")),
        t("Expand", "Expand", _in("x:input", "shape:shape")),
        # GE's Shape yields DT_INT32 by default; ge.shape yields int64 (ONNX's), so only 9 (DT_INT64) is accepted
        t("Shape", "Shape", _in("x:data"), {"dtype": Attr(None, int64_only)}),
        t("Range", "Range", _in("start:start", "limit:limit", "delta:delta")),
    ]


OP_TYPES: dict[str, OpType] = {t.name: t for t in _types()}
"""GE type name -> entry, in table order (the first entry of a ge op is its canonical type)."""

NODE_TYPES: dict[str, str] = {"ge.constant": "Const", "ge.variable": "Variable", "ge.trans_data": "TransData"}
"""GE's type names of ge ops the builder makes through their own calls (`Graph.const`) or that only
passes make: `Node.type` shows them, `Graph.op` does not build them."""


@cache
def _canonical() -> dict[str, str]:
    names: dict[str, str] = dict(NODE_TYPES)
    for entry in OP_TYPES.values():
        names.setdefault(entry.op_class.name, entry.name)
    return names


def type_of(op_name: str) -> str | None:
    """The canonical GE type of a ge op ("ge.conv" -> "Conv2D"), or None when GE has none here."""
    return _canonical().get(op_name)


def ge_op_name(type_name: str) -> str | None:
    """The ge op a GE type (canonical or alias) builds ("SoftmaxV2" and "Softmax" -> "ge.softmax");
    how FusionPattern-style code should compare a node with a GE type name."""
    entry = OP_TYPES.get(type_name)
    if entry is not None:
        return entry.op_class.name
    return next((op for op, name in NODE_TYPES.items() if name == type_name), None)


def aliases(op_name: str) -> list[str]:
    """Every GE type that builds the ge op `op_name`, canonical first."""
    names = [t.name for t in OP_TYPES.values() if t.op_class.name == op_name]
    return names or [name for op, name in NODE_TYPES.items() if op == op_name]
