"""bench.scaling: every stage runs and is reported, a stopped size says so, and the fit is right."""

import math

from bench import scaling


def test_every_stage_of_a_small_chain_is_timed():
    row = scaling.measure("chain", 40, timeout=300)
    assert row["stopped"] is False and row["nodes"] == 40
    assert all(isinstance(row[stage], float) for stage in scaling.STAGES)


def test_a_size_past_the_timeout_is_reported_as_stopped():
    row = scaling.measure("chain", 40, timeout=0.01)
    assert row["stopped"] is True
    assert "stopped" in scaling.table([row])


def test_the_fitted_exponent_of_a_power_law():
    points = [(n, 3e-6 * n**1.7) for n in (100, 1000, 10000)]
    assert math.isclose(scaling.fitted_exponent(points), 1.7)
    assert scaling.fitted_exponent(points[:1]) is None


def test_repeated_runs_make_one_row_of_medians():
    runs = [
        {"model": "gpt 12", "stopped": False, "nodes": 756, "O3": 0.9, "ort": 0.1, "peak_mib": 200.0},
        {"model": "gpt 12", "stopped": False, "nodes": 756, "O3": 0.4, "ort": 0.3, "peak_mib": 250.0},
        {"model": "gpt 12", "stopped": True, "nodes": 756, "O3": 0.5, "peak_mib": 210.0},
    ]
    row = scaling.median_row(runs)
    assert row["O3"] == 0.5 and row["ort"] == 0.2  # the median of the runs that finished the stage
    assert row["peak_mib"] == 250.0 and row["stopped"] is True and row["nodes"] == 756
    assert "import" not in row


def test_repeat_must_be_positive(capsys):
    import pytest

    with pytest.raises(SystemExit) as e:
        scaling.main(["--repeat", "0", "--gpt", "", "--chain", ""])
    assert e.value.code != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert "--repeat must be at least 1, got 0" in err[-1]
