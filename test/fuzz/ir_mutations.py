"""Mutations of IR text (tokens: numbers, dims, types, SSA names, op names, strings; lines; deep
nesting; unicode) and of the weights sidecar beside it (corrupt header, lying offsets, a missing
file, a link out of the folder, a reference with '..')."""

from __future__ import annotations

import json
import random
import re
import struct

from .byte_mutations import mutate_bytes
from .contract import OUTSIDE, Symlink
from .seeds import Corpus, IrSeed

_TOKEN = re.compile(
    r'"(?:[^"\\\n]|\\.)*"|[%@^#!][\w$.\-]*|\d+(?:\.\d+)?(?:e[-+]?\d+)?x?|[A-Za-z_][\w.$]*|->|\s+|.', re.S
)
_NUMBERS = [
    "0",
    "-1",
    "1e309",
    "nan",
    "inf",
    "-0.0",
    "99999999999999999999",
    "0x7FFFFFFF",
    "2147483648",
    "9223372036854775808",
    "1.5",
    "-99999",
    "0x",
    "1e-400",
    "0.0000000001",
]
_DIMS = ["0x", "?x", "1000000x", "99999999999x", "-1x", "", "1x1x", "2x", "65536x65536x"]
_TYPES = [
    "f32",
    "f16",
    "bf16",
    "f64",
    "i64",
    "i32",
    "i8",
    "i1",
    "i4",
    "ui8",
    "f8E4M3FN",
    "index",
    "complex<f32>",
    "none",
    "tensor<f32>",
    "!ge.foo",
    "memref<2xf32>",
    "f80",
    "i0",
    "i99999",
]
_STRINGS = ['"../../etc/passwd"', '"/tmp/x"', '""', '"\\00"', '"名"', '"' + "a" * 3000 + '"', '"\\"', '"x\\ny"']


_OP_NAMES: dict[int, list[str]] = {}


def _op_names(corpus: Corpus) -> list[str]:
    """The op names the IR seeds use (computed once per corpus)."""
    if id(corpus) not in _OP_NAMES:
        _OP_NAMES[id(corpus)] = sorted(
            {t for s in corpus.ir for t in _tokens(s.text) if re.match(r"^(ge|fused|task|stream)\.\w", t)}
        )
    return _OP_NAMES[id(corpus)]


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def mutate_ir(text: str, rng: random.Random, corpus: Corpus) -> tuple[str, str]:
    """One token- or line-level mutation of IR text."""
    tokens = _tokens(text)
    solid = [i for i, t in enumerate(tokens) if not t.isspace()]
    kind = rng.choices(
        [
            "delete",
            "duplicate",
            "swap",
            "number",
            "dim",
            "type",
            "ssa",
            "op",
            "string",
            "splice",
            "lines",
            "nesting",
            "unicode",
        ],
        [2, 1.5, 1.5, 3, 3, 2.5, 2, 2, 1, 1.5, 2, 0.5, 0.5],
    )[0]
    if not solid:
        return text + "}", "ir:append"
    if kind == "delete":
        del tokens[rng.choice(solid)]
    elif kind == "duplicate":
        i = rng.choice(solid)
        tokens.insert(i, tokens[i])
    elif kind == "swap":
        i, j = rng.choice(solid), rng.choice(solid)
        tokens[i], tokens[j] = tokens[j], tokens[i]
    elif kind in ("number", "dim", "type", "ssa", "op", "string"):
        pattern = {
            "number": r"^-?\d+(\.\d+)?(e[-+]?\d+)?$",
            "dim": r"^\d+x$",
            "type": r"^(f|i|ui|bf|si)\d+$",
            "ssa": r"^%",
            "op": r"^(ge|fused|task|stream|func|builtin)\.\w",
            "string": r'^"',
        }[kind]
        where = [i for i in solid if re.match(pattern, tokens[i])]
        if not where:
            return mutate_ir(text, rng, corpus) if rng.random() < 0.8 else (text, f"ir:{kind}-none")
        i = rng.choice(where)
        if kind == "number":
            tokens[i] = rng.choice(_NUMBERS)
        elif kind == "dim":
            tokens[i] = rng.choice(_DIMS)
        elif kind == "type":
            tokens[i] = rng.choice(_TYPES)
        elif kind == "ssa":
            names = [tokens[j] for j in solid if tokens[j].startswith("%")]
            tokens[i] = rng.choice(names + ["%undefined", "%名", "%0", "%" + "a" * 300])
        elif kind == "op":
            tokens[i] = rng.choice(_op_names(corpus) + ["ge.nope", "func.call", "builtin.module"])
        else:
            tokens[i] = rng.choice(_STRINGS)
    elif kind == "splice":
        other = rng.choice(corpus.ir).text.splitlines()
        lines = "".join(tokens).splitlines()
        at = rng.randrange(len(lines) + 1)
        lines[at:at] = [rng.choice(other)] if other else []
        return "\n".join(lines) + "\n", "ir:splice-line"
    elif kind == "lines":
        lines = "".join(tokens).splitlines()
        if len(lines) > 1:
            i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
            action = rng.choice(["delete", "duplicate", "swap"])
            if action == "delete":
                del lines[i]
            elif action == "duplicate":
                lines.insert(i, lines[j])
            else:
                lines[i], lines[j] = lines[j], lines[i]
            return "\n".join(lines) + "\n", f"ir:line-{action}"
    elif kind == "nesting":
        depth = rng.choice([50, 500, 5000])
        where = [i for i in solid if re.match(r"^(f|i)\d+$", tokens[i])]
        if where and rng.random() < 0.5:
            i = rng.choice(where)
            tokens[i] = "tensor<" * depth + tokens[i] + ">" * depth
        else:
            i = rng.choice(solid)
            tokens.insert(i, rng.choice(["[" * depth, "(" * depth, "{" * depth, "dense<" + "[" * depth]))
        return "".join(tokens), f"ir:nesting-{depth}"
    else:
        i = rng.choice(solid)
        tokens.insert(i, rng.choice(["\u202e", "\x00", "\ufeff", "é", "\U0001d518", "\r\n", "\t", "\\"]))
    return "".join(tokens), f"ir:{kind}"


