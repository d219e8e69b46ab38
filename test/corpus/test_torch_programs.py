"""transformers' BertModel, GPT2Model and ViTModel as torch.export programs (test/corpus/torch/,
exported by test/corpus/export_torch.py): architectures nobody here wrote, imported through the
ATen converters (`ge.GraphParser().parse_torch` on the saved file) and equal to the program run in
PyTorch (the oracle: `program.module()`), at the ge level and at O3; BERT at two batch sizes (its
batch a Dim)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ge  # noqa: E402
from ge.ge_dialects.ge.weights import clone_with_weights  # noqa: E402
from ge.interpreter.runner import run  # noqa: E402
from ge.passes.ge_optimize import GeOptimizePass  # noqa: E402
from ge.tools.common import make_context  # noqa: E402

HERE = Path(__file__).parent / "torch"
RNG = np.random.default_rng(0)
INPUTS = {
    "hf_bert": [lambda b: RNG.integers(0, 100, (b, 8)), lambda b: np.ones((b, 8), np.int64)],
    "hf_gpt2": [lambda b: RNG.integers(0, 100, (1, 8))],
    "hf_vit": [lambda b: RNG.standard_normal((1, 3, 16, 16)).astype(np.float32)],
}


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_the_program_imports_and_equals_pytorch(name):
    path = HERE / f"{name}.pt2"
    oracle = torch.export.load(path).module()
    graph = ge.GraphParser().parse_torch(path)
    optimized = clone_with_weights(graph.module)
    GeOptimizePass(level=3).apply(make_context(), optimized)
    for batch in (2, 3) if name == "hf_bert" else (1,):
        arrays = [make(batch) for make in INPUTS[name]]
        with torch.no_grad():
            want = oracle(*(torch.from_numpy(a) for a in arrays))
        want = want if isinstance(want, (tuple, list)) else (want,)
        feeds = dict(zip(graph.inputs, arrays))
        for module in (graph.module, optimized):
            got = run(module, feeds)
            names = graph.outputs
            for output, expected in zip(names, want):
                np.testing.assert_allclose(
                    got[output], expected.numpy(), rtol=1e-4, atol=1e-5, err_msg=f"{name} {output}"
                )
