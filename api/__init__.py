"""The Python API GE users write (`import ge`): a thin layer over the same passes as the tools.

Each class lives in its own module and is reached lazily through `ge.__getattr__` (ge/__init__.py),
so `import ge` stays cheap and a script pays only for what it uses.
"""

from ge import refuse_bare_import

refuse_bare_import(__name__)
