"""The differential numerics check: the ge-level interpreter run before and after every pass.

The interpreter is the reference; a pass is correct on a model when the outputs after it equal the
outputs before it. The error of an output is max|after - before| / max|before| (relative to the
output's scale, so near-zero elements do not dominate); a pass that changes precision declares a
looser `numerics_tolerance`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from interpreter.runner import run

DEFAULT_TOLERANCE = 1e-4


class NumericsError(Exception):
    """A pass changed the outputs by more than its tolerance."""


def relative_error(before: np.ndarray, after: np.ndarray) -> float:
    a = np.asarray(before, dtype=np.float64)
    b = np.asarray(after, dtype=np.float64)
    if a.shape != b.shape:
        return float("inf")
    if a.size == 0:
        return 0.0
    finite = np.isfinite(a) & np.isfinite(b)
    if not np.array_equal(np.isfinite(a), np.isfinite(b)) or not np.array_equal(a[~finite], b[~finite]):
        return float("inf")
    scale = float(np.max(np.abs(a[finite]))) if finite.any() else 0.0
    diff = float(np.max(np.abs(a[finite] - b[finite]))) if finite.any() else 0.0
    return diff / scale if scale > 0 else diff


@dataclass
class PassNumerics:
    pass_name: str
    errors: dict[str, float]
    tolerance: float

    @property
    def worst(self) -> float:
        return max(self.errors.values(), default=0.0)

    def __str__(self) -> str:
        verdict = "ok" if self.worst <= self.tolerance else "MISMATCH"
        return f"numerics: after {self.pass_name}: max relative error {self.worst:.3g} " \
               f"(tolerance {self.tolerance:.3g}) {verdict}"


@dataclass
class DifferentialChecker:
    """Observer for passes.pipeline: compares each pass's outputs with the previous ones."""

    inputs: Mapping[str, np.ndarray]
    reference: dict[str, np.ndarray]
    tolerance: float = DEFAULT_TOLERANCE
    reports: list[PassNumerics] = field(default_factory=list)

    @staticmethod
    def start(module: ModuleOp, inputs: Mapping[str, np.ndarray], tolerance: float = DEFAULT_TOLERANCE):
        return DifferentialChecker(inputs, run(module, inputs), tolerance)

    def __call__(self, pass_: ModulePass, module: ModuleOp) -> None:
        outputs = run(module, self.inputs)
        tolerance = max(self.tolerance, getattr(pass_, "numerics_tolerance", 0.0))
        errors = {name: relative_error(self.reference[name], outputs.get(name, np.array(np.nan)))
                  for name in self.reference}
        report = PassNumerics(pass_.name, errors, tolerance)
        self.reports.append(report)
        if report.worst > tolerance:
            name = max(errors, key=errors.get)
            raise NumericsError(f"numerics: pass {pass_.name} changed output '{name}' by {errors[name]:.3g} "
                                f"relative (tolerance {tolerance:.3g})")
        self.reference = outputs
