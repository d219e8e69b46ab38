"""`mixed-precision{mode=...}`: GE's `precision_mode` (`ge.exec.precision_mode`) as a graph pass.

Each float op gets a compute type from the mode and the op lists (each op's `PRECISION`, changed
by a user file with `lists="file.toml"`); the op is rebuilt with its data operands in that type,
and `ge.cast`s are inserted where a value's type changes. Graph inputs and outputs keep their
types. Constants feeding a converted op are converted at compile time (in the weights sidecar
when large). Integer and bool tensors, and operands that are not data (shapes, axes, pads,
batch-norm statistics, dropout ratios, resize scales) keep their types. The modes, the lists and
the rules are described in docs/mixed_precision.md.

    mixed-precision{mode=allow_mix_precision}
    mixed-precision{precision_mode=force_fp16}            (GE's option name, an alias of mode)
    mixed-precision{mode=allow_mix_precision lists="my_lists.toml"}
    mixed-precision{mode=force_fp16 keep_dtype="/fc1/Gemm,/fc1/Tanh"}

An op carrying the unit attribute `ge.keep_dtype` keeps its types under every mode (the
training step's counter, loss-scaling's unscale and select: values f16 cannot hold); the
`keep_dtype` option sets it on the ops of those node names (location names).

One remark per float op: the rule (list) that decided its type, applied when it was converted,
rejected when it kept its type.
"""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import ml_dtypes
import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, TensorType, UnitAttr, bf16, f16, f32, i64
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, SSAValue
from xdsl.irdl import AttrSizedOperandSegments, AttrSizedResultSegments, VarOperandDef
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ge.ge_dialects.ge import ALL_OPS
from ge.ge_dialects.ge.base import GeOp, location_name, name_after
from ge.ge_dialects.ge.constant import ConstantOp
from ge.ge_dialects.ge.tensor_ops import CastOp
from ge.ge_dialects.ge.types import is_float, numpy_dtype, type_name
from ge.ge_dialects.ge.weights import constant_array, make_constant
from ge.passes import remarks
from ge.passes.cancel_casts import ONNX_NUMBER, cancel_casts, elem
from ge.passes.tensor_values import tensor_type

PASS = "mixed-precision"


# -- modes ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mode:
    policy: str
    """force: every float op; cube: Cube ops (and fp16-only ops); mix: white/black/gray lists;
    widen: every f16/bf16 op to f32; keep: nothing."""
    low: Attribute | None
    """The type f32 ops are lowered to (f32 for `widen`, the type f16/bf16 ops are raised to)."""


MODES: dict[str, Mode] = {
    "force_fp16": Mode("force", f16),
    "force_fp32": Mode("widen", f32),
    "cube_fp16in_fp32out": Mode("widen", f32),
    "allow_fp32_to_fp16": Mode("cube", f16),
    "allow_fp32_to_bf16": Mode("cube", bf16),
    "must_keep_origin_dtype": Mode("keep", None),
    "allow_mix_precision": Mode("mix", f16),
    "allow_mix_precision_fp16": Mode("mix", f16),
    "allow_mix_precision_bf16": Mode("mix", bf16),
}
DEFAULT_MODE = "allow_mix_precision"

DATA_OPERANDS: dict[type[GeOp], tuple[str, ...]] = {op: op.DATA_OPERANDS for op in ALL_OPS if op.DATA_OPERANDS}
"""Per op, the operands that hold the data the op computes on (its `DATA_OPERANDS`): they take the
op's compute type. Every other operand (shapes, axes, pads, indices, conditions, statistics) keeps
its type; an op without data operands is never changed."""

KEEP_DTYPE = "ge.keep_dtype"
"""The unit attribute of an op that keeps its types whatever the mode and the lists say."""


def keeps_dtype(op: Operation) -> bool:
    return KEEP_DTYPE in op.attributes


def mark_keep_dtype(op: Operation) -> None:
    op.attributes[KEEP_DTYPE] = UnitAttr()


