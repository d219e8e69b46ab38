"""`ge.constant`: a tensor value known at compile time.

Small values stay inline as a builtin `dense<...>` attribute; large ones (weights) live in the
module's weights sidecar and are referenced by key:

    %s = ge.constant dense<[1, 128, 12, 64]> : tensor<4xi64>
    %w = ge.constant #ge.weight<"conv1.weight"> : tensor<64x3x7x7xf32>

Where the value is stored says nothing about what it is. A constant that holds a trainable
parameter (an ONNX initializer, a `Graph.const`) says so with the `parameter` property, the
parameter's key: `autodiff` differentiates exactly these constants (gradient `<key>_grad`) and
`apply-optimizer` turns them into `ge.variable "<key>"`. A sidecar parameter is keyed by its
weight key; an inline one names its key:

    %w = ge.constant parameter #ge.weight<"fc.weight"> : tensor<10x128xf32>
    %b = ge.constant parameter<"fc.bias"> dense<0.000000e+00> : tensor<10xf32>

Constants without it (ONNX Constant nodes, folded values, the backward's seeds) are literals.
"""

from __future__ import annotations

from typing import ClassVar

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import BytesAttr, DenseIntOrFPElementsAttr, StringAttr, TensorType
from xdsl.ir import Attribute
from xdsl.irdl import BaseAttr, irdl_op_definition, opt_prop_def, prop_def, result_def, traits_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import ConstantLike, Pure
from xdsl.utils.exceptions import VerifyException

from ge.ge_dialects.ge.base import GeOp, describe, name_loc
from ge.ge_dialects.ge.dense_text import has_dense_elements, parse_dense_body, print_dense
from ge.ge_dialects.ge.facts import Engine, RunsOn
from ge.ge_dialects.ge.types import WeightRefAttr, element_type_of, is_float, numpy_dtype, shape_of, tensor


def dense_from_numpy(array: np.ndarray) -> DenseIntOrFPElementsAttr:
    array = np.require(array, requirements="C")  # keeps 0-d arrays 0-d
    t = tensor(element_type_of(array.dtype), array.shape)
    assert has_dense_elements(t), "every ge element type is a number type"
    if array.dtype in (ml_dtypes.int4, ml_dtypes.int2):  # ml_dtypes keeps the bare low bits in
        array = array.astype(np.int8)  # each byte; the attribute wants them sign-extended
    return DenseIntOrFPElementsAttr(t, BytesAttr(array.tobytes()))


def numpy_from_dense(attr: DenseIntOrFPElementsAttr) -> np.ndarray:
    dtype = numpy_dtype(attr.get_element_type())
    shape = attr.get_shape()
    if dtype in (ml_dtypes.int4, ml_dtypes.int2):  # stored sign-extended, one per byte
        data = np.frombuffer(attr.data.data, dtype=np.int8).astype(dtype)
    else:
        data = np.frombuffer(attr.data.data, dtype=dtype)
    if data.size == 1 and int(np.prod(shape)) != 1:  # a splat
        return np.full(shape, data[0], dtype=dtype)
    return data.reshape(shape)


