"""What the command-line tools share: the dialect context, printing, atomic writes, and the rule
that a user's mistake ends in one line on stderr and a non-zero exit, never a traceback."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from io import StringIO
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError

from ge_dialects.fused import FUSED
from ge_dialects.stream import STREAM
from ge_dialects.task import TASK
from ge_dialects.ge import GE
from ge_dialects.ir_text import SourceVerifyError, parse_ir, verify_at_source


class UserError(Exception):
    """A mistake in what the user gave us; reported as one line, exit code 1."""


def make_context() -> Context:
    ctx = Context()
    ctx.load_dialect(builtin.Builtin)
    ctx.load_dialect(func.Func)
    ctx.load_dialect(GE)
    ctx.load_dialect(FUSED)
    ctx.load_dialect(TASK)
    ctx.load_dialect(STREAM)
    return ctx


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


def import_onnx_file(path: str, inline_limit: int | None = None):
    """(module, weights) of an ONNX file, import errors as user errors naming the file."""
    from frontend.onnx_importer import import_model, load_onnx
    from frontend.onnx_ops import OnnxImportError

    try:
        model = load_onnx(path)
        return import_model(model) if inline_limit is None else import_model(model, inline_limit)
    except OnnxImportError as e:
        raise UserError(str(e) if str(e).startswith(path) else f"{path}: {e}") from None


def first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def write_atomic(path: str | os.PathLike, data: str | bytes | Callable[[str], None]) -> None:
    """Writes the whole file or nothing: into a temporary beside it, then renamed over it.

    `data` may be a callable that writes the temporary file itself (e.g. a safetensors saver)."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise UserError(f"{path}: folder {folder} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=folder)
    try:
        if callable(data):
            os.close(fd)
            data(tmp)
        else:
            with os.fdopen(fd, "wb") as f:
                f.write(data.encode() if isinstance(data, str) else data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


@contextmanager
def reported_errors(tool: str) -> Iterator[None]:
    """Turns user errors into `tool: error: ...` on stderr and exit code 1."""
    try:
        yield
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


def _die(tool: str, message: str) -> None:
    print(f"{tool}: error: {message}", file=sys.stderr)
    sys.exit(1)
