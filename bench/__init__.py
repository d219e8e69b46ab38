"""Benchmarks: each prints a table of figures measured side by side in one run."""

from dataclasses import replace as _replace


def scaled_target(spec, table: str, key: str, factor: float):
    """`spec` (a Target) with `[table] key` multiplied by `factor`: an ASSUMPTION at half or double."""
    part = getattr(spec, table)
    return _replace(spec, **{table: _replace(part, **{key: getattr(part, key) * factor})})
