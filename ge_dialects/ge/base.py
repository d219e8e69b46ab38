"""The machinery every ge op shares: properties as Python values, shape/dtype inference, the verifier
that checks declared result types against inferred ones, and one readable assembly format.

Assembly format (all ge ops but `ge.constant`):

    %r = ge.conv %x, %w, B = %b {strides = array<i64: 2, 2>} : (tensor<..>, tensor<..>, tensor<..>) -> tensor<..>

Required and variadic operands come first, by position; optional operands follow as `name = %v`,
so an absent optional operand is never ambiguous. Properties go in the attribute dictionary.
Optional results are a prefix: an op with three result definitions printed with two results has
the first two.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any, ClassVar, TypeVar

import numpy as np
from xdsl.dialects.builtin import (
    I64,
    DenseArrayBase,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    NameLoc,
    NoneAttr,
    StringAttr,
    TensorType,
    f32,
    i64,
)
from xdsl.ir import Attribute, BlockArgument, ErasedSSAValue, Operation, OpResult, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    AttrSizedResultSegments,
    IRDLOperation,
    OptOperandDef,
    OptResultDef,
    VarOperandDef,
    VarResultDef,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from ge.ge_dialects.ge.facts import CopiesElements, Engine, Reshapes, RunsOn, Transcendental
from ge.ge_dialects.ge.grad import GradBuilder, NotDifferentiable
from ge.ge_dialects.ge.types import (
    FORMATS,
    FormatAttr,
    Shape,
    elements,
    format_of,
    is_float,
    numpy_dtype,
    shape_of,
    stored_as_logical,
    tensor_type_of,
    type_name,
)

# Property constraints, named for what they hold.
IntProp = IntegerAttr[I64]
FloatProp = FloatAttr[Float32Type]
StrProp = StringAttr
IntsProp = DenseArrayBase[I64]
FloatsProp = DenseArrayBase[Float32Type]

_OpT = TypeVar("_OpT", bound=Operation)

_SEGMENT_NAMES = (AttrSizedOperandSegments.attribute_name, AttrSizedResultSegments.attribute_name)


def to_python(attr: Attribute) -> Any:
    """A property attribute as the Python value shape functions and kernels use."""
    if isinstance(attr, IntegerAttr):
        return attr.value.data
    if isinstance(attr, FloatAttr):
        return attr.value.data
    if isinstance(attr, StringAttr):
        return attr.data
    if isinstance(attr, DenseArrayBase):
        return list(attr.get_values())
    return attr


_SAMPLES: dict[str, Attribute] = {
    "int": IntegerAttr(0, i64),
    "float": FloatAttr(0.0, f32),
    "str": StringAttr(""),
    "ints": DenseArrayBase.from_list(i64, []),
    "floats": DenseArrayBase.from_list(f32, []),
}


def to_attribute(kind: str, value: Any) -> Attribute:
    """A Python value as the attribute of a property of the given kind."""
    if isinstance(value, Attribute):
        return value
    if kind == "int":
        return IntegerAttr(int(value), i64)
    if kind == "float":
        return FloatAttr(float(value), f32)
    if kind == "str":
        return StringAttr(value.decode() if isinstance(value, bytes) else str(value))
    if kind == "ints":
        return DenseArrayBase.from_list(i64, [int(v) for v in value])
    if kind == "floats":
        return DenseArrayBase.from_list(f32, [float(v) for v in value])
    raise ValueError(f"unknown property kind {kind}")


def name_loc(name: str) -> NameLoc:
    """The location that records a model node's name."""
    return NameLoc(StringAttr(name), NoneAttr())


def location_name(op: Operation) -> str | None:
    loc = op.location
    if isinstance(loc, NameLoc):
        return loc.desc.data
    return None


