"""The kernel of ge.custom (ge_dialects/ge/custom.py): the numpy function its registration names,
given the input arrays and attributes; what it returns is checked against the op's result types
like any kernel's (`kernel_impl`), and an exception it raises is one line naming the op and plugin."""

from __future__ import annotations

import numpy as np
from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ge.ge_dialects import ge
from ge.ge_dialects.ge.custom import CustomOp
from ge.interpreter.kernels import DataError
from ge.interpreter.kernels.checked import kernel_impl


def custom(op: CustomOp, ins):
    definition = op.definition()
    try:
        out = definition.kernel([np.asarray(v) for v in ins["inputs"]], op.attribute_values())
        results = tuple(out) if isinstance(out, list | tuple) else (out,)
    except Exception as e:  # the user's function failed: its own error, in one line
        text = str(e).strip().splitlines()
        raise DataError(
            f"{definition.describe()}: the kernel raised {type(e).__name__}{f': {text[0]}' if text else ''}"
        ) from None
    if len(results) != len(op.results):
        given = len(results)
        raise DataError(f"{definition.describe()}: the kernel gave {given} outputs, the op has {len(op.results)}")
    return results


@register_impls
class CustomFunctions(InterpreterFunctions):
    """The interpreter implementation of ge.custom."""

    run_custom = impl(ge.CustomOp)(kernel_impl(custom))
