"""The corpus of real architectures (test/corpus/models, written by export.py; bench/corpus.py loads
them): torchvision, timm and transformers models that nobody here wrote, each imported and compared
with onnxruntime (max|ge - ort| / max|ort| <= 1e-3).

Every model is checked at O0, after a check that its reference output is not constant (each
model's case is drawn once: on another xdist worker a separate test would draw it again). O3 and the stream level (lower-to-tasks, plan-memory,
lower-to-streams) are checked on one model per family, the smallest or fastest of it, so that the
file stays within its time budget: a family's models share their layers (convolution stages,
attention blocks, mixers), and what differs inside a family is mostly what the importer sees,
which O0 covers on every model.

KNOWN_FAILURES gives, for each model that does not pass yet, its first failure; the model's tests
are strict xfails that count only that failure, so a model that starts to pass (or fails for
another reason) fails the test until the entry is removed (or corrected)."""

from __future__ import annotations

import numpy as np
import pytest

from bench import corpus

pytest.importorskip("onnxruntime")

KNOWN_FAILURES: dict[str, str] = {
    "bloom": "operator is not supported at opset 17: CumSum",  # ALiBi positions from the mask's cumsum
    "mpnet": "operator is not supported at opset 17: CumSum",  # position ids from the padding mask
    "opt": "operator is not supported at opset 17: CumSum",  # learned positions from the mask's cumsum
    "roberta": "operator is not supported at opset 17: CumSum",  # position ids from the padding mask
}

DEEP = {
    "resnet": "resnext",
    "mobile": "mobilenet_v3_small",
    "cnn": "densenet",
    "vit": "deit",
    "window": "swin_v2",
    "segmentation": "lraspp",
    "mlp": "mixer",
    "metaformer": "convformer",
    "encoder": "bert",
    "decoder": "llama",
    "seq2seq": "bart",
    "audio": "wav2vec2",
}
"""The models checked at O3 and the stream level: one per family (the video family's one model,
r3d, has the corpus' slowest O0 run alone and is left at O0)."""

NAMES = corpus.names()


class KnownFailure(AssertionError):
    """A model failed with the failure KNOWN_FAILURES records for it."""


def _param(name: str):
    if name in KNOWN_FAILURES:
        return pytest.param(
            name, marks=pytest.mark.xfail(strict=True, raises=KnownFailure, reason=KNOWN_FAILURES[name])
        )
    return name


def expect_ok(name: str, outcome: corpus.Outcome) -> None:
    if outcome.ok:
        return
    if name in KNOWN_FAILURES and KNOWN_FAILURES[name] in str(outcome):
        raise KnownFailure(f"{name}: {outcome}")
    raise AssertionError(f"{name}: {outcome}")


class Models:
    """The module's cache: each model's case and imported module, and its O3 module."""

    def __init__(self) -> None:
        self.cases: dict[str, corpus.Case] = {}
        self.modules: dict[tuple[str, int | None], object] = {}

    def case(self, name: str) -> corpus.Case:
        if name not in self.cases:
            self.cases[name] = corpus.case(name)
        return self.cases[name]

    def module(self, name: str, level: int | None = None):
        """The imported module (None: as imported), or at `level`; an import failure as an Outcome."""
        key = (name, level)
        if key not in self.modules:
            try:
                if level is None:
                    self.modules[key] = corpus.imported(self.case(name).model)
                else:
                    base = self.module(name)
                    self.modules[key] = base if isinstance(base, corpus.Outcome) else corpus.optimized(base, level)
            except Exception as e:  # the test reports the failure in one line
                self.modules[key] = corpus.Outcome(failure=corpus.one_line(e))
        return self.modules[key]


@pytest.fixture(scope="module")
def models() -> Models:
    return Models()


def outcome_of(models: Models, name: str, level: int | None, stream: bool = False) -> corpus.Outcome:
    module = models.module(name, level)
    if isinstance(module, corpus.Outcome):
        return module
    c = models.case(name)
    if not stream:
        return corpus.outcome(c, module)
    try:
        streamed = corpus.lowered(module)
    except Exception as e:  # as in Models.module
        return corpus.Outcome(failure=corpus.one_line(e))
    return corpus.outcome(c, streamed)


@pytest.mark.parametrize("name", [_param(n) for n in NAMES])
def test_reference_is_not_constant_and_ge_equals_it_at_O0(name, models):
    """The reference first: an output that hardly depends on the weights and inputs would pass any
    comparison (a failure here is not a known failure, whatever KNOWN_FAILURES says)."""
    assert corpus.constant_output(models.case(name)) is None
    expect_ok(name, outcome_of(models, name, 0))


@pytest.mark.parametrize("name", [_param(n) for n in DEEP.values()])
def test_equals_onnxruntime_at_O3(name, models):
    expect_ok(name, outcome_of(models, name, 3))


@pytest.mark.parametrize("name", [_param(n) for n in DEEP.values()])
def test_equals_onnxruntime_at_the_stream_level(name, models):
    expect_ok(name, outcome_of(models, name, 3, stream=True))


def test_deep_subset_has_one_model_per_family():
    metas = {n: corpus.meta(corpus.stored(n)) for n in NAMES}
    families = {m["family"] for m in metas.values()}
    assert set(DEEP) == families - {"video"}
    assert all(metas[name]["family"] == family for family, name in DEEP.items())
    assert set(KNOWN_FAILURES) <= set(NAMES)


def test_corpus_spans_the_libraries_and_both_exporters():
    metas = {n: corpus.meta(corpus.stored(n)) for n in NAMES}
    assert corpus.coverage_problems(metas) == []


def test_coverage_check_mutation():
    """Mutation: a corpus without its timm models, or with too few dynamo exports, is refused."""
    metas = {n: corpus.meta(corpus.stored(n)) for n in NAMES}
    no_timm = {n: m for n, m in metas.items() if m["library"] != "timm"}
    assert any("timm" in p for p in corpus.coverage_problems(no_timm))
    few_dynamo = {n: m for n, m in metas.items() if m["exporter"] == "torchscript" or n == "llama"}
    assert any("dynamo" in p for p in corpus.coverage_problems(few_dynamo))


def test_constant_output_check_mutation():
    """Mutation: resnet18 with every recorded weight constant (std 0) has a constant output, and
    the check says so."""
    import json

    model = corpus.stored("resnet18")
    meta = corpus.meta(model)
    for record in meta["weights"]:
        record["std"] = 0.0
    model.metadata_props[0].value = json.dumps(meta)
    assert corpus.constant_output(corpus.case("resnet18", model=model)) is not None


def test_perturbed_weight_fails_the_comparison_mutation(models):
    """Mutation: 1% of the elements of one weight of the ge side changed (the largest of mixer's
    sidecar weights) makes the O0 comparison with onnxruntime fail; the weights as drawn pass."""
    from ge.frontend.onnx_importer import import_model

    c = models.case("mixer")
    _, weights = import_model(c.model)
    weights = dict(weights)
    key = max(weights, key=lambda k: weights[k].size)
    rng = np.random.default_rng(0)
    values = weights[key].copy()
    flat = values.reshape(-1)
    picked = rng.choice(flat.size, size=max(1, flat.size // 100), replace=False)
    flat[picked] += rng.standard_normal(picked.size).astype(flat.dtype) * (4 * float(np.std(flat)))
    assert corpus.outcome(c, corpus.imported(c.model, dict(weights)), "O0").ok
    bad = corpus.outcome(c, corpus.imported(c.model, {**weights, key: values}), "O0")
    assert not bad.ok and bad.failure is None and bad.error > corpus.TOLERANCE
