"""`ge.target = #ge.target<"ascend910b">`: the chip a module is compiled for, carried in the IR.

The first pass that needs a target writes it (from its `target` option, or the default); every later
pass and ge-run read it, so `fuse-ops{target=ascend910}` followed by a lowering without options is
lowered and simulated for the 910. An option that names another chip than the module is an error:
one module is never planned for two chips.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition, param_def
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from ge.target import DEFAULT_TARGET, Target, TargetError, check_target_name, pass_target

TARGET_KEY = "ge.target"
"""The module attribute that holds the module's TargetAttr."""


@irdl_attr_definition
class TargetAttr(ParametrizedAttribute):
    """`#ge.target<"ascend910b">`: one of the known targets (target/*.toml), by name."""

    name = "ge.target"

    chip: StringAttr = param_def()  # type: ignore[assignment]  # xDSL: param_def() without a constraint is typed Attribute

    def __init__(self, chip: str):
        super().__init__(StringAttr(chip))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[StringAttr]:
        with parser.in_angle_brackets():
            return (StringAttr(parser.parse_str_literal("target name")),)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string_literal(self.chip.data)

    def verify(self) -> None:
        try:
            check_target_name(self.chip.data)
        except TargetError as e:
            raise VerifyException(str(e)) from None


def module_target(module: ModuleOp) -> str | None:
    """The target the module names, None when it names none."""
    attr = module.attributes.get(TARGET_KEY)
    if attr is None:
        return None
    if not isinstance(attr, TargetAttr):
        raise DiagnosticException(f'module attribute {TARGET_KEY} must be a #ge.target<"name">, not {attr}')
    return attr.chip.data


def resolve_target_name(module: ModuleOp, given: str | None) -> tuple[str, str]:
    """(target name, where it comes from: "option", "module" or "default") for a module and an
    explicitly given target (None: not given). A given target that differs from the module's is a
    TargetError."""
    declared = module_target(module)
    if given is not None and declared is not None and given != declared:
        raise TargetError(f"target={given} contradicts the module's target {declared}")
    if given is not None:
        return given, "option"
    if declared is not None:
        return declared, "module"
    return DEFAULT_TARGET, "default"


def module_pass_target(pass_name: str, module: ModuleOp, option: str | None, record: bool = True) -> Target:
    """The target of a pass whose `target` option is `option` (None: not given), written into the
    module unless `record` is false (a pass that only reads the cost model): the option, else the
    module's, else the default. An unknown target or one that contradicts the module's is the
    pass's one-line error."""
    if option is not None:
        pass_target(pass_name, option)  # an unknown name is reported as such, before any comparison
    try:
        name, _ = resolve_target_name(module, option)
    except TargetError as e:
        raise DiagnosticException(f"{pass_name}: {e}") from None
    target = pass_target(pass_name, name)
    if record:
        module.attributes[TARGET_KEY] = TargetAttr(name)
    return target
