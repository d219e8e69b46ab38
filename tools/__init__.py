"""Command-line drivers: thin wrappers that parse arguments and call the library."""

from ge import refuse_bare_import

refuse_bare_import(__name__)
