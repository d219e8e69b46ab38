"""The corpus's transformers architectures through `torch.compile(model, backend="ge")`: a sample
of them, of each family, equals eager PyTorch within the corpus's tolerance with every graph
compiled (no operator left to eager PyTorch). `python -m bench.torch_compile` runs all forty."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from bench.torch_compile import TOLERANCE, corpus_specs, run_one  # noqa: E402

SAMPLE = ("bert", "gpt2", "llama", "t5", "whisper", "convnext_v2", "segformer", "patchtst")
"""An encoder, decoders, encoder-decoders, a CNN and a segmentation model: the operators of most
of the corpus (the others run in the benchmark)."""

pytestmark = pytest.mark.xdist_group("torch_compile_corpus")  # one worker: transformers imported once


@pytest.fixture(scope="module")
def specs():
    return {s.name: s for s in corpus_specs()}


@pytest.fixture(autouse=True)
def attention_fast_path_off():
    fast = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)
    yield
    torch.backends.mha.set_fastpath_enabled(fast)
    torch._dynamo.reset()


@pytest.mark.parametrize("name", SAMPLE)
def test_the_architecture_compiled_by_ge_equals_eager(specs, name):
    result = run_one(specs[name])
    assert result["error"] <= TOLERANCE
    assert not result["fallback_ops"] and not result["whole_graphs_eager"], result
    assert result["graphs"] >= 1
