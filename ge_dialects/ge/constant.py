"""`ge.constant`: a tensor value known at compile time.

Small values stay inline as a builtin `dense<...>` attribute; large ones (weights) live in the
module's weights sidecar and are referenced by key:

    %s = ge.constant dense<[1, 128, 12, 64]> : tensor<4xi64>
    %w = ge.constant #ge.weight<"conv1.weight"> : tensor<64x3x7x7xf32>
"""

from __future__ import annotations

from typing import ClassVar

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import BytesAttr, DenseIntOrFPElementsAttr, TensorType
from xdsl.ir import Attribute
from xdsl.irdl import BaseAttr, irdl_op_definition, prop_def, result_def, traits_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import ConstantLike, Pure
from xdsl.utils.exceptions import VerifyException

from ge.ge_dialects.ge.base import GeOp, describe, name_loc
from ge.ge_dialects.ge.dense_text import has_dense_elements, parse_dense_body, print_dense
from ge.ge_dialects.ge.facts import Engine, RunsOn
from ge.ge_dialects.ge.types import WeightRefAttr, element_type_of, numpy_dtype, shape_of, tensor


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

    value = prop_def(BaseAttr(DenseIntOrFPElementsAttr) | BaseAttr(WeightRefAttr))
    output = result_def(TensorType)

    traits = traits_def(Pure(), ConstantLike(), RunsOn(Engine.NONE))

    INLINE_LIMIT: ClassVar[int] = 32
    """Importers keep constants with at most this many elements inline; larger ones go to the sidecar."""

    @staticmethod
    def inline(array: np.ndarray, name: str | None = None) -> ConstantOp:
        op = ConstantOp.build(
            properties={"value": dense_from_numpy(array)},
            result_types=[tensor(element_type_of(array.dtype), array.shape)],
        )
        if name:
            op.location = name_loc(name)
        return op

    @staticmethod
    def weight(key: str, result_type: TensorType, name: str | None = None) -> ConstantOp:
        op = ConstantOp.build(properties={"value": WeightRefAttr(key)}, result_types=[result_type])
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

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        value = self.value
        if isinstance(value, DenseIntOrFPElementsAttr):
            print_dense(printer, value)  # bit-exact, unlike xDSL's (NaN, -0.0, f32 digits)
        else:
            printer.print_attribute(value)
        printer.print_string(" : ")
        printer.print_attribute(self.output.type)

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
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
        return cls.build(properties={"value": value}, result_types=[result_type])