def value_label(value: SSAValue) -> str | None:
    """A value's name as a model has it: a graph input's `ge.name` (its function's argument
    attribute), an op result's node name (`name:i` for the results after the first); None when
    there is none (`ge.Value.name` then falls back to `arg<i>` / the op's generated name)."""
    if isinstance(value, BlockArgument):
        attrs = getattr(value.block.parent_op(), "arg_attrs", None)
        if attrs is not None and value.index < len(attrs.data):
            name = attrs.data[value.index].data.get("ge.name")
            if isinstance(name, StringAttr):
                return name.data
        return None
    if not isinstance(value, OpResult):
        return None
    base = location_name(value.op)
    if base is None or value.index == 0:
        return base
    return f"{base}:{value.index}"


def derived_name(source: Operation | SSAValue, role: str | None = None) -> str | None:
    """The name of an op a pass makes from `source` (the op it replaces or is named after, or the
    value it converts): `source`'s name, with `/role` appended when given ("conv_1/trans_data",
    "conv1.weight/bn_folded"); None when `source` has no name."""
    base = location_name(source) if isinstance(source, Operation) else value_label(source)
    if base is None:
        return None
    return f"{base}/{role}" if role else base


def name_after(op: _OpT, source: Operation | SSAValue, role: str | None = None) -> _OpT:
    """Names `op`, which a pass made, after what it comes from (`derived_name`), so that node
    names survive optimization: every pass that creates an op names it through here (or through
    `GeOp.create(name=...)` with a `derived_name`). When `source` has no name either, `op` keeps
    its location. Returns `op`."""
    name = derived_name(source, role)
    if name is not None:
        op.location = name_loc(name)
    return op


def describe(op: Operation) -> str:
    """How messages name an op: its IR name and, when imported, its model node name."""
    name = location_name(op)
    return f"{op.name} '{name}'" if name else op.name


class InferArgs:
    """What a shape function sees: operands by definition name, properties as Python values
    (DEFAULTS filled in), constant operand values where known, and the result count."""

    def __init__(
        self,
        op_cls: type[GeOp],
        operands: dict[str, SSAValue | Sequence[SSAValue] | None],
        props: dict[str, Attribute],
        num_results: int,
        where: str,
    ):
        self.op_cls = op_cls
        self.operands = operands
        self.props = props
        self.num_results = num_results
        self.where = where

    @staticmethod
    def of(op: GeOp) -> InferArgs:
        operands = {name: getattr(op, name) for name, _ in op.get_irdl_definition().operands}
        return InferArgs(type(op), operands, dict(op.properties), len(op.results), describe(op))

    # -- diagnostics ----------------------------------------------------------------------------
    def fail(self, message: str) -> VerifyException:
        """Returns (for `raise`) a verification error naming the op."""
        return VerifyException(f"{self.where}: {message}")

    # -- operands -------------------------------------------------------------------------------
    def value(self, name: str) -> SSAValue | None:
        v = self.operands[name]
        if v is None or isinstance(v, SSAValue):
            return v
        raise TypeError(f"operand group '{name}' is variadic; use values()")

    def values(self, name: str) -> list[SSAValue]:
        v = self.operands[name]
        if v is None:
            return []
        if isinstance(v, SSAValue):
            return [v]
        return list(v)

    def has(self, name: str) -> bool:
        return self.operands.get(name) is not None

    def type(self, name: str) -> TensorType:
        v = self.value(name)
        if v is None:
            raise self.fail(f"operand '{name}' is missing")
        if not isinstance(v.type, TensorType):
            raise self.fail(f"operand '{name}' must be a tensor, got {v.type}")
        return v.type

    def shape(self, name: str) -> Shape:
        return shape_of(self.type(name))

    def rank(self, name: str) -> int:
        return len(self.type(name).get_shape())

    def dtype(self, name: str) -> Attribute:
        return self.type(name).element_type

    def fmt(self, name: str) -> FormatAttr | None:
        return format_of(self.type(name))

    def const(self, name: str) -> np.ndarray | None:
        """The operand's value if it is a constant the compiler can see (an inline `ge.constant`)."""
        v = self.value(name)
        return None if v is None else constant_value(v)

    def const_ints(self, name: str) -> list[int] | None:
        c = self.const(name)
        return None if c is None else [int(x) for x in np.asarray(c).reshape(-1)]

    # -- properties -----------------------------------------------------------------------------
    def prop(self, name: str) -> Any:
        if name in self.props:
            return to_python(self.props[name])
        return self.op_cls.DEFAULTS.get(name)

    # -- checks ---------------------------------------------------------------------------------
    def expect_dtype(self, name: str, allowed: Sequence[Attribute], what: str = "") -> Attribute:
        t = self.dtype(name)
        if t not in allowed:
            names = ", ".join(type_name(a) for a in allowed)
            raise self.fail(f"operand '{name}' has element type {type_name(t)}{what}; expected one of {names}")
        return t

    def expect_same_dtype(self, *names: str) -> Attribute:
        present = [n for n in names if self.has(n)]
        first = self.dtype(present[0])
        for n in present[1:]:
            if self.dtype(n) != first:
                raise self.fail(
                    f"operands '{present[0]}' and '{n}' must have one element type, "
                    f"got {type_name(first)} and {type_name(self.dtype(n))}"
                )
        return first

    def expect_rank(self, name: str, *ranks: int) -> int:
        r = self.rank(name)
        if r not in ranks:
            want = " or ".join(str(x) for x in ranks)
            raise self.fail(f"operand '{name}' must have rank {want}, got rank {r}")
        return r

    def normalize_axis(self, axis: int, rank: int, what: str = "axis") -> int:
        if not -rank <= axis < max(rank, 1):
            raise self.fail(f"{what} {axis} is out of range for rank {rank}")
        return axis + rank if axis < 0 else axis


