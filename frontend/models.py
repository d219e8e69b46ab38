"""Reference models built in code, in the form PyTorch's ONNX exporter emits them.

Every builder returns an ``onnx.ModelProto`` with seeded random float32 weights
(nothing is downloaded).  The graphs follow what ``torch.onnx.export`` produces
for the torchvision / HF transformers modules they imitate:

* node names are module scopes plus the op type ("/layer1/layer1.0/conv1/Conv"),
  a second node of the same type in the same scope gets a suffix ("Add_1"),
  and a module called twice gets a numbered scope ("relu_1");
* a node's outputs are named "<node name>_output_<i>";
* parameters keep their ``state_dict`` names ("layer1.0.bn1.running_var"),
  except the transposed ``nn.Linear`` weights of the transformers, which the
  exporter stores as anonymous "onnx::MatMul_<n>" initializers;
* small constants (axes, shapes, scalars) are ``Constant`` nodes.

Public API: ``resnet50``, ``mobilenet_v2``, ``bert_base``, ``gpt2``, the
``MODELS`` table of them, ``random_inputs`` and the ``GraphBuilder`` they use.
"""

from __future__ import annotations

import contextlib
import math
import os
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

__all__ = [
    "DEFAULT_OPSET",
    "MIN_OPSET",
    "MAX_OPSET",
    "GraphBuilder",
    "resnet50",
    "mobilenet_v2",
    "bert_base",
    "gpt2",
    "MODELS",
    "SMALL",
    "small",
    "random_inputs",
]

DEFAULT_OPSET = 17
MIN_OPSET = 13
MAX_OPSET = 18
# torch.onnx.export (torch 2.x) writes IR version 8 for opsets 13..18.
IR_VERSION = 8

FLOAT = TensorProto.FLOAT
INT64 = TensorProto.INT64
# torch.finfo(torch.float32).min, the mask value of current HF models.
FLOAT32_MIN = float(np.finfo(np.float32).min)


@dataclass(frozen=True)
class _RandomNormal:
    """A weight whose values are drawn when the model is built."""

    shape: tuple[int, ...]
    std: float
    mean: float = 0.0


