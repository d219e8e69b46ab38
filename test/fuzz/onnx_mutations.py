"""Mutations of an ONNX model's protobuf fields (dims, dtypes, attributes, node inputs and outputs,
nodes, initializers, external data, opsets, graph inputs and outputs, nested graphs, functions,
names), and `mutated_onnx`, which applies a few of them to a seed and sometimes damages the bytes.

Each mutation is a function of (model, rng, files) that changes the model in place (and may add
files beside it, e.g. external data) and returns a short name for the report.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto, helper, numpy_helper

from .byte_mutations import mutate_bytes
from .contract import OUTSIDE, Symlink
from .seeds import Corpus

HUGE_INTS = [-1, 0, 1, 2**31 - 1, 2**31, 2**32 + 1, 2**40, 2**62, 2**63 - 1, -(2**63)]
HOSTILE_NAMES = [
    "",
    "x",
    "../../etc/passwd",
    "/abs/path",
    "名前",
    "a" * 5000,
    "with space",
    'quote"d',
    "new\nline",
    "nul\x00byte",
    "%0",
    "@main",
    "}",
    "\u202eevil",
    'loc("x")',
]
HOSTILE_PATHS = [
    "../weights.bin",
    "/etc/hostname",
    "",
    ".",
    "sub/../../weights.bin",
    "missing.bin",
    "sub/../weights.bin",
    "weights.bin/..",
    "名.bin",
    "./weights.bin",
    "//weights.bin",
    "C:\\weights.bin",
    "weights.bin\x00.txt",
]
ONNX_OPS = [
    "Add",
    "Relu",
    "Conv",
    "MatMul",
    "Gemm",
    "Reshape",
    "Softmax",
    "Transpose",
    "Gather",
    "Concat",
    "Slice",
    "Split",
    "LayerNormalization",
    "Where",
    "Cast",
    "Shape",
    "Unsqueeze",
    "Squeeze",
    "Range",
    "MaxPool",
    "BatchNormalization",
    "Resize",
    "If",
    "Loop",
    "Scan",
    "NonZero",
    "Foo",
    "",
    "relu",
    "Constant",
    "ConstantOfShape",
    "Expand",
    "Tile",
    "Pad",
    "Einsum",
    "TopK",
    "ReduceMean",
]


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
        return helper.make_attribute(name, [rng.choice(HUGE_INTS) for _ in range(rng.choice([0, 1, 2, 4, 9]))] or [0])
    if kind == "float":
        return helper.make_attribute(name, rng.choice([float("nan"), float("inf"), -1e30, 0.0, -0.0]))
    if kind == "floats":
        return helper.make_attribute(name, [float("nan"), 1e39, -1.0])
    if kind == "string":
        return helper.make_attribute(name, rng.choice(HOSTILE_NAMES) or "x")
    if kind == "tensor":
        return helper.make_attribute(
            name, numpy_helper.from_array(np.zeros(rng.choice([(0,), (2, 3), ()]), np.float32))
        )
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
    known = [
        "axis",
        "axes",
        "perm",
        "to",
        "kernel_shape",
        "strides",
        "pads",
        "dilations",
        "group",
        "epsilon",
        "value",
        "split",
        "num_outputs",
        "keepdims",
        "alpha",
        "beta",
        "transA",
        "transB",
        "mode",
        "allowzero",
        "then_branch",
        "body",
        "unknown_attr",
        "",
    ]
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
        entries["offset"] = rng.choice(
            [str(padding)] * 3 + ["-1", "abc", "1.5", str(2**63), str(2**64 + 3), str(len(data) * 10), ""]
        )
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
        model.opset_import.append(
            helper.make_opsetid(rng.choice(["", "ai.onnx", "com.microsoft"]), rng.choice([1, 13, 99]))
        )
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
        nodes.append(
            helper.make_node(
                "If",
                ["cond"],
                ["c"],
                name=f"if{depth}",
                then_branch=_small_graph(rng, depth - 1),
                else_branch=_small_graph(rng, depth - 1),
            )
        )
    return helper.make_graph(nodes, f"sub{depth}", [], [helper.make_tensor_value_info("b", TensorProto.FLOAT, [2])])


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
    fn = helper.make_function(
        "local", "MyFn", ["a"], ["b"], [helper.make_node("Relu", ["a"], ["b"])], [helper.make_opsetid("", 17)]
    )
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
    (m_dim, 3),
    (m_elem_type, 2),
    (m_attribute, 3),
    (m_node_io, 3),
    (m_nodes, 3),
    (m_initializer, 2),
    (m_external_data, 2),
    (m_opset, 1.5),
    (m_graph_io, 1.5),
    (m_nested_graph, 1),
    (m_function, 0.5),
    (m_names, 1.5),
]


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
