"""bench.dynamic prints its three tables on a one-layer BERT: the dynamic graph bound at run time
against the gear and the static graph, its extra time by cause, and a runtime pool per shape."""

from __future__ import annotations

import re

from bench import dynamic


def test_the_benchmark_splits_the_dynamic_time_by_cause(capsys):
    dynamic.main(["--layers", "1", "--shapes", "1x16,2x8"])
    out = capsys.readouterr().out
    latency = {
        kind: float(re.search(rf"^\| {kind}.*\| ([\d,]+) \| [\d.]+x \|$", out, re.M).group(1).replace(",", ""))
        for kind in ("static", "gear", "dynamic")
    }
    assert latency["gear"] == latency["static"] < latency["dynamic"]
    causes = {
        row: float(re.search(rf"^\| {row}[^|]*\| (-?[\d,]+) \|$", out, re.M).group(1).replace(",", ""))
        for row in ("the dynamic graph's own kernels", "host launches", "host shape inference", "total")
    }
    parts = causes["the dynamic graph's own kernels"] + causes["host launches"] + causes["host shape inference"]
    assert abs(parts - causes["total"]) <= 2  # rounding of each row to a microsecond
    assert causes["host shape inference"] > 0 and causes["host launches"] > 0
    for key in dynamic.HOST_ASSUMPTIONS:
        assert re.search(rf"^\| {key} = ", out, re.M)
    pools = re.findall(r"^\| (\d+x\d+|worst case \S+) [^|]*\| ([\d,]+) \| ([\d,]+) \| ([\d.]+) \|", out, re.M)
    assert len(pools) == 3 and all(float(ratio) >= 1.0 for *_, ratio in pools)
