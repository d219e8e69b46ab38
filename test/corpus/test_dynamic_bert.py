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

from ge.frontend import models
from ge.frontend.onnx_importer import import_model
from ge.ge_dialects import ge
from ge.ge_dialects.ge.base import constant_value, location_name
from ge.ge_dialects.ge.weights import attach_weights, clone_with_weights
from ge.interpreter.differential import relative_error
from ge.interpreter.runner import run
from ge.lowering.run_time import run_dynamic
from ge.passes.fold_symbolic_shapes import FoldSymbolicShapesPass
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
