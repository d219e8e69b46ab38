"""ModuleWeights (ge_dialects/ge/weights.py): the sidecar's arrays plus the ones passes add."""

import numpy as np

from ge.ge_dialects.ge.weights import ModuleWeights


def test_an_added_weight_never_takes_a_key_in_use():
    """A pass's hint that collides with the sidecar, an earlier addition or a reserved key is numbered
    past all of them; characters a key may not hold become '_'."""
    table = ModuleWeights({"w": np.zeros(2)})
    assert table.fresh_key("w") == "w.2"
    first = table.add("w", np.ones(2))
    assert first == "w.2" and table.fresh_key("w", taken=frozenset({"w.3"})) == "w.4"
    assert table.fresh_key("a b/c") == "a_b/c" and table.fresh_key("") == "w.3"
    np.testing.assert_array_equal(table[first], np.ones(2))
    np.testing.assert_array_equal(table["w"], np.zeros(2))
