"""insert-trans-data: turns storage-format decisions into types and `ge.trans_data` ops.

An op annotated `ge.storage = {X = "NC1HWC0", Y = "NC1HWC0"}` (by `assign-formats`, or by hand)
needs the named operands in those storage formats and produces the named results in them. This pass
retypes the named results (`tensor<1x64x56x56xf32, #ge.fmt<NCHW, NC1HWC0>>`) and, wherever a value
is stored otherwise than its user needs, inserts a `ge.trans_data` right before the user (one per
value and format in a block, shared by the later users). What a user needs:

- an annotated operand: the annotated storage format;
- `func.return`: the function's declared result type (graph outputs keep their origin storage);
- any other operand: the type the value had before this pass (the user keeps what it was given).

The annotations are removed. Before:

    %y = ge.relu %x {ge.storage = {x = "NC1HWC0", y = "NC1HWC0"}} : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>
    func.return %y : tensor<1x3x8x8xf32>

after:

    %0 = ge.trans_data %x {src_format = "ND", dst_format = "NC1HWC0"}
        : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32, #ge.fmt<NCHW, NC1HWC0>>
    %y = ge.relu %0 : (tensor<1x3x8x8xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x3x8x8xf32, #ge.fmt<NCHW, NC1HWC0>>
    %1 = ge.trans_data %y {src_format = "NC1HWC0", dst_format = "ND"} : (...) -> tensor<1x3x8x8xf32>
    func.return %1 : tensor<1x3x8x8xf32>
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, ModuleOp, StringAttr, TensorType
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from ge.ge_dialects.ge.base import GeOp, describe, name_after
from ge.ge_dialects.ge.layout import STORAGE_FORMATS, TransDataOp, cannot_store, with_storage
from ge.passes import remarks

PASS = "insert-trans-data"
ANNOTATION = "ge.storage"
"""The attribute that asks for storage formats: operand or result definition name -> format."""


def _flat_names(op: IRDLOperation, defs) -> list[str]:
    names: list[str] = []
    for name, _ in defs:
        value = getattr(op, name)
        if value is None:
            continue
        names.extend([name] if isinstance(value, SSAValue) else [name] * len(value))
    return names


def operand_names(op: Operation) -> list[str]:
    """The definition name of each operand, by position (empty for ops without IRDL definitions)."""
    if not isinstance(op, IRDLOperation):
        return []
    return _flat_names(op, op.get_irdl_definition().operands)


def result_names(op: Operation) -> list[str]:
    if not isinstance(op, IRDLOperation):
        return []
    return _flat_names(op, op.get_irdl_definition().results)


def annotate(op: GeOp, formats: dict[str, str]) -> None:
    """Asks for storage formats on `op` (merged into an existing annotation)."""
    merged = {**annotation(op), **formats}
    op.attributes[ANNOTATION] = DictionaryAttr({k: StringAttr(v) for k, v in merged.items()})


def annotation(op: Operation) -> dict[str, str]:
    attr = op.attributes.get(ANNOTATION)
    if attr is None:
        return {}
    if not isinstance(attr, DictionaryAttr) or not all(isinstance(v, StringAttr) for v in attr.data.values()):
        raise DiagnosticException(
            f'{describe(op)}: {ANNOTATION} must be a dictionary of format strings, e.g. {{X = "NC1HWC0"}}'
        )
    formats = {k: v.data for k, v in attr.data.items() if isinstance(v, StringAttr)}  # all are (checked above)
    known = set(operand_names(op)) | set(result_names(op))
    for name, fmt in formats.items():
        if name not in known:
            raise DiagnosticException(
                f"{describe(op)}: {ANNOTATION} names '{name}', which is no operand or result of {op.name}"
            )
        if fmt not in STORAGE_FORMATS:
            raise DiagnosticException(
                f"{describe(op)}: {ANNOTATION} asks for unknown format {fmt} for "
                f"'{name}'; expected one of {', '.join(STORAGE_FORMATS)}"
            )
    return formats


def _checked(op: Operation, name: str, t: TensorType, storage: str) -> TensorType:
    """`t` stored in `storage`, or a diagnostic naming the op when it cannot be."""
    reason = cannot_store(t, storage)
    if reason is not None:
        raise DiagnosticException(f"{describe(op)}: '{name}' cannot be stored in {storage}: {reason}")
    return with_storage(t, storage)


@dataclass
class _Materializer:
    pass_name: str
    original: dict[SSAValue, Attribute]
    made: dict[tuple[SSAValue, Attribute, Block | None], SSAValue]
    why: Callable[[Operation], str | None] = field(default=lambda op: None)
    """Why an op did not take its operand's format (assign-formats' refusals), for the remarks."""
    count: int = 0

    def needed(
        self, op: Operation, index: int, value: SSAValue, formats: dict[str, str], names: list[str]
    ) -> Attribute:
        if isinstance(op, func.ReturnOp):
            fn = op.parent_op()
            if isinstance(fn, func.FuncOp):
                return fn.function_type.outputs.data[index]
        name = names[index] if index < len(names) else None
        if name in formats and isinstance(value.type, TensorType):
            return _checked(op, name, value.type, formats[name])
        return self.original.get(value, value.type)

    def convert(self, op: Operation, value: SSAValue, want: Attribute) -> SSAValue:
        """`value` converted to the type `want` (a tensor type, else a DiagnosticException)."""
        key = (value, want, op.parent_block())
        converted = self.made.get(key)
        if converted is not None:
            return converted
        if not isinstance(value.type, TensorType) or not isinstance(want, TensorType):
            raise DiagnosticException(f"{describe(op)}: cannot convert {value.type} to {want}")
        trans = name_after(TransDataOp.to(value, want), value, "trans_data")
        try:
            trans.verify()
        except VerifyException as e:
            raise DiagnosticException(f"{describe(op)}: needs its operand as {want}: {e}") from None
        Rewriter.insert_op(trans, InsertPoint.before(op))
        self.made[key] = trans.dst
        self.count += 1
        remarks.emit(
            self.pass_name,
            "applied",
            "insert",
            [op],
            f"{describe(op)} needs {trans.p('dst_format')}, its operand is stored in {trans.p('src_format')}"
            + (f" ({reason})" if (reason := self.why(op)) is not None else ""),
        )
        return trans.dst

    def run(self, op: Operation) -> None:
        formats = annotation(op)
        names = operand_names(op)
        for i, value in enumerate(op.operands):
            want = self.needed(op, i, value, formats, names)
            if want != value.type:
                op.operands[i] = self.convert(op, value, want)
        for name, result in zip(result_names(op), tuple(op.results)):
            if name in formats and isinstance(result.type, TensorType):
                want = _checked(op, name, result.type, formats[name])
                if want != result.type:
                    old = result.type
                    self.original[Rewriter.replace_value_with_new_type(result, want)] = old
        if formats:
            del op.attributes[ANNOTATION]


def materialize(module: ModuleOp, pass_name: str = PASS, why: Callable[[Operation], str | None] | None = None) -> int:
    """Applies every `ge.storage` annotation of `module`; returns how many TransData it inserted.
    `why` says, per op, why it did not take its operand's format (each insert remark tells)."""
    m = _Materializer(pass_name, {}, {}) if why is None else _Materializer(pass_name, {}, {}, why)
    for op in list(module.walk()):
        m.run(op)
    return m.count


@dataclass(frozen=True)
class InsertTransDataPass(ModulePass):
    """Retypes annotated values and inserts `ge.trans_data` where storage formats differ."""

    name = "insert-trans-data"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        materialize(op)
