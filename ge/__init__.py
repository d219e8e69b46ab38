"""ge-compiler: a GE-style graph compiler for Ascend NPUs, on xDSL.

Everything the project installs lives under this one package, so nothing it installs collides with
other projects' top-level names. The repository keeps its folders at the top level (ge_dialects/,
target/, interpreter/, passes/, lowering/, frontend/, tools/, examples/); pyproject.toml maps each
to `ge.<folder>`, and each folder's `__init__` refuses to be imported under its bare name, so no
module can exist twice (two copies of a dialect class would break isinstance checks silently).
"""

__version__ = "0.1.0"


def refuse_bare_import(name: str) -> None:
    """Called by each mapped folder's `__init__`: `import passes` (from a checkout's root) fails loudly
    instead of loading a second copy of modules that `ge.passes` already loaded."""
    if not name.startswith("ge."):
        raise ImportError(f"'{name}' is part of ge-compiler: import it as 'ge.{name}'")


# `import ge` gives the Python API (api/); each name loads its module on first use.
_API = {
    "GEError": "errors",
    "Graph": "graph",
    "GraphParser": "parser",
    "build_graph": "parser",
    "GraphOptimizer": "optimizer",
    "MemoryOptimizer": "optimizer",
    "FusionPattern": "fusion_pattern",
    "grad": "training",
    "GraphCompiler": "compiler",
    "CompiledGraph": "compiler",
    "GraphExecutor": "executor",
    "GraphProfiler": "profiler",
    "Session": "session",
    "register_op": "custom_ops",
    "load_op_library": "custom_ops",
    "op_library": "custom_ops",
    "OpLibrary": "custom_ops",
    "TensorSpec": "custom_ops",
}
__all__ = ["__version__", *_API]


def __getattr__(name: str):
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'ge' has no attribute '{name}'")
    import importlib

    value = getattr(importlib.import_module(f"ge.api.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
