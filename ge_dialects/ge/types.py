"""Tensor types and attributes of the ge dialect.

A ge tensor is a builtin `tensor<...>` whose encoding is a `#ge.fmt<origin[, storage]>` attribute,
the way MLIR's sparse tensors carry their encoding. GE keeps two formats per tensor: the origin
format (what the model means, e.g. NCHW) and the storage format (how the device lays the bytes out,
e.g. NC1HWC0). A tensor without an encoding is ND in both.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    Float4E2M1FNType,
    Float8E4M3FNType,
    Float8E4M3FNUZType,
    Float8E5M2FNUZType,
    Float8E5M2Type,
    Float8E8M0FNUType,
    IntegerType,
    NoneAttr,
    Signedness,
    StringAttr,
    TensorType,
    bf16,
    f16,
    f32,
    f64,
    i1,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute, ParametrizedAttribute, SSAValue
from xdsl.irdl import irdl_attr_definition, param_def
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from ge.ge_dialects.ge.symbolic import SymbolicType, Undecided

ui8 = IntegerType(8, Signedness.UNSIGNED)
ui16 = IntegerType(16, Signedness.UNSIGNED)
ui32 = IntegerType(32, Signedness.UNSIGNED)
ui64 = IntegerType(64, Signedness.UNSIGNED)

# ONNX's narrow storage formats: float8 (OCP E4M3FN and E5M2, the FNUZ variants without negative zero
# or infinities, E8M0 scales of the MX formats), float4 E2M1, and 4- and 2-bit integers. They are
# xDSL's builtin types (`f8E4M3FN`, `i4`, ...); numpy holds them as ml_dtypes' one-byte dtypes.
f8E4M3FN = Float8E4M3FNType()
f8E4M3FNUZ = Float8E4M3FNUZType()
f8E5M2 = Float8E5M2Type()
f8E5M2FNUZ = Float8E5M2FNUZType()
f8E8M0FNU = Float8E8M0FNUType()
f4E2M1FN = Float4E2M1FNType()
i4 = IntegerType(4)
ui4 = IntegerType(4, Signedness.UNSIGNED)
i2 = IntegerType(2)
ui2 = IntegerType(2, Signedness.UNSIGNED)

#: Element types a ge tensor may hold, by their IR spelling.
ELEMENT_TYPES: dict[str, Attribute] = {
    "f32": f32,
    "f16": f16,
    "bf16": bf16,
    "f64": f64,
    "i64": i64,
    "i32": i32,
    "i16": i16,
    "i8": i8,
    "ui8": ui8,
    "ui16": ui16,
    "ui32": ui32,
    "ui64": ui64,
    "i1": i1,
    "f8E4M3FN": f8E4M3FN,
    "f8E4M3FNUZ": f8E4M3FNUZ,
    "f8E5M2": f8E5M2,
    "f8E5M2FNUZ": f8E5M2FNUZ,
    "f8E8M0FNU": f8E8M0FNU,
    "f4E2M1FN": f4E2M1FN,
    "i4": i4,
    "ui4": ui4,
    "i2": i2,
    "ui2": ui2,
}

_NUMPY_OF: dict[Attribute, np.dtype] = {
    f32: np.dtype(np.float32),
    f16: np.dtype(np.float16),
    bf16: np.dtype(ml_dtypes.bfloat16),
    f64: np.dtype(np.float64),
    i64: np.dtype(np.int64),
    i32: np.dtype(np.int32),
    i16: np.dtype(np.int16),
    i8: np.dtype(np.int8),
    ui8: np.dtype(np.uint8),
    ui16: np.dtype(np.uint16),
    ui32: np.dtype(np.uint32),
    ui64: np.dtype(np.uint64),
    i1: np.dtype(np.bool_),
    f8E4M3FN: np.dtype(ml_dtypes.float8_e4m3fn),
    f8E4M3FNUZ: np.dtype(ml_dtypes.float8_e4m3fnuz),
    f8E5M2: np.dtype(ml_dtypes.float8_e5m2),
    f8E5M2FNUZ: np.dtype(ml_dtypes.float8_e5m2fnuz),
    f8E8M0FNU: np.dtype(ml_dtypes.float8_e8m0fnu),
    f4E2M1FN: np.dtype(ml_dtypes.float4_e2m1fn),
    i4: np.dtype(ml_dtypes.int4),
    ui4: np.dtype(ml_dtypes.uint4),
    i2: np.dtype(ml_dtypes.int2),
    ui2: np.dtype(ml_dtypes.uint2),
}
_ELEMENT_OF: dict[np.dtype, Attribute] = {v: k for k, v in _NUMPY_OF.items()}

FLOAT_TYPES = (f32, f16, bf16, f64)
SIGNED_INT_TYPES = (i64, i32, i16, i8)
UNSIGNED_INT_TYPES = (ui8, ui16, ui32, ui64)
INT_TYPES = SIGNED_INT_TYPES + UNSIGNED_INT_TYPES
NUMERIC_TYPES = FLOAT_TYPES + INT_TYPES
ALL_TYPES = NUMERIC_TYPES + (i1,)

#: The narrow storage types. ge holds and converts them (ge.cast, ge.constant, and ops that only move
#: data) but computes nothing in them: they are in none of the groups above, so an op that checks its
#: operands' element types against a group refuses them.
FLOAT8_TYPES = (f8E4M3FN, f8E4M3FNUZ, f8E5M2, f8E5M2FNUZ)
NARROW_FLOAT_TYPES = FLOAT8_TYPES + (f8E8M0FNU, f4E2M1FN)
NARROW_INT_TYPES = (i4, ui4, i2, ui2)
NARROW_TYPES = NARROW_FLOAT_TYPES + NARROW_INT_TYPES

#: GE's data formats (origin and storage). Ranks a format implies, where it implies one.
FORMATS: dict[str, int | None] = {
    "ND": None,
    "NCHW": 4,
    "NHWC": 4,
    "NC1HWC0": 5,
    "FRACTAL_Z": 4,
    "FRACTAL_NZ": None,
}


def numpy_dtype(element_type: Attribute) -> np.dtype:
    try:
        return _NUMPY_OF[element_type]
    except KeyError:
        raise VerifyException(f"element type {element_type} is not a ge element type") from None


def element_type_of(dtype: np.dtype | type) -> Attribute:
    dtype = np.dtype(dtype)
    try:
        return _ELEMENT_OF[dtype]
    except KeyError:
        raise VerifyException(f"numpy dtype {dtype} has no ge element type") from None


def is_float(element_type: Attribute) -> bool:
    return isinstance(element_type, AnyFloat)


def type_name(element_type: Attribute) -> str:
    for name, t in ELEMENT_TYPES.items():
        if t == element_type:
            return name
    return str(element_type)


Shape = tuple[int | None, ...]
"""A logical shape as the shape functions see it: `None` marks an unknown (`?`) dimension."""


_TENSOR_TYPES: dict[tuple[Any, ...], TensorType] = {}
"""Tensor types built so far (types are immutable; building one and checking its parameters cost
more than every shape function of an elementwise op). Forgotten all at once past 100,000."""


def tensor(element_type: Attribute, shape: Sequence[int | None], fmt: FormatAttr | None = None) -> TensorType:
    """Builds a ge tensor type; `None` dims print as `?`. A shape function run on symbolic dims
    (passes/symbolic_shapes.py) gets a `SymbolicType` holding them instead."""
    try:
        dims = tuple(DYNAMIC_INDEX if d is None else int(d) for d in shape)
    except Undecided:
        return SymbolicType(element_type, tuple(shape), fmt)  # type: ignore[return-value]
    key = (element_type, dims, fmt)
    known = _TENSOR_TYPES.get(key)
    if known is None:
        known = TensorType(element_type, dims, fmt if fmt is not None else NoneAttr())
        if len(_TENSOR_TYPES) >= 100_000:
            _TENSOR_TYPES.clear()
        _TENSOR_TYPES[key] = known
    return known


def tensor_type_of(value: SSAValue) -> TensorType:
    """The tensor type of a value the ge ops and tasks declare a tensor (their verifiers check it)."""
    t = value.type
    assert isinstance(t, TensorType), f"expected a tensor value, got {t}"
    return t


def shape_of(t: TensorType) -> Shape:
    return tuple(None if d == DYNAMIC_INDEX else d for d in t.get_shape())


def elements(value) -> int:
    """Elements of an SSA value's tensor (unknown dims count as 1; 0 for a value that is no tensor)."""
    t = value.type
    if not isinstance(t, TensorType):
        return 0
    return math.prod(1 if d is None else d for d in shape_of(t))


