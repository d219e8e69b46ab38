"""Hostile cases from the seeds: protobuf-field and byte mutations of ONNX models, token and byte
mutations of IR text, hostile sidecars and ge-run input files, and the tools' flag sets.

Every case is a pure function of (tool, index, seed): `make_case` draws from its own
`random.Random`, so case 4711 of a run can be rebuilt alone for reproduction. Mutations are
plain functions of (object, rng) chosen by weight; each returns a short name for the report.
"""

from __future__ import annotations

import io
import json
import random
import re
import struct
import zipfile
from collections.abc import Callable

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto, helper, numpy_helper

from .contract import OUTSIDE, Case, Symlink
from .seeds import Corpus, IrSeed

HUGE_INTS = [-1, 0, 1, 2**31 - 1, 2**31, 2**32 + 1, 2**40, 2**62, 2**63 - 1, -(2**63)]
HOSTILE_NAMES = ["", "x", "../../etc/passwd", "/abs/path", "名前", "a" * 5000, "with space", "quote\"d",
                 "new\nline", "nul\x00byte", "%0", "@main", "}", "\u202eevil", "loc(\"x\")"]
HOSTILE_PATHS = ["../weights.bin", "/etc/hostname", "", ".", "sub/../../weights.bin", "missing.bin",
                 "sub/../weights.bin", "weights.bin/..", "名.bin", "./weights.bin", "//weights.bin",
                 "C:\\weights.bin", "weights.bin\x00.txt"]
ONNX_OPS = ["Add", "Relu", "Conv", "MatMul", "Gemm", "Reshape", "Softmax", "Transpose", "Gather", "Concat",
            "Slice", "Split", "LayerNormalization", "Where", "Cast", "Shape", "Unsqueeze", "Squeeze", "Range",
            "MaxPool", "BatchNormalization", "Resize", "If", "Loop", "Scan", "NonZero", "Foo", "", "relu",
            "Constant", "ConstantOfShape", "Expand", "Tile", "Pad", "Einsum", "TopK", "ReduceMean"]


# ------------------------------------------------------------------------------ ONNX mutations
def _value_infos(graph: onnx.GraphProto) -> list[onnx.ValueInfoProto]:
    return [*graph.input, *graph.output, *graph.value_info]


def _pick(rng: random.Random, items):
    items = list(items)
    return rng.choice(items) if items else None


def m_dim(model, rng, files):
    vi = _pick(rng, [v for v in _value_infos(model.graph) if v.type.HasField("tensor_type")])
    if vi is None:
        return "dim:none"
    shape = vi.type.tensor_type.shape
    choice = rng.random()
    if choice < 0.1:
        vi.type.tensor_type.ClearField("shape")
        return "dim:clear-shape"
    if choice < 0.2 or not shape.dim:
        for _ in range(rng.choice([1, 3, 40])):
            shape.dim.add().dim_value = rng.choice([1, 2, 3])
        return "dim:add-rank"
    dim = rng.choice(list(shape.dim))
    if rng.random() < 0.75:
        dim.dim_value = rng.choice(HUGE_INTS + [3, 5, 7])
        return "dim:value"
    dim.dim_param = rng.choice(["N", "", "名", "?", "-1", "batch"])
    return "dim:param"


def m_elem_type(model, rng, files):
    new_type = rng.choice(list(range(0, 27)) + [99, -1])
    if rng.random() < 0.5 and model.graph.initializer:
        t = rng.choice(list(model.graph.initializer))
        t.data_type = new_type
        return f"dtype:initializer={new_type}"
    vi = _pick(rng, [v for v in _value_infos(model.graph) if v.type.HasField("tensor_type")])
    if vi is None:
        return "dtype:none"
    vi.type.tensor_type.elem_type = new_type
    return f"dtype:value-info={new_type}"


