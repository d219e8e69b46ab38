"""fold-symbolic-shapes on BERT exported with batch and seq as dim_params: the exporter's shape
chains become relative targets, the dynamic graph at O3 has the static graph's kernels in every
layer and equals onnxruntime at several shapes; sizes outside the compiled ranges are one line."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest

from ge.frontend import models
from ge.frontend.onnx_importer import import_model
from ge.ge_dialects import ge
from ge.ge_dialects.ge.dims import parse_ranges, record_ranges
from ge.ge_dialects.ge.weights import attach_weights
from ge.interpreter.differential import relative_error
from ge.interpreter.runner import InputError, run
from ge.passes.fusion.census import census
from ge.passes.ge_optimize import GeOptimizePass
from ge.passes.symbolic_shapes import analyze
from ge.tools.common import make_context

RANGES = "batch=1:64,seq=1:512"
SHAPES = [(1, 16), (2, 8), (4, 4), (3, 5)]


def _bert(batch, seq, layers=2):
    return models.bert_base(batch=batch, seq=seq, layers=layers, hidden=64, heads=4, intermediate=128, vocab=100)


def _optimized(model, **options):
    module, weights = import_model(model)
    attach_weights(module, weights)
    GeOptimizePass(level=3, **options).apply(make_context(), module)
    return module


@pytest.fixture(scope="module")
def dynamic_bert():
    return _optimized(_bert("batch", "seq"), dim_ranges=RANGES)


def test_the_analysis_knows_the_head_split_of_every_layer():
    module, _ = import_model(_bert("batch", "seq"))
    fn = module.ops.first
    record_ranges(fn, parse_ranges(RANGES))  # seq <= 512: the position slice [0, seq) has seq rows
    known = analyze(fn)
    reshapes = [op for op in fn.walk() if isinstance(op, ge.ReshapeOp)]
    targets = [known.values[op.shape] for op in reshapes if op.shape in known.values]
    assert len(targets) == len(reshapes) == 2 * 4, "per layer: three head splits and one merge"
    for target in targets:
        assert [str(d) for d in target] in (["batch", "seq", "4", "16"], ["batch", "seq", "64"])


def test_a_dynamic_bert_at_o3_equals_onnxruntime(dynamic_bert):
    model = _bert("batch", "seq")
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for batch, seq in SHAPES:
        feeds = models.random_inputs(model, batch * 100 + seq, {"batch": batch, "seq": seq})
        (want,) = session.run(None, feeds)
        assert relative_error(want, run(dynamic_bert, feeds)["last_hidden_state"]) <= 1e-5


def test_every_layer_has_the_kernels_of_the_static_graph(dynamic_bert):
    """The dynamic graph's kernels: the static graph's in each layer, plus the few embedding
    lookups the static export folds (position ids sliced to seq, token types input_ids * 0)."""
    one_layer = _optimized(_bert("batch", "seq", layers=1), dim_ranges=RANGES)
    static = [census(_optimized(_bert(2, 8, layers=n))).kernels for n in (1, 2)]
    dynamic = [census(one_layer).kernels, census(dynamic_bert).kernels]
    assert dynamic[1] - dynamic[0] == static[1] - static[0]
    assert dynamic[0] - static[0] <= 6
    assert "ge.concat" not in census(dynamic_bert).ops  # no shape chain is left to compute a target


def test_the_shape_chains_fold_without_ranges_too():
    """Without ranges the position slice's rows are unknown, but each head split's target is taken
    from the tensor it splits: relative all the same."""
    module = _optimized(_bert("batch", "seq"))
    assert census(module).kernels == census(_optimized(_bert("batch", "seq"), dim_ranges=RANGES)).kernels
    assert "ge.concat" not in census(module).ops


def test_a_size_outside_the_compiled_range_is_one_line(dynamic_bert):
    feeds = {"input_ids": np.zeros((1, 600), np.int64), "attention_mask": np.ones((1, 600), np.int64)}
    with pytest.raises(InputError) as e:
        run(dynamic_bert, feeds)
    assert str(e.value) == (
        "input 'input_ids' has seq = 600 (dim 1), outside the range [1, 512] the graph was compiled for"
    )