def constant_value(value: SSAValue) -> np.ndarray | None:
    """The value of an SSA value defined by a constant op that holds it inline, else None."""
    owner = value.owner
    inline = getattr(owner, "inline_value", None)
    return inline() if callable(inline) else None


def has_float_result(op: Operation) -> bool:
    """Whether the op yields a float tensor (an op without one is integer or shape arithmetic)."""
    return any(isinstance(r.type, TensorType) and is_float(r.type.element_type) for r in op.results)


def _moves_quantized_data(op: GeOp) -> bool:
    """The op copies elements (`CopiesElements`) and yields only integers of at most 16 bits."""
    return op.has_trait(CopiesElements) and all(
        isinstance(r.type, TensorType)
        and isinstance(r.type.element_type, IntegerType)
        and r.type.element_type.width.data <= 16
        for r in op.results
    )


def _dims_compatible(a: Shape, b: Shape) -> bool:
    return len(a) == len(b) and all(x is None or y is None or x == y for x, y in zip(a, b))


_ENGINES: dict[type, tuple[object, Engine]] = {}
_TRAITS: dict[tuple[type, type], tuple[object, Any]] = {}


def _engine_of_class(cls: type[GeOp]) -> Engine:
    """Traits belong to the class: read once per class and traits object (the fusion cost model
    asks per op, often)."""
    traits = cls.traits
    known = _ENGINES.get(cls)
    if known is not None and known[0] is traits:
        return known[1]
    declared = cls.get_traits_of_type(RunsOn)
    if len({t.engine for t in declared}) != 1:
        raise TypeError(f"{cls.name} declares {len(declared)} RunsOn traits; it needs exactly one")
    _ENGINES[cls] = (traits, declared[0].engine)
    return declared[0].engine


_VERIFIED_CONTENT: set[tuple[Any, ...]] = set()
"""Content keys (`_content_key`) of ge ops that verified; forgotten all at once past the limit."""
_VERIFIED_CONTENT_LIMIT = 200_000


