"""input-shape: GE's `ge.inputShape` (ATC's `--input_shape`): per graph input, each dim a size, -1
(known when it runs) or a range `MIN~MAX`.

    input-shape{shape="input_ids:1~8,128;attention_mask:1~8,128"}

A size binds a dim the model leaves unknown (its dim_param's symbol, wherever else it appears; an
unnamed one gets the symbol `<input>.<k>`), as bind-dims does; a range names the dim's bounds
(recorded as fold-symbolic-shapes' `dim_ranges`, which decide what a bare symbol cannot and are
checked when the inputs bind); -1 leaves the dim unknown. A dim the model fixes must be given its
own size: the graph was built for it. Everything wrong is one line naming the input and the dim:
an input the graph does not have, a dim count other than the input's rank, a malformed dim, -2
(unknown rank), a size or range on a fixed dim, two sizes for one symbol.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, TensorType, UnitAttr
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ge.ge_dialects.ge.dims import DIMS_ATTR, dims_attr, input_dims, record_ranges
from ge.ge_dialects.ge.types import shape_of
from ge.interpreter.runner import input_names
from ge.passes import remarks
from ge.passes.bind_dims import BOUND_ATTR, main_of, set_argument_shapes, settle

PASS = "input-shape"


def _fail(message: str) -> DiagnosticException:
    return DiagnosticException(f"{PASS}: {message}")


def _dim(token: str, where: str) -> int | tuple[int, int] | None:
    """`8` -> 8, `-1` -> None, `1~8` -> (1, 8)."""
    text = token.strip()
    if text == "-1":
        return None
    if text == "-2":
        raise _fail(f"{where}: -2 (an unknown rank) is not supported; give each dim")
    low, tilde, high = text.partition("~")
    if tilde:
        if not low.strip().isdigit() or not high.strip().isdigit() or int(low) > int(high):
            raise _fail(f"{where}: '{text}' is no range MIN~MAX with MIN <= MAX")
        return int(low), int(high)
    if not text.isdigit():
        raise _fail(f"{where}: '{text}' is not a size, -1 or MIN~MAX")
    return int(text)


def parse_input_shape(text: str) -> dict[str, list[int | tuple[int, int] | None]]:
    """`x:1~8,3;y:-1` -> {"x": [(1, 8), 3], "y": [None]}."""
    found: dict[str, list[int | tuple[int, int] | None]] = {}
    for item in (part.strip() for part in text.split(";") if part.strip()):
        name, colon, dims = item.rpartition(":")
        if not colon or not name:
            raise _fail(f"'{item}' is not NAME:DIMS (dims separated by commas)")
        found[name] = [_dim(d, f"input '{name}' dim {k}") for k, d in enumerate(dims.split(","))]
    return found


@dataclass(frozen=True)
class InputShapePass(ModulePass):
    """Binds and bounds @main's input dims as `shape` says (see the module docstring)."""

    name = "input-shape"

    shape: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        given = parse_input_shape(self.shape)
        if not given:
            return
        main = main_of(op, PASS)
        args = list(main.body.block.args)
        names = input_dims(main.arg_attrs, len(args))
        by_name = {name: k for k, name in enumerate(input_names(main))}
        unknown = [n for n in given if n not in by_name]
        if unknown:
            raise _fail(f"the graph has no input {', '.join(map(repr, unknown))} (its inputs: {', '.join(by_name)})")
        sizes: dict[str, int] = {}
        ranges: dict[str, tuple[int, int]] = {}
        for input_name, dims in given.items():
            k = by_name[input_name]
            t = args[k].type
            shape = shape_of(t) if isinstance(t, TensorType) else []
            if len(dims) != len(shape):
                raise _fail(f"input '{input_name}' has rank {len(shape)}, {len(dims)} dims given")
            own = list(names[k]) or [None] * len(shape)
            for d, (model_dim, dim) in enumerate(zip(shape, dims)):
                where = f"input '{input_name}' dim {d}"
                if model_dim is not None:
                    if dim != model_dim:
                        raise _fail(f"{where} is {model_dim} in the model; give that size (the graph is built for it)")
                    continue
                symbol = own[d] = own[d] or f"{input_name}.{d}"
                if isinstance(dim, int):
                    if sizes.setdefault(symbol, dim) != dim:
                        raise _fail(f"{where}: {symbol} is given {sizes[symbol]} and {dim}")
                elif isinstance(dim, tuple):
                    ranges[symbol] = dim
            _name_dims(main, k, own)
        if ranges:
            record_ranges(main, ranges)
        if sizes:  # every input dim of a bound symbol takes its size
            named = input_dims(main.arg_attrs, len(args))
            set_argument_shapes(
                main,
                [
                    [sizes.get(n or "") if d is None else d for d, n in zip(shape_of(a.type), dims)]
                    if isinstance(a.type, TensorType) and dims
                    else None
                    for a, dims in zip(args, named)
                ],
            )
            settle(op, [main])
            main.attributes[BOUND_ATTR] = UnitAttr()
        shown = "; ".join(f"{n}:{','.join(map(_shown, dims))}" for n, dims in given.items())
        remarks.emit(PASS, "applied", "input-shape", [main], f"@{main.sym_name.data}: {shown}")


def _name_dims(main: func.FuncOp, k: int, own: list[str | None]) -> None:
    """Records input k's dim names (a dim given here without a dim_param gets its own)."""
    assert main.arg_attrs is not None, "@main's inputs carry their names"
    attrs = list(main.arg_attrs.data)
    entry = dict(attrs[k].data)
    entry[DIMS_ATTR] = dims_attr(own)
    attrs[k] = DictionaryAttr(entry)
    main.arg_attrs = ArrayAttr(attrs)


def _shown(dim: int | tuple[int, int] | None) -> str:
    if dim is None:
        return "-1"
    return f"{dim[0]}~{dim[1]}" if isinstance(dim, tuple) else str(dim)
