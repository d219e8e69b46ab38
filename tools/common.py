"""What the command-line tools share: the dialect context, printing, atomic writes, and the rule
that a user's mistake ends in one line on stderr and a non-zero exit, never a traceback."""

from __future__ import annotations

import gc
import logging
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from io import StringIO
from pathlib import Path
from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.printer import Printer
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError

from ge.ge_dialects.context import make_context
from ge.ge_dialects.ir_text import SourceVerifyError, parse_ir, verify_at_source


class UserError(Exception):
    """A mistake in what the user gave us; reported as one line, exit code 1."""


def print_module(module: ModuleOp, debuginfo: bool = True) -> str:
    """The module as text; node names (name locations) are printed, unknown locations are not."""
    out = StringIO()
    Printer(stream=out, print_debuginfo=debuginfo).print_op(module)
    out.write("\n")
    text = out.getvalue()
    return text.replace(" loc(unknown)", "") if debuginfo else text


def parse_error_line(e: ParseError) -> str:
    loc = e.span.get_location()
    return f"{loc}: {e.msg}"


def parse_module(text: str, source: str) -> ModuleOp:
    try:
        module, parser = parse_ir(make_context(), text, source)
        verify_at_source(module, parser)
    except ParseError as e:
        raise UserError(parse_error_line(e)) from None
    except SourceVerifyError as e:
        raise UserError(str(e)) from None
    return module


def read_module(path: str) -> ModuleOp:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise UserError(f"{path}: cannot read: {e.strerror}") from None
    except UnicodeDecodeError:
        raise UserError(f"{path}: not a text file") from None
    return parse_module(text, path)


def import_onnx_file(
    path: str, inline_limit: int | None = None, max_tensor_bytes: int | None = None, training: bool = False
):
    """(module, weights) of an ONNX file, import errors as user errors naming the file.

    `max_tensor_bytes` bounds every tensor the importer reads or allocates: initializers, external
    data, static result shapes (frontend/validate.py) and import-time constant folding (the kernels)."""
    from ge.frontend.onnx_importer import import_model, load_onnx
    from ge.frontend.onnx_ops import OnnxImportError
    from ge.interpreter.ge import TensorTooLarge
    from ge.interpreter.kernels import DEFAULT_MAX_TENSOR_BYTES, tensor_byte_limit

    limit = DEFAULT_MAX_TENSOR_BYTES if max_tensor_bytes is None else max_tensor_bytes
    options = {} if inline_limit is None else {"inline_limit": inline_limit}
    try:
        with doing(f"importing {path}"), tensor_byte_limit(limit):
            model = load_onnx(path, max_tensor_bytes=limit)
            return import_model(model, max_tensor_bytes=limit, training=training, **options)
    except OnnxImportError as e:
        raise UserError(str(e) if str(e).startswith(path) else f"{path}: {e}") from None
    except TensorTooLarge as e:  # import-time constant folding refused a result
        raise UserError(f"{path}: {first_line(e)}") from None


TORCH_NEEDED = "importing a torch.export program needs PyTorch (pip install ge-compiler[torch])"


def import_torch_file(path: str, max_tensor_bytes: int | None = None):
    """(module, weights) of a saved torch.export program (`torch.export.save`, a .pt2 archive),
    read by `torch.export.load` and nothing else (docs/security.md); errors as user errors naming
    the file."""
    import importlib

    from ge.frontend.onnx_ops import OnnxImportError
    from ge.interpreter.kernels import DEFAULT_MAX_TENSOR_BYTES, tensor_byte_limit

    try:
        torch = importlib.import_module("torch")
    except ImportError:
        raise UserError(f"{path}: {TORCH_NEEDED}") from None
    from ge.frontend.torch_fx import TorchImportError, import_exported_program

    _refuse_newer_schema(path, torch)
    try:
        with doing(f"loading {path}"), _quiet("torch.export"):
            program = torch.export.load(path)
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except Exception as e:  # not an archive torch.export.save wrote
        raise UserError(f"{path}: not a saved torch.export program ({first_line(e)})") from None
    limit = DEFAULT_MAX_TENSOR_BYTES if max_tensor_bytes is None else max_tensor_bytes
    try:
        with doing(f"importing {path}"), tensor_byte_limit(limit):
            return import_exported_program(program)
    except (TorchImportError, OnnxImportError) as e:
        raise UserError(f"{path}: {first_line(e)}") from None


