"""assign-formats: chooses a storage format for every value, GE style, then inserts TransData.

The rules are data (`rules.py`); this module is the engine. It walks the ops in program order and
keeps the storage format planned for each value (initially the one its type has):

1. anchor rules: an op that wants a format (Conv: NC1HWC0 activations and FRACTAL_Z weights;
   pools and BatchNorm: NC1HWC0; MatMul/Gemm: FRACTAL_NZ where the benefit rule holds) asks for it
   on the listed operands and results, when every check of the rule passes;
2. follow rules: a format-agnostic op (elementwise, Clip, Dropout; Softmax and LayerNorm over the
   last axis for FRACTAL_NZ) whose full-shape operand arrives in a format the rule carries computes
   in that format: its full-shape operands and its results take it, so the format flows along the
   chain (forward; a TransData goes right before the first op that cannot take the format);
3. everything else, and graph inputs and outputs, keep their storage (= origin) format.

The choices become `ge.storage` annotations, which `insert-trans-data` materializes (with
`insert=false` the annotated IR is printed instead). Each decision is a remark: `applied` with the
formats (and the benefit, for FRACTAL_NZ: the MACs run on the Cube), `rejected` with the reason.

Options: `nz=false` turns FRACTAL_NZ off; `nz-min-dim` is the smallest M, K and N for FRACTAL_NZ.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass

from ge.ge_dialects.ge.base import GeOp, describe
from ge.ge_dialects.ge.layout import TransDataOp, c0_of, cannot_store, is_trivial, origin_of, storage_of
from ge.ge_dialects.ge.types import shape_of
from ge.passes import remarks
from ge.passes.layout.insert_trans_data import annotate, materialize
from ge.passes.layout.rules import BROADCASTS, AnchorRule, FollowRule, Options, anchors_of, follower_of, names_present

PASS = "assign-formats"


def _value(op: GeOp, name: str) -> SSAValue:
    return getattr(op, name)


def _cannot_store(op: GeOp, names: list[str], storage: str) -> str | None:
    """Why one of the named values cannot be stored in `storage` (None: all can)."""
    for name in names:
        t = _value(op, name).type
        if not isinstance(t, TensorType):
            return f"'{name}' is not a tensor"
        reason = cannot_store(t, storage)
        if reason is not None:
            return f"'{name}': {reason}"
    return None


@dataclass
class _Planner:
    options: Options
    planned: dict[SSAValue, str]

    def storage(self, value: SSAValue) -> str:
        return self.planned.get(value, storage_of(value.type) if isinstance(value.type, TensorType) else "ND")

    def stored_otherwise(self, value: SSAValue) -> str | None:
        """The value's planned storage format when it is a relayout (not its origin), else None."""
        t = value.type
        if not isinstance(t, TensorType):
            return None
        storage = self.storage(value)
        return None if is_trivial(origin_of(t), storage, len(t.get_shape())) else storage

    def assign(self, op: GeOp, formats: dict[str, str], results: list[str]) -> None:
        annotate(op, formats)
        for name in results:
            self.planned[_value(op, name)] = formats[name]

    # -- anchor rules -------------------------------------------------------------------------------
    def anchor(self, op: GeOp, rule: AnchorRule) -> None:
        operands, results = names_present(op, rule.operands), names_present(op, rule.results)
        reason = next((r for r in (check(op, self.options) for check in rule.checks) if r), None)
        if reason is None:
            reason = _cannot_store(op, operands + results, rule.storage)
        if reason is not None:
            remarks.emit(PASS, "rejected", rule.name, [op],
                         f"{describe(op)}: {', '.join(operands + results)} not in {rule.storage}: {reason}")
            return
        self.assign(op, {n: rule.storage for n in operands + results}, results)
        benefit = rule.benefit(op) if rule.benefit else None
        remarks.emit(PASS, "applied", rule.name, [op],
                     f"{describe(op)}: {', '.join(operands + results)} in {rule.storage}", benefit)

    # -- follow rules -------------------------------------------------------------------------------
    def follow(self, op: GeOp, rule: FollowRule) -> None:
        results = names_present(op, rule.results)
        out_shape = shape_of(_value(op, results[0]).type)
        operands = names_present(op, rule.operands)
        full = [n for n in operands if shape_of(_value(op, n).type) == out_shape]
        broadcast = [n for n in operands if n not in full]
        arriving = [(n, s) for n in full if (s := self.stored_otherwise(_value(op, n))) is not None]
        if not arriving:
            return  # nothing to carry
        name, storage = arriving[0]
        reason = None
        if storage not in rule.formats:
            reason = f"{rule.name} does not carry {storage} (operand '{name}')"
        if reason is None:
            reason = next((r for r in (check(op, self.options) for check in rule.checks) if r), None)
        if reason is None:
            reason = self._c0_mismatch(op, full + results)
        if reason is None:
            reason = self._bad_broadcast(op, broadcast, storage, out_shape)
        if reason is None:
            reason = _cannot_store(op, full + results, storage)
        if reason is not None:
            remarks.emit(PASS, "rejected", rule.name, [op],
                         f"{describe(op)} does not carry {storage} from '{name}': {reason}")
            return
        self.assign(op, {n: storage for n in full + results}, results)
        remarks.emit(PASS, "applied", rule.name, [op], f"{describe(op)} carries {storage} from '{name}'")

    @staticmethod
    def _c0_mismatch(op: GeOp, names: list[str]) -> str | None:
        c0s = {n: c0_of(_value(op, n).type.element_type) for n in names}
        if len(set(c0s.values())) > 1:
            shown = ", ".join(f"'{n}' C0={c}" for n, c in c0s.items())
            return f"its values have different C0 ({shown}): not a pure elementwise map in storage"
        return None

    def _bad_broadcast(self, op: GeOp, names: list[str], storage: str, out_shape) -> str | None:
        what, fits = BROADCASTS.get(storage, ("nothing else", None))
        for n in names:
            shape = shape_of(_value(op, n).type)
            if all(d == 1 for d in shape):
                continue  # a scalar broadcasts in every format
            if fits is None or not fits(shape, out_shape):
                return (f"operand '{n}' of shape {list(shape)} broadcasts to {list(out_shape)} in a way "
                        f"{storage} cannot (only scalars and {what})")
            if self.stored_otherwise(_value(op, n)) is not None:
                return f"broadcast operand '{n}' is stored in {self.storage(_value(op, n))}"
        return None


def plan(module: ModuleOp, options: Options) -> None:
    """Annotates `module`'s ops with the storage formats the rules choose."""
    planner = _Planner(options, {})
    for op in module.walk():
        if not isinstance(op, GeOp) or isinstance(op, TransDataOp):
            continue
        anchors = anchors_of(op)
        for rule in anchors:
            planner.anchor(op, rule)
        if not anchors and (follower := follower_of(op)) is not None:
            planner.follow(op, follower)


@dataclass(frozen=True)
class AssignFormatsPass(ModulePass):
    """Chooses storage formats by the rule tables and inserts the TransData they need."""

    name = "assign-formats"

    nz: bool = True
    """Use FRACTAL_NZ for matmul/gemm operands where the benefit rule holds."""

    nz_min_dim: int = 16
    """FRACTAL_NZ only when M, K and N are all at least this."""

    insert: bool = True
    """Insert the TransData (run insert-trans-data); false leaves the `ge.storage` annotations."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        plan(op, Options(nz=self.nz, nz_min_dim=self.nz_min_dim))
        if self.insert:
            materialize(op, PASS)
