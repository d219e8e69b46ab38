"""The differential numerics check: the ge-level interpreter run before and after every pass.

The interpreter is the reference; a pass is correct on a model when the outputs after it equal the
outputs before it. Equal means, for every element of every output,

    |after - before| <= atol + rtol * |before|

(rtol bounds the error relative to each element, atol covers elements near zero), NaN and infinities
in the same places, and integer or boolean outputs exactly equal. Each pass is checked against the
pass before it, and the end of the pipeline against its start, so errors that each pass keeps under
the bound cannot pile up unseen.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ge.interpreter.runner import run

DEFAULT_RTOL = 1e-4
DEFAULT_ATOL = 1e-5


class NumericsError(Exception):
    """A pass (or the whole pipeline) changed the outputs by more than the tolerance."""


@dataclass(frozen=True)
class Tolerance:
    rtol: float = DEFAULT_RTOL
    atol: float = DEFAULT_ATOL

    def __post_init__(self) -> None:
        for name in ("rtol", "atol"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise ValueError(f"{name} must be a finite number >= 0, not {value}")

    def __str__(self) -> str:
        return f"|after-before| <= {self.atol:.3g} + {self.rtol:.3g}*|before|"


@dataclass(frozen=True)
class Difference:
    """The worst element of one output: `ratio` is |after-before| / (atol + rtol*|before|), so
    above 1 fails; a shape, NaN / infinity or integer mismatch is an infinite ratio."""

    ratio: float
    where: str = ""

    @property
    def ok(self) -> bool:
        return self.ratio <= 1.0


def _at(index: tuple[int | np.integer, ...], before: np.ndarray, after: np.ndarray) -> str:
    def value(x: np.ndarray) -> str:
        return str(int(x[index])) if x.dtype.kind in "biu" else f"{float(x[index]):.8g}"

    return f"at {[int(i) for i in index]}: before {value(before)}, after {value(after)}"


def compare(before: np.ndarray, after: np.ndarray, tolerance: Tolerance) -> Difference:
    """The element-wise check of one output."""
    before, after = np.asarray(before), np.asarray(after)
    if before.shape != after.shape:
        return Difference(math.inf, f"shape {list(before.shape)} became {list(after.shape)}")
    if before.size == 0:
        return Difference(0.0)
    exact = before.dtype.kind in "biu" and after.dtype.kind in "biu"
    a = before.astype(np.float64)
    b = after.astype(np.float64)
    if exact:
        wrong = a != b
        if wrong.any():
            return Difference(math.inf, _at(np.unravel_index(int(np.argmax(wrong)), a.shape), before, after))
        return Difference(0.0)
    finite_a, finite_b = np.isfinite(a), np.isfinite(b)
    special = ~(finite_a & finite_b)
    # NaN where NaN was, the same infinity where an infinity was.
    mismatch = special & ~((np.isnan(a) & np.isnan(b)) | (a == b))
    if mismatch.any():
        return Difference(math.inf, _at(np.unravel_index(int(np.argmax(mismatch)), a.shape), before, after))
    with np.errstate(invalid="ignore", divide="ignore"):
        diff = np.where(special, 0.0, np.abs(b - a))
        bound = tolerance.atol + tolerance.rtol * np.where(special, 0.0, np.abs(a))
        ratio = np.where(diff == 0, 0.0, diff / bound)  # a zero bound: any difference is infinite
    worst = int(np.argmax(ratio))
    index = np.unravel_index(worst, a.shape)
    value = float(ratio.flat[worst])
    return Difference(value, _at(index, before, after) if value > 0 else "")


def relative_error(before: np.ndarray, after: np.ndarray) -> float:
    """One number per output for reports and benchmarks: max|after - before| / max|before|
    (infinite for a shape or NaN / infinity mismatch). The pass check uses `compare`."""
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
    """The check of one step: `stage` is `after <pass>` or `end vs start`."""

    stage: str
    differences: dict[str, Difference]
    tolerance: Tolerance

    @property
    def worst(self) -> float:
        """The largest ratio to the bound over all outputs (at most 1 passes)."""
        return max((d.ratio for d in self.differences.values()), default=0.0)

    @property
    def ok(self) -> bool:
        return self.worst <= 1.0

    def __str__(self) -> str:
        return (
            f"numerics: {self.stage}: worst element at {self.worst:.3g} of the bound "
            f"({self.tolerance}) {'ok' if self.ok else 'MISMATCH'}"
        )

    def error(self) -> NumericsError:
        name = max(self.differences, key=lambda k: self.differences[k].ratio)
        worst = self.differences[name]
        return NumericsError(
            f"numerics: {self.stage}: output '{name}' changed {worst.where} (allowed {self.tolerance})"
        )


@dataclass
class DifferentialChecker:
    """Observer for passes.pipeline: compares each pass's outputs with the previous ones, and
    (`finish`) the last outputs with the first."""

    inputs: Mapping[str, np.ndarray]
    start_outputs: dict[str, np.ndarray]
    tolerance: Tolerance = field(default_factory=Tolerance)
    reports: list[PassNumerics] = field(default_factory=list)
    reference: dict[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.reference:
            self.reference = self.start_outputs

    @staticmethod
    def start(module: ModuleOp, inputs: Mapping[str, np.ndarray], tolerance: Tolerance | None = None):
        return DifferentialChecker(inputs, run(module, inputs), tolerance or Tolerance())

    def _check(self, stage: str, before: dict[str, np.ndarray], after: dict[str, np.ndarray]) -> None:
        differences = {
            name: compare(before[name], after.get(name, np.array(np.nan)), self.tolerance) for name in before
        }
        report = PassNumerics(stage, differences, self.tolerance)
        self.reports.append(report)
        if not report.ok:
            raise report.error()

    def __call__(self, pass_: ModulePass, module: ModuleOp) -> None:
        outputs = run(module, self.inputs)
        self._check(f"after {pass_.name}", self.reference, outputs)
        self.reference = outputs

    def finish(self) -> None:
        """The end of the pipeline against its start (the outputs after the last pass observed)."""
        if self.reference is not self.start_outputs:
            self._check("end vs start", self.start_outputs, self.reference)
