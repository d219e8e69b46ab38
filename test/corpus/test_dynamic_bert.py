"""transformers' BertModel exported by torch with batch and sequence as dynamic axes
(test/corpus/export_dynamic.py): the architecture nobody here wrote, with the shape chains its own
code makes (a mask built from Range, GatherElements and Where, `view(b, s, -1, head_dim)`). At three
shapes it equals onnxruntime at O0 and O3 on symbolic shapes, as gears, and compiled whole and
bound at the stream level; fold-symbolic-shapes writes its head splits relative to their inputs."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from xdsl.ir import BlockArgument

from ge.frontend import models
from ge.frontend.onnx_importer import import_model
from ge.ge_dialects import fused, ge
from ge.ge_dialects.ge.base import constant_value, location_name
from ge.ge_dialects.ge.weights import attach_weights, clone_with_weights
from ge.interpreter.differential import relative_error
from ge.interpreter.runner import run
from ge.lowering.run_time import run_dynamic
from ge.passes.fold_symbolic_shapes import FoldSymbolicShapesPass
from ge.passes.fusion.census import census
from ge.passes.ge_optimize import GeOptimizePass
from ge.passes.pipeline import apply_all, parse_passes
from ge.tools.common import make_context

MODEL = Path(__file__).parent / "dynamic" / "hf_bert.onnx.gz"
SHAPES = [(1, 16), (2, 8), (4, 4)]
RANGES = "batch=1:64,seq=1:64"


@pytest.fixture(scope="module")
def model() -> onnx.ModelProto:
    return onnx.load_from_string(gzip.decompress(MODEL.read_bytes()))


def _optimized(model, **options):
    module, weights = import_model(model)
    attach_weights(module, weights)
    GeOptimizePass(**options).apply(make_context(), module)
    return module


def test_the_head_splits_are_written_relative_to_their_inputs(model):
    """`view(b, s, -1, 16)`: batch and seq taken from the input become 0, the exporter's -1 stays."""
    module, _ = import_model(model)
    FoldSymbolicShapesPass().apply(make_context(), module)
    splits = [
        op
        for op in module.walk()
        if isinstance(op, ge.ReshapeOp) and (location_name(op) or "").endswith(("self/Reshape", "self/Reshape_1"))
    ]
    assert len(splits) == 4  # queries and keys, two layers
    for op in splits:
        assert constant_value(op.shape).tolist() == [0, 0, -1, 16]
        assert op.reshaped.type.get_shape()[2:] == (2, 16)


def test_at_three_shapes_it_equals_onnxruntime_at_every_level(model):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    dynamic = _optimized(model, level=3, dim_ranges=RANGES)
    compiled = clone_with_weights(dynamic)
    apply_all(make_context(), compiled, parse_passes("partition-dynamic,lower-to-tasks,plan-memory,lower-to-streams"))
    imported = _optimized(model, level=0)
    geared = _optimized(model, level=3, dynamic_dims=";".join(f"batch={b},seq={s}" for b, s in SHAPES))
    levels = {
        "O0": lambda feeds: run(imported, feeds),
        "O3": lambda feeds: run(dynamic, feeds),
        "gears": lambda feeds: run(geared, feeds),
        "stream": lambda feeds: run_dynamic(compiled, feeds)[0],
    }
    for batch, seq in SHAPES:
        feeds = models.random_inputs(model, batch * 10 + seq, {"batch": batch, "seq": seq})
        want = session.run(None, feeds)
        for level, runs in levels.items():
            got = runs(feeds)
            for name, expected in zip(("last_hidden_state", "pooler_output"), want):
                assert relative_error(expected, got[name]) <= 1e-5, (level, name, batch, seq)
    assert np.isfinite(want[0]).all()


def test_on_symbols_o3_keeps_the_static_exports_kernels(model):
    """The shape chains decided on the symbols (a cast of a size, a Range to a symbolic limit, an
    Equal of sizes with -1) leave every layer's head splits and merges relative to their inputs
    (constant targets) and the dynamic O3 graph at 92 kernels against the static graph's 54 (130
    without those decisions): what remains is the attention mask's shape subgraph, which the
    static graph folds. Bound to 2x8 when it runs, it is 59."""
    dynamic = _optimized(model, level=3, dim_ranges=RANGES)
    static, _ = import_model(model)
    apply_all(make_context(), static, parse_passes('bind-dims{sizes="batch=2,seq=8"},ge-optimize{level=3}'))
    bound = clone_with_weights(dynamic)
    apply_all(make_context(), bound, parse_passes('bind-dims{sizes="batch=2,seq=8"}'))
    kernels = {name: census(m).kernels for name, m in (("static", static), ("bound", bound), ("dynamic", dynamic))}
    assert kernels["bound"] <= 1.15 * kernels["static"], kernels
    assert kernels["dynamic"] <= 1.8 * kernels["static"], kernels
    reshapes = [
        op for op in dynamic.walk() if isinstance(op, ge.ReshapeOp) and "attention/self" in (location_name(op) or "")
    ]
    assert reshapes and all(constant_value(outside(op.shape)) is not None for op in reshapes)


def outside(value):
    """`value`, or the operand of the kernel a block argument of whose body it is (fuse-views puts
    reshapes into their neighbours' kernels)."""
    group = value.owner.parent_op() if isinstance(value, BlockArgument) else None
    return group.inputs[value.index] if isinstance(group, fused.GroupOp) else value
