"""Command-line drivers: thin wrappers that parse arguments and call the library."""