def _hostile_attribute(rng: random.Random, name: str) -> AttributeProto:
    kind = rng.choice(["int", "ints", "float", "string", "tensor", "graph", "empty", "floats"])
    if kind == "int":
        return helper.make_attribute(name, rng.choice(HUGE_INTS))
    if kind == "ints":
        return helper.make_attribute(name, [rng.choice(HUGE_INTS) for _ in range(rng.choice([0, 1, 2, 4, 9]))]
                                     or [0])
    if kind == "float":
        return helper.make_attribute(name, rng.choice([float("nan"), float("inf"), -1e30, 0.0, -0.0]))
    if kind == "floats":
        return helper.make_attribute(name, [float("nan"), 1e39, -1.0])
    if kind == "string":
        return helper.make_attribute(name, rng.choice(HOSTILE_NAMES) or "x")
    if kind == "tensor":
        return helper.make_attribute(name, numpy_helper.from_array(np.zeros(rng.choice([(0,), (2, 3), ()]),
                                                                               np.float32)))
    if kind == "graph":
        return helper.make_attribute(name, _small_graph(rng, depth=rng.choice([0, 1, 3])))
    attr = AttributeProto()
    attr.name = name
    attr.type = rng.choice([AttributeProto.INT, AttributeProto.TENSOR, AttributeProto.GRAPH, 0])
    return attr


def m_attribute(model, rng, files):
    node = _pick(rng, model.graph.node)
    if node is None:
        return "attr:none"
    attrs = list(node.attribute)
    choice = rng.random()
    if attrs and choice < 0.3:
        attr = rng.choice(attrs)
        node.attribute.remove(attr)
        new = _hostile_attribute(rng, attr.name)
        node.attribute.append(new)
        return f"attr:replace:{attr.name}"
    if attrs and choice < 0.45:
        attr = rng.choice(attrs)
        attr.type = rng.choice([t for t in range(1, 15) if t != attr.type])  # payload of another type
        return f"attr:retype:{attr.name}"
    if attrs and choice < 0.55:
        node.attribute.remove(rng.choice(attrs))
        return "attr:remove"
    if attrs and choice < 0.65:
        node.attribute.append(rng.choice(attrs))
        return "attr:duplicate"
    known = ["axis", "axes", "perm", "to", "kernel_shape", "strides", "pads", "dilations", "group", "epsilon",
             "value", "split", "num_outputs", "keepdims", "alpha", "beta", "transA", "transB", "mode",
             "allowzero", "then_branch", "body", "unknown_attr", ""]
    node.attribute.append(_hostile_attribute(rng, rng.choice(known)))
    return "attr:add"


def m_node_io(model, rng, files):
    nodes = list(model.graph.node)
    if not nodes:
        return "io:none"
    node = rng.choice(nodes)
    all_outputs = [o for n in nodes for o in n.output]
    choice = rng.random()
    if node.input and choice < 0.3:
        i = rng.randrange(len(node.input))
        node.input[i] = rng.choice(["", "nonexistent", *node.output, *all_outputs, *HOSTILE_NAMES[:6]])
        return "io:input-rename"
    if node.output and choice < 0.55:
        i = rng.randrange(len(node.output))
        node.output[i] = rng.choice(["", *all_outputs, *(vi.name for vi in model.graph.input), "名"])
        return "io:output-rename"
    if choice < 0.7:
        node.input.append(rng.choice(["", "x", *all_outputs]))
        return "io:extra-input"
    if choice < 0.8:
        node.output.append(rng.choice(["", "extra", *all_outputs]))
        return "io:extra-output"
    if node.input:
        del node.input[rng.randrange(len(node.input))]
        return "io:drop-input"
    return "io:noop"


def m_nodes(model, rng, files):
    graph = model.graph
    nodes = list(graph.node)
    if not nodes:
        return "nodes:none"
    choice = rng.random()
    if choice < 0.25:
        graph.node.remove(rng.choice(nodes))
        return "nodes:remove"
    if choice < 0.4:
        graph.node.append(rng.choice(nodes))
        return "nodes:duplicate"
    if choice < 0.55 and len(nodes) > 1:
        order = nodes[:]
        rng.shuffle(order)
        del graph.node[:]
        graph.node.extend(order)
        return "nodes:reorder"
    if choice < 0.8:
        node = rng.choice(nodes)
        node.op_type = rng.choice(ONNX_OPS)
        return f"nodes:op-type={node.op_type}"
    node = rng.choice(nodes)
    node.domain = rng.choice(["com.microsoft", "ai.onnx", "custom", "ai.onnx.ml", "名"])
    return f"nodes:domain={node.domain}"


