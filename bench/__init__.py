"""Benchmarks: each prints a table of figures measured side by side in one run."""
