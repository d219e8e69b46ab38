"""Error messages that quote the input: kept to one line whatever the input holds."""

from __future__ import annotations

import re


def one_line(text: str) -> str:
    """`text` with line breaks and other control characters escaped (`\\n`, `\\x1b`), so a
    name taken from a model or a file header cannot split a one-line error."""
    return re.sub(r"[\x00-\x1f\x7f\u2028\u2029]", lambda m: repr(m.group())[1:-1], text)


def quoted(name: str) -> str:
    """A user-given name in single quotes, escaped by `one_line`: `'x\\ny'` for a name with a newline."""
    return f"'{one_line(name)}'"