@irdl_op_definition
class ConstantOp(GeOp):
    name = "ge.constant"
    NO_GRADIENT: ClassVar = "no operands"
    PRECISION: ClassVar = "keep"

    value = prop_def(BaseAttr(DenseIntOrFPElementsAttr) | BaseAttr(WeightRefAttr))
    parameter = opt_prop_def(StringAttr)
    """The key of the trainable parameter this constant holds (a sidecar one's is its weight key)."""
    output = result_def(TensorType)

    traits = traits_def(Pure(), ConstantLike(), RunsOn(Engine.NONE))

    INLINE_LIMIT: ClassVar[int] = 32
    """Importers keep constants with at most this many elements inline; larger ones go to the sidecar."""

    @staticmethod
    def inline(array: np.ndarray, name: str | None = None, parameter: str | None = None) -> ConstantOp:
        """An inline constant; with `parameter`, the trainable parameter of that key."""
        properties: dict[str, Attribute] = {"value": dense_from_numpy(array)}
        if parameter is not None:
            properties["parameter"] = StringAttr(parameter)
        op = ConstantOp.build(properties=properties, result_types=[tensor(element_type_of(array.dtype), array.shape)])
        if name:
            op.location = name_loc(name)
        return op

    @staticmethod
    def weight(key: str, result_type: TensorType, name: str | None = None, parameter: bool = False) -> ConstantOp:
        """A constant of sidecar weight `key`; with `parameter`, the trainable parameter `key`."""
        properties: dict[str, Attribute] = {"value": WeightRefAttr(key)}
        if parameter:
            properties["parameter"] = StringAttr(key)
        op = ConstantOp.build(properties=properties, result_types=[result_type])
        if name:
            op.location = name_loc(name)
        return op

    def inline_value(self) -> np.ndarray | None:
        """The value, when it is inline (sidecar weights are loaded by the interpreter)."""
        value = self.value
        if isinstance(value, DenseIntOrFPElementsAttr):
            return numpy_from_dense(value)
        return None

    @property
    def weight_key(self) -> str | None:
        return self.value.key.data if isinstance(self.value, WeightRefAttr) else None

    @property
    def parameter_key(self) -> str | None:
        """The key of the trainable parameter this constant holds, or None for a literal."""
        return self.parameter.data if self.parameter is not None else None

    def verify_(self) -> None:
        t = self.output.type
        if not isinstance(t, TensorType):
            raise VerifyException(f"{describe(self)}: result must be a tensor, got {t}")
        numpy_dtype(t.element_type)
        value = self.value
        if isinstance(value, DenseIntOrFPElementsAttr):
            if value.get_element_type() != t.element_type or tuple(value.get_shape()) != shape_of(t):
                raise VerifyException(f"{describe(self)}: value of type {value.type} does not match result type {t}")
        elif any(d is None for d in shape_of(t)):
            raise VerifyException(f"{describe(self)}: a weight constant must have a static shape, got {t}")
        key = self.parameter_key
        if key is not None:
            if not key:
                raise VerifyException(f"{describe(self)}: the parameter key is empty")
            if not is_float(t.element_type):
                raise VerifyException(f"{describe(self)}: parameter '{key}' must be a float tensor, got {t}")
            if self.weight_key is not None and key != self.weight_key:
                raise VerifyException(
                    f"{describe(self)}: parameter '{key}' is stored as weight '{self.weight_key}'; "
                    "a sidecar parameter is keyed by its weight key"
                )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        value = self.value
        key = self.parameter_key
        if key is not None:
            printer.print_string("parameter")
            if not isinstance(value, WeightRefAttr) or key != value.key.data:
                with printer.in_angle_brackets():
                    printer.print_string_literal(key)
            printer.print_string(" ")
        if isinstance(value, DenseIntOrFPElementsAttr):
            print_dense(printer, value)  # bit-exact, unlike xDSL's (NaN, -0.0, f32 digits)
        else:
            printer.print_attribute(value)
        printer.print_string(" : ")
        printer.print_attribute(self.output.type)

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        pos = parser.pos
        parameter: str | None = None
        marked = parser.parse_optional_keyword("parameter") is not None
        if marked and parser.parse_optional_punctuation("<") is not None:
            parameter = parser.parse_str_literal("parameter key")
            parser.parse_punctuation(">")
        pos = parser.pos
        value: Attribute | None
        if parser.parse_optional_keyword("dense") is not None:  # `dense<...> : type`, bit-exact
            value = parse_dense_body(parser)
            if value is None:  # not a ge element type: xDSL reads it, the verifier refuses it
                value = parser.parse_dense_int_or_fp_elements_attr(None)
        else:
            value = parser.parse_attribute()
        if isinstance(value, DenseIntOrFPElementsAttr):
            result_type: Attribute = tensor(value.get_element_type(), value.get_shape())
        elif isinstance(value, WeightRefAttr):
            parser.parse_punctuation(":")
            result_type = parser.parse_type()
        else:
            parser.raise_error('ge.constant expects dense<...> or #ge.weight<"key">', pos, parser.pos)
        properties: dict[str, Attribute] = {"value": value}
        if marked and parameter is None:
            if not isinstance(value, WeightRefAttr):
                parser.raise_error('an inline parameter names its key: ge.constant parameter<"key"> dense<...>', pos)
            parameter = value.key.data
        if parameter is not None:
            properties["parameter"] = StringAttr(parameter)
        return cls.build(properties=properties, result_types=[result_type])
