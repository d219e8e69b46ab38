"""Operator fusion: rule tables (rules.py) applied by one engine (engine.py) with a cost estimate (cost.py)."""
