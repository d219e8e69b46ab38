"""One exception type for the API, carrying the tools' one-line message (place and reason)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from xdsl.utils.exceptions import DiagnosticException, ParseError

from ge.ge_dialects.messages import one_line


class GEError(Exception):
    """A mistake in what the caller gave (a model, an option, an input): one line naming the place
    and the reason, the same line `ge-opt` / `ge-run` would print after `error:`."""

    def __init__(self, message: str):
        super().__init__(one_line(message))


@contextmanager
def user_errors(where: str = "") -> Iterator[None]:
    """Re-raises the library's user-facing exceptions as GEError (prefixed with `where`, when given);
    anything else is a compiler bug and propagates unchanged, traceback and all."""
    from ge.frontend.onnx_ops import OnnxImportError
    from ge.frontend.sidecar import SidecarError
    from ge.tools.common import UserError, first_line, parse_error_line

    prefix = f"{where}: " if where else ""
    try:
        yield
    except GEError:
        raise
    except ParseError as e:
        raise GEError(prefix + parse_error_line(e)) from None
    except (UserError, DiagnosticException, OnnxImportError, SidecarError) as e:
        raise GEError(prefix + first_line(e)) from None
