"""ge-opt's reading of one IR chunk: parsed and verified with errors at file:line:col
(see ge_dialects.ir_text)."""

from __future__ import annotations

from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import VerifyException

from ge.ge_dialects.ir_text import SourceVerifyError, parse_ir, verify_at_source
from ge.tools.common import UserError


def read_ir_chunk(
    ctx: Context, chunk: IO[bytes], source: str, implicit_module: bool, line_offset: int, verify: bool = True
) -> ModuleOp:
    """Parses (and verifies) one chunk of a `--split-input-file` input.

    Raises ParseError, VerifyException (naming file:line:col) or UserError."""
    data = chunk.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1 + line_offset
        raise UserError(f"{source}:{line}: not UTF-8 text (byte 0x{data[e.start]:02X})") from None
    module, parser = parse_ir(ctx, text, source, implicit_module=implicit_module, line_offset=line_offset)
    if verify:
        try:
            verify_at_source(module, parser, line_offset)
        except SourceVerifyError as e:  # a verifier error, so --verify-diagnostics prints it
            error = VerifyException(str(e))
            for note in getattr(e, "__notes__", ()):
                error.add_note(note)
            raise error from None
    return module
