"""Bit-exact text for `dense<...>` constants: every value prints so that it reads back to the same bits.

xDSL prints NaN and infinities as their bit patterns (`0x7fc00000`) but reads a hex literal back as
the integer 2143289344, prints finite values with too few digits for some f32/f64 values, treats
`[0.0, -0.0]` as a splat, and expands a splat to one Python object per element when it reads one.
Here, as in MLIR:

- a hex literal in a float tensor is the element's bit pattern (NaN payloads, infinities, and any
  value at all); a decimal literal is rounded to the element type and must fit it;
- a finite float prints in decimal when the decimal reads back to the same bits (xDSL's spelling
  when that one does, else the shortest from 7 significant digits up), else as its bit pattern;
- a splat (every element has the same bits) prints, and stays in memory, as one element;
- tensors with more than `HEX_THRESHOLD` elements print as one hex string of their raw bytes;
- a literal whose tensor would hold more than `max_tensor_bytes()` bytes is refused before anything
  is allocated.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NoReturn, TypeAlias, TypeGuard

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import (
    AnyDenseElement,
    AnyFloat,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    IndexType,
    IntegerType,
    Signedness,
    TensorType,
    VectorType,
)
from xdsl.ir import Attribute
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.mlir_lexer import MLIRTokenKind

from ge.ge_dialects.ge.types import numpy_dtype, type_name
from ge.ge_dialects.limits import DEFAULT_MAX_TENSOR_BYTES, max_tensor_bytes  # noqa: F401 (re-exported)

HEX_THRESHOLD = 100
"""Non-splat constants with more elements than this print as one hex string (as xDSL and MLIR do)."""

MAX_LITERAL_DEPTH = 64
"""Deepest `[` nesting a dense literal may have (a tensor of higher rank is not a ge tensor)."""

_NARROW_INTS = {np.dtype(ml_dtypes.int4), np.dtype(ml_dtypes.int2)}
"""ml_dtypes keep the bare low bits in each byte; the attribute stores them sign-extended (int8)."""


class DenseTextError(Exception):
    """A dense literal that cannot be read; `span` is the (start, end) position it is about."""

    def __init__(self, message: str, start: int | None = None, end: int | None = None):
        super().__init__(message)
        self.start, self.end = start, end


# -- element types ---------------------------------------------------------------------------------


def storage_dtype(element_type: Attribute) -> np.dtype | None:
    """The numpy dtype whose bytes the attribute holds for one element, or None if ge has no such
    element type (then xDSL's own reading applies)."""
    if isinstance(element_type, IndexType):
        return np.dtype(np.int64)
    try:
        dtype = numpy_dtype(element_type)
    except VerifyException:
        return None
    return np.dtype(np.int8) if dtype in _NARROW_INTS else dtype


def _bits_dtype(dtype: np.dtype) -> np.dtype:
    return np.dtype(f"u{dtype.itemsize}")


def _bit_width(element_type: Attribute, dtype: np.dtype) -> int:
    if isinstance(element_type, AnyFloat):
        return element_type.bitwidth
    return dtype.itemsize * 8


def _int_range(element_type: Attribute) -> tuple[int, int]:
    """Inclusive range of integer literals; signless types take signed and unsigned spellings."""
    if isinstance(element_type, IndexType):
        return -(1 << 63), (1 << 64) - 1
    assert isinstance(element_type, IntegerType)
    width = element_type.width.data
    if element_type.signedness.data == Signedness.UNSIGNED:
        return 0, (1 << width) - 1
    if element_type.signedness.data == Signedness.SIGNED:
        return -(1 << (width - 1)), (1 << (width - 1)) - 1
    return -(1 << (width - 1)), (1 << width) - 1


# -- reading ---------------------------------------------------------------------------------------


class _Element:
    """One scalar of a literal before its element type is known."""

    __slots__ = ("negative", "text", "kind", "start", "end")

    def __init__(self, negative: bool, text: str, kind: str, start: int, end: int):
        self.negative, self.text, self.kind, self.start, self.end = negative, text, kind, start, end

    def spelled(self) -> str:
        return ("-" if self.negative else "") + self.text


def _fail(parser: AttrParser, message: str, start: int, end: int | None = None) -> NoReturn:
    parser.raise_error(message, start, end if end is not None else start + 1)


def _parse_element(parser: AttrParser) -> _Element:
    start = parser.pos
    negative = parser.parse_optional_punctuation("-") is not None
    token = parser._current_token
    if token.kind == MLIRTokenKind.INTEGER_LIT:
        kind = "hex" if token.text[:2] in ("0x", "0X") else "int"
    elif token.kind == MLIRTokenKind.FLOAT_LIT:
        kind = "float"
    elif token.kind == MLIRTokenKind.BARE_IDENT and token.text in ("true", "false") and not negative:
        kind = "bool"
    else:
        where = f"'{token.text}'" if token.text else "the end of the input"
        _fail(
            parser,
            f"expected a number, true or false in the dense literal, got {where}",
            token.span.start,
            max(token.span.end, token.span.start + 1),
        )
    parser._consume_token()
    return _Element(negative, token.text, kind, start, token.span.end)


def _parse_nested(parser: AttrParser, elements: list[_Element], depth: int) -> list[int]:
    """Reads `[...]` (the current token is `[`) into `elements`; returns the shape it spells."""
    open_pos = parser.pos
    if depth > MAX_LITERAL_DEPTH:
        _fail(
            parser, f"nesting too deep: the dense literal nests more than {MAX_LITERAL_DEPTH} levels of '['", open_pos
        )
    parser.parse_punctuation("[")
    if parser.parse_optional_punctuation("]") is not None:
        return [0]
    shapes: list[list[int]] = []
    while True:
        item_pos = parser.pos
        if parser._current_token.text == "[":
            shapes.append(_parse_nested(parser, elements, depth + 1))
        else:
            elements.append(_parse_element(parser))
            shapes.append([])
        if shapes[-1] != shapes[0]:
            _fail(
                parser,
                f"the dense literal is not rectangular: this item has shape {shapes[-1]}, the first has {shapes[0]}",
                item_pos,
                parser.pos,
            )
        if parser.parse_optional_punctuation(",") is None:
            break
    parser.parse_punctuation("]", " to close the dense literal list")
    return [len(shapes), *shapes[0]]


def _check_size(parser: AttrParser, type: TensorType | VectorType, dtype: np.dtype, where: int) -> int:
    shape = type.get_shape()
    count = math.prod(shape)
    size = count * dtype.itemsize
    if size > max_tensor_bytes():
        _fail(
            parser,
            f"{type} holds {size} bytes, more than the limit of {max_tensor_bytes()} bytes (--max-tensor-bytes)",
            where,
        )
    return count


def _float_values(
    parser: AttrParser, elements: Sequence[_Element], element_type: AnyFloat, dtype: np.dtype
) -> np.ndarray:
    bits_dtype = _bits_dtype(dtype)
    width = element_type.bitwidth
    out = np.zeros(len(elements), dtype)
    bits = out.view(bits_dtype)
    name = type_name(element_type)
    for i, e in enumerate(elements):
        if e.kind == "bool":
            _fail(parser, f"'{e.text}' is not a value of {name}", e.start, e.end)
        if e.kind == "hex":
            if e.negative:
                _fail(parser, f"a hex float literal is a bit pattern and takes no sign: {e.spelled()}", e.start, e.end)
            pattern = int(e.text, 16)
            if pattern >> width:
                _fail(parser, f"{e.text} has more than the {width} bits of {name}", e.start, e.end)
            bits[i] = pattern
            continue
        try:
            value = float(e.spelled())
        except OverflowError:
            value = math.inf
        with np.errstate(over="ignore"):  # an overflow is reported below, not warned about
            rounded = np.array(value, np.float64).astype(dtype)
        if not np.isfinite(rounded.astype(np.float64)):
            _fail(parser, f"{e.spelled()} is out of range for type {name}", e.start, e.end)
        out[i] = rounded
    return out


def _int_values(
    parser: AttrParser, elements: Sequence[_Element], element_type: Attribute, dtype: np.dtype
) -> np.ndarray:
    low, high = _int_range(element_type)
    is_bool = dtype == np.dtype(np.bool_)
    values: list[int] = []
    name = type_name(element_type)
    for e in elements:
        if e.kind == "float":
            _fail(parser, f"{e.spelled()} is not an integer; {name} holds integers", e.start, e.end)
        if e.kind == "bool":
            if not is_bool:
                _fail(parser, f"'{e.text}' is only a value of i1, not of {name}", e.start, e.end)
            values.append(int(e.text == "true"))
            continue
        value = int(e.text, 0) * (-1 if e.negative else 1)
        if is_bool:
            low, high = 0, 1
        if not low <= value <= high:
            _fail(parser, f"{e.spelled()} is out of range for type {name} ([{low}, {high}])", e.start, e.end)
        values.append(value)
    if is_bool:
        return np.array(values, np.bool_)
    width = element_type.width.data if isinstance(element_type, IntegerType) else 64
    if dtype.kind == "i":  # signless values past the signed range are their two's complement
        values = [v - (1 << width) if v >= 1 << (width - 1) else v for v in values]
    return np.array(values, dtype)


def _check_narrow_bytes(parser: AttrParser, data: np.ndarray, element_type: Attribute, where: int) -> None:
    """Raw bytes (a hex string) of the sub-byte types must hold values those types have."""
    if isinstance(element_type, IntegerType) and element_type.width.data < 8:
        width = element_type.width.data
        if width == 1:
            low, high, stored = 0, 1, data.view(np.uint8)
        elif element_type.signedness.data == Signedness.UNSIGNED:
            low, high, stored = 0, (1 << width) - 1, data
        else:  # stored sign-extended
            low, high, stored = -(1 << (width - 1)), (1 << (width - 1)) - 1, data
        if stored.size and (int(stored.min()) < low or int(stored.max()) > high):
            _fail(parser, f"the hex data holds values outside {type_name(element_type)}", where)
    elif (
        isinstance(element_type, AnyFloat)
        and element_type.bitwidth < 8
        and data.size
        and int(data.view(np.uint8).max()) >> element_type.bitwidth
    ):
        _fail(parser, f"the hex data holds bit patterns wider than {type_name(element_type)}", where)


class _Literal:
    """What stands between `dense<` and `>`: nothing, a hex string, or elements (nested or one splat)."""

    __slots__ = ("pos", "empty", "hex_text", "shape", "elements")

    def __init__(self, pos: int):
        self.pos = pos  # where the literal starts (after `<`)
        self.empty = False
        self.hex_text: str | None = None
        self.shape: list[int] | None = None  # None: a splat
        self.elements: list[_Element] = []


def _parse_literal(parser: AttrParser) -> _Literal:
    """Reads the literal after `dense<`, up to and including `>`."""
    literal = _Literal(parser.pos)
    if parser.parse_optional_punctuation(">") is not None:
        literal.empty = True
        return literal
    token = parser._current_token
    if token.kind == MLIRTokenKind.STRING_LIT:
        literal.hex_text = parser.parse_str_literal()
    elif token.text == "[":
        literal.shape = _parse_nested(parser, literal.elements, 1)
    else:
        literal.elements.append(_parse_element(parser))
    parser.parse_punctuation(">", " to close the dense literal")
    return literal


DenseType: TypeAlias = TensorType[AnyDenseElement] | VectorType[AnyDenseElement]
"""The type of a dense attribute: a tensor or vector of numbers."""


def has_dense_elements(t: TensorType | VectorType) -> TypeGuard[DenseType]:
    """Whether `t` holds numbers, as every type with a `storage_dtype` does."""
    return isinstance(t.get_element_type(), AnyDenseElement)


def parse_dense_body(parser: AttrParser, type: Attribute | None = None) -> DenseIntOrFPElementsAttr | None:
    """Reads `<...> : type` after the `dense` keyword (`: type` only when `type` is None).

    Returns None, with the parser back at `<`, when the element type is not a ge element type (the
    caller then lets xDSL read it)."""
    begin = parser.pos
    parser.parse_punctuation("<", " after 'dense'")
    literal = _parse_literal(parser)
    type_pos = parser.pos
    if type is None:
        parser.parse_punctuation(":", " and the type of the dense literal")
        type_pos = parser.pos
        type = parser.parse_type()
    if not isinstance(type, TensorType | VectorType):
        _fail(parser, f"a dense literal needs a tensor or vector type, got {type}", type_pos, parser.pos)
    dtype = storage_dtype(type.get_element_type())
    if dtype is None or not has_dense_elements(type):  # the second never holds when the first does not
        parser._resume_from(begin)
        return None
    if any(d < 0 for d in type.get_shape()):
        _fail(parser, f"a dense literal needs a static shape, got {type}", type_pos, parser.pos)
    count = _check_size(parser, type, dtype, type_pos)

    if literal.empty:
        if count != 0:
            _fail(parser, f"dense<> is empty but {type} has {count} elements", literal.pos)
        return DenseIntOrFPElementsAttr(type, BytesAttr(b""))
    if literal.hex_text is not None:
        return _hex_dense(parser, literal.hex_text, literal.pos, type, dtype, count)
    return _elements_dense(parser, literal, type, dtype, count, type_pos)


def _hex_dense(
    parser: AttrParser, text: str, where: int, type: DenseType, dtype: np.dtype, count: int
) -> DenseIntOrFPElementsAttr:
    """The attribute of a hex string literal (`text`, at `where`): the raw bytes of every element, or
    of one (a splat)."""
    if not text.startswith(("0x", "0X")):
        _fail(parser, 'a string in a dense literal must be hex data ("0x...")', where)
    try:
        raw = bytes.fromhex(text[2:])
    except ValueError:
        _fail(parser, "the hex data of the dense literal is not valid hex", where)
    if len(raw) not in (dtype.itemsize, count * dtype.itemsize):
        _fail(
            parser,
            f"the hex data holds {len(raw)} bytes; {type} needs {count * dtype.itemsize} "
            f"(or {dtype.itemsize} for a splat)",
            where,
        )
    _check_narrow_bytes(parser, np.frombuffer(raw, dtype), type.get_element_type(), where)
    return DenseIntOrFPElementsAttr(type, BytesAttr(raw))


def _elements_dense(
    parser: AttrParser, literal: _Literal, type: DenseType, dtype: np.dtype, count: int, type_pos: int
) -> DenseIntOrFPElementsAttr:
    """The attribute of a literal of elements: of the type's shape, or one element (a splat)."""
    shape, element_type = literal.shape, type.get_element_type()
    if shape is not None and list(type.get_shape()) != shape:
        _fail(
            parser,
            f"the dense literal has shape {shape} but its type {type} has shape {list(type.get_shape())}",
            literal.pos,
            type_pos,
        )
    if isinstance(element_type, AnyFloat):
        values = _float_values(parser, literal.elements, element_type, dtype)
    else:
        values = _int_values(parser, literal.elements, element_type, dtype)
    if shape is None and count == 0:
        values = values[:0]
    return DenseIntOrFPElementsAttr(type, BytesAttr(values.tobytes()))


# -- printing --------------------------------------------------------------------------------------


def _float_text(value: np.generic, dtype: np.dtype) -> str:
    """The shortest decimal (from 7 significant digits up) that reads back to `value`'s bits, or the
    bit pattern in hex."""
    as_float = float(value)
    bits = np.array(value, dtype).view(_bits_dtype(dtype))
    if math.isfinite(as_float):
        # xDSL's spellings first (7 digits, then 9 for f32 and 17 for f64), so text stays familiar
        candidates = [f"{as_float:.6e}"]
        if dtype.itemsize in (4, 8) and dtype.kind == "f":
            candidates.append(f"{as_float:.{9 if dtype.itemsize == 4 else 17}g}")
        candidates += [f"{as_float:.{digits}e}" for digits in range(7, 17)]
        for text in candidates:
            if "." in text and np.array(float(text), np.float64).astype(dtype).view(_bits_dtype(dtype)) == bits:
                return text
    return f"0x{int(bits):0{2 * dtype.itemsize}X}"


def element_texts(attr: DenseIntOrFPElementsAttr, data: np.ndarray) -> list[str]:
    element_type = attr.get_element_type()
    if data.dtype == np.dtype(np.bool_):
        return ["true" if v else "false" for v in data.tolist()]
    if isinstance(element_type, AnyFloat):
        return [_float_text(v, data.dtype) for v in data]
    return [str(v) for v in data.tolist()]


def _raw_elements(attr: DenseIntOrFPElementsAttr) -> np.ndarray | None:
    dtype = storage_dtype(attr.get_element_type())
    if dtype is None or len(attr.data.data) % dtype.itemsize:
        return None
    return np.frombuffer(attr.data.data, dtype)


def _nested(texts: list[str], shape: Sequence[int]) -> str:
    if len(shape) <= 1:
        return "[" + ", ".join(texts) + "]"
    step = len(texts) // shape[0] if shape[0] else 0
    return "[" + ", ".join(_nested(texts[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])) + "]"


def dense_text(attr: DenseIntOrFPElementsAttr) -> str | None:
    """`dense<...>` (without the type) that reads back to the same bits; None for element types ge
    does not have."""
    data = _raw_elements(attr)
    if data is None:
        return None
    shape = attr.get_shape()
    count = math.prod(shape)
    if data.size == 0:
        return "dense<>"
    bits = data.view(_bits_dtype(data.dtype))
    if data.size == 1 or bool((bits == bits[0]).all()):
        return f"dense<{element_texts(attr, data[:1])[0]}>"
    if data.size != count:  # not a tensor xDSL or we would make; keep the bytes
        return f'dense<"0x{attr.data.data.hex().upper()}">'
    if data.size > HEX_THRESHOLD:
        return f'dense<"0x{attr.data.data.hex().upper()}">'
    return f"dense<{_nested(element_texts(attr, data), shape)}>"


def print_dense(printer: Printer, attr: DenseIntOrFPElementsAttr) -> None:
    """Prints `dense<...>` without its type, bit-exact."""
    text = dense_text(attr)
    if text is None:
        attr.print_without_type(printer)
    else:
        printer.print_string(text)
