"""Test support: a pass (or pipeline) must not change what a module computes.

`assert_pass_keeps_numerics(module, weights, inputs, pipeline, rtol, atol)` runs the reference
interpreter on `module`, applies the passes to a clone (the given module is left as it was),
verifies the result, runs it again on the same inputs and compares every output (same names,
shapes and dtypes; values with `rtol`/`atol`, NaNs equal). It returns the transformed module so a
test can check more (op counts, types).

`pipeline` is a pass pipeline string as `ge-opt -p` takes it (`"fold-constants,cse,dce"`, options
included: `"fold-constants{max-elements=64}"`) or a sequence of ModulePass instances.
"""

from __future__ import annotations

import collections
from collections.abc import Mapping, Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline

from ge.ge_dialects.ge.weights import ModuleWeights, attach_weights, clone_with_weights
from ge.interpreter.runner import run
from ge.passes.pipeline import parse_passes
from ge.tools.common import make_context


def pipeline_of(pipeline: str | Sequence[ModulePass]) -> PassPipeline:
    """Pass objects of a textual pipeline (xDSL's passes and the project's) or given ones."""
    return PassPipeline(tuple(parse_passes(pipeline) if isinstance(pipeline, str) else pipeline))


def apply_passes(
    module: ModuleOp, weights: Mapping[str, np.ndarray] | None, pipeline: str | Sequence[ModulePass]
) -> ModuleOp:
    """A clone of `module` (with its own weights table over the same arrays) after the pipeline."""
    if weights is not None:
        attach_weights(module, weights if isinstance(weights, ModuleWeights) else ModuleWeights(weights))
    clone = clone_with_weights(module)
    pipeline_of(pipeline).apply(make_context(), clone)
    clone.verify()
    return clone


def assert_outputs_close(
    before: Mapping[str, np.ndarray], after: Mapping[str, np.ndarray], rtol: float, atol: float, what: str = ""
) -> None:
    assert list(after) == list(before), f"{what}output names changed: {list(before)} -> {list(after)}"
    for name, want in before.items():
        got = after[name]
        assert got.dtype == want.dtype, f"{what}output '{name}': dtype {want.dtype} -> {got.dtype}"
        assert got.shape == want.shape, f"{what}output '{name}': shape {want.shape} -> {got.shape}"
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=f"{what}output '{name}'")


def assert_pass_keeps_numerics(
    module: ModuleOp,
    weights: Mapping[str, np.ndarray] | None,
    inputs: Mapping[str, np.ndarray],
    pipeline: str | Sequence[ModulePass],
    rtol: float = 1e-5,
    atol: float = 1e-6,
) -> ModuleOp:
    """Runs `module` before and after `pipeline` (applied to a clone) and compares the outputs."""
    if weights is not None:
        attach_weights(module, weights if isinstance(weights, ModuleWeights) else ModuleWeights(weights))
    with np.errstate(all="ignore"):
        before = run(module, inputs)
    after_module = apply_passes(module, weights, pipeline)
    with np.errstate(all="ignore"):
        after = run(after_module, inputs)
    name = pipeline if isinstance(pipeline, str) else ",".join(p.name for p in pipeline)
    assert_outputs_close(before, after, rtol, atol, what=f"[{name}] ")
    return after_module


def op_counts(module: ModuleOp) -> collections.Counter:
    """How many ops of each name the module holds (the module and function ops excluded)."""
    return collections.Counter(op.name for op in module.walk() if op.name.startswith("ge."))
