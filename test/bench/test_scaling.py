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
