"""bench.layouts runs and counts what it says: a corpus model's TransData kernels and their share of
the task time, per target (the figures themselves are read from the bench, not asserted here)."""

from __future__ import annotations

import pytest

from bench import layouts

pytest.importorskip("onnxruntime")


@pytest.fixture(scope="module")
def rows():
    return layouts.measure("resnet18", layouts.TARGETS)


def test_each_target_and_choice_has_a_row_with_the_graph_inputs_conversion(rows):
    assert [(r.target, r.choice) for r in rows] == [(t, c) for t in layouts.TARGETS for c in layouts.CHOICES]
    for r in rows:
        assert r.trans_data == 1  # the image input to NC1HWC0
        assert 0 < r.share < layouts.GOAL
        assert 0 < r.kernels <= r.ort_nodes
        assert r.latency_us > 0


def test_the_table_and_totals_name_every_row(rows):
    text = layouts.table(rows) + "\n" + layouts.totals(rows, layouts.TARGETS)
    assert text.count("| resnet18 |") == 4
    assert "ascend910b whole-graph: 1 models, 1 TransData, 0 above 5% of task time" in text
    compared = layouts.comparison(rows, layouts.TARGETS)
    assert "ascend910b whole-graph vs greedy: TransData 1 vs 1" in compared


def test_mutation_a_share_that_looks_for_another_task_type_finds_none(monkeypatch):
    monkeypatch.setattr(layouts, "TRANS_DATA_TASK", "TransData")
    (row,) = layouts.measure("resnet18", ("ascend910b",), ("whole-graph",))
    assert row.share == 0
