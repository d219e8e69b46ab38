"""Runs one fuzz case against a tool and says whether the tool kept its contract.

Each case runs in a child forked from this (already warm) process: the tool's `main(argv)` is
called in-process in the child, so a case costs a fork instead of an interpreter start and the
imports (0.1 s a case on the busy 2-core machine, most of it the tool's own work), yet every case
starts from the same clean state, a leak or a wedged global cannot spoil the
next one, and the child can be capped and killed:

- time: SIGALRM (`signal.setitimer`) raises `_Timeout` (a BaseException, so a tool's `except Exception` cannot
  swallow it) after `time_limit` seconds, which gives the frame where the tool hung; the parent
  kills the child with SIGKILL a few seconds later if it is stuck in C code. Either is a *hang*.
- memory: RLIMIT_AS caps the child's address space at what the parent uses plus `memory_mb`,
  so a hostile dimension ends in MemoryError in the child instead of swapping the shared machine.
- file size: RLIMIT_FSIZE (SIGXFSZ ignored, so a write past it is an OSError).

The child runs in a fresh temp folder holding the case's files; when `case.sentinels` is set, every
output the argv names (and its .safetensors sidecar) exists beforehand with known bytes, to catch
a failed run that clobbers it. Outcomes:

    ok           exit 0, outputs complete and re-readable (IR re-parses, npz/json/csv load)
    user-error   exit 1, one line `<tool>: error: ...`
    internal     exit 2, one line `<tool>: internal error: ...` (allowed, but a bug to fix)
  and the contract violations:
    traceback    an exception escaped main, or 'Traceback' on stderr
    bad-exit     an exit code other than 0, 1, 2
    bad-message  a failure whose stderr is not exactly the one `<tool>: [internal ]error:` line
                 (with --remarks or --verify-numerics, their reports may come before it)
    hang         over the time limit
    crash        the child died (signal, or os._exit) without a result
    clobbered    a failed run changed a file that existed before (an output sentinel or an input)
    partial      a file left behind that should not be (an output after a failure, a temp file)
    bad-output   exit 0 but an output that does not re-read (or the IR on stdout does not parse)
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import re
import resource
import select
import shutil
import signal
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

OK, USER_ERROR, INTERNAL = "ok", "user-error", "internal"
VIOLATIONS = ("traceback", "bad-exit", "bad-message", "hang", "crash", "clobbered", "partial", "bad-output")
OUTCOMES = (OK, USER_ERROR, INTERNAL, *VIOLATIONS)

SENTINEL = b"sentinel: a file that existed before the run\n"

#: tool -> (module, function, what it writes: "ir" for IR text, "run" for ge-run's files); the
#: harness's own tests add fake tools here.
TOOLS = {
    "ge-opt": ("ge.tools.ge_opt", "main", "ir"),
    "ge-translate": ("ge.tools.ge_translate", "main", "ir"),
    "ge-run": ("ge.tools.ge_run", "main", "run"),
}


class Symlink(str):
    """A file of a case that is a symbolic link to this target (e.g. out of the case's folder)."""


OUTSIDE = "outside.bin"
"""A file beside (not in) the case's folder: what a symlink out of the folder points to."""


def lay_files(folder: Path, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, Symlink):
            path.symlink_to(data)
        else:
            path.write_bytes(data)


@dataclass
class Case:
    """One input: the files to lay in an empty folder and the tool's argv (paths relative to it)."""

    tool: str
    files: dict[str, bytes]
    argv: list[str]
    outputs: list[str] = field(default_factory=list)  # the outputs the argv names, with sidecars
    sentinels: bool = False
    origin: str = ""  # seed and mutations, for the report

    def lenient_stderr(self) -> bool:
        """Flags that print diagnostics before a failure (--remarks, --verify-numerics reports)."""
        return any(a in ("--remarks", "--verify-numerics") for a in self.argv)


@dataclass
class Result:
    outcome: str
    exit_code: int | None
    stderr: str
    detail: str = ""  # what was wrong, one line
    signature: str = ""  # exception type @ innermost project frame, or the error line's shape
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)  # every violation found (outcome is the first)


class _Timeout(BaseException):
    pass