def reduction_ratio(source, reduced) -> int:
    """How many elements of `source` make one element of `reduced` (the length of a reduced row;
    unknown and zero dims count as 1)."""
    whole = math.prod(d or 1 for d in shape_of(source.type))
    return whole // max(1, math.prod(d or 1 for d in shape_of(reduced.type)))


def format_of(t: TensorType) -> FormatAttr | None:
    return t.encoding if isinstance(t.encoding, FormatAttr) else None


ROW_MAJOR = frozenset({"ND", "NCHW"})
"""Storage formats whose array is the logical one."""


def stored_as_logical(t: TensorType) -> bool:
    """The tensor's stored array is its logical one (no storage format of its own, or a row-major one)."""
    fmt = format_of(t)
    return fmt is None or fmt.storage == fmt.origin or fmt.storage.data in ROW_MAJOR


@irdl_attr_definition
class FormatAttr(ParametrizedAttribute):
    """`#ge.fmt<NCHW>` or `#ge.fmt<NCHW, NC1HWC0>`: origin format, then storage format if it differs."""

    name = "ge.fmt"

    origin: StringAttr = param_def()  # type: ignore[assignment]  # xDSL: param_def() without a constraint is typed Attribute
    storage: StringAttr = param_def()  # type: ignore[assignment]  # xDSL: param_def() without a constraint is typed Attribute

    def __init__(self, origin: str, storage: str | None = None):
        super().__init__(StringAttr(origin), StringAttr(storage or origin))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[StringAttr, StringAttr]:
        with parser.in_angle_brackets():
            origin = parser.parse_identifier("data format")
            storage = origin
            if parser.parse_optional_punctuation(","):
                storage = parser.parse_identifier("storage format")
        return StringAttr(origin), StringAttr(storage)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(self.origin.data)
            if self.storage != self.origin:
                printer.print_string(", " + self.storage.data)

    def verify(self) -> None:
        for kind, value in (("origin", self.origin.data), ("storage", self.storage.data)):
            if value not in FORMATS:
                raise VerifyException(f"unknown {kind} format '{value}'; expected one of {', '.join(FORMATS)}")


@irdl_attr_definition
class WeightRefAttr(ParametrizedAttribute):
    """`#ge.weight<"key">`: a constant's value lives in the module's weights sidecar under `key`."""

    name = "ge.weight"

    key: StringAttr = param_def()  # type: ignore[assignment]  # xDSL: param_def() without a constraint is typed Attribute

    def __init__(self, key: str):
        super().__init__(StringAttr(key))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[StringAttr]:
        with parser.in_angle_brackets():
            return (StringAttr(parser.parse_str_literal("weight key")),)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string_literal(self.key.data)

    def verify(self) -> None:
        if not self.key.data:
            raise VerifyException("weight key must not be empty")
