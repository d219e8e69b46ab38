"""The fenced code blocks of a markdown file, with their info strings parsed.

An info string is the text after the opening fence: a language, then bare words and `key=value`
options (shell-quoted, so `args="%x: tensor<2xf32>"` is one option). Renderers use only the first
word for highlighting, so the rest tells the docs checker (doc_checks.py) how to check the block.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

_OPENING = re.compile(r"^ {0,3}(`{3,})(.*)$")


class BlockError(Exception):
    """A documentation block that is malformed or whose check failed; the message names file:line."""


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # 1-based line of the opening fence
    lang: str
    words: frozenset[str]
    options: dict[str, str] = field(hash=False)
    text: str = ""

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


def parse_info(info: str, where: str) -> tuple[str, frozenset[str], dict[str, str]]:
    try:
        parts = shlex.split(info)
    except ValueError as e:
        raise BlockError(f"{where}: info string {info!r}: {e}") from None
    if not parts:
        return "", frozenset(), {}
    words, options = set(), {}
    for part in parts[1:]:
        key, eq, value = part.partition("=")
        if eq:
            options[key] = value
        else:
            words.add(part)
    return parts[0], frozenset(words), options


def read_blocks(path: Path, shown_as: Path | None = None) -> list[Block]:
    """Every fenced block of `path` in order; an unclosed fence is an error naming its line."""
    shown = shown_as or path
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks, i = [], 0
    while i < len(lines):
        opening = _OPENING.match(lines[i])
        if not opening:
            i += 1
            continue
        fence, where = opening.group(1), f"{shown}:{i + 1}"
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip().startswith(fence)), None)
        if end is None:
            raise BlockError(f"{where}: code block never closed")
        lang, words, options = parse_info(opening.group(2).strip(), where)
        blocks.append(Block(shown, i + 1, lang, words, options, "\n".join(lines[i + 1 : end]) + "\n"))
        i = end + 1
    return blocks
