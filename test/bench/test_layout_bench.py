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


def test_the_share_is_timed_again_at_half_and_double_the_task_overhead(rows):
    """Each TransData kernel and every other kernel pay the per-task overhead ASSUMPTION: less of
    it leaves a larger part of the time to what the conversion moves, so the share changes."""
    for r in rows:
        half, double = r.share_at
        assert half > 0 and double > 0 and half != double
    above = [
        layouts.Row("tiny", "ascend910b", "whole-graph", 3, 1, 0.08, 10, 40.0, 0.1, (0.09, 0.07)),
        *rows,
    ]
    text = layouts.totals(above, ("ascend910b",), ("whole-graph",))
    assert "with [overheads] task_device_s at half / double: tiny 9.0% / 7.0%" in text