class GraphBuilder:
    """Builds an ONNX graph with PyTorch-exporter-style names.

    Methods that add nodes return the name of the node's output (a list for
    several outputs).  Names follow the current module scope, entered with
    ``scope``: it extends both the node path ("/layer1/layer1.0/...") and the
    parameter prefix ("layer1.0.").
    """

    def __init__(self, opset: int = DEFAULT_OPSET, seed: int = 0, train: bool = False):
        if not MIN_OPSET <= opset <= MAX_OPSET:
            raise ValueError(f"opset must be in [{MIN_OPSET}, {MAX_OPSET}], got {opset}")
        self.opset = opset
        self.seed = seed
        self.train = train
        """Export as PyTorch does in train mode: BatchNormalization with training_mode=1."""
        self.nodes: list[onnx.NodeProto] = []
        self.inputs: list[onnx.ValueInfoProto] = []
        self.outputs: list[onnx.ValueInfoProto] = []
        self._initializers: dict[str, np.ndarray | _RandomNormal] = {}
        self._param_path: list[str] = []
        self._node_path: list[str] = []
        self._scope_calls: dict[str, int] = {}
        self._node_names: dict[str, int] = {}
        self._anonymous = 0

    # ------------------------------------------------------------------ names
    @contextlib.contextmanager
    def scope(self, name: str, display: str | None = None) -> Iterator[None]:
        """Enter module ``name``; ``display`` is its node-path component.

        For children of an ``nn.Sequential`` the exporter writes the dotted
        path ("layer1.0"), so pass ``scope("0", "layer1.0")``.  Entering the
        same scope again (a module called twice) numbers it: "relu_1".
        """
        display = display or name
        key = "/".join([*self._node_path, display])
        calls = self._scope_calls.get(key, 0)
        self._scope_calls[key] = calls + 1
        if calls:
            display = f"{display}_{calls}"
        self._param_path.append(name)
        self._node_path.append(display)
        try:
            yield
        finally:
            self._param_path.pop()
            self._node_path.pop()

    def param_name(self, local: str) -> str:
        """The state_dict name of parameter ``local`` of the current module."""
        return ".".join([*self._param_path, local])

    def _node_name(self, op_type: str) -> str:
        base = "/" + "/".join([*self._node_path, op_type])
        count = self._node_names.get(base, 0)
        self._node_names[base] = count + 1
        return f"{base}_{count}" if count else base

    def anonymous_name(self, op_type: str) -> str:
        """An exporter-style name for an unnamed tensor, e.g. "onnx::MatMul_3"."""
        self._anonymous += 1
        return f"onnx::{op_type}_{self._anonymous}"

    # ------------------------------------------------------------ graph I/O
    def input(self, name: str, elem_type: int, shape: Sequence[int | str]) -> str:
        """A graph input; a dim given as a name is a dim_param (unknown until run time)."""
        self.inputs.append(helper.make_tensor_value_info(name, elem_type, list(shape)))
        return name

    def output(self, value: str, name: str, elem_type: int, shape: Sequence[int | str]) -> str:
        """Make ``value`` a graph output called ``name`` (renaming it in place)."""
        for node in self.nodes:
            for i, out in enumerate(node.output):
                if out == value:
                    node.output[i] = name
            for i, inp in enumerate(node.input):
                if inp == value:
                    node.input[i] = name
        self.outputs.append(helper.make_tensor_value_info(name, elem_type, list(shape)))
        return name

    # --------------------------------------------------------------- tensors
    def rng(self, name: str) -> np.random.Generator:
        """A generator that depends only on the seed and ``name``."""
        return np.random.default_rng([self.seed, zlib.crc32(name.encode())])

    def initializer(self, name: str, array: np.ndarray) -> str:
        if name in self._initializers:
            raise ValueError(f"duplicate initializer {name!r}")
        self._initializers[name] = np.require(array, requirements="C")  # keeps 0-d arrays 0-d
        return name

    def normal(self, name: str, shape: Sequence[int], std: float, mean: float = 0.0) -> str:
        """A float32 N(mean, std^2) initializer, drawn (in parallel) at ``build``."""
        if name in self._initializers:
            raise ValueError(f"duplicate initializer {name!r}")
        self._initializers[name] = _RandomNormal(tuple(int(d) for d in shape), std, mean)
        return name

    def const(self, value, dtype=np.float32) -> str:
        """A ``Constant`` node in the current scope."""
        array = np.asarray(value, dtype=dtype)
        name = self._node_name("Constant")
        out = f"{name}_output_0"
        tensor = numpy_helper.from_array(array)
        self.nodes.append(helper.make_node("Constant", [], [out], name=name, value=tensor))
        return out

    def ints(self, values: Sequence[int]) -> str:
        """A 1-D int64 ``Constant`` (axes, starts, shapes...)."""
        return self.const(list(values), np.int64)

    # ------------------------------------------------------------ generic op
    def op(self, op_type: str, inputs: Sequence[str], *, num_outputs: int = 1, **attrs):
        name = self._node_name(op_type)
        outputs = [f"{name}_output_{i}" for i in range(num_outputs)]
        self.nodes.append(helper.make_node(op_type, list(inputs), outputs, name=name, **attrs))
        return outputs[0] if num_outputs == 1 else outputs

    def add(self, a: str, b: str) -> str:
        return self.op("Add", [a, b])

    def sub(self, a: str, b: str) -> str:
        return self.op("Sub", [a, b])

    def mul(self, a: str, b: str) -> str:
        return self.op("Mul", [a, b])

    def div(self, a: str, b: str) -> str:
        return self.op("Div", [a, b])

    def matmul(self, a: str, b: str) -> str:
        return self.op("MatMul", [a, b])

    def relu(self, x: str) -> str:
        return self.op("Relu", [x])

    def relu6(self, x: str) -> str:
        """``nn.ReLU6`` as exported since opset 11: Clip with constant min/max inputs."""
        return self.op("Clip", [x, self.const(0.0), self.const(6.0)])

    def shape(self, x: str) -> str:
        return self.op("Shape", [x])

    def gather(self, data: str, index: int | str, axis: int = 0) -> str:
        """Gather; an int ``index`` becomes a scalar constant (one dim of a shape)."""
        if isinstance(index, int):
            index = self.const(index, np.int64)
        return self.op("Gather", [data, index], axis=axis)

    def unsqueeze(self, x: str, axes: Sequence[int]) -> str:
        return self.op("Unsqueeze", [x, self.ints(axes)])

    def reshape(self, x: str, shape: str | Sequence[int]) -> str:
        if not isinstance(shape, str):
            shape = self.ints(shape)
        return self.op("Reshape", [x, shape])

    def transpose(self, x: str, perm: Sequence[int]) -> str:
        return self.op("Transpose", [x], perm=list(perm))

    def reduce_mean(self, x: str, axes: Sequence[int]) -> str:
        if self.opset >= 18:  # axes became an input in opset 18
            return self.op("ReduceMean", [x, self.ints(axes)], keepdims=1)
        return self.op("ReduceMean", [x], axes=list(axes), keepdims=1)

    # ------------------------------------------------------------- layers
    def conv(
        self,
        x: str,
        in_ch: int,
        out_ch: int,
        kernel: int,
        stride: int = 1,
        pad: int = 0,
        group: int = 1,
    ) -> str:
        """``nn.Conv2d(bias=False)`` with He-normal weights (std = sqrt(2/fan_in))."""
        fan_in = in_ch // group * kernel * kernel
        weight = self.normal(
            self.param_name("weight"), (out_ch, in_ch // group, kernel, kernel), math.sqrt(2.0 / fan_in)
        )
        return self.op(
            "Conv",
            [x, weight],
            dilations=[1, 1],
            group=group,
            kernel_shape=[kernel, kernel],
            pads=[pad] * 4,
            strides=[stride, stride],
        )

    def batch_norm(self, x: str, channels: int, gamma: tuple[float, float] = (0.7, 1.3), eps: float = 1e-5) -> str:
        """``BatchNormalization`` with trained-looking statistics: inference, or with batch statistics
        (training_mode=1) when the builder exports a model in train mode."""
        rng = self.rng(self.param_name(""))
        f32 = np.float32
        weight = self.initializer(self.param_name("weight"), rng.uniform(*gamma, channels).astype(f32))
        bias = self.initializer(self.param_name("bias"), rng.normal(0.0, 0.1, channels).astype(f32))
        mean = self.initializer(self.param_name("running_mean"), rng.normal(0.0, 0.1, channels).astype(f32))
        var = self.initializer(self.param_name("running_var"), rng.uniform(0.5, 1.5, channels).astype(f32))
        if self.train:
            return self.op(
                "BatchNormalization", [x, weight, bias, mean, var], epsilon=eps, momentum=0.9, training_mode=1
            )
        return self.op("BatchNormalization", [x, weight, bias, mean, var], epsilon=eps, momentum=0.9)

    def max_pool(self, x: str, kernel: int, stride: int, pad: int) -> str:
        return self.op(
            "MaxPool",
            [x],
            ceil_mode=0,
            dilations=[1, 1],
            kernel_shape=[kernel, kernel],
            pads=[pad] * 4,
            strides=[stride, stride],
        )

    def gemm(self, x: str, in_f: int, out_f: int, std: float, bias_std: float = 0.0) -> str:
        """``nn.Linear`` on a 2-D input: Gemm(x, weight[out,in], bias, transB=1)."""
        weight = self.normal(self.param_name("weight"), (out_f, in_f), std)
        bias = self.normal(self.param_name("bias"), (out_f,), bias_std)
        return self.op("Gemm", [x, weight, bias], alpha=1.0, beta=1.0, transB=1)

    def linear(
        self,
        x: str,
        in_f: int,
        out_f: int,
        std: float = 0.02,
        bias_std: float = 0.02,
        weight_name: str | None = None,
    ) -> str:
        """``nn.Linear`` on a 3-D input: MatMul(x, W[in,out]) then Add(bias, .).

        The exporter stores the transposed weight as "onnx::MatMul_<n>"; pass
        ``weight_name`` for modules that keep it as [in, out] (HF ``Conv1D``).
        """
        weight = self.normal(weight_name or self.anonymous_name("MatMul"), (in_f, out_f), std)
        bias = self.normal(self.param_name("bias"), (out_f,), bias_std)
        return self.add(bias, self.matmul(x, weight))

    def layer_norm(self, x: str, dim: int, eps: float) -> str:
        """``nn.LayerNorm`` over the last axis (gamma 1, beta 0).

        Opset >= 17 has the LayerNormalization op; before that the exporter
        decomposes it.
        """
        weight = self.initializer(self.param_name("weight"), np.ones(dim, np.float32))
        bias = self.initializer(self.param_name("bias"), np.zeros(dim, np.float32))
        if self.opset >= 17:
            return self.op("LayerNormalization", [x, weight, bias], axis=-1, epsilon=eps)
        mean = self.reduce_mean(x, [-1])
        centered = self.sub(x, mean)
        var = self.reduce_mean(self.op("Pow", [centered, self.const(2.0)]), [-1])
        std = self.op("Sqrt", [self.add(var, self.const(eps))])
        return self.add(self.mul(self.div(centered, std), weight), bias)

    def gelu_erf(self, x: str) -> str:
        """``F.gelu`` (exact) as exported: x * (erf(x / sqrt 2) + 1) * 0.5."""
        erf = self.op("Erf", [self.div(x, self.const(1.4142135381698608))])
        return self.mul(self.mul(x, self.add(erf, self.const(1.0))), self.const(0.5))

    def gelu_tanh(self, x: str) -> str:
        """HF ``NewGELUActivation``: 0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x^3)))."""
        half_x = self.mul(x, self.const(0.5))
        cube = self.op("Pow", [x, self.const(3.0)])
        inner = self.add(x, self.mul(cube, self.const(0.044715)))
        tanh = self.op("Tanh", [self.mul(inner, self.const(math.sqrt(2.0 / math.pi)))])
        return self.mul(half_x, self.add(tanh, self.const(1.0)))

    # --------------------------------------------------------------- build
    def build(self, graph_name: str = "main_graph", doc: str = "") -> onnx.ModelProto:
        """The finished model; random weights are drawn here, several at a time."""
        model = onnx.ModelProto()
        model.ir_version = IR_VERSION
        model.producer_name = "ge.frontend.models"
        model.producer_version = "1"
        model.doc_string = doc
        model.opset_import.append(helper.make_opsetid("", self.opset))
        graph = model.graph  # filled in place: copying 400 MB of weights is slow
        graph.name = graph_name
        graph.node.extend(self.nodes)
        graph.input.extend(self.inputs)
        graph.output.extend(self.outputs)

        workers = max(1, min(4, os.cpu_count() or 1))
        with ThreadPoolExecutor(workers) as pool:
            # numpy releases the GIL while drawing, so the random weights are
            # drawn in chunks by the pool while this thread copies finished
            # tensors into the protobuf.
            drawn = {
                name: self._draw(pool, name, spec)
                for name, spec in self._initializers.items()
                if isinstance(spec, _RandomNormal)
            }
            for name, spec in self._initializers.items():
                if isinstance(spec, _RandomNormal):  # one of `drawn`
                    value, chunks = drawn.pop(name)
                    for chunk in chunks:
                        chunk.result()
                else:
                    value = spec
                tensor = graph.initializer.add()
                tensor.name = name
                tensor.data_type = helper.np_dtype_to_tensor_dtype(value.dtype)
                tensor.dims.extend(value.shape)
                tensor.raw_data = value.tobytes()
        return model

    _CHUNK = 1 << 22  # elements drawn by one task

    def _draw(self, pool: ThreadPoolExecutor, name: str, spec: _RandomNormal) -> tuple[np.ndarray, list]:
        """Start drawing ``spec``; chunk ``k`` uses its own generator seeded by
        (seed, name, k), so the values do not depend on the thread schedule."""
        array = np.empty(spec.shape, dtype=np.float32)
        flat = array.reshape(-1)
        key = zlib.crc32(name.encode())

        def fill(k: int) -> None:
            part = flat[k * self._CHUNK : (k + 1) * self._CHUNK]
            np.random.default_rng([self.seed, key, k]).standard_normal(out=part, dtype=np.float32)
            part *= np.float32(spec.std)
            if spec.mean:
                part += np.float32(spec.mean)

        chunks = [pool.submit(fill, k) for k in range(max(1, -(-flat.size // self._CHUNK)))]
        return array, chunks


# ====================================================================== ResNet-50
def _bottleneck(b: GraphBuilder, x: str, in_ch: int, width: int, stride: int) -> str:
    """torchvision ``Bottleneck`` (v1.5: the stride is on the 3x3 conv)."""
    out_ch = width * 4
    with b.scope("conv1"):
        y = b.conv(x, in_ch, width, 1)
    with b.scope("bn1"):
        y = b.batch_norm(y, width)
    with b.scope("relu"):
        y = b.relu(y)
    with b.scope("conv2"):
        y = b.conv(y, width, width, 3, stride, 1)
    with b.scope("bn2"):
        y = b.batch_norm(y, width)
    with b.scope("relu"):
        y = b.relu(y)
    with b.scope("conv3"):
        y = b.conv(y, width, out_ch, 1)
    with b.scope("bn3"):
        # A small last gamma keeps the residual stream from growing block by block.
        y = b.batch_norm(y, out_ch, gamma=(0.2, 0.5))
    identity = x
    if stride != 1 or in_ch != out_ch:
        with b.scope("downsample"):
            with b.scope("0", "downsample.0"):
                identity = b.conv(x, in_ch, out_ch, 1, stride)
            with b.scope("1", "downsample.1"):
                identity = b.batch_norm(identity, out_ch, gamma=(0.5, 1.0))
    y = b.add(y, identity)
    with b.scope("relu"):
        return b.relu(y)


def resnet50(
    batch: int = 1,
    opset: int = DEFAULT_OPSET,
    seed: int = 0,
    train: bool = False,
    image: int = 224,
    width: int = 64,
) -> onnx.ModelProto:
    """torchvision ``resnet50()`` in eval mode (or, with `train`, in train mode: batch statistics),
    exported without BN folding, on `image` x `image` inputs. `width` is the stem's and the first
    stage's channel count (64; the stages double it, the bottlenecks expand it 4x): a narrower
    network has every layer and op of the full one and a fraction of its weights."""
    b = GraphBuilder(opset, seed, train)
    x = b.input("input", FLOAT, [batch, 3, image, image])
    with b.scope("conv1"):
        x = b.conv(x, 3, width, 7, stride=2, pad=3)
    with b.scope("bn1"):
        x = b.batch_norm(x, width)
    with b.scope("relu"):
        x = b.relu(x)
    with b.scope("maxpool"):
        x = b.max_pool(x, 3, 2, 1)
    in_ch = width
    stages = [(width, 3, 1), (2 * width, 4, 2), (4 * width, 6, 2), (8 * width, 3, 2)]
    for stage, (planes, blocks, stride) in enumerate(stages, start=1):
        with b.scope(f"layer{stage}"):
            for i in range(blocks):
                with b.scope(str(i), f"layer{stage}.{i}"):
                    x = _bottleneck(b, x, in_ch, planes, stride if i == 0 else 1)
                in_ch = planes * 4
    with b.scope("avgpool"):
        x = b.op("GlobalAveragePool", [x])
    x = b.op("Flatten", [x], axis=1)
    with b.scope("fc"):
        # nn.Linear's default init: U(+-1/sqrt(in)) has std 1/sqrt(3 in).
        x = b.gemm(x, in_ch, 1000, std=1.0 / math.sqrt(3 * in_ch), bias_std=0.01)
    b.output(x, "output", FLOAT, [batch, 1000])
    return b.build(doc="torchvision ResNet-50 (random weights)")


# ================================================================== MobileNetV2
def _conv_bn_relu6(
    b: GraphBuilder, x: str, path: str, in_ch: int, out_ch: int, kernel: int, stride: int, group: int = 1
) -> str:
    """torchvision ``Conv2dNormActivation``: a Sequential(conv, bn, ReLU6) at ``path``."""
    with b.scope("0", f"{path}.0"):
        x = b.conv(x, in_ch, out_ch, kernel, stride, (kernel - 1) // 2, group)
    with b.scope("1", f"{path}.1"):
        x = b.batch_norm(x, out_ch)
    with b.scope("2", f"{path}.2"):
        return b.relu6(x)


def _inverted_residual(b: GraphBuilder, x: str, in_ch: int, out_ch: int, stride: int, expand: int) -> str:
    hidden = in_ch * expand
    y = x
    with b.scope("conv"):
        index = 0
        if expand != 1:
            with b.scope("0", "conv.0"):
                y = _conv_bn_relu6(b, y, "conv.0", in_ch, hidden, 1, 1)
            index = 1
        with b.scope(str(index), f"conv.{index}"):
            y = _conv_bn_relu6(b, y, f"conv.{index}", hidden, hidden, 3, stride, group=hidden)
        with b.scope(str(index + 1), f"conv.{index + 1}"):
            y = b.conv(y, hidden, out_ch, 1)
        with b.scope(str(index + 2), f"conv.{index + 2}"):
            y = b.batch_norm(y, out_ch, gamma=(0.3, 0.7))
    if stride == 1 and in_ch == out_ch:
        y = b.add(x, y)
    return y


def mobilenet_v2(batch: int = 1, opset: int = DEFAULT_OPSET, seed: int = 0, image: int = 224) -> onnx.ModelProto:
    """torchvision ``mobilenet_v2()`` in eval mode, exported without BN folding, on `image` x `image`
    inputs."""
    b = GraphBuilder(opset, seed)
    x = b.input("input", FLOAT, [batch, 3, image, image])
    # (expand ratio t, channels c, repeats n, first stride s), as in torchvision
    settings = [
        (1, 16, 1, 1),
        (6, 24, 2, 2),
        (6, 32, 3, 2),
        (6, 64, 4, 2),
        (6, 96, 3, 1),
        (6, 160, 3, 2),
        (6, 320, 1, 1),
    ]
    with b.scope("features"):
        with b.scope("0", "features.0"):
            x = _conv_bn_relu6(b, x, "features.0", 3, 32, 3, 2)
        in_ch, index = 32, 1
        for t, c, n, s in settings:
            for i in range(n):
                with b.scope(str(index), f"features.{index}"):
                    x = _inverted_residual(b, x, in_ch, c, s if i == 0 else 1, t)
                in_ch, index = c, index + 1
        with b.scope(str(index), f"features.{index}"):
            x = _conv_bn_relu6(b, x, f"features.{index}", in_ch, 1280, 1, 1)
    x = b.op("GlobalAveragePool", [x])
    x = b.op("Flatten", [x], axis=1)
    with b.scope("classifier"), b.scope("1", "classifier.1"):  # classifier.0 is Dropout
        x = b.gemm(x, 1280, 1000, std=0.01)
    b.output(x, "output", FLOAT, [batch, 1000])
    return b.build(doc="torchvision MobileNetV2 (random weights)")


# ======================================================================== BERT
def _bert_heads_shape_of(b: GraphBuilder, x: str, heads: int, head_dim: int) -> str:
    """``x.size()[:-1] + (heads, head_dim)`` as the exporter traces it."""
    shape = b.shape(x)
    dims = [b.unsqueeze(b.gather(shape, i), [0]) for i in (0, 1)]
    return b.op("Concat", [*dims, b.ints([heads]), b.ints([head_dim])], axis=0)


def _bert_self_attention(b: GraphBuilder, x: str, mask: str, hidden: int, heads: int) -> str:
    """HF ``BertSelfAttention`` (eager attention)."""
    head_dim = hidden // heads

    def project(name: str) -> str:
        with b.scope(name):
            return b.linear(x, hidden, hidden)

    def split_heads(y: str, perm: list[int]) -> str:  # transpose_for_scores
        return b.transpose(b.reshape(y, _bert_heads_shape_of(b, y, heads, head_dim)), perm)

    query = project("query")
    # key.transpose(-1, -2) is fused into the head permutation by the exporter
    key_t = split_heads(project("key"), [0, 2, 3, 1])
    value = split_heads(project("value"), [0, 2, 1, 3])
    query = split_heads(query, [0, 2, 1, 3])
    scores = b.div(b.matmul(query, key_t), b.const(math.sqrt(head_dim)))
    probs = b.op("Softmax", [b.add(scores, mask)], axis=-1)
    context = b.transpose(b.matmul(probs, value), [0, 2, 1, 3])
    # context.size()[:-2] + (all_head_size,)
    batch_seq = b.op("Slice", [b.shape(context), b.ints([0]), b.ints([-2]), b.ints([0])])
    return b.reshape(context, b.op("Concat", [batch_seq, b.ints([hidden])], axis=0))


def _bert_layer(b: GraphBuilder, x: str, mask: str, hidden: int, heads: int, intermediate: int) -> str:
    with b.scope("attention"):
        with b.scope("self"):
            attn = _bert_self_attention(b, x, mask, hidden, heads)
        with b.scope("output"):
            with b.scope("dense"):
                attn = b.linear(attn, hidden, hidden)
            attn = b.add(attn, x)
            with b.scope("LayerNorm"):
                attn = b.layer_norm(attn, hidden, 1e-12)
    with b.scope("intermediate"):
        with b.scope("dense"):
            y = b.linear(attn, hidden, intermediate)
        with b.scope("intermediate_act_fn"):
            y = b.gelu_erf(y)
    with b.scope("output"):
        with b.scope("dense"):
            y = b.linear(y, intermediate, hidden)
        y = b.add(y, attn)
        with b.scope("LayerNorm"):
            return b.layer_norm(y, hidden, 1e-12)


def bert_base(
    batch: int | str = 1,
    seq: int | str = 128,
    layers: int = 12,
    hidden: int = 768,
    heads: int = 12,
    intermediate: int = 3072,
    vocab: int = 30522,
    opset: int = DEFAULT_OPSET,
    seed: int = 0,
) -> onnx.ModelProto:
    """HF ``BertModel`` (no pooler), output "last_hidden_state" [batch, seq, hidden]. A dim given
    as a name (`batch="batch"`) is a dim_param, as a dynamic export (`dynamic_axes`) writes it."""
    if hidden % heads:
        raise ValueError(f"hidden={hidden} is not divisible by heads={heads}")
    max_positions = max(512, seq) if isinstance(seq, int) else 512
    b = GraphBuilder(opset, seed)
    input_ids = b.input("input_ids", INT64, [batch, seq])
    attention_mask = b.input("attention_mask", INT64, [batch, seq])

    # get_extended_attention_mask: (1 - mask[:, None, None, :]) * finfo.min
    mask = b.op("Cast", [b.unsqueeze(attention_mask, [1, 2])], to=FLOAT)
    mask = b.mul(b.sub(b.const(1.0), mask), b.const(FLOAT32_MIN))

    with b.scope("embeddings"):
        # position_ids = self.position_ids[:, :seq_length]
        seq_len = b.unsqueeze(b.gather(b.shape(input_ids), 1), [0])
        position_table = b.initializer(b.param_name("position_ids"), np.arange(max_positions, dtype=np.int64)[None])
        position_ids = b.op("Slice", [position_table, b.ints([0]), seq_len, b.ints([1])])
        if isinstance(seq, int):
            token_type_ids = b.const(np.zeros((1, seq), np.int64), np.int64)
        else:  # zeros of the input's shape, whatever it is at run time
            token_type_ids = b.mul(input_ids, b.const(0, np.int64))
        with b.scope("word_embeddings"):
            x = b.op("Gather", [b.normal(b.param_name("weight"), (vocab, hidden), 0.02), input_ids])
        with b.scope("token_type_embeddings"):
            token_types = b.op("Gather", [b.normal(b.param_name("weight"), (2, hidden), 0.02), token_type_ids])
        x = b.add(x, token_types)
        with b.scope("position_embeddings"):
            positions = b.op("Gather", [b.normal(b.param_name("weight"), (max_positions, hidden), 0.02), position_ids])
        x = b.add(x, positions)
        with b.scope("LayerNorm"):
            x = b.layer_norm(x, hidden, 1e-12)

    with b.scope("encoder"):
        for i in range(layers):
            with b.scope(f"layer.{i}"):
                x = _bert_layer(b, x, mask, hidden, heads, intermediate)
    b.output(x, "last_hidden_state", FLOAT, [batch, seq, hidden])
    return b.build(doc=f"HF BertModel, {layers} layers (random weights)")


# ======================================================================== GPT-2
def _gpt2_attention(
    b: GraphBuilder, x: str, batch: int, seq: int, hidden: int, heads: int, layers: int, max_positions: int
) -> str:
    """HF ``GPT2Attention`` (eager): c_attn, split, causal-masked attention, c_proj."""
    head_dim = hidden // heads
    with b.scope("c_attn"):
        qkv = b.linear(x, hidden, 3 * hidden, weight_name=b.param_name("weight"))
    query, key, value = b.op("Split", [qkv, b.ints([hidden] * 3)], num_outputs=3, axis=2)

    def split_heads(y: str, perm: list[int]) -> str:
        return b.transpose(b.reshape(y, [batch, seq, heads, head_dim]), perm)

    query = split_heads(query, [0, 2, 1, 3])
    key_t = split_heads(key, [0, 2, 3, 1])  # key.transpose(-1, -2) fused in
    value = split_heads(value, [0, 2, 1, 3])
    scores = b.div(b.matmul(query, key_t), b.const(math.sqrt(head_dim)))

    # causal_mask = self.bias[:, :, key_length - query_length : key_length, :key_length]
    causal = np.tril(np.ones((max_positions, max_positions), dtype=bool))[None, None]
    bias = b.initializer(b.param_name("bias"), causal)
    query_length = b.gather(b.shape(query), 2)
    key_length = b.gather(b.shape(key_t), 3)
    start = b.unsqueeze(b.sub(key_length, query_length), [0])
    end = b.unsqueeze(key_length, [0])
    mask = b.op("Slice", [bias, start, end, b.ints([2])])
    mask = b.op("Slice", [mask, b.ints([0]), end, b.ints([3])])
    scores = b.op("Where", [mask, scores, b.const(FLOAT32_MIN)])

    probs = b.op("Softmax", [scores], axis=-1)
    context = b.transpose(b.matmul(probs, value), [0, 2, 1, 3])
    context = b.reshape(context, [batch, seq, hidden])
    with b.scope("c_proj"):
        # GPT-2 scales the residual projections by 1/sqrt(2 * n_layer)
        std = 0.02 / math.sqrt(2 * layers)
        return b.linear(context, hidden, hidden, std=std, weight_name=b.param_name("weight"))


def gpt2(
    batch: int = 1,
    seq: int = 64,
    layers: int = 2,
    hidden: int = 768,
    heads: int = 12,
    vocab: int = 50257,
    opset: int = DEFAULT_OPSET,
    seed: int = 0,
) -> onnx.ModelProto:
    """HF ``GPT2Model`` (no LM head), output "last_hidden_state" [batch, seq, hidden]."""
    if hidden % heads:
        raise ValueError(f"hidden={hidden} is not divisible by heads={heads}")
    max_positions = max(1024, seq)
    b = GraphBuilder(opset, seed)
    input_ids = b.input("input_ids", INT64, [batch, seq])

    # position_ids = torch.arange(0, input_shape[-1]).unsqueeze(0)
    seq_len = b.gather(b.shape(input_ids), 1)
    position_ids = b.unsqueeze(b.op("Range", [b.const(0, np.int64), seq_len, b.const(1, np.int64)]), [0])
    with b.scope("wte"):
        x = b.op("Gather", [b.normal(b.param_name("weight"), (vocab, hidden), 0.02), input_ids])
    with b.scope("wpe"):
        positions = b.op("Gather", [b.normal(b.param_name("weight"), (max_positions, hidden), 0.01), position_ids])
    x = b.add(x, positions)

    for i in range(layers):
        with b.scope(f"h.{i}"):
            with b.scope("ln_1"):
                y = b.layer_norm(x, hidden, 1e-5)
            with b.scope("attn"):
                y = _gpt2_attention(b, y, batch, seq, hidden, heads, layers, max_positions)
            x = b.add(y, x)
            with b.scope("ln_2"):
                y = b.layer_norm(x, hidden, 1e-5)
            with b.scope("mlp"):
                with b.scope("c_fc"):
                    y = b.linear(y, hidden, 4 * hidden, weight_name=b.param_name("weight"))
                with b.scope("act"):
                    y = b.gelu_tanh(y)
                with b.scope("c_proj"):
                    std = 0.02 / math.sqrt(2 * layers)
                    y = b.linear(y, 4 * hidden, hidden, std=std, weight_name=b.param_name("weight"))
            x = b.add(x, y)
    with b.scope("ln_f"):
        x = b.layer_norm(x, hidden, 1e-5)
    b.output(x, "last_hidden_state", FLOAT, [batch, seq, hidden])
    return b.build(doc=f"HF GPT2Model, {layers} layers (random weights)")


MODELS: dict[str, Callable[..., onnx.ModelProto]] = {
    "resnet50": resnet50,
    "mobilenet_v2": mobilenet_v2,
    "bert_base": bert_base,
    "gpt2": gpt2,
}

SMALL: dict[str, dict[str, int]] = {
    "resnet50": {"image": 64, "width": 16},
    "mobilenet_v2": {"image": 64},
    "bert_base": {"layers": 2, "seq": 32, "vocab": 1000},
    "gpt2": {"seq": 32, "vocab": 1000},
}
"""Each model's small size: every op, layout, fusion pattern and stream structure of the full one
(all stages and blocks of the CNNs, at a 64x64 image whose last stage is still 2x2, ResNet-50 at a
quarter of its widths: 7.7 MiB of weights instead of 98; the transformers' widths and heads, two
layers, a 1000-token vocabulary), for tests where the size is not what is tested. At O3 the small
CNNs' programs equal the full ones' kernel for kernel (test_optimize.py)."""


def small(name: str, **options: int) -> onnx.ModelProto:
    """`MODELS[name]` at its small size (`SMALL[name]`); `options` add to it or override it."""
    return MODELS[name](**{**SMALL[name], **options})


# ======================================================================= inputs
def _gather_table_rows(graph: onnx.GraphProto, indices: str) -> int | None:
    """Rows of the initializer that a Gather looks ``indices`` up in (the vocab)."""
    dims = {t.name: list(t.dims) for t in graph.initializer}
    for node in graph.node:
        if node.op_type == "Gather" and node.input[1] == indices and node.input[0] in dims:
            return dims[node.input[0]][0]
    return None


def random_inputs(
    model: onnx.ModelProto, seed: int = 0, sizes: Mapping[str, int] | None = None
) -> dict[str, np.ndarray]:
    """Valid inputs for a model of this module (or any similar one).

    Token ids are uniform in [0, vocab); an ``attention_mask`` is all ones with
    the last few positions of every row zeroed (padding); float inputs are
    standard normal. A named dim (dim_param) takes its size from ``sizes`` (1
    when not given), as does an unknown one.
    """
    rng = np.random.default_rng(seed)
    sizes = sizes or {}
    feeds: dict[str, np.ndarray] = {}
    for value in model.graph.input:
        tensor_type = value.type.tensor_type
        shape = tuple(
            d.dim_value if d.HasField("dim_value") else sizes.get(d.dim_param, 1) for d in tensor_type.shape.dim
        )
        dtype = helper.tensor_dtype_to_np_dtype(tensor_type.elem_type)
        if "mask" in value.name:
            mask = np.ones(shape, dtype=dtype)
            padding = min(max(1, shape[-1] // 8), shape[-1] - 1)
            if padding > 0:
                mask[..., -padding:] = 0
            feeds[value.name] = mask
        elif np.issubdtype(dtype, np.integer):
            high = _gather_table_rows(model.graph, value.name) or 2
            feeds[value.name] = rng.integers(0, high, size=shape, dtype=dtype)
        else:
            feeds[value.name] = rng.standard_normal(shape, dtype=np.float32).astype(dtype)
    return feeds
