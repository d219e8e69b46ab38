"""Custom operator libraries: the registrations a user's plugin makes (`ge.register_op`), and the
scope in which they are known.

A registration is GE's op prototype, parser plugin and op info entry in one: the ONNX domain, type
and opset range it maps, its inputs, outputs and attributes (with kinds), the shape and dtype
function, the numpy kernel, the engine and its work for the cost model. Every registered operator
is the one generic op `ge.custom` (ge_dialects/ge/custom.py), which names its library and type.

Nothing is registered by importing a module. A plugin is a Python file that runs only when a tool
is told to (`--load-op-library FILE`, docs/security.md) or a script calls `load_op_library`; its
`register_op` calls fill the `OpLibrary` being loaded. The libraries are known only inside
`with op_library(lib, ...)`: the importer, the verifier of `ge.custom`, its kernel and the cost model
look them up there (a context variable, so a scope ends cleanly and nested scopes stack).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ATTRIBUTE_KINDS = ("int", "float", "str", "ints", "floats")
"""The kinds an attribute may be declared with: those of ge op properties (ge_dialects/ge/base.py)."""
ENGINES = ("cube", "vector", "aicpu")
"""Where a registered kernel runs (the values of `Engine`, facts.py): its work is MACs on the Cube,
lane-operations on the Vector, operations on the AI CPU."""
FUSION_KINDS = ("elementwise",)
"""What a registration may declare it fuses as. "elementwise": element i of each output reads
element i of its inputs, and every output has its first input's shape, so the op may follow in a
fused group (an elementwise chain, a Cube op's epilogue, a reduction's elementwise tail), never
anchor one (passes/fusion/rules.py)."""
FORMATS = ("NC1HWC0", "FRACTAL_NZ")
"""The storage formats a registration may declare it computes in: those a layout follower carries
from its operand (passes/layout/rules.py), as a built-in elementwise op does."""


class OpLibraryError(Exception):
    """A plugin that cannot be loaded or a registration that is refused; one line."""


@dataclass(frozen=True)
class TensorSpec:
    """What shape, work and kernel functions see of a tensor they do not hold: its dims (None for a
    dim unknown at compile time) and numpy dtype."""

    shape: tuple[int | None, ...]
    dtype: np.dtype

    @property
    def size(self) -> int:
        """Elements, counting an unknown dim as 1."""
        return int(np.prod([d or 1 for d in self.shape], dtype=np.int64))


ShapeFunction = Callable[[Sequence[TensorSpec], Mapping[str, Any]], Sequence[TensorSpec]]
Kernel = Callable[[Sequence[np.ndarray], Mapping[str, Any]], Sequence[np.ndarray]]
WorkFunction = Callable[[Sequence[TensorSpec], Sequence[TensorSpec], Mapping[str, Any]], int]
VjpFunction = Callable[[Sequence[np.ndarray], Sequence[np.ndarray], Mapping[str, Any]], Sequence[np.ndarray]]


@dataclass(frozen=True)
class Attribute:
    """A declared attribute: its kind (`ATTRIBUTE_KINDS`) and default (None: required)."""

    kind: str
    default: Any = None


@dataclass(frozen=True)
class CustomOpDef:
    """One registered operator."""

    library: str
    """The library's name (its plugin file's stem): the `library` property of its `ge.custom` ops."""
    plugin: str
    """The plugin file that registered it, for messages."""
    domain: str
    op_type: str
    opsets: tuple[int, int | None]
    """The domain's versions it maps, first and last (None: every later one)."""
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    attributes: Mapping[str, Attribute]
    shape: ShapeFunction
    kernel: Kernel
    engine: str
    work: WorkFunction
    gradient: CustomOpDef | None = None
    """The op the registration's `vjp` makes (`<type>Grad`: the inputs and the outputs' cotangents
    to the inputs' cotangents), None without one."""
    gradient_of: str | None = None
    """For a gradient op: the type whose gradient it is."""
    fusion: str | None = None
    """How the op may join a fused group (`FUSION_KINDS`); None: it is never fused."""
    formats: tuple[str, ...] = ()
    """The storage formats it may compute in (`FORMATS`), carried from its first operand; none:
    it computes in its operands' logical layout."""

    @property
    def elementwise(self) -> bool:
        """Declared elementwise: by its fusion kind or its storage formats (a layout follower maps
        element i to element i in any layout); its outputs have its first input's shape."""
        return self.fusion == "elementwise" or bool(self.formats)

    @property
    def qualified(self) -> str:
        """How messages name it: "com.example.ScaledSoftplus" (the bare type in the default domain)."""
        return f"{self.domain}.{self.op_type}" if self.domain not in ("", "ai.onnx") else self.op_type

    def describe(self) -> str:
        return f"{self.qualified} (plugin {self.plugin})"

    def maps(self, version: int) -> bool:
        first, last = self.opsets
        return first <= version and (last is None or version <= last)

    def attribute_values(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """The attributes a node or op gives, defaults filled in; raises ValueError naming an
        unknown or missing one."""
        for name in given:
            if name not in self.attributes:
                raise ValueError(f"{self.qualified} has no attribute '{name}' (it has: {', '.join(self.attributes)})")
        values = {}
        for name, a in self.attributes.items():
            value = given.get(name, a.default)
            if value is None:
                raise ValueError(f"{self.qualified} needs attribute '{name}'")
            values[name] = value
        return values


def _key(domain: str, op_type: str) -> tuple[str, str]:
    return ("" if domain == "ai.onnx" else domain, op_type)


@dataclass
class OpLibrary:
    """The operators one plugin registers, by (domain, type)."""

    name: str
    plugin: str
    digest: str = ""
    """sha256 of the plugin file's bytes, the ones that ran: what an artifact and the compile cache
    record of it."""
    ops: dict[tuple[str, str], CustomOpDef] = field(default_factory=dict)
    gradients: dict[tuple[str, str], CustomOpDef] = field(default_factory=dict)
    """The gradient ops of the registrations with a `vjp`: ops, never imported from a model."""

    def register(
        self,
        op_type: str,
        *,
        domain: str,
        inputs: Sequence[str],
        outputs: Sequence[str],
        shape: ShapeFunction,
        kernel: Kernel,
        engine: str,
        work: WorkFunction,
        attributes: Mapping[str, str | tuple[str, Any]] | None = None,
        opsets: tuple[int, int | None] = (1, None),
        vjp: VjpFunction | None = None,
        fusion: str | None = None,
        formats: Sequence[str] = (),
    ) -> CustomOpDef:
        """Adds one operator (see `register_op`); refuses a malformed declaration or a type this
        library already maps."""
        where = f"{domain}.{op_type}" if domain else op_type
        if _key(domain, op_type) in self.ops:
            raise OpLibraryError(f"plugin {self.plugin}: {where} is registered twice")
        if engine not in ENGINES:
            raise OpLibraryError(f"plugin {self.plugin}: {where}: engine '{engine}' is not one of {', '.join(ENGINES)}")
        if not outputs:
            raise OpLibraryError(f"plugin {self.plugin}: {where} declares no outputs")
        for what, fn in (("shape", shape), ("kernel", kernel), ("work", work), ("vjp", vjp or work)):
            if not callable(fn):
                raise OpLibraryError(f"plugin {self.plugin}: {where}: {what} must be a function")
        first, last = opsets
        if first < 1 or (last is not None and last < first):
            raise OpLibraryError(f"plugin {self.plugin}: {where}: opsets {opsets} is not a range of versions")
        declared: dict[str, Attribute] = {}
        for name, spec in (attributes or {}).items():
            kind, default = (spec, None) if isinstance(spec, str) else spec
            if kind not in ATTRIBUTE_KINDS:
                raise OpLibraryError(
                    f"plugin {self.plugin}: {where}: attribute '{name}' has kind '{kind}', "
                    f"not one of {', '.join(ATTRIBUTE_KINDS)}"
                )
            declared[name] = Attribute(kind, default)
        formats = _checked_layout(self.plugin, where, engine, len(inputs), fusion, formats)
        gradient = None
        if vjp is not None:
            gradient = _gradient(self, domain, op_type, tuple(inputs), tuple(outputs), declared, engine, work, vjp)
            self.gradients[_key(domain, gradient.op_type)] = gradient
        definition = CustomOpDef(
            self.name,
            self.plugin,
            domain,
            op_type,
            (first, last),
            tuple(inputs),
            tuple(outputs),
            declared,
            shape,
            kernel,
            engine,
            work,
            gradient,
            fusion=fusion,
            formats=formats,
        )
        self.ops[_key(domain, op_type)] = definition
        return definition


def _checked_layout(
    plugin: str, where: str, engine: str, inputs: int, fusion: str | None, formats: Any
) -> tuple[str, ...]:
    """The declared `formats` as a tuple, after refusing an unknown fusion kind or format, and
    either on an op without inputs (elementwise maps its first input's elements) or off the Vector
    (a fused group is an AI Core Vector kernel; the Cube and the AI CPU take their operands as they
    are)."""
    if fusion is not None and fusion not in FUSION_KINDS:
        raise OpLibraryError(
            f"plugin {plugin}: {where}: fusion '{fusion}' is not one of {', '.join(FUSION_KINDS)} "
            "(or None: never fused)"
        )
    if isinstance(formats, str) or not all(isinstance(f, str) for f in formats):
        raise OpLibraryError(f"plugin {plugin}: {where}: formats must be a tuple of format names, e.g. ('NC1HWC0',)")
    for f in formats:
        if f not in FORMATS:
            raise OpLibraryError(f"plugin {plugin}: {where}: format '{f}' is not one of {', '.join(FORMATS)}")
    for what, declared in (("fusion", fusion is not None), ("formats", bool(formats))):
        if declared and not inputs:
            raise OpLibraryError(f"plugin {plugin}: {where}: {what} is declared for an op without inputs")
        if declared and engine != "vector":
            raise OpLibraryError(
                f"plugin {plugin}: {where}: {what} is declared for an op on the {engine} engine; "
                "only a vector op fuses or computes in a storage format"
            )
    return tuple(formats)


def _gradient(
    library: OpLibrary,
    domain: str,
    op_type: str,
    inputs: tuple[str, ...],
    outputs: tuple[str, ...],
    attributes: dict[str, Attribute],
    engine: str,
    work: WorkFunction,
    vjp: VjpFunction,
) -> CustomOpDef:
    """The gradient op of a registration with a `vjp`: operands the forward's inputs, then one
    cotangent per output; results one cotangent per input, of the input's type; its work is the
    forward's, twice."""
    n = len(inputs)

    def shape(specs: Sequence[TensorSpec], attrs: Mapping[str, Any]) -> list[TensorSpec]:
        return list(specs[:n])

    def kernel(arrays: Sequence[np.ndarray], attrs: Mapping[str, Any]) -> list[np.ndarray]:
        return list(vjp(arrays[:n], arrays[n:], attrs))

    def gradient_work(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec], attrs: Mapping[str, Any]) -> int:
        return 2 * int(work(ins[:n], ins[n:], attrs))

    return CustomOpDef(
        library.name,
        library.plugin,
        domain,
        f"{op_type}Grad",
        (1, None),
        (*inputs, *(f"d{o}" for o in outputs)),
        tuple(f"d{i}" for i in inputs),
        attributes,
        shape,
        kernel,
        engine,
        gradient_work,
        gradient_of=op_type,
    )