def m_initializer(model, rng, files):
    graph = model.graph
    if not graph.initializer:
        t = numpy_helper.from_array(np.ones((2, 2), np.float32), rng.choice([vi.name for vi in graph.input] or ["w"]))
        graph.initializer.append(t)
        return "init:shadow-input"
    t = rng.choice(list(graph.initializer))
    choice = rng.random()
    if choice < 0.25 and t.raw_data:
        cut = rng.choice([0, 1, len(t.raw_data) // 2, len(t.raw_data) - 1])
        t.raw_data = t.raw_data[:cut] if rng.random() < 0.6 else t.raw_data + b"\x00" * rng.choice([1, 4, 1000])
        return "init:raw-size"
    if choice < 0.5 and t.dims:
        i = rng.randrange(len(t.dims))
        t.dims[i] = rng.choice(HUGE_INTS)
        return "init:dims"
    if choice < 0.6:
        t.dims.extend([rng.choice([0, 1, 2**31])])
        return "init:extra-dim"
    if choice < 0.7:
        t.ClearField("raw_data")
        t.float_data.extend([1.0] * rng.choice([0, 1, 3]))
        return "init:typed-data-count"
    if choice < 0.8:
        copy = graph.initializer.add()
        copy.CopyFrom(t)
        if rng.random() < 0.5 and graph.node:
            copy.name = rng.choice(list(rng.choice(list(graph.node)).output) or ["y"])
        return "init:duplicate-or-shadow"
    if choice < 0.9:
        t.data_location = TensorProto.EXTERNAL
        return "init:external-without-entries"
    t.segment.begin, t.segment.end = 5, 1
    return "init:segment"


def m_external_data(model, rng, files):
    """Moves an initializer's bytes to a file and names it with hostile location/offset/length."""
    candidates = [t for t in model.graph.initializer if t.raw_data] or list(model.graph.initializer)
    if not candidates:
        return "external:none"
    t = rng.choice(candidates)
    data = t.raw_data or b"\x00" * 16
    padding = rng.choice([0, 0, 3, 4096])
    files["weights.bin"] = b"\xab" * padding + data
    if rng.random() < 0.2:
        files["sub/weights.bin"] = data
    if rng.random() < 0.15:  # a link inside the folder that leads out of it
        files["weights.bin"] = Symlink(f"../{OUTSIDE}")
    if rng.random() < 0.85:
        t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    del t.external_data[:]
    location = "weights.bin" if rng.random() < 0.35 else rng.choice(HOSTILE_PATHS)
    entries = {"location": location}
    if padding or rng.random() < 0.6:
        entries["offset"] = rng.choice([str(padding)] * 3 + ["-1", "abc", "1.5", str(2**63), str(2**64 + 3),
                                                              str(len(data) * 10), ""])
    if rng.random() < 0.6:
        entries["length"] = rng.choice([str(len(data))] * 3 + ["-5", "0", str(2**62), "x", str(len(data) + 1)])
    if rng.random() < 0.15:
        entries["checksum"] = "deadbeef"
    if rng.random() < 0.1:
        entries["unknown_key"] = "1"
    for key, value in entries.items():
        entry = t.external_data.add()
        entry.key, entry.value = key, value
    return f"external:{location!r}"


def m_opset(model, rng, files):
    choice = rng.random()
    if choice < 0.5 and model.opset_import:
        model.opset_import[0].version = rng.choice([0, 1, 7, 12, 13, 18, 21, 22, 10**6, -1, 2**62])
        return f"opset:{model.opset_import[0].version}"
    if choice < 0.65:
        del model.opset_import[:]
        return "opset:none"
    if choice < 0.8:
        model.opset_import.append(helper.make_opsetid(rng.choice(["", "ai.onnx", "com.microsoft"]),
                                                      rng.choice([1, 13, 99])))
        return "opset:extra"
    model.ir_version = rng.choice([0, 1, 3, 11, 99, -1])
    return f"ir-version:{model.ir_version}"


def m_graph_io(model, rng, files):
    graph = model.graph
    choice = rng.random()
    if choice < 0.2 and graph.input:
        graph.input.remove(rng.choice(list(graph.input)))
        return "graph-io:drop-input"
    if choice < 0.35 and graph.output:
        graph.output.remove(rng.choice(list(graph.output)))
        return "graph-io:drop-output"
    if choice < 0.5 and graph.input:
        graph.input.append(rng.choice(list(graph.input)))
        return "graph-io:duplicate-input"
    if choice < 0.65 and graph.output:
        rng.choice(list(graph.output)).name = rng.choice(["nonexistent", *(vi.name for vi in graph.input), ""])
        return "graph-io:output-name"
    if choice < 0.8 and graph.output:
        graph.output.append(rng.choice(list(graph.output)))
        return "graph-io:duplicate-output"
    vi = _pick(rng, [*graph.input, *graph.output])
    if vi is None:
        return "graph-io:none"
    kind = rng.choice(["sequence", "map", "optional", "sparse", "empty"])
    vi.type.Clear()
    if kind == "sequence":
        vi.type.sequence_type.elem_type.tensor_type.elem_type = TensorProto.FLOAT
    elif kind == "map":
        vi.type.map_type.key_type = TensorProto.INT64
        vi.type.map_type.value_type.tensor_type.elem_type = TensorProto.FLOAT
    elif kind == "optional":
        vi.type.optional_type.elem_type.tensor_type.elem_type = TensorProto.FLOAT
    elif kind == "sparse":
        vi.type.sparse_tensor_type.elem_type = TensorProto.FLOAT
    return f"graph-io:type={kind}"


def _small_graph(rng: random.Random, depth: int) -> onnx.GraphProto:
    nodes = [helper.make_node("Identity", ["a"], ["b"], name="inner")]
    if depth > 0:
        nodes.append(helper.make_node("If", ["cond"], ["c"], name=f"if{depth}",
                                      then_branch=_small_graph(rng, depth - 1),
                                      else_branch=_small_graph(rng, depth - 1)))
    return helper.make_graph(nodes, f"sub{depth}", [],
                             [helper.make_tensor_value_info("b", TensorProto.FLOAT, [2])])


def m_nested_graph(model, rng, files):
    graph = model.graph
    depth = rng.choice([0, 1, 2, 5, 8])
    op = rng.choice(["If", "Loop", "Scan", "Relu"])
    attr_name = {"If": "then_branch", "Loop": "body", "Scan": "body", "Relu": "body"}[op]
    first_input = graph.input[0].name if graph.input else "x"
    node = helper.make_node(op, [first_input], [f"nested_{op}"], name=f"/nested/{op}")
    node.attribute.append(helper.make_attribute(attr_name, _small_graph(rng, min(depth, 3))))
    if op == "If":
        node.attribute.append(helper.make_attribute("else_branch", _small_graph(rng, 0)))
    graph.node.insert(rng.randrange(len(graph.node) + 1), node)
    if rng.random() < 0.5 and graph.output:
        graph.output[0].name = f"nested_{op}"
    return f"nested:{op}:{depth}"


def m_function(model, rng, files):
    fn = helper.make_function("local", "MyFn", ["a"], ["b"], [helper.make_node("Relu", ["a"], ["b"])],
                              [helper.make_opsetid("", 17)])
    model.functions.append(fn)
    model.opset_import.append(helper.make_opsetid("local", 1))
    node = _pick(rng, model.graph.node)
    if node is not None:
        node.op_type, node.domain = "MyFn", "local"
    return "function:local"


def m_names(model, rng, files):
    graph = model.graph
    name = rng.choice(HOSTILE_NAMES)
    target = rng.choice(["node", "graph", "input", "doc", "metadata"])
    if target == "node" and graph.node:
        rng.choice(list(graph.node)).name = name
    elif target == "graph":
        graph.name = name
    elif target == "input" and graph.input:
        old = rng.choice(list(graph.input))
        old_name, old.name = old.name, name
        for node in graph.node:  # a consistent rename: a hostile but valid name
            for i, inp in enumerate(node.input):
                if inp == old_name:
                    node.input[i] = name
    elif target == "doc":
        model.doc_string = name * 10
    else:
        entry = model.metadata_props.add()
        entry.key, entry.value = name, name
    return f"names:{target}"


ONNX_MUTATIONS: list[tuple[Callable, float]] = [
    (m_dim, 3), (m_elem_type, 2), (m_attribute, 3), (m_node_io, 3), (m_nodes, 3), (m_initializer, 2),
    (m_external_data, 2), (m_opset, 1.5), (m_graph_io, 1.5), (m_nested_graph, 1), (m_function, 0.5),
    (m_names, 1.5),
]


def mutate_bytes(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """Raw byte damage: flips, truncation, insertion, splicing."""
    data = bytearray(data)
    choice = rng.random()
    if not data or choice < 0.3:
        for _ in range(rng.choice([1, 2, 8, 64])):
            if data:
                i = rng.randrange(len(data))
                data[i] = rng.choice([0, 0xFF, data[i] ^ (1 << rng.randrange(8)), rng.randrange(256)])
        return bytes(data), "bytes:flip"
    if choice < 0.55:
        return bytes(data[:rng.randrange(len(data))]), "bytes:truncate"
    if choice < 0.7:
        i = rng.randrange(len(data))
        return bytes(data[:i] + bytes(rng.randrange(256) for _ in range(rng.choice([1, 7, 100]))) + data[i:]), \
            "bytes:insert"
    if choice < 0.8:
        i, j = sorted(rng.randrange(len(data)) for _ in range(2))
        return bytes(data[:j] + data[i:j] + data[j:]), "bytes:repeat"
    if choice < 0.9:
        return b"", "bytes:empty"
    return bytes(rng.randrange(256) for _ in range(rng.choice([1, 16, 4096]))), "bytes:random"


def mutated_onnx(corpus: Corpus, rng: random.Random) -> tuple[dict[str, bytes], str]:
    """A seed model with 0-4 field mutations and sometimes byte damage; (files, origin)."""
    name = rng.choice(sorted(corpus.onnx_models))
    model = onnx.ModelProto()
    model.CopyFrom(corpus.onnx_models[name])
    files: dict[str, bytes] = {}
    done = [f"onnx:{name}"]
    functions, weights = zip(*ONNX_MUTATIONS)
    for _ in range(rng.choice([0, 1, 1, 2, 2, 3, 4])):
        mutation = rng.choices(functions, weights)[0]
        try:
            done.append(mutation(model, rng, files))
        except (ValueError, TypeError) as e:  # protobuf refuses the value (an enum out of range, ...)
            done.append(f"{mutation.__name__}:refused({type(e).__name__})")
    try:
        data = model.SerializeToString()
    except Exception as e:  # a mutation protobuf itself refuses (e.g. an out-of-range enum): keep the seed
        done.append(f"unserializable:{type(e).__name__}")
        data = corpus.onnx_models[name].SerializeToString()
    if rng.random() < 0.15:
        data, what = mutate_bytes(data, rng)
        done.append(what)
    files["model.onnx"] = data
    return files, " ".join(done)


# -------------------------------------------------------------------------------- IR mutations
_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|[%@^#!][\w$.\-]*|\d+(?:\.\d+)?(?:e[-+]?\d+)?x?|[A-Za-z_][\w.$]*|->|\s+|.',
                    re.S)
_NUMBERS = ["0", "-1", "1e309", "nan", "inf", "-0.0", "99999999999999999999", "0x7FFFFFFF", "2147483648",
            "9223372036854775808", "1.5", "-99999", "0x", "1e-400", "0.0000000001"]
_DIMS = ["0x", "?x", "1000000x", "99999999999x", "-1x", "", "1x1x", "2x", "65536x65536x"]
_TYPES = ["f32", "f16", "bf16", "f64", "i64", "i32", "i8", "i1", "i4", "ui8", "f8E4M3FN", "index", "complex<f32>",
          "none", "tensor<f32>", "!ge.foo", "memref<2xf32>", "f80", "i0", "i99999"]
_STRINGS = ['"../../etc/passwd"', '"/tmp/x"', '""', '"\\00"', '"名"', '"' + "a" * 3000 + '"', '"\\"', '"x\\ny"']


_OP_NAMES: dict[int, list[str]] = {}


def _op_names(corpus: Corpus) -> list[str]:
    """The op names the IR seeds use (computed once per corpus)."""
    if id(corpus) not in _OP_NAMES:
        _OP_NAMES[id(corpus)] = sorted({t for s in corpus.ir for t in _tokens(s.text)
                                        if re.match(r"^(ge|fused|task|stream)\.\w", t)})
    return _OP_NAMES[id(corpus)]


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def mutate_ir(text: str, rng: random.Random, corpus: Corpus) -> tuple[str, str]:
    """One token- or line-level mutation of IR text."""
    tokens = _tokens(text)
    solid = [i for i, t in enumerate(tokens) if not t.isspace()]
    kind = rng.choices(["delete", "duplicate", "swap", "number", "dim", "type", "ssa", "op", "string",
                        "splice", "lines", "nesting", "unicode"],
                       [2, 1.5, 1.5, 3, 3, 2.5, 2, 2, 1, 1.5, 2, 0.5, 0.5])[0]
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
        pattern = {"number": r"^-?\d+(\.\d+)?(e[-+]?\d+)?$", "dim": r"^\d+x$", "type": r"^(f|i|ui|bf|si)\d+$",
                   "ssa": r"^%", "op": r"^(ge|fused|task|stream|func|builtin)\.\w", "string": r'^"'}[kind]
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
        tokens.insert(i, rng.choice(["\u202e", "\x00", "\ufeff", "é", "𝔘", "\r\n", "\t", "\\"]))
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
    header = json.loads(data[8:8 + header_len])
    body = data[8 + header_len:]
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
    return text.replace("builtin.module {", f'builtin.module attributes {{ge.weights = "{path}"}} {{', 1), \
        f"sidecar-ref-added:{path!r}"


# ----------------------------------------------------------------------------- ge-run's inputs
def _npz(arrays: dict[str, np.ndarray]) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def hostile_inputs(valid: dict[str, np.ndarray] | None, rng: random.Random) -> tuple[bytes, str]:
    """An --inputs file: the valid one, or one with wrong keys, shapes, dtypes, values or bytes."""
    arrays = {k: v.copy() for k, v in (valid or {}).items()}
    if rng.random() < 0.4 and arrays:
        return _npz(arrays), "npz:valid"
    kind = rng.choice(["keys", "shape", "dtype", "values", "header", "bytes", "zip", "npy", "object", "empty"])
    name = rng.choice(sorted(arrays)) if arrays else "x"
    if kind == "keys":
        action = rng.choice(["drop", "extra", "rename"])
        if action == "drop" and arrays:
            del arrays[name]
        elif action == "extra":
            arrays[rng.choice(["extra", "名", "a/b", "x" * 200])] = np.zeros(2, np.float32)
        elif arrays:
            arrays["renamed_" + name] = arrays.pop(name)
        return _npz(arrays), f"npz:keys-{action}"
    if kind == "shape":
        value = arrays.get(name, np.zeros(2, np.float32))
        arrays[name] = rng.choice([value[None], value.reshape(-1), np.zeros((0,) + value.shape[1:], value.dtype),
                                   np.array(0, value.dtype), np.zeros(value.shape + (2,), value.dtype), value.T])
        return _npz(arrays), "npz:shape"
    if kind == "dtype":
        value = arrays.get(name, np.zeros(2, np.float32))
        dtype = rng.choice([np.float64, np.float16, np.int32, np.int64, np.uint8, np.bool_, np.complex64, "<U3",
                            "V4", [("a", "<f4")]])
        try:
            arrays[name] = value.astype(dtype)
        except (TypeError, ValueError):
            arrays[name] = np.zeros(value.shape, dtype)
        return _npz(arrays), f"npz:dtype={dtype}"
    if kind == "values":
        value = arrays.get(name, np.zeros(2, np.float32))
        if value.dtype.kind in "iu":
            value[...] = rng.choice([10**9, -100, np.iinfo(value.dtype).max, np.iinfo(value.dtype).min])
        else:
            value[...] = rng.choice([np.nan, np.inf, -np.inf, 1e38])
        arrays[name] = value
        return _npz(arrays), "npz:values"
    if kind == "header":  # a .npy member whose header lies about its shape or dtype
        shape = rng.choice(["(1099511627776,)", "(-1,)", "(2, 4)", "()", "(2,", "'x'"])
        descr = rng.choice(["'<f4'", "'<i8'", "'O'", "'|V0'", "'>f4'", "'nonsense'"])
        header = f"{{'descr': {descr}, 'fortran_order': {rng.choice(['False', 'True'])}, 'shape': {shape}, }}"
        header = header.ljust(118) + "\n"
        member = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + b"\x00" * 32
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as z:
            z.writestr(f"{name}.npy", member)
        return buffer.getvalue(), f"npz:header shape={shape} descr={descr}"
    if kind == "bytes":
        return mutate_bytes(_npz(arrays), rng)[0], "npz:bytes"
    if kind == "zip":
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as z:
            z.writestr(rng.choice(["x.txt", f"{name}.npy", "../evil.npy", "dir/"]), b"not an array")
        return buffer.getvalue(), "npz:zip-member"
    if kind == "npy":
        buffer = io.BytesIO()
        np.save(buffer, arrays.get(name, np.zeros(2, np.float32)))
        return buffer.getvalue(), "npz:plain-npy"
    if kind == "object":
        arrays[name] = np.array([{"a": 1}, None], dtype=object)
        return _npz(arrays), "npz:object"
    return b"", "npz:empty"


# -------------------------------------------------------------------------------- the cases
def _output_flags(rng: random.Random, tool: str) -> tuple[list[str], list[str]]:
    """(argv part, outputs it names incl. the sidecar) for an IR-writing tool."""
    choice = rng.random()
    if choice < 0.6:
        return ["-o", "out.mlir"], ["out.mlir", "out.safetensors"]
    if choice < 0.65:
        return ["-o", "nodir/out.mlir"], ["nodir/out.mlir", "nodir/out.safetensors"]
    if choice < 0.68:
        return ["-o", "."], []
    return [], []


def translate_case(corpus: Corpus, rng: random.Random) -> Case:
    files, origin = mutated_onnx(corpus, rng)
    argv = ["--import-onnx", "model.onnx"]
    if rng.random() < 0.03:
        argv[1] = rng.choice(["missing.onnx", ".", "weights.bin"])
    flags, outputs = _output_flags(rng, "ge-translate")
    argv += flags
    if rng.random() < 0.3:
        argv += ["--inline-limit", str(rng.choice([0, 1, 16, 10**9, -1]))]
    return Case("ge-translate", files, argv, outputs, rng.random() < 0.5, origin)


_GE_OPTIONS = ["ge.oo.level=O1", "ge.oo.level=O3", "precision_mode=force_fp16", "ge.exec.precision_mode=allow_mix_precision",
               "ge.socVersion=Ascend910", "ge.socVersion=Ascend910B", "ge.exec.disableReuseMemory=1",
               "ge.enableSingleStream=true", "ge.streamNum=3", "ge.streamNum=-1", "ge.streamNum=99999999999999",
               "=", "ge.oo.level=", "nonsense", "ge.socVersion=../../x", "precision_mode=名"]
_EXTRA_PIPELINES = ["ge-optimize", "ge-optimize{level=1}", "ge-optimize{level=2}", "ge-optimize{level=99}",
                    "ge-optimize{level=-1}", "lower-to-tasks,plan-memory,lower-to-streams{streams=4}",
                    "lower-to-tasks,plan-memory,lower-to-streams{streams=0}", "fuse-ops{", "{}", ",", "nope",
                    "fold-constants{max-elements=-1}", "ge-optimize,ge-optimize", "cse,dce,canonicalize"]


def opt_case(corpus: Corpus, rng: random.Random) -> Case:
    seed = rng.choice(corpus.ir + corpus.lowered)
    data, origin = mutated_ir(seed, rng, corpus)
    origin = f"ir:{seed.name} {origin}"
    files, sidecar_origin = mutated_sidecar(seed, rng)
    if rng.random() < 0.04:
        text, what = hostile_ir_reference(data.decode("utf-8", errors="replace"), rng)
        data, sidecar_origin = text.encode(), f"{sidecar_origin} {what}"
    split = rng.random() < 0.1
    if split:
        other = rng.choice(corpus.ir)
        data = data + b"\n// -----\n" + other.text.encode()
    files["model.mlir"] = data
    argv = [rng.choice(["model.mlir"] * 40 + ["missing.mlir", ".", "model.onnx"])]
    if argv[0] == "model.onnx":
        files["model.onnx"] = data
    if rng.random() < 0.8:
        argv += ["-p", rng.choice(corpus.pipelines + _EXTRA_PIPELINES)]
    if rng.random() < 0.1:
        for _ in range(rng.choice([1, 2])):
            argv += ["--ge-option", rng.choice(_GE_OPTIONS)]
    for flag, p in (("--strip-debuginfo", 0.1), ("--remarks", 0.1), ("--split-input-file", 0.05 + 0.9 * split)):
        if rng.random() < p:
            argv.append(flag)
    if rng.random() < 0.04:
        argv += ["--verify-numerics", str(rng.choice([0, 1, 7]))]
    flags, outputs = _output_flags(rng, "ge-opt")
    argv += flags
    return Case("ge-opt", files, argv, outputs, rng.random() < 0.5, f"{origin} {sidecar_origin}".strip())


def run_case_for(corpus: Corpus, rng: random.Random) -> Case:
    """ge-run on a mutated IR module (plain or lowered to streams) or ONNX model, with hostile inputs."""
    choice = rng.random()
    lowered = False
    if choice < 0.35:
        files, origin = mutated_onnx(corpus, rng)
        program = "model.onnx"
        valid = corpus.onnx_inputs.get(origin.split()[0].split(":", 1)[1])
    else:
        lowered = choice > 0.7 and bool(corpus.lowered)
        pool = corpus.lowered if lowered else [s for s in corpus.ir if s.inputs is not None] or corpus.ir
        seed = rng.choice(pool)
        data, origin = mutated_ir(seed, rng, corpus, max_mutations=2)
        origin = f"ir:{seed.name} {origin}"
        files, sidecar_origin = mutated_sidecar(seed, rng)
        origin = f"{origin} {sidecar_origin}".strip()
        files["model.mlir"] = data
        program = "model.mlir"
        valid = seed.inputs
    argv, outputs = [program], []
    source = rng.random()
    if source < 0.5:
        data, what = hostile_inputs(valid, rng)
        files["in.npz"] = data
        argv += ["--inputs", "in.npz"]
        origin += f" {what}"
    elif source < 0.9 or not lowered:
        argv += ["--random-inputs", str(rng.choice([0, 0, 0, 1, 7, -1, 2**64]))]
    else:
        argv.append("--timing-only")
    if rng.random() < 0.5:
        argv += ["-o", "out.npz"]
        outputs.append("out.npz")
    if rng.random() < 0.3:
        argv.append("--print")
    if lowered or rng.random() < 0.05:
        if rng.random() < 0.4:
            argv += ["--trace", "trace.json"]
            outputs.append("trace.json")
        if rng.random() < 0.4:
            argv += ["--op-summary", "ops.csv"]
            outputs.append("ops.csv")
        if rng.random() < 0.2:
            argv += ["--target", rng.choice(["ascend910", "ascend910b", "ascend1", "../../x", "", "名"])]
        if rng.random() < 0.15 and "--timing-only" not in argv:
            argv.append("--timing-only")
    return Case("ge-run", files, argv, outputs, rng.random() < 0.5, origin)


MAKERS = {"ge-translate": translate_case, "ge-opt": opt_case, "ge-run": run_case_for}
TOOLS = tuple(MAKERS)


def make_case(corpus: Corpus, tool: str, index: int, seed: int) -> Case:
    rng = random.Random(f"{seed}:{tool}:{index}")
    return MAKERS[tool](corpus, rng)
