"""The corpus of real architectures (test/corpus/models, written by export.py; bench/corpus.py loads
them): torchvision, timm and transformers models that nobody here wrote, each imported and compared
with onnxruntime (max|ge - ort| / max|ort| <= 1e-3).

Every model is checked at O0, after a check that its reference output is not constant. O3 and
the stream level (lower-to-tasks, plan-memory, lower-to-streams) are checked on one model per
family (DEEP), so that the file stays within its time budget: a family's models share their
layers (convolution stages, attention blocks, mixers), and what differs inside a family is mostly
what the importer sees, which O0 covers on every model (`python -m bench.corpus` runs every
model at every level).

KNOWN_FAILURES gives, for each model that does not pass yet, its first failure; the model's test
is a strict xfail that count only that failure, so a model that starts to pass (or fails for
another reason) fails the test until the entry is removed (or corrected)."""

from __future__ import annotations

import numpy as np
import pytest

from bench import corpus
from ge.frontend.onnx_ops import OnnxImportError

pytest.importorskip("onnxruntime")

KNOWN_FAILURES: dict[str, str] = {}

DEEP = {
    "resnet": "resnext",
    "mobile": "mobilenet_v4",
    "cnn": "densenet",
    "vit": "deit",
    "window": "swin_v2",
    "segmentation": "segformer",
    "mlp": "mixer",
    "metaformer": "convformer",
    "encoder": "bert",
    "decoder": "qwen2",
    "seq2seq": "bart",
    "audio": "wav2vec2",
    "video": "swin3d",
    "timeseries": "patchtst",
}
"""The models checked at O3 and the stream level: one per family, the fastest at O3 and the stream
level but for a wider choice of ops where that costs little; the flow family's one model, RAFT
(at 128 px, the smallest its correlation pyramid takes), costs a second there and stays at O0."""

NAMES = corpus.names()


class KnownFailure(AssertionError):
    """A model failed with the failure KNOWN_FAILURES records for it."""


def _param(name: str):
    if name in KNOWN_FAILURES:
        return pytest.param(
            name, marks=pytest.mark.xfail(strict=True, raises=KnownFailure, reason=KNOWN_FAILURES[name])
        )
    return name


def expect_ok(name: str, outcome: corpus.Outcome, level: str) -> None:
    if outcome.ok:
        return
    if name in KNOWN_FAILURES and KNOWN_FAILURES[name] in str(outcome):
        raise KnownFailure(f"{name} at {level}: {outcome}")
    raise AssertionError(f"{name} at {level}: {outcome}")


def levels(name: str) -> tuple[str, ...]:
    return ("O0", "O3", "stream") if name in DEEP.values() else ("O0",)


def first_failure(name: str) -> tuple[str, corpus.Outcome]:
    """(level, outcome) of the first of `levels(name)` that fails, or of the last one, after the
    check that the reference is not constant."""
    c = corpus.case(name)
    assert corpus.constant_output(c) is None
    try:
        module = corpus.imported(c.model)
    except Exception as e:  # the test reports the failure in one line
        return "import", corpus.Outcome(failure=corpus.one_line(e))
    level, result = "O0", corpus.outcome(c, corpus.optimized(module, 0))
    if not result.ok or "O3" not in levels(name):
        return level, result
    try:
        o3 = corpus.optimized(module, 3)
        streamed = corpus.lowered(o3)
    except Exception as e:  # as above
        return "O3 or its lowering", corpus.Outcome(failure=corpus.one_line(e))
    result = corpus.outcome(c, o3)
    if not result.ok:
        return "O3", result
    return "stream", corpus.outcome(c, streamed)


@pytest.mark.parametrize("name", [_param(n) for n in NAMES])
def test_equals_onnxruntime(name):
    """The reference first: an output that hardly depends on the weights and inputs would pass any
    comparison (a failure there is not a known failure, whatever KNOWN_FAILURES says); then every
    level of `levels(name)`, in one test so that the model is drawn and imported once."""
    level, result = first_failure(name)
    expect_ok(name, result, level)


def test_deep_subset_has_one_model_per_family():
    metas = {n: corpus.meta(corpus.stored(n)) for n in NAMES}
    families = {m["family"] for m in metas.values()}
    assert set(DEEP) == families - {"flow"}
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


def test_perturbed_weight_fails_the_comparison_mutation():
    """Mutation: 1% of the elements of one weight of the ge side changed (the largest of mixer's
    sidecar weights) makes the O0 comparison with onnxruntime fail; the weights as drawn pass."""
    from ge.frontend.onnx_importer import import_model

    c = corpus.case("mixer")
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


def test_known_failure_matcher_mutation(monkeypatch):
    """Mutation: a failure other than the one KNOWN_FAILURES records is a plain failure (the strict
    xfail expects KnownFailure only), an error over the tolerance fails, and a pass passes."""
    monkeypatch.setitem(KNOWN_FAILURES, "longformer", "not supported at opset 17: NonZero")
    nonzero = corpus.Outcome(failure="OnnxImportError: 1 operator is not supported at opset 17: NonZero (1 node: 'x')")
    with pytest.raises(KnownFailure):
        expect_ok("longformer", nonzero, "import")
    with pytest.raises(AssertionError) as other:
        expect_ok("longformer", corpus.Outcome(failure="KernelError: a kernel refused its input"), "O0")
    assert not isinstance(other.value, KnownFailure)
    with pytest.raises(AssertionError) as unlisted:
        expect_ok("resnet18", nonzero, "import")
    assert not isinstance(unlisted.value, KnownFailure)
    with pytest.raises(AssertionError):
        expect_ok("resnet18", corpus.Outcome(error=2 * corpus.TOLERANCE), "O0")
    expect_ok("resnet18", corpus.Outcome(error=corpus.TOLERANCE / 2), "O0")


def test_bench_prints_the_table_and_totals(capsys, monkeypatch):
    """python -m bench.corpus on a passing and a failing model, at O0 (longformer, made to fail
    with its NonZero nodes refused)."""
    monkeypatch.setattr(corpus, "imported", _refusing_nonzero(corpus.imported))
    corpus.main(["--models", "mixer,longformer", "--levels", "O0"])
    out = capsys.readouterr().out
    rows = {line.split("|")[0].strip(): line for line in out.splitlines() if "|" in line}
    assert rows["mixer"].split("|")[-1].strip() == "ok"
    assert "NonZero" in rows["longformer"]
    assert "2 models: 1 timm, 1 transformers; 2 torchscript" in out
    assert "O0: 1/2 ok" in out


def _refusing_nonzero(imported):
    def refusing(model, *args, **kwargs):
        if any(n.op_type == "NonZero" for n in model.graph.node):
            raise OnnxImportError("1 operator is not supported at opset 17: NonZero (40 nodes)")
        return imported(model, *args, **kwargs)

    return refusing
