"""lower-to-tasks' task names: the per-base counter gives the names the plain search gave."""

from __future__ import annotations

from types import SimpleNamespace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ge.lowering import to_tasks


def reference_names(bases: list[str]) -> list[str]:
    """The plain search: try `base`, `base#2`, `base#3`, ... against every name given so far."""
    used: set[str] = set()
    names = []
    for base in bases:
        name, n = base, 1
        while name in used:
            n += 1
            name = f"{base}#{n}"
        used.add(name)
        names.append(name)
    return names


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(["/a", "/b", "/a#2", "/a#3", "/a#2#2", "ge.relu"]), max_size=40))
def test_same_names_as_the_plain_search(monkeypatch, bases):
    with monkeypatch.context() as m:
        m.setattr(to_tasks, "location_name", lambda op: op.loc)
        used: dict[str, int] = {}
        names = [to_tasks.unique_name(SimpleNamespace(loc=b, name="ge.relu"), used) for b in bases]  # type: ignore[arg-type]
    assert names == reference_names(bases)