def _content_key(cls: type, key: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """What a ge op's verification depends on, without the op's identity or its operands': `key`
    (`GeOp._verification_key`) minus the operand objects, plus the op's class. None when the op
    ends its block (checked against its parent), reads an erased value, or holds an unhashable
    attribute."""
    operands, operand_types, inline, results, properties, attributes, ends_block = key
    if ends_block or any(isinstance(v, ErasedSSAValue) for v in operands):
        return None
    content = (cls, operand_types, inline, results, properties, attributes)
    try:
        hash(content)
    except TypeError:
        return None
    return content


class GeOp(IRDLOperation):
    """Base of every ge op; subclasses define operands, properties and `infer`."""

    DEFAULTS: ClassVar[dict[str, Any]] = {}
    """ONNX default of each property; a property left out of the IR has its default."""
    ONNX: ClassVar[tuple[str, ...]] = ()
    """The default-domain ONNX operators that import as this op (their inputs and attributes are
    its operands and properties, after the opset adapters of frontend/onnx_ops.py); the importer's
    and the exporter's tables are derived from it. Declared on the op itself, never inherited."""
    ONNX_ONLY_AS: ClassVar[dict[str, Any]] = {}
    """ONNX attributes and inputs (by schema name) the op takes only absent, or set to the value
    given (None: only absent). A node that sets one otherwise imports through ge's function body
    for its operator (frontend/onnx_decompositions.py) instead of as this op."""
    PRECISION: ClassVar[str] = "gray"
    """The op's list in the `mixed-precision` pass: "white" computes in f16 (bf16), "black" keeps
    f32, "gray" follows its inputs, "keep" is never changed (its result type is what it means).
    GE's policy, the `precision_reduce` flag of the op's ops-info entry: true = white, false =
    black, unset = gray; the GE op type and its flag are noted beside each declaration."""
    DATA_OPERANDS: ClassVar[tuple[str, ...]] = ()
    """The operands that hold the data the op computes on: under mixed precision they take the
    op's compute type, the others (shapes, axes, indices, statistics) keep theirs. Empty exactly
    for the "keep" ops."""
    IMMEDIATE_OPERANDS: ClassVar[tuple[str, ...]] = ()
    """Operands the op needs as constants (its result's dims come from them) that its kernel reads
    as immediates: lowering clones their constants into the op's task."""
    FP16_ONLY: ClassVar[bool] = False
    """The device has no f32 kernel for the op: it computes in f16 in every mode that may change
    dtypes."""

    # -- properties -----------------------------------------------------------------------------
    def p(self, name: str) -> Any:
        """A property's Python value, or its default."""
        attr = self.properties.get(name)
        return to_python(attr) if attr is not None else self.DEFAULTS.get(name)

    @classmethod
    @cache
    def property_kinds(cls) -> dict[str, str]:
        kinds: dict[str, str] = {}
        for name, prop in cls.get_irdl_definition().properties.items():
            for kind, sample in _SAMPLES.items():
                if prop.constr.verifies(sample):
                    kinds[name] = kind
                    break
        return kinds

    # -- inference ------------------------------------------------------------------------------
    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        """Result types from operand types, properties and visible constants.

        Returns one type per result the op can have (a trailing optional result included);
        raises `a.fail(...)` when the operands or properties are invalid."""
        raise NotImplementedError(f"{cls.name} has no shape function")

    @classmethod
    def has_shape_function(cls) -> bool:
        """False for the ops whose result type is declared, not inferred (constants, variables)."""
        return cls.infer.__func__ is not GeOp.infer.__func__  # type: ignore[attr-defined]

    @classmethod
    def create(
        cls,
        operands: dict[str, SSAValue | Sequence[SSAValue] | None] | Sequence[SSAValue] = (),
        props: dict[str, Any] | None = None,
        num_results: int | None = None,
        name: str | None = None,
        **generic: Any,
    ) -> GeOp:
        """Builds the op with inferred result types; `props` may hold plain Python values.

        Called with xDSL's generic keywords (`result_types=...`, as `clone` does) it is xDSL's
        `Operation.create`."""
        if not isinstance(operands, dict):
            return super().create(operands=operands, **generic)
        kinds = cls.property_kinds()
        properties: dict[str, Attribute] = {}
        for key, value in (props or {}).items():
            if value is None:
                continue
            if key not in kinds:
                raise VerifyException(f"{cls.name}: unknown property '{key}'")
            properties[key] = to_attribute(kinds[key], value)
        where = f"{cls.name} '{name}'" if name else cls.name
        result_defs = cls.get_irdl_definition().results
        if num_results is None:
            num_results = sum(1 for _, d in result_defs if not isinstance(d, VarResultDef))
        args = InferArgs(cls, operands, properties, num_results, where)
        types = cls.infer(args)[:num_results]
        if len(types) < num_results:
            raise args.fail(f"can produce at most {len(types)} results, {num_results} requested")
        op_defs = cls.get_irdl_definition().operands
        op = cls.build(
            operands=[
                operands.get(n)
                if not isinstance(d, VarOperandDef) or isinstance(d, OptOperandDef)
                else list(operands.get(n) or [])
                for n, d in op_defs
            ],
            result_types=_group_results(cls, list(types)),
            properties=properties,
        )
        if name:
            op.location = name_loc(name)
        return op

    def rebuilt(self, replace: Mapping[SSAValue, SSAValue] | None = None, num_results: int | None = None) -> GeOp:
        """A new op like this one (not inserted): operands swapped per `replace`, result types
        re-inferred, `num_results` results (default: as many as this one), location and
        attributes kept. Raises VerifyException when the new operands do not fit."""
        swap = replace or {}
        operands: dict[str, SSAValue | Sequence[SSAValue] | None] = {}
        for name, _ in self.get_irdl_definition().operands:
            value = getattr(self, name)
            if isinstance(value, SSAValue):
                operands[name] = swap.get(value, value)
            elif value is not None:
                operands[name] = [swap.get(v, v) for v in value]
            else:
                operands[name] = None
        kinds = self.property_kinds()
        props = {k: v for k, v in self.properties.items() if k in kinds}
        count = len(self.results) if num_results is None else num_results
        new = type(self).create(operands, props, num_results=count)
        new.location = self.location
        new.attributes.update(self.attributes)
        return new

    # -- op facts -------------------------------------------------------------------------------
    # What the passes, the lowering and the device model ask of an op, in one place. Yes/no facts
    # and the engine are traits (ge_dialects/ge/facts.py: RunsOn, Elementwise, Broadcasting,
    # Reduction, Transcendental); the methods below derive the work metrics from
    # them, and an op overrides a method when its work is not one pass over its results.
    # The facts the next issues add go here as methods with a default, overridden per op:
    # - the symbolic shape function: `infer` above, run on symbolic dims (InferArgs grows symbols).

    NOT_DIFFERENTIABLE: ClassVar[frozenset[str]] = frozenset()
    """Operands (by definition name) no gradient flows into: indices, shapes, masks, statistics."""
    GRADIENT_NEEDS_ALL_RESULTS: ClassVar[bool] = False
    """The gradient reads optional results (dropout's mask): autodiff asks the forward for them."""

    NO_GRADIENT: ClassVar[str | None] = None
    """Why the op has no `vjp` (every op has one or says why not; a test holds them to it)."""

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """The gradient: from the cotangents of the results (None for a result the loss does not
        depend on), the cotangents of `self.operands` in order (None for an operand that gets none),
        built as ge ops with `g` (ge_dialects/ge/grad.py). An op without one is not differentiable."""
        reason = f": {self.NO_GRADIENT}" if self.NO_GRADIENT else ""
        raise NotDifferentiable(f"{describe(self)} has no gradient{reason}")

    @classmethod
    def get_trait(cls, trait):  # type: ignore[override]
        """xDSL's, remembered per class, trait type and traits object: asked for every op by every
        verification (IsolatedFromAbove, terminators) and by the passes, it walks the traits with
        isinstance each time (a third of re-verifying a 20k-op chain without this memo)."""
        if not isinstance(trait, type):
            return super().get_trait(trait)
        traits = cls.traits
        known = _TRAITS.get((cls, trait))
        if known is not None and known[0] is traits:
            return known[1]
        found = super().get_trait(trait)
        _TRAITS[(cls, trait)] = (traits, found)
        return found

    @classmethod
    def engine_class(cls) -> Engine:
        """The engine the op's `RunsOn` trait names (every ge op declares exactly one)."""
        return _engine_of_class(cls)

    def engine(self) -> Engine:
        """The engine this op runs on: its class's, except that a Vector op with no float result is
        integer arithmetic, which GE places on the AI CPU, unless it only moves 8- or 16-bit
        integers (`CopiesElements`: quantized data, which TransData, Transpose and MaxPool take
        on the AI Core)."""
        engine = self.engine_class()
        if engine is Engine.VECTOR and not has_float_result(self) and not _moves_quantized_data(self):
            return Engine.AICPU
        return engine

    def macs(self) -> int:
        """Multiply-accumulates on the Cube unit (0 for ops that do not use it)."""
        return 0

    def vector_elements(self) -> int:
        """Simple Vector lane-operations: one per result element of an op that is neither a Cube
        op nor transcendental."""
        if self.engine_class().uses_cube or self.has_trait(Transcendental):
            return 0
        return sum(elements(r) for r in self.results)

    def transcendental_elements(self) -> int:
        """Vector lane-operations that cost `transcendental_cost` each (exp, erf, division ...)."""
        if self.engine_class().uses_cube or not self.has_trait(Transcendental):
            return 0
        return sum(elements(r) for r in self.results)

    def reduced_row_elements(self) -> int:
        """Elements of the row a kernel tile must hold whole (1 unless the op reduces over axes)."""
        return 1

    def input_passes(self) -> int:
        """How many times the kernel reads its data operands from memory: 1, or more when a
        reduction over data that cannot stay on chip must finish before the rest of the op can use
        it (batch norm's backward reduces over the whole batch, then applies the sums)."""
        return 1

    def is_view(self) -> bool:
        """The op moves no byte: its result is its data operand's stored array read as another
        type (a reshape between arrays stored as their logical ones, `Reshapes`; a TransData whose
        two storage arrays coincide). In a kernel with other work it is addressing, no work of its
        own; alone it is still a copy."""
        if not self.has_trait(Reshapes):
            return False
        return stored_as_logical(tensor_type_of(self.operands[0])) and stored_as_logical(
            tensor_type_of(self.results[0])
        )

    def serial_steps(self) -> int:
        """How many dependent steps the kernel runs, each waiting for the one before (a recurrent
        layer's time steps): its loads, Cube and Vector work overlap only within a step."""
        return 1

    # -- verification ---------------------------------------------------------------------------
    def _verification_key(self) -> tuple[Any, ...]:
        """Everything the op's verification reads: operands and their types, the values of inline
        constant operands, result types, properties, attributes and whether it ends its block.

        Attributes are immutable, so equal keys mean an unchanged op; the operand objects are kept
        (SSA values compare by identity) so a freed value's id cannot be mistaken for a live one.
        Flat tuples compared with `==`: this runs for every op after every pass."""
        operands = self._operands
        block = self.parent
        return (
            operands,
            tuple([v.type for v in operands]),
            tuple([tuple(o.properties.items()) if hasattr(o := v.owner, "inline_value") else None for v in operands]),
            tuple([r.type for r in self.results]),
            tuple(self.properties.items()),
            tuple(self.attributes.items()),
            block is not None and block.last_op is self,
        )

    def content_key(self) -> tuple[Any, ...] | None:
        """What the op is, without its identity or its operands' (`_content_key`): class, operand
        types, inline constant operands, result types, properties, attributes. Ops with equal keys
        verify alike, and run alike as kernels (fuse-ops' cost model times each once)."""
        return _content_key(type(self), self._verification_key())

    def verify(self, verify_nested_ops: bool = True) -> None:
        """Skips ops unchanged since they last verified: a pass pipeline verifies the whole module
        after every pass, and re-running every shape function makes that quadratic in practice
        (over half of a 3,000-op chain's O3 without the skip).

        A changed or new op whose content (class, operand types, inline constant operands, result
        types, properties, attributes) equals one that verified is not checked again either: the
        verifier reads nothing else (ge ops have no regions; an op that ends its block or reads an
        erased value is always checked). Clones (lower-to-tasks copies every op into a task) and
        the thousand alike ops of a deep model then cost a lookup. Only successes are remembered,
        so a wrong op is always checked, and blamed on the pass that made it."""
        key = self._verification_key()
        last = self.__dict__.get("_verified_as")  # the key of the last successful verification
        if last is not None and last == key:
            return
        content = _content_key(type(self), key)
        if content is not None and content in _VERIFIED_CONTENT:
            self.__dict__["_verified_as"] = key
            return
        super().verify(verify_nested_ops)
        self.__dict__["_verified_as"] = key
        if content is not None:
            if len(_VERIFIED_CONTENT) >= _VERIFIED_CONTENT_LIMIT:
                _VERIFIED_CONTENT.clear()
            _VERIFIED_CONTENT.add(content)

    def verify_(self) -> None:
        for value in (*self.operands, *self.results):
            _verify_format(self, value)
        args = InferArgs.of(self)
        inferred = type(self).infer(args)
        if len(self.results) > len(inferred):
            raise args.fail(f"has {len(self.results)} results, at most {len(inferred)} allowed")
        for i, (result, want) in enumerate(zip(self.results, inferred)):
            got = result.type
            if not isinstance(got, TensorType):
                raise args.fail(f"result #{i} must be a tensor, got {got}")
            if got.element_type != want.element_type or not _dims_compatible(shape_of(got), shape_of(want)):
                raise args.fail(f"result #{i} has type {_show(got)} but its operands imply {_show(want)}")

    # -- assembly format ------------------------------------------------------------------------
    def print(self, printer: Printer) -> None:
        positional: list[SSAValue] = []
        named: list[tuple[str, SSAValue]] = []
        for name, d in self.get_irdl_definition().operands:
            v = getattr(self, name)
            if isinstance(d, OptOperandDef):
                if v is not None:
                    named.append((name, v))
            elif isinstance(d, VarOperandDef):
                positional.extend(v)
            else:
                positional.append(v)
        first = True
        for v in positional:
            printer.print_string(" " if first else ", ")
            printer.print_operand(v)
            first = False
        for name, v in named:
            printer.print_string(" " if first else ", ")
            printer.print_string(f"{name} = ")
            printer.print_operand(v)
            first = False
        attrs = {k: v for k, v in self.properties.items() if k not in _SEGMENT_NAMES}
        attrs.update(self.attributes)
        if attrs:
            printer.print_string(" ")
            printer.print_attr_dict(attrs)
        printer.print_string(" : ")
        printer.print_function_type(self.operand_types, self.result_types)

    @classmethod
    def parse(cls, parser: Parser) -> GeOp:
        start = parser.pos
        positional, named, order = _parse_operands(parser)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        fn_pos = parser.pos
        fn = parser.parse_function_type()
        inputs, outputs = list(fn.inputs.data), list(fn.outputs.data)
        if len(inputs) != len(order):
            parser.raise_error(f"{len(order)} operands but {len(inputs)} operand types", fn_pos, parser.pos)
        resolved = {id(u): v for u, v in zip(order, parser.resolve_operands(order, inputs, start))}
        groups = _group_operands(cls, parser, start, positional, named, resolved)

        props_def = cls.get_irdl_definition().properties
        properties = {k: v for k, v in attrs.items() if k in props_def}
        attributes = {k: v for k, v in attrs.items() if k not in props_def}
        try:
            result_groups = _group_results(cls, outputs)
        except VerifyException as e:
            parser.raise_error(str(e), fn_pos, parser.pos)
        return cls.build(operands=groups, result_types=result_groups, properties=properties, attributes=attributes)


def _parse_operands(
    parser: Parser,
) -> tuple[list[UnresolvedOperand], dict[str, UnresolvedOperand], list[UnresolvedOperand]]:
    """Reads `%a, %b, name = %c`: (positional operands, named ones, all in the order written)."""
    positional: list[UnresolvedOperand] = []
    named: dict[str, UnresolvedOperand] = {}
    order: list[UnresolvedOperand] = []
    operand = parser.parse_optional_unresolved_operand()
    if operand is None:
        return positional, named, order
    positional.append(operand)
    order.append(operand)
    while parser.parse_optional_punctuation(","):
        keyword = parser.parse_optional_identifier()
        if keyword is not None:
            parser.parse_punctuation("=")
            operand = parser.parse_unresolved_operand()
            if keyword in named:
                parser.raise_error(f"operand '{keyword}' given twice")
            named[keyword] = operand
        else:
            if named:
                parser.raise_error("positional operands must come before named ones")
            operand = parser.parse_unresolved_operand()
            positional.append(operand)
        order.append(operand)
    return positional, named, order


def _group_operands(
    cls: type[GeOp],
    parser: Parser,
    start: int,
    positional: list[UnresolvedOperand],
    named: dict[str, UnresolvedOperand],
    resolved: dict[int, SSAValue],
) -> list[SSAValue | list[SSAValue] | None]:
    """Splits the operands over the operand definitions: optional ones by name, the rest in order."""
    groups: list[SSAValue | list[SSAValue] | None] = []
    defs = cls.get_irdl_definition().operands
    known = {n for n, d in defs if isinstance(d, OptOperandDef)}
    for key in named:
        if key not in known:
            parser.raise_error(f"{cls.name} has no optional operand '{key}'", start, parser.pos)
    n_single = sum(1 for _, d in defs if not isinstance(d, VarOperandDef))
    pos_iter = iter(positional)
    for name, d in defs:
        if isinstance(d, OptOperandDef):
            u = named.get(name)
            groups.append(resolved[id(u)] if u is not None else None)
        elif isinstance(d, VarOperandDef):
            rest = len(positional) - n_single
            groups.append([resolved[id(next(pos_iter))] for _ in range(max(rest, 0))])
        else:
            u = next(pos_iter, None)
            if u is None:
                parser.raise_error(f"{cls.name} expects operand '{name}'", start, parser.pos)
            groups.append(resolved[id(u)])
    if next(pos_iter, None) is not None:
        parser.raise_error(f"{cls.name}: too many operands", start, parser.pos)
    return groups


def _group_results(cls: type[GeOp], types: list[Attribute]) -> list[Attribute | list[Attribute] | None]:
    """Splits a flat result type list over the result definitions (optional results are a prefix)."""
    defs = cls.get_irdl_definition().results
    n_required = sum(1 for _, d in defs if not isinstance(d, VarResultDef))
    n_opt = sum(1 for _, d in defs if isinstance(d, OptResultDef))
    has_var = any(isinstance(d, VarResultDef) and not isinstance(d, OptResultDef) for _, d in defs)
    if len(types) < n_required or (not has_var and len(types) > n_required + n_opt):
        raise VerifyException(f"{cls.name}: {len(types)} result types do not fit its results")
    groups: list[Attribute | list[Attribute] | None] = []
    rest = list(types)
    spare = len(types) - n_required
    for _, d in defs:
        if isinstance(d, OptResultDef):
            if spare > 0:
                groups.append(rest.pop(0))
                spare -= 1
            else:
                groups.append(None)
        elif isinstance(d, VarResultDef):
            groups.append(rest[:spare])
            rest = rest[spare:]
            spare = 0
        else:
            groups.append(rest.pop(0))
    return groups


def _verify_format(op: Operation, value: SSAValue) -> None:
    t = value.type
    if not isinstance(t, TensorType):
        return
    numpy_dtype(t.element_type)  # raises for element types ge does not have
    fmt = format_of(t)
    if fmt is None:
        return
    rank = FORMATS[fmt.origin.data]
    if rank is not None and len(t.get_shape()) != rank:
        raise VerifyException(f"{describe(op)}: origin format {fmt.origin.data} needs rank {rank}, got {_show(t)}")


def _show(t: Attribute) -> str:
    return str(t)
