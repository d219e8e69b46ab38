"""`ge.custom`: an operator a user's plugin registers (ge_dialects/op_library.py), as one generic
op. Its properties name the library and the ONNX (domain, type) it imports from, its `attrs` hold
the registered attributes; the registration, looked up while its library is loaded
(`op_library`), is its shape function (so its verifier), its kernel, its engine and its work.

    %y = ge.custom %x {attrs = {alpha = 2.0 : f32}, domain = "com.example", library = "example_ops",
                       op_type = "ScaledSoftplus"} : (tensor<2x3xf32>) -> tensor<2x3xf32>

Without its library the op still parses and prints, but does not verify, run or cost: the message
says which library to load.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any, ClassVar

from xdsl.dialects.builtin import DictionaryAttr, StringAttr, TensorType
from xdsl.ir import SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from ge.ge_dialects.ge.base import GeOp, InferArgs, _engine_of_class, describe, to_attribute, to_python
from ge.ge_dialects.ge.facts import Carries, Engine, RunsOn, StorageFormats
from ge.ge_dialects.ge.grad import GradBuilder, NotDifferentiable
from ge.ge_dialects.ge.types import element_type_of, numpy_dtype, shape_of, tensor
from ge.ge_dialects.op_library import CustomOpDef, TensorSpec, find


def _one_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0]}" if text else type(e).__name__


def spec_of(t: Any) -> TensorSpec:
    assert isinstance(t, TensorType)
    return TensorSpec(shape_of(t), numpy_dtype(t.element_type))


class _EngineOf:
    """`engine_class` of `ge.custom`: asked of the class (the tables derived from ALL_OPS) it is
    the class's `RunsOn` (Vector, the generic op's default); asked of an op, its registration's."""

    def __get__(self, op: CustomOp | None, owner: type[CustomOp]):
        if op is None:
            return lambda: _engine_of_class(owner)
        return lambda: Engine(op.definition().engine)