_SEGMENT_NAMES = (AttrSizedOperandSegments.attribute_name, AttrSizedResultSegments.attribute_name)


def _error(message: str) -> DiagnosticException:
    return DiagnosticException(f"{PASS}: {message}")


def resolve_mode(mode: str, precision_mode: str | None) -> str:
    """The mode the options name; `precision_mode` is GE's spelling of `mode`."""
    name = mode
    if precision_mode is not None:
        if mode not in (DEFAULT_MODE, precision_mode):
            raise _error(f"mode={mode} and precision_mode={precision_mode} disagree; give one of them")
        name = precision_mode
    if name not in MODES:
        raise _error(f"unknown precision mode '{name}'; expected one of {', '.join(MODES)}")
    return name


# -- op lists ------------------------------------------------------------------------------------

LIST_KINDS = ("white", "black", "gray", "keep")
SET_KEYS = ("cube", "fp16_only")
_GE_OPS: dict[str, type[GeOp]] = {op.name: op for op in ALL_OPS}


def cube_ops() -> frozenset[type[GeOp]]:
    """The default `cube` set: the ops whose `RunsOn` trait uses the Cube (f16/bf16 inputs, f32
    accumulation), but for the integer products, which keep their types ("keep"). A user list
    file may replace it with a `cube` list of its own."""
    return frozenset(op for op in ALL_OPS if op.engine_class().uses_cube and op.PRECISION != "keep")


@dataclass(frozen=True)
class PrecisionLists:
    kind: dict[type[GeOp], str]
    """op class -> white / black / gray / keep."""
    cube: frozenset[type[GeOp]]
    fp16_only: frozenset[type[GeOp]]