def _refuse_newer_schema(path: str, torch: Any) -> None:
    """A program saved by a newer PyTorch, whose export schema this one cannot read: one line
    (torch.export.load would log its traceback and fail)."""
    import json
    import zipfile

    from torch._export.serde.schema import SCHEMA_VERSION

    try:
        with zipfile.ZipFile(path) as archive:
            models = [n for n in archive.namelist() if "/models/" in n and n.endswith(".json")]
            versions = [json.loads(archive.read(n)).get("schema_version") for n in models]
    except (OSError, zipfile.BadZipFile, ValueError):
        return  # not an archive: torch.export.load says so
    for version in versions:
        major, minor = (version.get("major"), version.get("minor")) if isinstance(version, dict) else (None, None)
        if isinstance(major, int) and major > SCHEMA_VERSION[0]:
            raise UserError(
                f"{path}: saved by a newer PyTorch (export schema {major}.{minor}); torch {torch.__version__} "
                f"reads schema {SCHEMA_VERSION[0]}.x"
            )


@contextmanager
def _quiet(logger: str) -> Iterator[None]:
    """`logger`'s warnings held back (the error that follows them is the one line reported)."""
    log = logging.getLogger(logger)
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        log.setLevel(level)


def first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def write_atomic(path: str | os.PathLike, data: str | bytes | Callable[[str], None]) -> None:
    """Writes one file whole or not at all (tools/outputs.py; a job with several outputs uses `Outputs`)."""
    from ge.tools.outputs import Outputs

    outputs = Outputs()
    outputs.add(path, data)
    outputs.commit()


# -- the process's garbage collector -------------------------------------------------------------

GC_THRESHOLDS = (100_000, 20, 100)
"""Young-generation allocations before a collection, and the next generations' counts: far above
Python's (700, 10, 10)."""


def collect_garbage_less_often() -> None:
    """Lets the cyclic garbage collector run less often, for this process (the tools' choice, as
    `keep_freed_memory`: a library does not retune its host).

    A module is millions of small objects that live as long as it does; at the default thresholds
    the collector keeps re-traversing them while a pass allocates (a 40k-op chain's O3: 29.6 s by
    default, 21-25 s at these thresholds; bench.scaling's 100k chain showed no gain). Garbage
    cycles (erased ops) are still freed, in fewer, larger collections."""
    gc.set_threshold(*GC_THRESHOLDS)


# -- what the tool is doing, for the one line a resource error gets ------------------------------
@contextmanager
def doing(what: str) -> Iterator[None]:
    """Names the step under way ("reading inputs from in.npz"); an exception leaving it carries the
    innermost step's name, for the one line of an out-of-memory or nesting error."""
    try:
        yield
    except Exception as e:
        if not hasattr(e, "tool_step"):
            e.tool_step = what  # type: ignore[attr-defined]  # tags any exception; read back with getattr
        raise


def _step(e: BaseException) -> str:
    step = getattr(e, "tool_step", None)
    return f" while {step}" if step else ""


# -- sizes ---------------------------------------------------------------------------------------
_UNITS = {
    "": 1,
    "k": 1 << 10,
    "kib": 1 << 10,
    "m": 1 << 20,
    "mib": 1 << 20,
    "g": 1 << 30,
    "gib": 1 << 30,
    "t": 1 << 40,
    "tib": 1 << 40,
}