_LOADING: ContextVar[OpLibrary | None] = ContextVar("ge_op_library_loading", default=None)
_INSTALLED: ContextVar[tuple[OpLibrary, ...]] = ContextVar("ge_op_libraries", default=())


def register_op(op_type: str, **declaration: Any) -> CustomOpDef:
    """Registers a custom operator into the plugin being loaded (`load_op_library`).

    Keywords: `domain` (the ONNX domain), `opsets` (first and last version of the domain it maps;
    default every version), `inputs` and `outputs` (names), `attributes` ({name: kind} or
    {name: (kind, default)}, kinds "int", "float", "str", "ints", "floats"), `shape` (input
    `TensorSpec`s and attributes -> one `TensorSpec` per output), `kernel` (input arrays and
    attributes -> output arrays), `engine` ("cube", "vector" or "aicpu") and `work` (input and
    output specs and attributes -> MACs on the Cube, operations otherwise); optionally `vjp` (input
    arrays, the outputs' cotangents and attributes -> one cotangent per input), which makes the op
    differentiable through a `<type>Grad` op of the same library; `fusion="elementwise"` (the op
    is elementwise and may follow in a fused group); `formats` (storage formats among "NC1HWC0",
    "FRACTAL_NZ" it may compute in, carrying its first operand's)."""
    library = _LOADING.get()
    if library is None:
        raise OpLibraryError(
            f"register_op({op_type!r}) outside a plugin: call it in a file loaded with --load-op-library "
            "or ge.load_op_library, or call OpLibrary.register"
        )
    return library.register(op_type, **declaration)


