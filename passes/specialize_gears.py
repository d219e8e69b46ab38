"""specialize-gears: one static specialization of `@main` per gear, and `@main` a dispatcher.

GE's gears (ATC `--dynamic_dims`, `--dynamic_batch_size`) compile a dynamic graph ahead for a few
shapes, one branch per gear, and pick the branch from the actual shape at run time. Here a gear
sizes `@main`'s named dims (`ge.dims`, ge_dialects/ge/dims.py):

    specialize-gears{dims="batch=1,seq=128;batch=2,seq=64"}

Each gear becomes a copy of `@main`, `@"main.gear<i>"`, whose arguments take the gear's static
shapes; one sweep then re-infers each op's types and folds it where it can, so that the shape
computations an exporter wrote (Shape -> Gather -> Concat -> Reshape) become constants and the
passes after this one optimize each gear as the graph exported at that shape. `@main` keeps its
signature and calls `ge.gears`, which runs the gear whose function takes exactly the inputs'
shapes (an input that fits none is one line naming the gears). Every gear sizes every named dim;
1 to MAX_GEARS gears, no two alike.

With `hybrid` (GE's `ge.compileHybridMode`), `@main`'s dynamic graph is kept as `@main.dynamic`
and runs the inputs that fit no gear (`ge.gears [...] else @main.dynamic`); the level's passes
optimize it on symbolic shapes (fold-symbolic-shapes).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass
from xdsl.transforms.dead_code_elimination import DeadCodeElimination
from xdsl.utils.exceptions import DiagnosticException

from ge.ge_dialects.ge.base import name_loc
from ge.ge_dialects.ge.control_flow import GearsOp
from ge.ge_dialects.ge.dims import DimsError, input_dims, parse_sizes, symbols
from ge.passes import remarks
from ge.passes.bind_dims import make_static, settle
from ge.passes.graph_main import main_of

PASS = "specialize-gears"
MAX_GEARS = 100
"""GE's bound on gears (2 to 100 there; one gear is allowed here: a static specialization)."""


def positional(part: str, order: list[str], index: int) -> dict[str, int]:
    """GE's form of a gear (`--dynamic_dims`, `ge.dynamicDims`): one size per unknown dim of the
    inputs, in order (`1,128,1,128` for ids and mask of [batch, seq]); a name given two sizes is
    refused."""
    values = [v.strip() for v in part.split(",")]
    if len(values) != len(order) or not all(v.isdigit() for v in values):
        raise DiagnosticException(
            f"{PASS}: gear {index} ('{part}') gives {len(values)} sizes; the inputs have {len(order)} unknown dims "
            f"({', '.join(order)}), one non-negative integer each"
        )
    sizes: dict[str, int] = {}
    for name, value in zip(order, values):
        if sizes.setdefault(name, int(value)) != int(value):
            raise DiagnosticException(f"{PASS}: gear {index} ('{part}') gives {name} both {sizes[name]} and {value}")
    return sizes


def parse_gears(text: str, names: list[str], order: list[str] | None = None) -> list[dict[str, int]]:
    """`batch=1,seq=128;batch=2,seq=64` (or GE's positional `1,128,1,128;2,64,2,64` over `order`,
    the inputs' unknown dims one by one) -> one size per named dim per gear, each checked."""
    gears: list[dict[str, int]] = []
    for index, part in enumerate(p.strip() for p in text.split(";")):
        try:
            sizes = parse_sizes(part, names) if "=" in part or order is None else positional(part, order, index)
        except DimsError as e:
            raise DiagnosticException(f"{PASS}: gear {index}: {str(e).removeprefix('--dims ')}") from None
        missing = [n for n in names if n not in sizes]
        if missing:
            raise DiagnosticException(f"{PASS}: gear {index} ('{part}') gives no size for {', '.join(missing)}")
        if sizes in gears:
            raise DiagnosticException(f"{PASS}: gear {index} ('{part}') is gear {gears.index(sizes)} again")
        gears.append(sizes)
    if len(gears) > MAX_GEARS:
        raise DiagnosticException(f"{PASS}: {len(gears)} gears, more than {MAX_GEARS}")
    return gears


