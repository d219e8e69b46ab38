"""Named dims of a graph's inputs: the symbols an exporter gives its unknown dims (ONNX's
dim_param, `batch`, `seq`), kept on `@main`'s arguments as `ge.dims = ["batch", "seq", ""]`, one
entry per dim ("" for a known one).

A type says only that a dim is unknown (`tensor<?x?xi64>`); the names say which unknown dims are
the same size: two inputs of `batch` rows must get the same number of rows. `bind` checks that
when the inputs are given and says which sizes the symbols take; `parse_sizes` reads the sizes a
user gives per symbol (`ge-run --dims batch=2,seq=64`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from xdsl.dialects.builtin import ArrayAttr, DenseArrayBase, DictionaryAttr, StringAttr, i64
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute

DIMS_ATTR = "ge.dims"
"""The argument attribute holding an input's dim names."""

RANGES_ATTR = "ge.dim_ranges"
"""The function attribute holding the range each named dim may take: `{seq = array<i64: 1, 512>}`
(`ge-optimize{dim_ranges="seq=1:512"}`); a dim not listed is at least 1, unbounded."""

SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_.:/-]*")
"""A dim name as `--dims` reads it."""


class DimsError(ValueError):
    """Sizes that contradict the graph's named dims, or a malformed `--dims`."""


def dims_attr(names: Sequence[str | None]) -> ArrayAttr:
    return ArrayAttr([StringAttr(n or "") for n in names])


def input_dims(arg_attrs: ArrayAttr | None, count: int) -> list[list[str | None]]:
    """Per input, the name of each dim (None: known, or unknown and unnamed)."""
    found: list[list[str | None]] = []
    for i in range(count):
        attrs: Attribute | None = arg_attrs.data[i] if arg_attrs is not None and i < len(arg_attrs.data) else None
        names = attrs.data.get(DIMS_ATTR) if isinstance(attrs, DictionaryAttr) else None
        if isinstance(names, ArrayAttr):
            found.append([n.data or None if isinstance(n, StringAttr) else None for n in names.data])
        else:
            found.append([])
    return found


def symbols(dims: Iterable[Sequence[str | None]]) -> list[str]:
    """The names, in the order first seen."""
    return list(dict.fromkeys(n for names in dims for n in names if n))


def bind(
    names: Sequence[str],
    dims: Sequence[Sequence[str | None]],
    shapes: Sequence[Sequence[int]],
    ranges: Mapping[str, tuple[int, int]] | None = None,
) -> dict[str, int]:
    """The size each symbol takes from the inputs' shapes (inputs named `names`); DimsError naming
    both inputs when one symbol gets two sizes, or the input when a size is outside the symbol's
    range (`ranges`, what the graph was compiled for)."""
    bound: dict[str, tuple[int, str, int]] = {}
    ranges = ranges or {}
    for name, input_names, shape in zip(names, dims, shapes):
        for axis, (symbol, size) in enumerate(zip(input_names, shape)):
            if not symbol:
                continue
            low, high = ranges.get(symbol, (0, None))
            if size < low or (high is not None and size > high):
                raise DimsError(
                    f"input '{name}' has {symbol} = {size} (dim {axis}), outside the range [{low}, {high}] "
                    "the graph was compiled for"
                )
            first = bound.setdefault(symbol, (int(size), name, axis))
            if first[0] != size:
                raise DimsError(
                    f"input '{name}' has {symbol} = {size} (dim {axis}), but input '{first[1]}' gives "
                    f"{symbol} = {first[0]} (dim {first[2]})"
                )
    return {symbol: size for symbol, (size, _, _) in bound.items()}


def parse_sizes(text: str, known: Sequence[str]) -> dict[str, int]:
    """`batch=2,seq=64` -> {"batch": 2, "seq": 64}; every name must be one of `known`."""
    sizes: dict[str, int] = {}
    for item in (part.strip() for part in text.split(",")):
        name, sep, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not SYMBOL.fullmatch(name) or not value.isdigit():
            raise DimsError(f"--dims '{item}': expected NAME=SIZE (a name and a non-negative integer)")
        if name not in known:
            listed = ", ".join(known) if known else "none"
            raise DimsError(f"--dims {name}: the graph has no dim of that name (its named dims: {listed})")
        if name in sizes:
            raise DimsError(f"--dims {name} is given twice")
        sizes[name] = int(value)
    return sizes


def parse_ranges(text: str) -> dict[str, tuple[int, int]]:
    """`batch=1:64,seq=1:512` -> {"batch": (1, 64), "seq": (1, 512)}."""
    ranges: dict[str, tuple[int, int]] = {}
    for item in (part.strip() for part in text.split(",") if part.strip()):
        name, sep, bounds = item.partition("=")
        low, colon, high = bounds.strip().partition(":")
        name, low, high = name.strip(), low.strip(), high.strip()
        if not sep or not colon or not SYMBOL.fullmatch(name) or not low.isdigit() or not high.isdigit():
            raise DimsError(f"dim_ranges '{item}': expected NAME=MIN:MAX (a name and two non-negative integers)")
        if int(low) > int(high):
            raise DimsError(f"dim_ranges {name}: the minimum {low} is above the maximum {high}")
        if name in ranges:
            raise DimsError(f"dim_ranges {name} is given twice")
        ranges[name] = (int(low), int(high))
    return ranges


def ranges_of(fn: FuncOp) -> dict[str, tuple[int, int]]:
    """The ranges recorded on `fn` (RANGES_ATTR)."""
    attr = fn.attributes.get(RANGES_ATTR)
    if not isinstance(attr, DictionaryAttr):
        return {}
    found = {}
    for name, bounds in attr.data.items():
        if isinstance(bounds, DenseArrayBase) and len(values := bounds.get_values()) == 2:
            found[name] = (int(values[0]), int(values[1]))
    return found


def record_ranges(fn: FuncOp, ranges: Mapping[str, tuple[int, int]]) -> None:
    """Records `ranges` on `fn`, beside those it has."""
    merged = {**ranges_of(fn), **ranges}
    fn.attributes[RANGES_ATTR] = DictionaryAttr(
        {name: DenseArrayBase.from_list(i64, list(bounds)) for name, bounds in sorted(merged.items())}
    )


def sized(shape: Sequence[int | None], names: Sequence[str | None], sizes: Mapping[str, int]) -> tuple[int, ...]:
    """A concrete shape: known dims as they are, named ones at their size (1 if not given),
    unknown unnamed ones 1."""
    padded = [*names, *([None] * (len(shape) - len(names)))]
    return tuple(d if d is not None else sizes.get(n or "", 1) for d, n in zip(shape, padded))


__all__ = [
    "DIMS_ATTR",
    "RANGES_ATTR",
    "DimsError",
    "bind",
    "dims_attr",
    "input_dims",
    "parse_ranges",
    "parse_sizes",
    "ranges_of",
    "record_ranges",
    "sized",
    "symbols",
]
