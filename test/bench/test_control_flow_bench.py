"""bench.control_flow prints host against device control flow per trip count, the difference by
cause (which adds up to the total) and each ASSUMPTION at half and double."""

from __future__ import annotations

import re

from bench import control_flow


def _number(text: str) -> float:
    return float(text.replace(",", "").replace("+", ""))


def test_the_benchmark_splits_the_difference_by_cause(capsys):
    control_flow.main(["--steps", "0,3"])
    out = capsys.readouterr().out
    rows = re.findall(
        r"^\| (\d+) \| (-[\d,.]+) \| (-[\d,.]+) \| (\+[\d,.]+) \| (\+[\d,.]+) \| (-?[\d,.]+) \|$", out, re.M
    )
    assert [r[0] for r in rows] == ["0", "3"]
    for _, *causes, total in rows:
        assert abs(sum(_number(c) for c in causes) - _number(total)) <= 0.5  # each rounded to 0.1 us
        assert _number(causes[1]) < 0  # the host reads conditions back; the device does not
    for table, key in control_flow.ASSUMPTIONS:
        assert re.search(rf"^\| \[{table}\] {key} \| [\d.]+x \| [\d.]+x \| [\d.]+x \|$", out, re.M)