def byte_size(text: str) -> int:
    """An argparse type: a byte count, optionally with a binary unit (`4GiB`, `512M`, `1024`)."""
    import argparse
    import re

    match = re.fullmatch(r"\s*(\d+)\s*([a-zA-Z]*)\s*", text)
    unit = match and _UNITS.get(match.group(2).lower())
    if not match or unit is None:
        raise argparse.ArgumentTypeError(f"'{text}' is not a byte count (e.g. 4GiB, 512MiB, 1000000)")
    return int(match.group(1)) * unit


def seed(text: str) -> int:
    """An argparse type: a random seed, a non-negative integer."""
    import argparse

    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"'{text}' is not a seed (a non-negative integer)")
    return value


def positive(text: str) -> int:
    """An argparse type: a count of at least 1."""
    import argparse

    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not a positive integer")
    return value


def add_op_library_argument(parser) -> None:
    """`--load-op-library FILE`, repeatable: the custom operators a plugin registers (docs/custom_ops.md)."""
    parser.add_argument(
        "--load-op-library",
        action="append",
        default=[],
        metavar="FILE",
        help="run the Python FILE and add the custom operators it registers (ge.register_op) to the "
        "importer, the IR and the interpreter; repeatable (docs/custom_ops.md)",
    )


@contextmanager
def op_libraries(paths: list[str]) -> Iterator[None]:
    """The plugins named with --load-op-library, loaded (each file runs: only files the user named)
    and known to every step while the block runs; a plugin that cannot be loaded is one line."""
    from ge.frontend.onnx_ops import check_claims
    from ge.ge_dialects.op_library import OpLibraryError, load_op_library, op_library

    try:
        libraries = []
        for path in paths:
            library = load_op_library(path)
            check_claims(library)
            libraries.append(library)
        scope = op_library(*libraries)
        scope.__enter__()
    except OpLibraryError as e:
        raise UserError(f"--load-op-library: {e}") from None
    try:
        yield
    finally:
        scope.__exit__(None, None, None)


def one_line_usage_errors(parser) -> None:
    """A bad command line is a user mistake like any other: one line, exit code 1 (argparse would print
    the usage too and exit with 2, the code the tools keep for internal errors)."""

    def error(message: str):
        print(f"{parser.prog}: error: {message} (see --help)", file=sys.stderr)
        sys.exit(1)

    parser.error = error


def add_contract_arguments(parser, notes: bool = False) -> None:
    """The options every tool has: the allocation limit and the traceback of an internal error;
    with `notes`, -v for the notes of the tool's steps (an old opset upgraded at import)."""
    from ge.interpreter.kernels import DEFAULT_MAX_TENSOR_BYTES

    parser.add_argument(
        "--max-tensor-bytes",
        metavar="BYTES",
        type=byte_size,
        default=DEFAULT_MAX_TENSOR_BYTES,
        help="refuse to create any tensor larger than this, from inputs, constant folding or "
        "the interpreter (e.g. 512MiB; default 4GiB)",
    )
    parser.add_argument("--debug", action="store_true", help="print the traceback of an internal error")
    if notes:
        parser.add_argument(
            "-v", "--verbose", action="store_true", help="print notes on what the steps did (e.g. an opset upgrade)"
        )
    one_line_usage_errors(parser)


# -- the error contract --------------------------------------------------------------------------
class ErrorReport:
    """What `reported_errors` yields; a tool sets `debug` once its arguments are parsed."""

    def __init__(self, tool: str, debug: bool):
        self.tool = tool
        self.debug = debug


_PROJECT_ROOT = Path(__file__).resolve().parent.parent