# ------------------------------------------------------------------------------------- parent side
def run_case(case: Case, time_limit: float = 10.0, memory_mb: int = 2048, kill_after: float = 5.0) -> Result:
    """Runs the case in a forked child and classifies what it did; a child that has not answered
    `kill_after` seconds past its time limit (stuck where the alarm cannot reach) is killed."""
    work = Path(tempfile.mkdtemp(prefix="ge-fuzz-"))
    try:
        folder = work / "case"
        folder.mkdir()
        (work / OUTSIDE).write_bytes(b"\x00" * 64)
        lay_files(folder, case.files)
        if case.sentinels:
            for name in case.outputs:
                if not (folder / name).exists() and (folder / name).parent.is_dir():
                    (folder / name).write_bytes(SENTINEL)
        before = _snapshot(folder)
        start = time.monotonic()
        reply = _fork_and_run(case, folder, work, time_limit, memory_mb, kill_after)
        seconds = time.monotonic() - start
        return _classify(case, reply, before, _snapshot(folder), folder, seconds)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every file under the folder with its bytes (None for what is not a regular file)."""
    found = {}
    for path in folder.rglob("*"):
        rel = str(path.relative_to(folder))
        found[rel] = path.read_bytes() if path.is_file() and not path.is_symlink() else None
    return found


def _fork_and_run(case: Case, folder: Path, work: Path, time_limit: float, memory_mb: int, kill_after: float) -> dict:
    read_end, write_end = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read_end)
        try:
            reply = _child(case, folder, work, time_limit, memory_mb)
        except BaseException as e:  # the harness itself failed; say so rather than die silently
            reply = {"harness_error": "".join(traceback.format_exception(e))}
        try:
            data = pickle.dumps(reply)
        except Exception as e:
            data = pickle.dumps({"harness_error": f"result not picklable: {e}"})
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(data)
        os._exit(0)
    os.close(write_end)
    chunks, deadline, killed = [], time.monotonic() + time_limit + kill_after, False
    with os.fdopen(read_end, "rb") as pipe:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                os.kill(pid, signal.SIGKILL)
                killed = True
                break
            ready, _, _ = select.select([pipe], [], [], remaining)
            if ready:
                chunk = os.read(pipe.fileno(), 1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    if killed:
        return {"killed": True}
    if not chunks:
        return {
            "died": (os.WIFSIGNALED(status) and signal.Signals(os.WTERMSIG(status)).name)
            or f"exit status {os.waitstatus_to_exitcode(status)} without a result"
        }
    return pickle.loads(b"".join(chunks))


# -------------------------------------------------------------------------------------- child side
def _child(case: Case, folder: Path, work: Path, time_limit: float, memory_mb: int) -> dict:
    os.chdir(folder)
    _cap_resources(memory_mb)
    # C-level writes (fd 1 and 2) go to files too, so nothing reaches the fuzzer's terminal
    fd_out = os.open(work / "fd1", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    fd_err = os.open(work / "fd2", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(fd_out, 1)
    os.dup2(fd_err, 2)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # a tool that reads stdin gets end-of-file, not a wait
    sys.stdin = io.StringIO("")
    timed_out = []

    def on_alarm(signum, frame):
        timed_out.append(True)
        raise _Timeout(f"over {time_limit} s")

    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, time_limit)
    out, err = io.StringIO(), io.StringIO()
    exit_code, escaped, check = None, None, None
    module_name, function, _ = TOOLS[case.tool]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                module = __import__(module_name, fromlist=[function])
                getattr(module, function)(list(case.argv))
                exit_code = 0
            except SystemExit as e:
                exit_code = _exit_code(e, err)
            except _Timeout as e:
                escaped = e
            except BaseException as e:
                escaped = e
        if exit_code == 0 and not timed_out:
            check = check_outputs(case, folder, out.getvalue())
    except _Timeout as e:
        escaped = escaped or e
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    stderr = err.getvalue() + (work / "fd2").read_text(errors="replace")
    reply = {"exit_code": exit_code, "stderr": stderr[-20000:], "timed_out": bool(timed_out), "check": check}
    if escaped is not None:
        reply["escaped"] = f"{type(escaped).__name__}: {_first_line(escaped)}"
        reply["signature"] = signature_of(escaped)
        reply["traceback"] = "".join(traceback.format_exception(escaped))[-8000:]
    return reply


def _cap_resources(memory_mb: int) -> None:
    used = _address_space_bytes()
    limit = used + memory_mb * (1 << 20)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_FSIZE, (256 << 20, 256 << 20))


def _address_space_bytes() -> int:
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 4 << 30


def _exit_code(e: SystemExit, err: io.StringIO) -> int:
    if e.code is None:
        return 0
    if isinstance(e.code, int):
        return e.code
    err.write(f"{e.code}\n")  # sys.exit("message") prints the message and exits 1
    return 1


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0][:200] if text else ""


def signature_of(e: BaseException) -> str:
    """`ExceptionType @ file:function` of the innermost frame in the project (not in a library)."""
    frames = traceback.extract_tb(e.__traceback__)
    ours = [f for f in frames if _is_project_file(f.filename)]
    not_harness = [f for f in frames if "fuzz" not in Path(f.filename).parts]
    frame = (ours or not_harness or frames or [None])[-1]
    where = f"{_short(frame.filename)}:{frame.name}" if frame else "?"
    return f"{type(e).__name__} @ {where}"


def _is_project_file(filename: str) -> bool:
    path = Path(filename).resolve()
    return path.is_relative_to(ROOT) and ".venv" not in path.parts and "fuzz" not in path.parts


def _short(filename: str) -> str:
    path = Path(filename).resolve()
    if path.is_relative_to(ROOT):
        return str(path.relative_to(ROOT))
    parts = path.parts
    return "/".join(parts[parts.index("site-packages") + 1 :]) if "site-packages" in parts else path.name


# ------------------------------------------------------------------------ outputs after an exit 0
def check_outputs(case: Case, folder: Path, stdout: str) -> str | None:
    """What is wrong with the outputs of a successful run, or None."""
    try:
        if TOOLS[case.tool][2] == "ir":
            ir_out = next((o for o in case.outputs if o.endswith(".mlir")), None)
            if ir_out is None:
                return _check_ir(stdout, folder / "stdout.mlir", "stdout")
            path = folder / ir_out
            if not path.is_file() or path.read_bytes() == SENTINEL:
                return f"{ir_out} was not written"
            return _check_ir(path.read_text(), path, ir_out)
        return _check_run_outputs(case, folder)
    except _Timeout:
        raise
    except BaseException as e:
        return f"checking the outputs raised {type(e).__name__}: {_first_line(e)}"


def _check_ir(text: str, path: Path, what: str) -> str | None:
    """Every module of the text parses and verifies, and its weights sidecar opens."""
    from ge.frontend.sidecar import SidecarError, open_weights
    from ge.tools.common import UserError, parse_module

    for chunk in text.split("// -----"):
        if not chunk.strip():
            continue
        try:
            module = parse_module(chunk, what)
        except UserError as e:
            return f"{what} does not re-parse: {e}"
        try:
            open_weights(module, path)
        except SidecarError as e:
            return f"{what}: {e}"
    return None


def _check_run_outputs(case: Case, folder: Path) -> str | None:
    import csv
    import json

    import numpy as np

    argv = case.argv
    for flag, kind in (("-o", "npz"), ("--output", "npz"), ("--trace", "json"), ("--op-summary", "csv")):
        if flag not in argv:
            continue
        name = argv[argv.index(flag) + 1]
        path = folder / name
        if not path.is_file() or path.read_bytes() == SENTINEL:
            if kind == "npz" and "--timing-only" in argv:
                continue  # --timing-only computes no outputs
            return f"{name} was not written"
        if kind == "npz":
            with np.load(path, allow_pickle=False) as data:
                for key in data.files:
                    data[key]
        elif kind == "json":
            json.loads(path.read_text())
        else:
            rows = list(csv.reader(io.StringIO(path.read_text())))
            if not rows or len({len(r) for r in rows}) != 1:
                return f"{name} is not a rectangular CSV"
    return None


# ----------------------------------------------------------------------------------- classifying
_TEMP_NAME = re.compile(r"(^|/)\.[^/]+\.[A-Za-z0-9_]{6,}$")  # write_atomic's mkstemp names


def _classify(case: Case, reply: dict, before: dict, after: dict, folder: Path, seconds: float) -> Result:
    tool = case.tool
    if "harness_error" in reply:
        raise RuntimeError(f"fuzz harness failed in the child:\n{reply['harness_error']}")
    if reply.get("killed"):
        return Result(
            "hang", None, "", "killed after the time limit (stuck outside Python)", "hang @ ?", seconds, ["hang"]
        )
    if "died" in reply:
        return Result(
            "crash", None, "", f"the child died: {reply['died']}", f"crash {reply['died']}", seconds, ["crash"]
        )
    code, stderr = reply["exit_code"], reply["stderr"]
    problems: list[tuple[str, str, str]] = []  # (outcome, detail, signature)
    lines = [line for line in stderr.splitlines() if line.strip()]

    if reply["timed_out"]:
        problems.append(
            ("hang", f"over the time limit ({reply.get('escaped', '')})", "hang: " + reply.get("signature", "?"))
        )
    elif "escaped" in reply:
        problems.append(("traceback", reply["escaped"], reply["signature"]))
    elif "Traceback (most recent call last)" in stderr:
        problems.append(("traceback", "a traceback on stderr", _stderr_signature(stderr)))
    if code is not None and code not in (0, 1, 2):
        problems.append(("bad-exit", f"exit code {code}", f"exit {code}"))
    if code in (1, 2) and not problems:
        expected = f"{tool}: error: " if code == 1 else f"{tool}: internal error: "
        error_lines = [line for line in lines if line.startswith(f"{tool}: ")]
        others = [line for line in lines if not line.startswith(f"{tool}: ")]
        shape_ok = (
            len(error_lines) == 1
            and lines[-1] == error_lines[0]
            and error_lines[0].startswith(expected)
            and (not others or case.lenient_stderr())
        )
        if not shape_ok:
            problems.append(
                ("bad-message", f"exit {code} with stderr {stderr[-300:]!r}", f"exit {code}: " + _message_shape(lines))
            )

    changed, left = _file_changes(case, before, after, code == 0)
    if changed:
        problems.append(("clobbered", f"changed: {', '.join(changed)}", "clobbered " + _kinds(changed)))
    if left:
        problems.append(("partial", f"left behind: {', '.join(left)}", "partial " + _kinds(left)))
    if code == 0 and reply.get("check"):
        problems.append(("bad-output", reply["check"], "bad-output: " + _message_shape([reply["check"]])))

    if problems:
        outcome, detail, sig = problems[0]
        return Result(outcome, code, stderr, detail, sig, seconds, [p[0] for p in problems])
    if code == 0:
        return Result(OK, 0, stderr, seconds=seconds)
    if code == 1:
        return Result(USER_ERROR, 1, stderr, lines[-1], _message_shape(lines[-1:]), seconds)
    return Result(INTERNAL, 2, stderr, lines[-1], _message_shape(lines[-1:]), seconds)


def _file_changes(case: Case, before: dict, after: dict, succeeded: bool) -> tuple[list[str], list[str]]:
    """(files that changed but may not, files that appeared but may not)."""
    outputs = set(case.outputs)
    changed = [
        name
        for name, data in before.items()
        if (name not in outputs or not succeeded) and after.get(name, b"<gone>") != data
    ]
    appeared = [name for name in after if name not in before]
    left = [name for name in appeared if not succeeded or name not in outputs or _TEMP_NAME.search(name)]
    if succeeded:  # a successful run must not leave its temporaries either
        left += [name for name in appeared if name in outputs and _TEMP_NAME.search(name)]
    return sorted(changed), sorted(set(left))


def _kinds(names: list[str]) -> str:
    return ",".join(sorted({"temp" if _TEMP_NAME.search(n) else Path(n).suffix or n for n in names}))


_STDERR_FRAME = re.compile(r'File "([^"]+)", line \d+, in (\S+)')


def _stderr_signature(stderr: str) -> str:
    frames = _STDERR_FRAME.findall(stderr)
    ours = [f for f in frames if _is_project_file(f[0])]
    frame = ours[-1] if ours else (frames[-1] if frames else ("?", "?"))
    last = [line for line in stderr.splitlines() if re.match(r"^\w[\w.]*(Error|Exception|Exit)\b", line)]
    kind = last[-1].split(":")[0] if last else "?"
    return f"{kind} @ {_short(frame[0]) if frame[0] != '?' else '?'}:{frame[1]}"


def _message_shape(lines: list[str]) -> str:
    """The message with its particulars (numbers, quoted names, paths) blanked, for grouping."""
    text = lines[-1] if lines else "<no stderr>"
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "'_'", text)
    text = re.sub(r"<[^<>]*>", "<_>", text)
    text = re.sub(r"\S*/\S*", "PATH", text)
    text = re.sub(r"-?\d+(\.\d+)?(e[-+]?\d+)?", "N", text)
    return text[:160]
