"""`ge.Graph` drawn with Graphviz: the DOT text of `ge-translate --export-dot` (tools/dot_export.py).

    visualize(graph, "graph.png")              # writes graph.dot, then graph.png with Graphviz's `dot`
    visualize(graph, "graph.dot", remarks=True)  # DOT only, with the fusions fuse-ops rejects

The .dot file is always written (beside the image, same stem). `.png` and `.svg` are rendered by
the `dot` executable when it is on PATH (run with an argument list, no shell, and a timeout); when
it is not, the .dot is written, a one-line `GraphvizMissing` warning says how to render it, and the
.dot's path is returned: a drawing is a convenience, so a notebook or script on a machine without
Graphviz goes on (a failing `dot`, by contrast, is an error). `svg(graph)` is what notebooks'
`_repr_svg_` shows: the SVG text, or None without Graphviz (the notebook then falls back to the repr).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import warnings
from pathlib import Path

from ge.api.errors import GEError, user_errors
from ge.api.graph import Graph
from ge.tools.common import write_atomic
from ge.tools.dot_export import module_to_dot

RENDER_TIMEOUT_S = 60.0
"""How long Graphviz may take for one drawing (ResNet-50's ~250 nodes take well under a second)."""

_IMAGE_SUFFIXES = (".png", ".svg")


def dot_text(graph: Graph, remarks: bool = False) -> str:
    """The DOT text of the graph (`ge-translate IR --export-dot [--remarks]`)."""
    with user_errors(f"graph '{graph.name}'"):
        return module_to_dot(graph.module, remarks=remarks, title=graph.name)


def _dot_executable() -> str | None:
    return shutil.which("dot")


def _render(text: str, fmt: str) -> bytes:
    """Runs `dot -T<fmt>` with the text on stdin; the image bytes from its stdout."""
    exe = _dot_executable()
    assert exe is not None, "callers check for dot first"
    args = [exe, f"-T{fmt}"]
    try:
        done = subprocess.run(
            args, input=text.encode(), capture_output=True, timeout=RENDER_TIMEOUT_S, check=False, shell=False
        )
    except subprocess.TimeoutExpired:
        raise GEError(
            f"visualize: Graphviz dot took longer than {RENDER_TIMEOUT_S:g} s; the .dot text is valid"
        ) from None
    except OSError as e:
        raise GEError(f"visualize: cannot run Graphviz dot ({exe}): {e.strerror}") from None
    if done.returncode != 0:
        lines = done.stderr.decode(errors="replace").strip().splitlines()
        detail = lines[0] if lines else f"exit code {done.returncode}"
        raise GEError(f"visualize: Graphviz dot failed: {detail}")
    return done.stdout


class GraphvizMissing(UserWarning):
    """An image was asked for on a machine without Graphviz's `dot`; the .dot was written instead."""


def visualize(graph: Graph, path: str | os.PathLike, remarks: bool = False) -> Path:
    """Writes the graph to `path` (.dot, .png or .svg; an image also gets its .dot beside it) and
    returns the path written: the image, or the .dot alone (with a warning) without Graphviz."""
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix != ".dot" and suffix not in _IMAGE_SUFFIXES:
        raise GEError(f"visualize: {target}: unsupported file type '{target.suffix}' (use .dot, .png or .svg)")
    text = dot_text(graph, remarks)
    dot_path = target.with_suffix(".dot")
    try:
        write_atomic(dot_path, text)
    except OSError as e:
        raise GEError(f"visualize: cannot write {dot_path}: {e.strerror}") from None
    if suffix == ".dot":
        return dot_path
    if _dot_executable() is None:
        warnings.warn(
            f"visualize: Graphviz's dot is not on PATH, so {target.name} was not drawn; {dot_path} was written "
            f"(render it with: dot -T{suffix[1:]} {dot_path} -o {target})",
            GraphvizMissing,
            stacklevel=2,
        )
        return dot_path
    image = _render(text, suffix[1:])
    try:
        write_atomic(target, image)
    except OSError as e:
        raise GEError(f"visualize: cannot write {target}: {e.strerror}") from None
    return target


def svg(graph: Graph, remarks: bool = False) -> str | None:
    """The graph as SVG text for a notebook's `_repr_svg_`, or None when Graphviz's dot is missing."""
    if _dot_executable() is None:
        return None
    return _render(dot_text(graph, remarks), "svg").decode("utf-8", errors="replace")