def by_axes(text: str, names: list[list[str | None]], axes: tuple[int, ...], option: str) -> str:
    """GE's batch or image gears (`1,2,4` over dim 0; `224,224;448,448` over dims 2 and 3) in the
    named form, from the names the inputs give those dims; one line when the inputs name no dim,
    or two different dims, there."""
    at_axes: list[str] = []
    for axis in axes:
        found = sorted({name for dims in names if len(dims) > axis and (name := dims[axis])})
        if len(found) != 1:
            what = "no unknown dim" if not found else f"different dims ({', '.join(found)})"
            raise DiagnosticException(f"{PASS}: {option}: the inputs have {what} at axis {axis}")
        at_axes.append(found[0])
    parts = text.split(",") if len(axes) == 1 else text.split(";")
    gears = []
    for part in (p.strip() for p in parts):
        values = [part] if len(axes) == 1 else [v.strip() for v in part.split(",")]
        if len(values) != len(axes):
            raise DiagnosticException(f"{PASS}: {option} '{part}': expected {len(axes)} sizes (h,w)")
        gears.append(",".join(f"{n}={v}" for n, v in zip(at_axes, values)))
    return ";".join(gears)


def _text(sizes: dict[str, int]) -> str:
    return ",".join(f"{n}={v}" for n, v in sizes.items())


@dataclass(frozen=True)
class SpecializeGearsPass(ModulePass):
    """`@main` specialized per gear of `dims` (see the module docstring)."""

    name = "specialize-gears"

    dims: str = ""
    """The gears, separated by `;`: `NAME=SIZE,...` each, or GE's one size per unknown input dim."""

    batch_sizes: str = ""
    """GE's `ge.dynamicBatchSize` (`1,2,4,8`): one gear per size of the inputs' unknown dim 0."""

    image_sizes: str = ""
    """GE's `ge.dynamicImageSize` (`224,224;448,448`): one gear per (h, w) of the inputs' unknown
    dims 2 and 3 (NCHW)."""

    hybrid: bool = False
    """Keep the dynamic graph for the inputs that fit no gear (GE's `ge.compileHybridMode`)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        given = [
            (n, v)
            for n, v in (("dims", self.dims), ("batch_sizes", self.batch_sizes), ("image_sizes", self.image_sizes))
            if v.strip()
        ]
        if not given:
            return
        if len(given) > 1:
            raise DiagnosticException(f"{PASS}: {' and '.join(n for n, _ in given)} both give gears; give one")
        main = main_of(op, PASS)
        signature = main.function_type
        names = input_dims(main.arg_attrs, len(signature.inputs.data))
        known = symbols(names)
        if not known:
            raise DiagnosticException(f"{PASS}: @main's inputs have no named unknown dims (ge.dims) to size")
        text = self.dims
        if self.batch_sizes.strip():
            text = by_axes(self.batch_sizes, names, (0,), "batch_sizes")
        elif self.image_sizes.strip():
            text = by_axes(self.image_sizes, names, (2, 3), "image_sizes")
        gears = parse_gears(text, known, [n for dims in names for n in dims if n])
        symbols_of = []
        for index, sizes in enumerate(gears):
            gear = main.clone()
            gear.sym_name = StringAttr(f"main.gear{index}")
            make_static(gear, names, sizes)
            op.body.block.add_op(gear)
            symbols_of.append(gear.sym_name.data)
        settle(op, [f for f in op.ops if isinstance(f, func.FuncOp) and f.sym_name.data in symbols_of])
        DeadCodeElimination().apply(ctx, op)
        fallback = None
        if self.hybrid:
            dynamic = main.clone()
            dynamic.sym_name = StringAttr(f"{main.sym_name.data}.dynamic")
            op.body.block.add_op(dynamic)
            fallback = dynamic.sym_name.data
        block = main.body.block
        for inner in reversed(list(block.ops)):
            inner.detach()
            inner.erase(safe_erase=False)
        texts = [_text(g) for g in gears]
        dispatch = GearsOp(symbols_of, texts, list(block.args), list(signature.outputs.data), fallback)
        dispatch.location = name_loc("gears")
        block.add_op(dispatch)
        block.add_op(func.ReturnOp(*dispatch.results))
        hybrid = f", else @{fallback}" if fallback else ""
        remarks.emit(PASS, "applied", "gears", [main], f"{len(gears)} gears: {'; '.join(texts)}{hybrid}")
