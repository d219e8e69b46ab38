"""bench.import_and_run: both graphs and onnxruntime run at each thread count and are tabled; the
graph-fused module has its patterns fused and no device layouts."""

import pytest

from bench import import_and_run
from ge.frontend import models
from ge.tools.ge_translate import translate_onnx

pytest.importorskip("onnxruntime")


def tiny_bert():
    return models.bert_base(layers=1, seq=8, hidden=64, heads=4, intermediate=128, vocab=100)


def test_every_configuration_is_timed_and_tabled(monkeypatch, capsys):
    monkeypatch.setattr(import_and_run, "MODELS", {"tiny_bert": tiny_bert})
    import_and_run.main(["--repeat", "1", "--threads", "1", "2", "--models", "tiny_bert"])
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| tiny_bert |")]
    assert len(rows) == 3  # the import row, one row per thread count
    assert all(line.count("x |") == 2 for line in rows[1:])  # imported / ort and graph-fused / ort


def test_the_graph_fused_module_is_fused_and_keeps_its_layouts(tmp_path):
    import onnx

    onnx.save(tiny_bert(), tmp_path / "m.onnx")
    translate_onnx(str(tmp_path / "m.onnx"), str(tmp_path / "m.mlir"), 32)
    module = import_and_run.graph_fused(str(tmp_path / "m.mlir"))
    names = {op.name for op in module.walk()}
    assert {"ge.attention", "ge.gelu", "ge.layer_norm"} <= names
    assert "ge.trans_data" not in names and "fused.group" not in names
