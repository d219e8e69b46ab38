"""Checks of the code blocks in README.md and docs/*.md, one per language; the convention:

```mlir                       a whole module: `ge-opt` must parse and verify it.
```mlir args="%x: tensor<..>"  a function body: wrapped in `func.func @doc(<args>) { ... func.return }`.
```mlir pipeline="p1,p2"       also run `ge-opt -p p1,p2`; the next block, marked `expected` (with the
                               same args), must print the same after `ge-opt` without passes.
```mlir fragment              an excerpt with elisions (`...`, before/after side by side): not parsed,
                               but every op, attribute and type it names (ge.relu, #ge.fmt, !stream.event)
                               must be registered.
```python                     run as a script in a scratch folder (`file=NAME`: also saved as NAME there).
```python fragment            compiled, and its import statements run (needs names it does not define).
```python signature module=M  each line `f(a, b=1)` must match the parameters of M.f.
```sh                         run with bash -euo pipefail in a scratch folder holding small inputs:
                               model.onnx, model.mlir (+ .safetensors), in.npz, in.safetensors, my_chip.toml and every
                               block saved with file=NAME. `no-run=tool1,tool2`: lines of those commands
                               are not run (too slow); their --flags must appear in `tool --help`.
```sh no-run                  nothing is run; the --flags of every ge-* command are checked likewise.
```toml                       parsed (`file=NAME`: saved as NAME for the sh blocks).
A block without a language is prose (remarks, diagrams) and is not checked.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import os
import re
import shlex
import subprocess
import sys
import tomllib
from collections.abc import Callable
from functools import cache
from pathlib import Path

import tool_server
from markdown_blocks import Block, BlockError

ROOT = Path(__file__).resolve().parents[2]
KNOWN_WORDS = {
    "mlir": {"fragment", "expected"},
    "python": {"fragment", "signature"},
    "sh": {"no-run"},
    "toml": set(),
    "": set(),
}
KNOWN_OPTIONS = {
    "mlir": {"args", "pipeline"},
    "python": {"file", "module"},
    "sh": {"no-run"},
    "toml": {"file"},
    "": set(),
}
_DIALECTS = "ge|fused|task|stream|func|builtin"
# an op name, unless it is an attribute key (`stream.count = 2`, a unit attribute `{ge.keep_dtype}`);
# `#`/`!` mark attributes and types
_NAMED = re.compile(rf"(?<![\w.])([#!]?)((?:{_DIALECTS})\.[a-z_][a-z0-9_]*)\b(?!\s*=[^=]|\}})")
_FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")


def fail(block: Block, reason: str) -> BlockError:
    return BlockError(f"{block.where}: {block.lang} block: {reason}")


def tool_env() -> dict[str, str]:
    """The project's tools run this checkout's code: the tool server's clients first on PATH, then
    the console scripts beside this Python."""
    folders = [str(tool_server.shared().clients), str(Path(sys.executable).parent), os.environ.get("PATH", "")]
    pythonpath = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    return dict(os.environ, PATH=os.pathsep.join(folders), PYTHONPATH=pythonpath)


def run(cmd: list[str], cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    """A tool or a Python script (`sys.executable -c ...`) in a fork of the tool server; a shell
    script (bash) in a process of its own, whose tool calls reach the server through PATH."""
    if cmd[0] == "bash":
        return subprocess.run(cmd, cwd=cwd, input=stdin, capture_output=True, text=True, env=tool_env(), timeout=600)
    tool = "python" if cmd[0] == sys.executable else cmd[0]
    return tool_server.run(tool, *cmd[1:], input=stdin, cwd=cwd, env=tool_env(), timeout=600)


def check_info(block: Block) -> None:
    if block.lang not in KNOWN_WORDS:
        raise fail(block, f"no checker for language {block.lang!r} (known: {sorted(KNOWN_WORDS)})")
    unknown = sorted(block.words - KNOWN_WORDS[block.lang]) + sorted(set(block.options) - KNOWN_OPTIONS[block.lang])
    if unknown:
        raise fail(block, f"unknown info-string word(s) {unknown}")


# --- mlir -------------------------------------------------------------------------------------


def mlir_source(block: Block) -> str:
    if "args" not in block.options:
        return block.text
    body = "".join(f"  {line}\n" for line in block.text.splitlines())
    return f"func.func @doc({block.options['args']}) {{\n{body}  func.return\n}}\n"


def ge_opt(block: Block, source: str, workdir: Path, pipeline: str | None = None) -> str:
    (workdir / "block.mlir").write_text(source)
    result = run(["ge-opt", "block.mlir", *(["-p", pipeline] if pipeline else [])], workdir)
    if result.returncode != 0:
        command = f"ge-opt -p {pipeline}" if pipeline else "ge-opt"
        raise fail(block, f"{command} failed: {result.stderr.strip()}")
    return result.stdout


@cache
def _registry():
    from ge.tools.common import make_context

    return make_context()


def parsed(block: Block) -> str:
    """The block parsed and verified as ge-opt does it (same functions, in this process: fast), printed."""
    from ge.tools.common import UserError, parse_module, print_module

    try:
        return print_module(parse_module(mlir_source(block), block.where))
    except UserError as e:
        raise fail(block, f"does not parse and verify: {e}") from None


def unregistered_names(text: str) -> list[str]:
    context, unknown = _registry(), []
    for sigil, name in _NAMED.findall(text):
        lookup = {"": context.get_optional_op, "#": context.get_optional_attr, "!": context.get_optional_type}[sigil]
        if lookup(name) is None:
            unknown.append(sigil + name)
    return unknown


def check_mlir(block: Block, following: Block | None, workdir: Path) -> None:
    if "fragment" in block.words:
        unknown = unregistered_names(block.text)
        if unknown:
            raise fail(block, f"names unregistered ops/attributes/types {sorted(set(unknown))}")
        return
    pipeline = block.options.get("pipeline")
    if pipeline is None:
        parsed(block)
        return
    if following is None or following.lang != "mlir" or "expected" not in following.words:
        raise fail(block, "pipeline= needs the next block to be ```mlir expected")
    if following.options.get("args") != block.options.get("args"):
        raise fail(block, "the expected block must have the same args=")
    actual, expected = ge_opt(block, mlir_source(block), workdir, pipeline), parsed(following)
    if actual.rstrip() != expected.rstrip():
        raise fail(block, f"ge-opt -p {pipeline} prints\n{actual}\nbut {following.where} says\n{expected}")


# --- python -----------------------------------------------------------------------------------


def check_python(block: Block, workdir: Path) -> None:
    try:
        tree = ast.parse(block.text, filename=block.where)
    except SyntaxError as e:
        raise fail(block, f"syntax error at block line {e.lineno}: {e.msg}") from None
    if "signature" in block.words:
        return check_signatures(block, tree)
    script = block.text
    if "fragment" in block.words:
        script = "\n".join(ast.unparse(node) for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom))
    result = run([sys.executable, "-c", script], workdir)
    if result.returncode != 0:
        raise fail(block, f"raised: {result.stderr.strip().splitlines()[-1] if result.stderr.strip() else '?'}")


def _parameters(signature: inspect.Signature) -> list[tuple[str, str, str]]:
    return [
        (p.name, p.kind.name, "" if p.default is p.empty else repr(p.default)) for p in signature.parameters.values()
    ]


def check_signatures(block: Block, tree: ast.Module) -> None:
    module = importlib.import_module(block.options.get("module", ""))
    for statement in tree.body:
        call = statement.value if isinstance(statement, ast.Expr) else None
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
            raise fail(block, f"line {statement.lineno}: a signature line is `name(params)`")
        stub: dict[str, Callable] = {}
        exec(f"def {ast.unparse(call)}: pass", {}, stub)  # the documented parameters, as a function
        name = call.func.id
        real = getattr(module, name, None)
        if real is None:
            raise fail(block, f"{module.__name__} has no {name}")
        documented, actual = _parameters(inspect.signature(stub[name])), _parameters(inspect.signature(real))
        # a documented default of `...` stands for one a reader need not see (a dataclass factory)
        documented = [
            (n, k, a[2] if d == "Ellipsis" and a[0] == n and a[2] else d)
            for (n, k, d), a in zip(documented, actual + [("", "", "")] * len(documented))
        ]
        if documented != actual:
            raise fail(
                block, f"{name}{inspect.signature(stub[name])} but {module.__name__}.{name}{inspect.signature(real)}"
            )


# --- sh and toml ------------------------------------------------------------------------------


@cache
def tool_help(tool: str) -> str:
    result = run([tool, "--help"], ROOT)
    if result.returncode != 0:
        raise BlockError(f"{tool} --help failed: {result.stderr.strip()}")
    return result.stdout


def command_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]


def check_flags(block: Block, line: str) -> None:
    tool = shlex.split(line, comments=True)[0]
    if not tool.startswith("ge-"):
        return
    for flag in _FLAG.findall(line.split("#", 1)[0]):
        if not re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", tool_help(tool)):
            raise fail(block, f"{tool} has no option {flag} (not in {tool} --help)")


def check_sh(block: Block, workdir: Path) -> None:
    skipped = set(block.options.get("no-run", "").split(",")) - {""}
    script = ["set -euo pipefail"]
    for line in command_lines(block.text):
        if "no-run" in block.words or shlex.split(line, comments=True)[0] in skipped:
            check_flags(block, line)
        else:
            script.append(line)
    if len(script) == 1:
        return
    result = run(["bash", "-c", "\n".join(script)], workdir)
    if result.returncode != 0:
        raise fail(block, f"exit code {result.returncode}: {result.stderr.strip()[-2000:]}")


def check_toml(block: Block) -> None:
    try:
        tomllib.loads(block.text)
    except tomllib.TOMLDecodeError as e:
        raise fail(block, f"not TOML: {e}") from None


def check_block(block: Block, following: Block | None, workdir: Path) -> None:
    """Raises BlockError naming the block when it does not hold; `workdir` is a scratch copy of the inputs."""
    check_info(block)
    if block.lang == "mlir":
        check_mlir(block, following, workdir)
    elif block.lang == "python":
        check_python(block, workdir)
    elif block.lang == "sh":
        check_sh(block, workdir)
    elif block.lang == "toml":
        check_toml(block)