@irdl_op_definition
class CustomOp(GeOp):
    """A registered custom operator: `inputs` to `outputs` as its library's registration of
    (`domain`, `op_type`) computes, with its attributes `attrs`."""

    name = "ge.custom"
    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    library = prop_def(StringAttr)
    domain = prop_def(StringAttr)
    op_type = prop_def(StringAttr)
    attrs = opt_prop_def(DictionaryAttr)
    traits = traits_def(
        Pure(), RunsOn(Engine.VECTOR), StorageFormats(Carries("custom-formats", None, ("inputs",), ("outputs",)))
    )
    PRECISION: ClassVar = "keep"  # the registration's dtypes are what its kernel computes in

    @classmethod
    def build_for(
        cls, definition: CustomOpDef, inputs: Sequence[Any], attributes: Mapping[str, Any], name: str | None = None
    ) -> CustomOp:
        """The op of `definition` on `inputs`, typed by its shape function; raises VerifyException
        for a wrong input count or attribute."""
        where = f"{cls.name} '{name}'" if name else cls.name
        try:
            values = definition.attribute_values(attributes)
        except ValueError as e:
            raise VerifyException(f"{where}: {e}") from None
        attrs = DictionaryAttr({k: to_attribute(definition.attributes[k].kind, v) for k, v in values.items()})
        props = {
            "library": definition.library,
            "domain": definition.domain,
            "op_type": definition.op_type,
            "attrs": attrs,
        }
        op = cls.create({"inputs": list(inputs)}, props, num_results=len(definition.outputs), name=name)
        assert isinstance(op, CustomOp)
        return op

    # -- the registration -------------------------------------------------------------------------
    def definition(self) -> CustomOpDef:
        """The registration the op names, from the loaded libraries (VerifyException when its
        library is not loaded)."""
        names = (self.library.data, self.domain.data, self.op_type.data)
        found = find(*names)
        if found is None:
            raise VerifyException(f"{describe(self)}: {_not_loaded(*names)}")
        return found

    def attribute_values(self) -> dict[str, Any]:
        """The attributes as Python values (what the registration's functions receive)."""
        given = self.attrs.data if self.attrs is not None else {}
        return {k: to_python(v) for k, v in given.items()}

    @classmethod
    @cache
    def property_kinds(cls) -> dict[str, str]:
        """`attrs` is a dictionary of the registration's kinds, not one property kind."""
        return {"library": "str", "domain": "str", "op_type": "str", "attrs": "dict"}

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        library, domain, op_type = (a.prop(k) for k in ("library", "domain", "op_type"))
        definition = find(library, domain, op_type)
        if definition is None:
            raise a.fail(_not_loaded(library, domain, op_type))
        inputs = a.values("inputs")
        if len(inputs) != len(definition.inputs):
            raise a.fail(
                f"{definition.describe()} takes {len(definition.inputs)} inputs "
                f"({', '.join(definition.inputs)}), {len(inputs)} given"
            )
        attrs_attr = a.props.get("attrs")
        given = {k: to_python(v) for k, v in attrs_attr.data.items()} if isinstance(attrs_attr, DictionaryAttr) else {}
        try:
            attrs = definition.attribute_values(given)
        except ValueError as e:
            raise a.fail(str(e)) from None
        specs = [spec_of(v.type) for v in inputs]
        try:
            out = list(definition.shape(specs, attrs))
        except Exception as e:  # the user's function failed: its own error, in one line
            raise a.fail(f"{definition.describe()}: the shape function raised {_one_line(e)}") from None
        if len(out) != len(definition.outputs):
            raise a.fail(
                f"{definition.describe()}: the shape function gives {len(out)} outputs, "
                f"the registration declares {len(definition.outputs)}"
            )
        types = []
        for i, spec in enumerate(out):
            try:
                shape, dtype = (spec.shape, spec.dtype) if isinstance(spec, TensorSpec) else spec
                types.append(tensor(element_type_of(dtype), [None if d is None else int(d) for d in shape]))
            except (TypeError, ValueError, VerifyException) as e:
                raise a.fail(
                    f"{definition.describe()}: the shape function's output #{i} is not a TensorSpec "
                    f"of a ge dtype ({_one_line(e)})"
                ) from None
        if definition.elementwise:
            _check_elementwise(a, definition, specs[0], types)
        return types

    # -- op facts -------------------------------------------------------------------------------
    def fusion(self) -> str | None:
        """How the op may join a fused group, as its registration declares (`FUSION_KINDS`; None:
        never): one class serves every plugin's op, so the fusion rules ask the op."""
        return self.definition().fusion

    def formats(self) -> tuple[str, ...]:
        """The storage formats its registration lets it compute in (carried from its first operand)."""
        return self.definition().formats

    def engine(self) -> Engine:
        return Engine(self.definition().engine)

    def _work(self) -> int:
        definition = self.definition()
        ins = [spec_of(v.type) for v in self.inputs]
        outs = [spec_of(r.type) for r in self.results]
        try:
            work = int(definition.work(ins, outs, self.attribute_values()))
        except Exception as e:
            raise VerifyException(
                f"{describe(self)}: {definition.describe()}: the work function raised {_one_line(e)}"
            ) from None
        if work < 0:
            raise VerifyException(f"{describe(self)}: {definition.describe()}: the work function gave {work} < 0")
        return work

    def macs(self) -> int:
        """The registration's work, on the Cube."""
        return self._work() if self.engine().uses_cube else 0

    def vector_elements(self) -> int:
        """The registration's work, on the Vector or the AI CPU."""
        return 0 if self.engine().uses_cube else self._work()

    def transcendental_elements(self) -> int:
        return 0

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """The registration's `vjp`, as its `<type>Grad` op: the inputs and the results' cotangents
        (zeros for a result the loss does not read) to the inputs' cotangents."""
        definition = self.definition()
        if definition.gradient is None:
            raise NotDifferentiable(f"{describe(self)}: {definition.describe()} registers no vjp")
        dys = [dy if dy is not None else g.zeros(r) for dy, r in zip(cotangents, self.results)]
        op = CustomOp.build_for(definition.gradient, [*self.inputs, *dys], self.attribute_values(), g.name)
        g.insert(op)
        return list(op.results)

    def verify(self, verify_nested_ops: bool = True) -> None:
        """Always checked: the verdict depends on the loaded registration, which the content-keyed
        memo of `GeOp.verify` does not see."""
        IRDLOperation.verify(self, verify_nested_ops)


CustomOp.engine_class = _EngineOf()  # type: ignore[assignment, method-assign]  # per op: its registration's engine


def _check_elementwise(a: InferArgs, definition: CustomOpDef, first: TensorSpec, types: list[TensorType]) -> None:
    """An op declared elementwise (fusion, formats) gives every output its first input's shape:
    fusion and layout read element i of an output as element i of that input."""
    what = f"fusion='{definition.fusion}'" if definition.fusion else f"formats {definition.formats} (elementwise)"
    for i, t in enumerate(types):
        if shape_of(t) != first.shape:
            raise a.fail(
                f"{definition.describe()} declares {what}, but its shape function gives "
                f"output #{i} shape {list(shape_of(t))} for input {definition.inputs[0]} of shape {list(first.shape)}"
            )


def _not_loaded(library: str, domain: str, op_type: str) -> str:
    qualified = f"{domain}.{op_type}" if domain else op_type
    return f"custom operator {qualified} of library '{library}' is not loaded (give --load-op-library {library}.py)"


CUSTOM_OPS = [CustomOp]

__all__ = ["CustomOp", "CUSTOM_OPS"]
