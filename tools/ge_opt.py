"""ge-opt: xdsl-opt with the project's dialects and passes.

Differences from xdsl-opt: node names (locations) are printed by default (`--strip-debuginfo`
turns them off), `-o` is written whole or not at all, and errors are one line.
"""

from __future__ import annotations

import argparse
import sys
from io import StringIO
from typing import IO

from xdsl.xdsl_opt_main import xDSLOptMain

from ge_dialects.ge import GE
from passes import all_passes
from tools.common import UserError, first_line, reported_errors, write_atomic


class _KeptText(StringIO):
    """xDSLOptMain closes its output stream when done; this one keeps its text for the final write."""

    def close(self) -> None:
        pass


class GeOptMain(xDSLOptMain):
    def register_all_dialects(self):
        super().register_all_dialects()
        self.ctx.register_dialect("ge", lambda: GE)

    def register_all_passes(self):
        super().register_all_passes()
        for name, factory in all_passes().items():
            self.register_pass(name, factory)

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser):
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument(
            "--strip-debuginfo", action="store_true", help="do not print locations (ONNX node names)"
        )

    def prepare_output(self) -> IO[str]:
        self._text = _KeptText()
        return self._text

    def output_resulting_program(self, prog) -> str:
        self.args.print_debuginfo = not self.args.strip_debuginfo
        return super().output_resulting_program(prog).replace(" loc(unknown)", "")

    def run(self):
        try:
            super().run()
        except ValueError as e:
            if "Unrecognized file extension" in str(e):
                raise UserError(first_line(e)) from None
            raise
        except OSError as e:
            raise UserError(f"{e.filename}: {e.strerror}") from None
        text = self._text.getvalue()
        if self.args.output_file is None:
            sys.stdout.write(text)
        else:
            write_atomic(self.args.output_file, text)


def main(argv: list[str] | None = None) -> None:
    with reported_errors("ge-opt"):
        try:
            tool = GeOptMain(description="ge graph optimizer driver", args=argv)
        except ValueError as e:  # an unknown pass or pass option in -p
            raise UserError(f"pass pipeline: {first_line(e)}") from None
        tool.run()


if __name__ == "__main__":
    main()