def load_op_library(path: str | Path) -> OpLibrary:
    """Runs the plugin file (it is Python, run as is: only for a file the user named) and returns the
    operators its `register_op` calls registered."""
    path = str(path)
    try:
        source = Path(path).read_bytes()
    except OSError as e:
        raise OpLibraryError(f"plugin {path}: {e.strerror}") from None
    library = OpLibrary(Path(path).stem, path, hashlib.sha256(source).hexdigest())
    token = _LOADING.set(library)
    try:  # the bytes hashed are the bytes run
        exec(compile(source, path, "exec"), {"__name__": "__ge_op_library__", "__file__": path})
    except OpLibraryError:
        raise
    except Exception as e:  # the user's code failed: its own error, in one line
        text = str(e).strip().splitlines()
        raise OpLibraryError(f"plugin {path}: {type(e).__name__}{f': {text[0]}' if text else ''}") from None
    finally:
        _LOADING.reset(token)
    if not library.ops:
        raise OpLibraryError(f"plugin {path} registers no operator (call ge.register_op)")
    return library


@contextmanager
def op_library(*libraries: OpLibrary) -> Iterator[tuple[OpLibrary, ...]]:
    """The libraries are known (to the importer, `ge.custom`'s verifier, kernel and cost) while the
    block runs, in addition to those of enclosing blocks; two libraries may not share a name or map
    one type."""
    scope = (*_INSTALLED.get(), *libraries)
    names: dict[str, str] = {}
    types: dict[tuple[str, str], CustomOpDef] = {}
    for library in scope:
        if library.name in names and names[library.name] != library.plugin:
            raise OpLibraryError(f"plugins {names[library.name]} and {library.plugin} have one name '{library.name}'")
        names[library.name] = library.plugin
        for key, definition in library.ops.items():
            other = types.get(key)
            if other is not None and other is not definition:
                raise OpLibraryError(
                    f"plugin {library.plugin}: {definition.qualified} is already registered by plugin {other.plugin}"
                )
            types[key] = definition
    token = _INSTALLED.set(scope)
    try:
        yield scope
    finally:
        _INSTALLED.reset(token)


def installed() -> tuple[OpLibrary, ...]:
    return _INSTALLED.get()


def find(library: str, domain: str, op_type: str) -> CustomOpDef | None:
    """The registration a `ge.custom` op names, if its library is loaded."""
    for lib in _INSTALLED.get():
        if lib.name == library:
            key = _key(domain, op_type)
            return lib.ops.get(key) or lib.gradients.get(key)
    return None


def mapping(domain: str, op_type: str) -> CustomOpDef | None:
    """The loaded registration of an ONNX (domain, type), whatever its opset range."""
    for lib in _INSTALLED.get():
        found = lib.ops.get(_key(domain, op_type))
        if found is not None:
            return found
    return None


__all__ = [
    "FORMATS",
    "FUSION_KINDS",
    "TensorSpec",
    "CustomOpDef",
    "OpLibrary",
    "OpLibraryError",
    "register_op",
    "load_op_library",
    "op_library",
    "installed",
    "find",
    "mapping",
]
