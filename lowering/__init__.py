"""Lowering of ge graphs towards device tasks (memory planning, task generation)."""
