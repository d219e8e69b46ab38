"""A per-pass progress line for long compiles, on a terminal only.

A BERT-Large step takes minutes to compile; a user at a terminal should see which of the ~30 passes
is running and for how long. Nothing is drawn when stderr is not a terminal (pipes, CI logs, the
test suite) or with `--quiet`: the tools' stderr is otherwise reserved for the one-line errors and
remarks that scripts read. The line is transient (erased when the pipeline ends), so a finished run
leaves the terminal as quiet as a piped one.
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import IO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from xdsl.passes import ModulePass


def wanted(quiet: bool = False, stream: IO[str] | None = None) -> bool:
    """Whether to draw: not asked to be quiet, and the stream (stderr) is a terminal."""
    stream = sys.stderr if stream is None else stream
    return not quiet and stream.isatty()


class PassProgress:
    """`passes.pipeline.Progress` drawn with rich: `[k/N] pass-name  elapsed`, one bar per pipeline.

    Use as a context manager around the pipeline; disabled, every call is a no-op (no rich objects)."""

    def __init__(self, what: str, enabled: bool, console: Console | None = None):
        self.what = what
        self.enabled = enabled
        self._console = console
        self._bar: Progress | None = None
        self._task: TaskID | None = None

    def __enter__(self) -> PassProgress:
        if self.enabled:
            self._bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=self._console or Console(stderr=True),
                transient=True,
            )
            self._bar.start()
            self._task = self._bar.add_task(self.what, total=None)
        return self

    def starting(self, pass_: ModulePass, index: int, total: int) -> None:
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, description=f"{self.what}: {pass_.name}", completed=index, total=total)

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