def _innermost_project_frame(e: BaseException) -> str:
    """`file:line` of the deepest traceback frame in the project's own code (not xDSL, numpy, ...).

    An exception raised `from` another (a pass's `PassInternalError` around a kernel's exception)
    is placed where its cause failed: the innermost cause with a frame of ours wins."""
    import traceback

    where = ""
    seen: set[int] = set()
    cause: BaseException | None = e
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        for frame in traceback.extract_tb(cause.__traceback__):
            path = Path(frame.filename).resolve()
            if (
                path.is_file()
                and _PROJECT_ROOT in path.parents
                and ".venv" not in path.parts
                and "site-packages" not in path.parts
            ):
                where = f"{path.relative_to(_PROJECT_ROOT)}:{frame.lineno}"
        cause = cause.__cause__
    return where


@contextmanager
def reported_errors(tool: str, debug: bool = False, verbose: bool = False) -> Iterator[ErrorReport]:
    """The tools' error contract (and, with `verbose`, the library's notes on stderr as
    `tool: note: ...`, one line each: the `ge` logger at INFO).

    - A user's mistake (UserError, an IR parse error, a bad pass pipeline, a verifier diagnostic)
      is `tool: error: ...` on stderr, exit code 1.
    - Running out of memory or of recursion depth is one line naming the step under way (`doing`),
      exit code 1: whether the input's size or nesting caused it or the compiler misbehaved cannot be
      told apart here, and for the user the remedy is the same (a smaller input, a larger machine).
    - Anything else is a compiler bug: `tool: internal error: Type: first line (at file:line)`, exit
      code 2; the traceback too with `--debug`.
    - stdout closed early (`ge-run ... | head -1`) ends quietly with exit code 1, like other Unix tools.
    """
    report = ErrorReport(tool, debug)
    collect_garbage_less_often()
    notes = _notes_on_stderr(tool) if verbose else nullcontext()
    try:
        with notes:
            yield report
        sys.stdout.flush()  # here, not at interpreter exit, so a closed pipe is reported by us
    except UserError as e:
        _die(tool, str(e))
    except ParseError as e:
        _die(tool, parse_error_line(e))
    except ArgSpecParseError as e:
        lines = [line.strip() for line in str(e).splitlines() if line.strip()]
        where = lines[1] if len(lines) > 1 else ""
        _die(tool, f"{where}: {lines[-1]} (in the pass pipeline)" if where else first_line(e))
    except DiagnosticException as e:
        _die(tool, first_line(e))
    except KeyboardInterrupt:
        _die(tool, "interrupted")
    except BrokenPipeError:
        _quiet_broken_pipe()
    except MemoryError as e:
        _show_traceback(report)
        where = _innermost_project_frame(e)
        _die(
            tool,
            f"out of memory{_step(e)}"
            + (f" (at {where})" if where else "")
            + "; a tensor may be too large for this machine (see --max-tensor-bytes)",
        )
    except RecursionError as e:
        _show_traceback(report)
        where = _innermost_project_frame(e)
        _die(
            tool,
            f"nesting too deep{_step(e)}"
            + (f" (at {where})" if where else "")
            + ": the input nests deeper than Python's recursion limit",
        )
    except Exception as e:  # a compiler bug: say so, and where
        _show_traceback(report)
        where = _innermost_project_frame(e)
        print(
            f"{tool}: internal error: {type(e).__name__}: {first_line(e)}"
            + (f" (at {where})" if where else "")
            + ("" if report.debug else "; rerun with --debug for the traceback"),
            file=sys.stderr,
        )
        sys.exit(2)


def _show_traceback(report: ErrorReport) -> None:
    if report.debug:
        import traceback

        traceback.print_exc(file=sys.stderr)


def _quiet_broken_pipe() -> None:
    """The reader of stdout went away: drop what is still buffered (Python would complain at exit)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    sys.exit(1)


@contextmanager
def _notes_on_stderr(tool: str) -> Iterator[None]:
    """The `ge` logger's INFO records as `tool: note: message` lines on stderr, while it lasts."""
    logger = logging.getLogger("ge")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(f"{tool}: note: %(message)s"))
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def _die(tool: str, message: str) -> None:
    print(f"{tool}: error: {message}", file=sys.stderr)
    sys.exit(1)
