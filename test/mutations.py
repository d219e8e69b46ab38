"""Which tests are mutation tests: tests that break one thing on purpose (a kernel, a rule, a check,
a verifier) and assert that the suite's check catches it. They are what shows a check can fail, so
they are counted and listed: `pytest -m mutation` runs them, `--collect-only -q -m mutation` lists.

A test is one when it is marked `@pytest.mark.mutation`, when its name, docstring or a comment in
it says "mutation", or when it sits in a section of its file whose header comment
(`# -- mutations ...`) says so; conftest marks the last three."""

from __future__ import annotations

import inspect
import re
from functools import cache
from pathlib import Path

_WORD = re.compile(r"\bmutations?\b", re.IGNORECASE)
_HEADER = re.compile(r"^# -+")


@cache
def _sections(path: str) -> tuple[tuple[int, int], ...]:
    """(first, last) line numbers of each mutations section of a file (1-based, inclusive)."""
    lines = Path(path).read_text().splitlines()
    headers = [i + 1 for i, line in enumerate(lines) if _HEADER.match(line)]
    sections = []
    for k, start in enumerate(headers):
        if re.search(r"\bmutations\b", lines[start - 1], re.IGNORECASE):
            sections.append((start, headers[k + 1] - 1 if k + 1 < len(headers) else len(lines)))
    return tuple(sections)


def is_mutation_test(function) -> bool:
    function = inspect.unwrap(function)
    try:
        source, first = inspect.getsourcelines(function)
        path = inspect.getsourcefile(function)
    except (OSError, TypeError):
        return False
    if _WORD.search(function.__name__.replace("_", " ")) or _WORD.search("".join(source)):
        return True
    return path is not None and any(start <= first <= end for start, end in _sections(path))
