"""Lowering of ge graphs towards device tasks (memory planning, task generation)."""

from ge import refuse_bare_import

refuse_bare_import(__name__)