def _read_toml(path: Path) -> dict:
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except OSError as e:
        raise _error(f"cannot read op lists {path}: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise _error(f"op lists {path}: {str(e).splitlines()[0]}") from None


def _op_classes(path: Path, key: str, value) -> list[type[GeOp]]:
    """The op classes a list names (`ge.x` or `x`), resolved when the file is loaded."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _error(f"op lists {path}: '{key}' must be a list of op names")
    classes = []
    for v in value:
        op = _GE_OPS.get(v if v.startswith("ge.") else f"ge.{v}")
        if op is None:
            raise _error(f"op lists {path}: '{v}' in '{key}' is not a ge op")
        classes.append(op)
    return classes


def default_lists() -> PrecisionLists:
    """The lists the ops declare: each op's `PRECISION` and `FP16_ONLY`, and the Cube ops."""
    return PrecisionLists(
        {op: op.PRECISION for op in ALL_OPS}, cube_ops(), frozenset(op for op in ALL_OPS if op.FP16_ONLY)
    )


def load_lists(user: str | Path | None = None) -> PrecisionLists:
    """The ops' own lists, with a user file's changes: ops it names in white / black / gray /
    keep move there; its cube / fp16_only replace the default sets."""
    lists = default_lists()
    if user is None:
        return lists
    path = Path(user)
    data = _read_toml(path)
    for key in data:
        if key not in LIST_KINDS + SET_KEYS:
            raise _error(f"op lists {path}: unknown key '{key}' (keys: {', '.join(LIST_KINDS + SET_KEYS)})")
    seen: dict[type[GeOp], str] = {}
    for key in LIST_KINDS:
        for op in _op_classes(path, key, data.get(key, [])):
            if seen.get(op, key) != key:
                raise _error(f"op lists {path}: {op.name} is in both '{seen[op]}' and '{key}'")
            seen[op] = key
    sets = {key: frozenset(_op_classes(path, key, data[key])) for key in SET_KEYS if key in data}
    return PrecisionLists({**lists.kind, **seen}, sets.get("cube", lists.cube), sets.get("fp16_only", lists.fp16_only))


# -- the rewrite ---------------------------------------------------------------------------------


def _to_type(t: TensorType, dtype: Attribute) -> TensorType:
    return TensorType(dtype, t.get_shape(), t.encoding)


def saturate(array: np.ndarray, dtype: Attribute) -> np.ndarray:
    """`array` converted to `dtype` at compile time: finite values beyond the type's range become
    its largest finite value (so a -3.4e38 mask constant stays a finite, very negative number);
    infinities and NaN stay what they are."""
    target = numpy_dtype(dtype)
    array = np.asarray(array)
    is_float_array = array.dtype.kind == "f" or array.dtype == np.dtype(ml_dtypes.bfloat16)
    limit = float(ml_dtypes.finfo(target).max) if target.kind == "f" or target == ml_dtypes.bfloat16 else None
    if not is_float_array or limit is None or array.size == 0 or float(np.abs(array).max()) <= limit:
        return array.astype(target)  # nothing to saturate (the common case: one pass over a weight)
    wide = array.astype(np.float64)
    wide = np.where(np.isfinite(wide), np.clip(wide, -limit, limit), wide)
    return wide.astype(target)


class _Converter:
    """Converts the ops of one block, in order (producers before users)."""

    def __init__(self, module: ModuleOp, mode_name: str, lists: PrecisionLists):
        self.module = module
        self.mode_name = mode_name
        self.mode = MODES[mode_name]
        self.lists = lists
        self.origin: dict[SSAValue, SSAValue] = {}
        """A cast this pass made -> the value it casts (so a cast of it back is that value)."""
        self.versions: dict[tuple[SSAValue, Attribute], SSAValue] = {}
        """(value, type) -> the value in that type (a cast or a converted constant), made once."""
        self.made_casts: list[CastOp] = []
        self.converted_constants: list[ConstantOp] = []
        self.changed = False
        self.last_arg_cast: Operation | None = None

    # -- values --------------------------------------------------------------------------------
    def native(self, value: SSAValue) -> SSAValue:
        """The value a cast this pass made stands for (its source), else the value itself."""
        return self.origin.get(value, value)

    def _insert_after_def(self, new: Operation, value: SSAValue) -> None:
        if isinstance(value, OpResult):
            block = value.op.parent_block()
            assert block is not None  # the values this pass converts are defined in the graph
            block.insert_op_after(new, value.op)
            return
        assert isinstance(value, BlockArgument)  # an SSA value is an op result or a block argument
        if self.last_arg_cast is not None and self.last_arg_cast.parent is value.block:
            value.block.insert_op_after(new, self.last_arg_cast)  # graph inputs' casts in order
            self.last_arg_cast = new
        else:
            first = value.block.first_op
            assert first is not None  # a graph's block ends in its return
            value.block.insert_op_before(new, first)
            self.last_arg_cast = new

    def _cast(self, value: SSAValue, dtype: Attribute, result_type: TensorType | None = None) -> SSAValue:
        cast = CastOp.build(
            operands=[value],
            result_types=[result_type or _to_type(tensor_type(value), dtype)],
            properties={"to": IntegerAttr(ONNX_NUMBER[dtype], i64)},
        )
        name_after(cast, value, f"cast_{type_name(dtype)}")
        self._insert_after_def(cast, value)
        self.made_casts.append(cast)
        self.origin[cast.output] = value
        return cast.output

    def as_dtype(self, value: SSAValue, dtype: Attribute) -> SSAValue:
        """`value` in `dtype`: itself, the value a cast of ours came from, a converted constant,
        or a (shared) new cast."""
        if elem(value) == dtype:
            return value
        source = self.origin.get(value)
        if source is not None and elem(source) == dtype:
            return source  # cast(cast(x: A -> B): B -> A) is x: no chain
        key = (value, dtype)
        if key in self.versions:
            return self.versions[key]
        owner = value.owner
        result: SSAValue
        if isinstance(owner, ConstantOp) and (array := constant_array(value)) is not None:
            hint = f"{owner.weight_key or location_name(owner) or 'constant'}.{type_name(dtype)}"
            const = make_constant(self.module, saturate(array, dtype), hint)
            const.location = owner.location
            block = owner.parent_block()
            assert block is not None  # a constant a graph op reads sits in the graph
            block.insert_op_after(const, owner)
            self.converted_constants.append(owner)
            result = const.output
        else:
            result = self._cast(value, dtype)
        self.versions[key] = result
        return result

    # -- decisions -----------------------------------------------------------------------------
    def _data_values(self, op: GeOp) -> list[tuple[str, SSAValue]]:
        out = []
        for name in DATA_OPERANDS[type(op)]:
            v = getattr(op, name)
            if v is None:
                continue
            for x in v if not isinstance(v, SSAValue) else [v]:
                if is_float(elem(x)):
                    out.append((name, x))
        return out

    def decide(self, op: GeOp, kind: str, floats: list[tuple[str, SSAValue]]) -> tuple[Attribute | None, str, str]:
        """(compute type or None to keep, rule, reason)."""
        mode, low = self.mode, self.mode.low
        assert low is not None  # visit() returns before deciding in "keep", the one mode without a type
        fp16_only = type(op) in self.lists.fp16_only
        cube = type(op) in self.lists.cube
        if mode.policy == "widen":
            if fp16_only:
                return None, "fp16-only", "the device has no f32 kernel: keeps f16"
            if cube:
                return f32, "cube", "Cube op: f16 inputs, f32 accumulation and f32 output"
            return f32, self.mode_name, "computes in f32"
        if fp16_only:
            return f16, "fp16-only", "the device has no f32 kernel: computes in f16"
        if mode.policy == "force":
            return low, self.mode_name, f"every float op computes in {type_name(low)}"
        if mode.policy == "cube":
            if cube:
                return low, "cube", f"Cube op: {type_name(low)} inputs, f32 accumulation"
            return None, "vector", "has an f32 kernel: keeps f32"
        if kind == "white":
            return low, "white-list", f"computes in {type_name(low)}"
        if kind == "black":
            return None, "black-list", "precision-sensitive: keeps f32"
        live = [(n, v) for n, v in floats if not isinstance(v.owner, ConstantOp)]
        if not live:
            return None, "gray-list", "follows its inputs; all are constants: keeps f32"
        for name, v in live:
            t = elem(self.native(v))
            if t != low:
                return None, "gray-list", f"follows its inputs; '{name}' is {type_name(t)}: keeps f32"
        return low, "gray-list", f"follows its inputs, which are {type_name(low)}"

    def visit(self, op: GeOp) -> None:
        kind = self.lists.kind.get(type(op), type(op).PRECISION)
        if type(op) not in DATA_OPERANDS or kind == "keep":
            return
        floats = self._data_values(op)
        if not floats:
            return  # integer / bool data: never changed
        sources = {f16, bf16} if self.mode.policy == "widen" else {f32}
        if not any(elem(v) in sources for _, v in floats):
            return  # nothing of the type this mode converts
        if self.mode.policy == "keep":
            if type(op) in self.lists.fp16_only:
                remarks.emit(
                    PASS,
                    "note",
                    "fp16-only",
                    [op],
                    "the device has no f32 kernel for this op; GE rejects must_keep_origin_dtype here",
                )
            return
        if keeps_dtype(op):
            remarks.emit(PASS, "rejected", "keep-dtype", [op], f"marked {KEEP_DTYPE}: keeps its types")
            return
        target, rule, reason = self.decide(op, kind, floats)
        if target is None:
            remarks.emit(PASS, "rejected", rule, [op], reason)
            return
        odd = [(n, v) for n, v in floats if elem(v) not in sources and elem(v) != target]
        if odd:
            name, v = odd[0]
            remarks.emit(PASS, "rejected", rule, [op], f"operand '{name}' is {type_name(elem(v))}: keeps its types")
            return
        remarks.emit(PASS, "applied", rule, [op], reason)
        self.convert(op, target)

    def convert(self, op: GeOp, target: Attribute) -> None:
        data = DATA_OPERANDS[type(op)]
        operands: dict[str, SSAValue | Sequence[SSAValue] | None] = {}
        for name, d in op.get_irdl_definition().operands:
            v = getattr(op, name)
            if isinstance(d, VarOperandDef) and not isinstance(v, SSAValue) and v is not None:
                v = list(v)
            if name in data and v is not None:
                if isinstance(v, list):
                    v = [self.as_dtype(x, target) if is_float(elem(x)) else x for x in v]
                elif is_float(elem(v)):
                    v = self.as_dtype(v, target)
            operands[name] = v
        props = {k: v for k, v in op.properties.items() if k not in _SEGMENT_NAMES}
        new = type(op).create(operands, props, num_results=len(op.results))
        new.location = op.location
        new.attributes.update(op.attributes)
        block = op.parent_block()
        assert block is not None  # visited ops sit in the graph
        block.insert_op_before(new, op)
        for old, result in zip(op.results, new.results):
            if old.type == result.type:
                old.replace_all_uses_with(result)
            else:
                old.replace_all_uses_with(self._cast(result, elem(old), result_type=tensor_type(old)))
        block.erase_op(op)
        self.changed = True

    # -- clean-up ------------------------------------------------------------------------------
    def finish(self) -> None:
        """Erases the casts and the original constants nothing uses any more."""
        for cast in reversed(self.made_casts):
            if cast.parent is not None and not cast.output.uses:
                cast.parent.erase_op(cast)
        for const in self.converted_constants:
            if const.parent is not None and not const.output.uses:
                const.parent.erase_op(const)

    def run(self, block: Block) -> bool:
        for op in list(block.ops):
            if isinstance(op, GeOp):
                self.visit(op)
        self.finish()
        return self.changed


@dataclass(frozen=True)
class MixedPrecisionPass(ModulePass):
    """GE's precision_mode: which float ops compute in f16 / bf16 and which keep f32."""

    name = "mixed-precision"

    mode: str = DEFAULT_MODE
    precision_mode: str | None = None
    """GE's name of the option (`ge.exec.precision_mode`); an alias of `mode`."""
    lists: str | None = None
    """A TOML file that changes the op lists (docs/mixed_precision.md)."""
    keep_dtype: str | None = None
    """Comma-separated node names (op locations) whose ops keep their types (`ge.keep_dtype`)."""

    def __post_init__(self) -> None:
        resolve_mode(self.mode, self.precision_mode)
        self.keep_names()

    def keep_names(self) -> list[str]:
        names = [n.strip() for n in (self.keep_dtype or "").split(",")]
        if self.keep_dtype is not None and not all(names):
            raise _error(f'keep_dtype="{self.keep_dtype}" has an empty op name')
        return names if self.keep_dtype is not None else []

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        mode_name = resolve_mode(self.mode, self.precision_mode)
        lists = load_lists(self.lists)
        _mark_named(op, self.keep_names())
        changed = False
        for fn in [o for o in op.walk() if isinstance(o, func.FuncOp)]:
            for block in fn.body.blocks:
                changed |= _Converter(op, mode_name, lists).run(block)
        if changed:
            cancel_casts(op)


def _mark_named(module: ModuleOp, names: list[str]) -> None:
    """Marks the ops of the node names `ge.keep_dtype`; all are checked before any is marked, so
    a name no op has changes nothing."""
    by_name: dict[str, list[Operation]] = {}
    for o in module.walk():
        name = location_name(o)
        if isinstance(o, GeOp) and name in names:
            by_name.setdefault(name, []).append(o)
    for name in names:
        if name not in by_name:
            raise _error(f"keep_dtype names '{name}', which no ge op in the module has")
    for ops in by_name.values():
        for o in ops:
            mark_keep_dtype(o)