def mutated_ir(seed: IrSeed, rng: random.Random, corpus: Corpus, max_mutations: int = 3) -> tuple[bytes, str]:
    text, done = seed.text, []
    for _ in range(rng.choice([0, 1, 1, 2, max_mutations])):
        text, what = mutate_ir(text, rng, corpus)
        done.append(what)
    data = text.encode("utf-8", errors="surrogatepass")
    if rng.random() < 0.1:
        data, what = mutate_bytes(data, rng)
        done.append(what)
    return data, " ".join(done)


def mutated_sidecar(seed: IrSeed, rng: random.Random) -> tuple[dict[str, bytes], str]:
    """The seed's sidecar, or a hostile one: corrupt header, lying offsets, missing file."""
    if not seed.sidecar_name:
        return {}, ""
    data = seed.sidecar
    if rng.random() < 0.75:
        return {seed.sidecar_name: data}, ""
    choice = rng.random()
    if choice < 0.1:
        return {}, "sidecar:missing"
    if choice < 0.15:
        return {seed.sidecar_name: Symlink(f"../{OUTSIDE}")}, "sidecar:symlink-out"
    if choice < 0.4:
        damaged, what = mutate_bytes(data, rng)
        return {seed.sidecar_name: damaged}, f"sidecar:{what}"
    header_len = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8 : 8 + header_len])
    body = data[8 + header_len :]
    key = rng.choice([k for k in header if k != "__metadata__"] or ["__metadata__"])
    entry = header.get(key, {})
    what = rng.choice(["offsets", "dtype", "shape", "header-length", "metadata"])
    if what == "offsets" and isinstance(entry, dict):
        entry["data_offsets"] = rng.choice([[0, 2**62], [-1, 4], [8, 4], [0, len(body) + 100], [0]])
    elif what == "dtype" and isinstance(entry, dict):
        entry["dtype"] = rng.choice(["F64", "BF16", "STR", "I4", "", "F8_E4M3"])
    elif what == "shape" and isinstance(entry, dict):
        entry["shape"] = rng.choice([[2**40], [-1], [], [0], [3, 3, 3, 3]])
    elif what == "metadata":
        header["__metadata__"] = {"ge.bf16": rng.choice(["not json", json.dumps([key]), "[1,2]", "{}"])}
    text = json.dumps(header).encode()
    length = len(text) if what != "header-length" else rng.choice([2**62, len(text) + 50, 0])
    return {seed.sidecar_name: struct.pack("<Q", length) + text + body}, f"sidecar:{what}"


def hostile_ir_reference(text: str, rng: random.Random) -> tuple[str, str]:
    """Points the module's ge.weights at a path outside its folder."""
    path = rng.choice(["../w.safetensors", "/etc/hostname", "", "sub/../../x.safetensors", ".", "名.safetensors"])
    if 'ge.weights = "' in text:
        return re.sub(r'ge\.weights = "[^"]*"', f'ge.weights = "{path}"', text, count=1), f"sidecar-ref:{path!r}"
    return text.replace(
        "builtin.module {", f'builtin.module attributes {{ge.weights = "{path}"}} {{', 1
    ), f"sidecar-ref-added:{path!r}"
