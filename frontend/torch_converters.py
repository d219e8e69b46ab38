"""The converters of ATen overloads (the rule table of frontend/torch_fx.py): each writes its
overload's meaning as ONNX nodes and declares the cases its tests run (a module whose exported
graph holds the overload, and the shapes of its inputs). test/frontend/test_torch_converters.py
runs every case against eager PyTorch.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from ge.frontend.torch_fx import Case, Graph, TorchImportError, converts, dtype_name, onnx_type


class Call(nn.Module):
    """A module that calls `fn` on its inputs (a converter case's module)."""

    def __init__(self, fn, *modules: nn.Module):
        super().__init__()
        self.fn = fn
        self.parts = nn.ModuleList(modules)

    def forward(self, *xs):
        return self.fn(self, *xs)


def call(fn, *shapes: tuple[int, ...], dtype: str = "float32", dynamic=(), modules=()) -> Case:
    return Case(lambda: Call(fn, *[m() for m in modules]), tuple(shapes), dtype, tuple(dynamic))


def _args(g: Graph, node: Any, count: int) -> list[Any]:
    """The node's first `count` arguments: positional, else by keyword, else the schema's default
    (None where it has none)."""
    schema = getattr(node.target, "_schema", None)
    found: list[Any] = []
    for i in range(count):
        if i < len(node.args):
            found.append(g.arg(node.args[i]))
            continue
        spec = schema.arguments[i] if schema is not None and i < len(schema.arguments) else None
        if spec is not None and spec.name in node.kwargs:
            found.append(g.arg(node.kwargs[spec.name]))
        elif spec is not None and spec.has_default_value():
            found.append(spec.default_value)
        else:
            found.append(None)
    return found


def _pair(value: Any, n: int = 2) -> list[int]:
    """A pooling or convolution parameter as a list of `n` ints (one value: each of them)."""
    values = [int(v) for v in value] if isinstance(value, (list, tuple)) else [int(value)]
    return values * n if len(values) == 1 else values


def _val(node: Any):
    return node.meta.get("val")


def _rank(node: Any) -> int:
    return len(_val(node).shape)


def _dtype(node: Any) -> np.dtype:
    return np.dtype(dtype_name(_val(node).dtype).replace("bfloat16", "float32"))


# -- elementwise -------------------------------------------------------------------------------
UNARY = {
    "aten.relu.default": "Relu",
    "aten.sigmoid.default": "Sigmoid",
    "aten.tanh.default": "Tanh",
    "aten.neg.default": "Neg",
    "aten.exp.default": "Exp",
    "aten.log.default": "Log",
    "aten.sqrt.default": "Sqrt",
    "aten.abs.default": "Abs",
    "aten.erf.default": "Erf",
    "aten.reciprocal.default": "Reciprocal",
    "aten.sin.default": "Sin",
    "aten.cos.default": "Cos",
    "aten.floor.default": "Floor",
    "aten.ceil.default": "Ceil",
    "aten.logical_not.default": "Not",
    "aten.bitwise_not.default": "Not",
    "aten.clone.default": "Identity",
}


@converts(
    *UNARY,
    cases=[
        call(lambda m, x: torch.relu(x), (2, 3)),
        call(lambda m, x: torch.sigmoid(x) + torch.tanh(x) - torch.exp(-x.abs()), (2, 3)),
        call(lambda m, x: torch.sqrt(x.abs() + 1) * torch.log(x.abs() + 1) + torch.erf(x), (4,)),
        call(lambda m, x: torch.sin(x) + torch.cos(x) + torch.floor(x) + torch.ceil(x) + 1 / x, (3, 2)),
        call(lambda m, x: torch.where(~(x > 0) | torch.logical_not(x < 1), x.clone(), -x), (3, 2)),
    ],
)
def unary(g: Graph, node: Any) -> str:
    (x,) = _args(g, node, 1)
    return g.op(UNARY[_key(node)], [x])


def _key(node: Any) -> str:
    from ge.frontend.torch_fx import overload_name

    return overload_name(node.target)


@converts("aten.rsqrt.default", cases=[call(lambda m, x: torch.rsqrt(x.abs() + 1), (2, 3))])
def rsqrt(g: Graph, node: Any) -> str:
    (x,) = _args(g, node, 1)
    return g.op("Reciprocal", [g.op("Sqrt", [x])])


BINARY = {
    "aten.add.Tensor": "Add",
    "aten.sub.Tensor": "Sub",
    "aten.mul.Tensor": "Mul",
    "aten.mul.Scalar": "Mul",
    "aten.div.Tensor": "Div",
    "aten.pow.Tensor_Scalar": "Pow",
    "aten.maximum.default": "Max",
    "aten.minimum.default": "Min",
    "aten.eq.Tensor": "Equal",
    "aten.eq.Scalar": "Equal",
    "aten.lt.Tensor": "Less",
    "aten.lt.Scalar": "Less",
    "aten.gt.Tensor": "Greater",
    "aten.gt.Scalar": "Greater",
    "aten.le.Scalar": "LessOrEqual",
    "aten.le.Tensor": "LessOrEqual",
    "aten.ge.Scalar": "GreaterOrEqual",
    "aten.ge.Tensor": "GreaterOrEqual",
    "aten.logical_and.default": "And",
    "aten.logical_or.default": "Or",
    "aten.bitwise_and.Tensor": "And",
    "aten.bitwise_or.Tensor": "Or",
}


@converts(
    *BINARY,
    cases=[
        call(lambda m, x, y: x + y * 2 - x / (y.abs() + 1), (2, 3), (3,)),
        call(lambda m, x: (x + 1.5) * 3 - 2 / (x.abs() + 1), (4, 2)),
        call(lambda m, x: (x > 2.5).float() + (x + 0.5), (2, 3), dtype="int64"),
        call(lambda m, x, y: torch.maximum(x, y) + torch.minimum(x, y) + x.abs() ** 2, (2, 3), (2, 3)),
        call(lambda m, x, y: torch.where((x > y) & (x < 1) | (x == y), x, y), (3, 3), (3, 3)),
        call(lambda m, x, y: torch.where((x >= y) | (x <= 0.5) & (x < y) | (x >= 1) & (x <= y), x, y), (3, 3), (3, 3)),
        call(
            lambda m, x, y: torch.where(torch.logical_and(x > 0, y > 0) | torch.logical_or(x > 1, y < -1), x, y),
            (2, 2),
            (2, 2),
        ),
    ],
)
def binary(g: Graph, node: Any) -> str:
    a, b = _args(g, node, 2)
    alpha = node.kwargs.get("alpha", 1)
    common = _promoted(node)
    dtype = np.dtype(dtype_name(common).replace("bfloat16", "float32"))
    a, b = (
        _cast_to(g, v, arg, common) if isinstance(v, str) else g.tensor(v, dtype=dtype)
        for v, arg in zip((a, b), node.args)
    )
    if alpha != 1:
        b = g.op("Mul", [b, g.const(alpha, dtype)])
    return g.op(BINARY[_key(node)], [a, b])


def _promoted(node: Any) -> Any:
    """The dtype PyTorch computes a binary op in: its tensor operands' promoted type; a Python
    number takes the tensors' type unless it is of a higher kind (a float with integer tensors:
    the default float type; an int with booleans: int64)."""
    tensors = [_val(a).dtype for a in node.args[:2] if hasattr(a, "meta")]
    common = tensors[0]
    for other in tensors[1:]:
        common = torch.promote_types(common, other)
    for a in node.args[:2]:
        if isinstance(a, float) and not common.is_floating_point:
            common = torch.get_default_dtype()
        elif isinstance(a, int) and not isinstance(a, bool) and common == torch.bool:
            common = torch.int64
    return common


def _cast_to(g: Graph, value: str, arg: Any, dtype: Any) -> str:
    """`value` (the FX argument `arg`) in `dtype`, cast where it has another."""
    if _val(arg).dtype == dtype:
        return value
    return g.op("Cast", [value], to=onnx_type(dtype, "type promotion"))


@converts("aten.where.self", cases=[call(lambda m, c, x: torch.where(c > 0, x, -x), (2, 3), (2, 3))])
def where(g: Graph, node: Any) -> str:
    c, x, y = _args(g, node, 3)
    dtype = _dtype(node)
    return g.op("Where", [c, g.tensor(x, dtype=dtype), g.tensor(y, dtype=dtype)])


@converts(
    "aten.gelu.default",
    cases=[
        call(lambda m, x: nn.functional.gelu(x), (2, 8)),
        call(lambda m, x: nn.functional.gelu(x, approximate="tanh"), (2, 8)),
    ],
)
def gelu(g: Graph, node: Any) -> str:
    (x,) = _args(g, node, 1)
    return g.op("Gelu", [x], approximate=node.kwargs.get("approximate", "none"))


@converts(
    "aten.clamp.default",
    "aten.hardtanh.default",
    cases=[call(lambda m, x: torch.clamp(x, -0.5, 0.5) + nn.functional.relu6(x), (2, 8))],
)
def clamp(g: Graph, node: Any) -> str:
    x, low, high = _args(g, node, 3)
    dtype = _dtype(node)
    bounds = [g.const(v, dtype) if v is not None else "" for v in (low, high)]
    return g.op("Clip", [x, *bounds])


@converts("aten.leaky_relu.default", cases=[call(lambda m, x: nn.functional.leaky_relu(x, 0.2), (2, 8))])
def leaky_relu(g: Graph, node: Any) -> str:
    x, slope = _args(g, node, 2)
    return g.op("LeakyRelu", [x], alpha=float(slope))


@converts("aten._assert_tensor_metadata.default")
def assert_metadata(g: Graph, node: Any) -> None:
    """A check of a tensor's dtype and device the exporter recorded: ge's types are checked already."""
    return None


@converts("aten._to_copy.default", cases=[call(lambda m, x: x.to(torch.int64) + 1, (2, 3))])
def to_copy(g: Graph, node: Any) -> str:
    (x,) = _args(g, node, 1)
    dtype = node.kwargs.get("dtype")
    if dtype is None:
        return g.op("Identity", [x])
    return g.op("Cast", [x], to=onnx_type(dtype, "_to_copy"))


# -- shapes ------------------------------------------------------------------------------------
@converts(
    "aten.sym_size.int",
    cases=[call(lambda m, x: x.view(x.shape[0], -1) * 2, (3, 2, 4), dynamic=[(0, 0)])],
)
def sym_size(g: Graph, node: Any) -> str:
    x, dim = _args(g, node, 2)
    rank = len(_val(node.args[0]).shape)
    dim %= rank
    return g.op("Shape", [x], start=dim, end=dim + 1)


@converts(
    "aten.view.default",
    cases=[call(lambda m, x: x.reshape(2, -1).view(-1, 3, 2), (2, 3, 2))],
)
def view(g: Graph, node: Any) -> str:
    x, shape = _args(g, node, 2)
    return g.op("Reshape", [x, g.ints(shape)])


@converts("aten.permute.default", cases=[call(lambda m, x: x.permute(2, 0, 1), (2, 3, 4))])
def permute(g: Graph, node: Any) -> str:
    x, dims = _args(g, node, 2)
    rank = _rank(node)
    return g.op("Transpose", [x], perm=[d % rank for d in dims])


@converts("aten.expand.default", cases=[call(lambda m, x: x.expand(3, -1, 4), (1, 2, 1))])
def expand(g: Graph, node: Any) -> str:
    x, sizes = _args(g, node, 2)
    target = [1 if not isinstance(s, str) and s == -1 else s for s in sizes]  # -1 keeps the dim: 1 broadcasts to it
    return g.op("Expand", [x, g.ints(target)])


@converts(
    "aten.cat.default",
    cases=[
        call(lambda m, x, y: torch.cat([x, y, x], 1), (2, 3), (2, 1)),
        call(lambda m, x: torch.cat([torch.tensor([]), x], -2), (2, 1, 3)),  # a cache's empty start
    ],
)
def cat(g: Graph, node: Any) -> str:
    """Concat; a 1-D empty tensor among the inputs is left out (torch.cat takes it with any rank)."""
    tensors, dim = _args(g, node, 2)
    kept = [t for t, n in zip(tensors, node.args[0]) if tuple(_val(n).shape) != (0,)]
    return g.op("Concat", kept or list(tensors), axis=int(dim))


@converts(
    "aten.unsqueeze.default",
    "aten.squeeze.dims",
    cases=[call(lambda m, x: x.unsqueeze(1).unsqueeze(-1).squeeze(0), (1, 3))],
)
def squeeze(g: Graph, node: Any) -> str:
    x, dims = _args(g, node, 2)
    dims = dims if isinstance(dims, list) else [dims]
    op = "Unsqueeze" if _key(node) == "aten.unsqueeze.default" else "Squeeze"
    return g.op(op, [x, g.const(dims, np.int64)])


@converts(
    "aten.slice.Tensor",
    cases=[call(lambda m, x: x[:, 1:3] + x[:, ::2][:, :2], (2, 5))],
)
def slice_(g: Graph, node: Any) -> str:
    x, dim, start, end, step = _args(g, node, 5)
    start = 0 if start is None else start
    last = np.iinfo(np.int64).max
    end = last if end is None else end if isinstance(end, str) else min(int(end), last)
    axes, steps = g.const([dim], np.int64), g.const([step], np.int64)
    return g.op("Slice", [x, g.ints([start]), g.ints([end]), axes, steps])


@converts("aten.select.int", cases=[call(lambda m, x: x[:, 1] + x[0, 2], (3, 4))])
def select(g: Graph, node: Any) -> str:
    x, dim, index = _args(g, node, 3)
    return g.op("Gather", [x, g.tensor(index) if isinstance(index, str) else g.const(index, np.int64)], axis=int(dim))


@converts(
    "aten.embedding.default",
    cases=[Case(lambda: Call(lambda m, i: m.parts[0](i), nn.Embedding(10, 4)), ((2, 5),), dtype="int64")],
)
def embedding(g: Graph, node: Any) -> str:
    weight, indices = _args(g, node, 2)
    return g.op("Gather", [weight, indices], axis=0)


@converts("getitem")
def getitem(g: Graph, node: Any) -> Any:
    values, index = _args(g, node, 2)
    if values[index] is None:
        raise TorchImportError(f"result #{index} of '{node.args[0].name}' is read, and its converter does not give it")
    return values[index]


def reads_result(node: Any, index: int) -> bool:
    """Whether the graph reads result `index` of `node` (a node of several results)."""
    return any(user.args[1] == index for user in node.users)


# -- reductions and normalizations ------------------------------------------------------------
REDUCE = {
    "aten.mean.dim": "ReduceMean",
    "aten.sum.dim_IntList": "ReduceSum",
    "aten.amax.default": "ReduceMax",
    "aten.amin.default": "ReduceMin",
}


@converts(
    *REDUCE,
    cases=[
        call(lambda m, x: x.mean(-1, keepdim=True) + x.sum(1, keepdim=True) + x.amax(-1, keepdim=True), (2, 3, 4)),
        call(lambda m, x: x.mean((1, 2)) - x.amin(2).sum(1), (2, 3, 4)),
    ],
)
def reduce(g: Graph, node: Any) -> str:
    x, dims, keepdim = _args(g, node, 3)
    if dims is None or dims == []:
        dims = list(range(len(_val(node.args[0]).shape)))
    dims = dims if isinstance(dims, list) else [dims]
    return g.op(REDUCE[_key(node)], [x, g.const(dims, np.int64)], keepdims=int(bool(keepdim)))


@converts(
    "aten.any.dim",
    cases=[
        call(lambda m, x: torch.where((x > 0).any(-1, keepdim=True), x, -x), (2, 3)),
        Case(  # PyTorch's own encoder layer: its attention mask checks (eq, any, logical_not, full_like)
            lambda: Call(
                lambda m, x: m.parts[0](x), nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
            ),
            ((2, 5, 16),),
        ),
    ],
)
def any_(g: Graph, node: Any) -> str:
    x, dim, keepdim = _args(g, node, 3)
    as_int = g.op("Cast", [x], to=onnx_type(torch.int32, "any"))
    reduced = g.op("ReduceMax", [as_int, g.const([dim], np.int64)], keepdims=int(bool(keepdim)))
    return g.op("Cast", [reduced], to=onnx_type(torch.bool, "any"))


@converts(
    "aten._softmax.default",
    "aten._log_softmax.default",
    cases=[call(lambda m, x: torch.softmax(x, -1) + torch.log_softmax(x, 1), (2, 3, 4))],
)
def softmax(g: Graph, node: Any) -> str:
    x, dim = _args(g, node, 2)
    op = "Softmax" if _key(node) == "aten._softmax.default" else "LogSoftmax"
    return g.op(op, [x], axis=int(dim))


@converts(
    "aten.native_layer_norm.default",
    cases=[
        Case(lambda: Call(lambda m, x: m.parts[0](x), nn.LayerNorm(8)), ((2, 3, 8),)),
        call(
            lambda m, x: sum(t.sum((-2, -1)) for t in torch.native_layer_norm(x, [2, 4], None, None, 1e-5)), (3, 2, 4)
        ),
    ],
)
def layer_norm(g: Graph, node: Any) -> tuple:
    x, shape, weight, bias, eps = _args(g, node, 5)
    dtype = _dtype(node.args[0])
    if weight is None:
        weight = g.const(np.ones(shape, dtype))
    if bias is None:
        bias = g.const(np.zeros(shape, dtype))
    norm: dict[str, Any] = dict(axis=-len(shape), epsilon=float(eps))
    if not (reads_result(node, 1) or reads_result(node, 2)):
        return (g.op("LayerNormalization", [x, weight, bias], **norm), None, None)
    return tuple(g.op("LayerNormalization", [x, weight, bias], outputs=3, **norm))  # the mean and 1/std saved


@converts(
    "aten._native_batch_norm_legit_no_training.default",
    cases=[Case(lambda: Call(lambda m, x: m.parts[0](x), _trained_batch_norm()).eval(), ((2, 4, 3, 3),))],
)
def batch_norm(g: Graph, node: Any) -> tuple:
    x, weight, bias, mean, var, _momentum, eps = _args(g, node, 7)
    y = g.op("BatchNormalization", [x, weight, bias, mean, var], epsilon=float(eps))
    return (y, None, None)


def _trained_batch_norm() -> nn.BatchNorm2d:
    bn = nn.BatchNorm2d(4)
    with torch.no_grad():
        for buffer, (low, high) in ((bn.running_mean, (-1, 1)), (bn.running_var, (0.5, 2))):
            assert buffer is not None, "a BatchNorm2d tracks its running statistics"
            buffer.uniform_(low, high)
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.uniform_(-0.5, 0.5)
    return bn


# -- linear algebra and convolution -----------------------------------------------------------
@converts(
    "aten.addmm.default",
    "aten.mm.default",
    "aten.bmm.default",
    cases=[
        Case(lambda: Call(lambda m, x: m.parts[0](x), nn.Linear(4, 3)), ((2, 4),)),
        call(lambda m, x, y: x @ y + torch.bmm(x.unsqueeze(0), y.unsqueeze(0))[0], (2, 3), (3, 4)),
    ],
)
def matmul(g: Graph, node: Any) -> str:
    if _key(node) == "aten.addmm.default":
        bias, a, b = _args(g, node, 3)
        beta, alpha = node.kwargs.get("beta", 1), node.kwargs.get("alpha", 1)
        return g.op("Gemm", [a, b, bias], alpha=float(alpha), beta=float(beta))
    a, b = _args(g, node, 2)
    return g.op("MatMul", [a, b])


@converts(
    "aten.convolution.default",
    cases=[
        Case(lambda: Call(lambda m, x: m.parts[0](x), nn.Conv2d(3, 4, 3, padding=1, stride=2)), ((1, 3, 8, 8),)),
        Case(
            lambda: Call(lambda m, x: m.parts[0](x), nn.Conv2d(4, 4, 3, groups=2, bias=False, dilation=2)),
            ((1, 4, 9, 9),),
        ),
        Case(lambda: Call(lambda m, x: m.parts[0](x), nn.ConvTranspose2d(4, 2, 2, stride=2)), ((1, 4, 3, 3),)),
    ],
)
def convolution(g: Graph, node: Any) -> str:
    x, w, b, stride, padding, dilation, transposed, output_padding, groups = _args(g, node, 9)
    n = len(_val(node.args[1]).shape) - 2  # spatial dims
    attrs: dict[str, Any] = dict(
        strides=_pair(stride, n), pads=_pair(padding, n) * 2, dilations=_pair(dilation, n), group=int(groups)
    )
    inputs = [x, w] + ([b] if b is not None else [])
    if transposed:
        return g.op("ConvTranspose", inputs, output_padding=_pair(output_padding, n), **attrs)
    return g.op("Conv", inputs, **attrs)


@converts(
    "aten.max_pool2d_with_indices.default",
    cases=[
        call(lambda m, x: nn.functional.max_pool2d(x, 3, 2, 1), (1, 2, 8, 8)),
        call(lambda m, x: nn.functional.max_pool2d(x, 2, return_indices=True)[1].float(), (2, 3, 6, 4)),
    ],
)
def max_pool(g: Graph, node: Any) -> tuple:
    """The pooled values, and the indices (each maximum's place in its plane, h * W + w) when the
    graph reads them (a training graph saves them for the backward)."""
    x, kernel, stride, padding, dilation, ceil_mode = _args(g, node, 6)
    window: dict[str, Any] = dict(
        kernel_shape=_pair(kernel),
        strides=_pair(stride or kernel),
        pads=_pair(padding) * 2,
        dilations=_pair(dilation),
        ceil_mode=int(bool(ceil_mode)),
    )
    if not reads_result(node, 1):
        return (g.op("MaxPool", [x], **window), None)
    y, flat = g.op("MaxPool", [x], outputs=2, **window)  # ONNX's indices count across N and C too
    plane = g.op("ReduceProd", [g.op("Shape", [x], start=2)], keepdims=1)
    return (y, g.op("Mod", [flat, plane]))


@converts(
    "aten.avg_pool2d.default",
    "aten.avg_pool3d.default",
    cases=[
        call(lambda m, x: nn.functional.avg_pool2d(x, 2, 2), (1, 2, 8, 8)),
        call(lambda m, x: nn.functional.avg_pool3d(x, 2), (1, 2, 4, 4, 4)),
        call(lambda m, x: nn.functional.avg_pool3d(x, 3, 2, 1, count_include_pad=False), (2, 1, 5, 6, 5)),
    ],
)
def avg_pool(g: Graph, node: Any) -> str:
    x, kernel, stride, padding, ceil_mode, include_pad, divisor = _args(g, node, 7)
    if divisor is not None:
        raise TorchImportError("average pooling with divisor_override is not supported")
    n = _rank(node.args[0]) - 2  # spatial dims
    return g.op(
        "AveragePool",
        [x],
        kernel_shape=_pair(kernel, n),
        strides=_pair(stride or kernel, n),
        pads=_pair(padding, n) * 2,
        ceil_mode=int(bool(ceil_mode)),
        count_include_pad=int(bool(include_pad)),
    )


# -- creation ----------------------------------------------------------------------------------
@converts(
    "aten.full.default",
    "aten.full_like.default",
    cases=[
        call(lambda m, x: x + torch.full_like(x, 2.0) + torch.ones_like(x) - torch.zeros_like(x), (2, 3)),
        call(lambda m, x: x + torch.full((2, 3), 0.5), (2, 3)),
    ],
)
def full(g: Graph, node: Any) -> str:
    dtype = _dtype(node)
    if _key(node) == "aten.full.default":
        sizes, fill = _args(g, node, 2)
        shape = g.ints(sizes)
    else:
        like, fill = _args(g, node, 2)
        shape = g.op("Shape", [like])
    value = onnx_value(np.asarray(fill, dtype))
    return g.op("ConstantOfShape", [shape], value=value)


def onnx_value(array: np.ndarray):
    from onnx import numpy_helper

    return numpy_helper.from_array(array.reshape(1))


# -- more elementwise, indexing and shape ops ----------------------------------------------------
MATH = {
    "aten.tan.default": "Tan",
    "aten.asin.default": "Asin",
    "aten.acos.default": "Acos",
    "aten.atan.default": "Atan",
    "aten.sinh.default": "Sinh",
    "aten.cosh.default": "Cosh",
    "aten.asinh.default": "Asinh",
    "aten.acosh.default": "Acosh",
    "aten.atanh.default": "Atanh",
    "aten.sign.default": "Sign",
    "aten.round.default": "Round",
    "aten.isnan.default": "IsNaN",
}


@converts(
    *MATH,
    cases=[
        call(lambda m, x: torch.tan(x) + torch.asin(x / 4) + torch.acos(x / 4) + torch.atan(x), (2, 3)),
        call(lambda m, x: torch.sinh(x) + torch.cosh(x) + torch.asinh(x) + torch.acosh(x.abs() + 1), (2, 3)),
        call(lambda m, x: torch.atanh(x / 4) + torch.sign(x) + torch.round(x * 3) + torch.isnan(x).float(), (2, 3)),
    ],
)
def math(g: Graph, node: Any) -> str:
    (x,) = _args(g, node, 1)
    return g.op(MATH[_key(node)], [x])


@converts(
    "aten.ne.Scalar",
    "aten.ne.Tensor",
    cases=[call(lambda m, x, y: torch.where((x != y) & (x != 0.5), x, y), (2, 3), (2, 3))],
)
def not_equal(g: Graph, node: Any) -> str:
    a, b = _args(g, node, 2)
    return g.op("Not", [g.op("Equal", [a, g.tensor(b, dtype=_dtype(node.args[0]))])])


@converts(
    "aten.remainder.Scalar",
    "aten.remainder.Tensor",
    "aten.fmod.Scalar",
    "aten.fmod.Tensor",
    cases=[
        call(lambda m, x: torch.remainder(x, 1.5) + torch.fmod(x, 0.7), (3, 4)),
        call(lambda m, x, y: torch.remainder(x, y.abs() + 0.5) + torch.fmod(x, y.abs() + 0.5), (3, 4), (3, 4)),
    ],
)
def remainder(g: Graph, node: Any) -> str:
    a, b = _args(g, node, 2)
    fmod = int(_key(node).startswith("aten.fmod"))
    return g.op("Mod", [a, g.tensor(b, dtype=_dtype(node.args[0]))], fmod=fmod)


@converts(
    "aten.constant_pad_nd.default",
    cases=[call(lambda m, x: nn.functional.pad(x, (1, 2, 0, 1), value=0.5), (1, 2, 3, 3))],
)
def constant_pad(g: Graph, node: Any) -> str:
    x, pad, value = _args(g, node, 3)
    rank = _rank(node)
    begins, ends = [0] * rank, [0] * rank
    for i in range(len(pad) // 2):  # pairs from the last dim backwards
        begins[rank - 1 - i], ends[rank - 1 - i] = int(pad[2 * i]), int(pad[2 * i + 1])
    return g.op("Pad", [x, g.const(begins + ends, np.int64), g.const(value or 0, _dtype(node))], mode="constant")


@converts(
    "aten.cumsum.default",
    cases=[call(lambda m, x: torch.cumsum(x, 1) + torch.cumsum(x > 0, 1), (2, 5))],
)
def cumsum(g: Graph, node: Any) -> str:
    x, dim = _args(g, node, 2)
    if _val(node.args[0]).dtype != _val(node).dtype:  # a bool or narrow integer sums as int64
        x = g.op("Cast", [x], to=onnx_type(_val(node).dtype, "cumsum"))
    return g.op("CumSum", [x, g.const(dim, np.int64)])


@converts("aten.flip.default", cases=[call(lambda m, x: torch.flip(x, [0, 2]), (2, 3, 4))])
def flip(g: Graph, node: Any) -> str:
    x, dims = _args(g, node, 2)
    count = len(dims)
    starts, ends = g.const([-1] * count, np.int64), g.const([np.iinfo(np.int64).min] * count, np.int64)
    return g.op("Slice", [x, starts, ends, g.const(list(dims), np.int64), g.const([-1] * count, np.int64)])


@converts(
    "aten.gather.default",
    cases=[call(lambda m, x: torch.gather(x, 1, (x.abs() * 2).long().clamp(0, 3)), (3, 4))],
)
def gather(g: Graph, node: Any) -> str:
    x, dim, index = _args(g, node, 3)
    return g.op("GatherElements", [x, index], axis=int(dim))


@converts(
    "aten.index_select.default",
    cases=[call(lambda m, x: torch.index_select(x, 1, torch.tensor([2, 0])), (3, 4))],
)
def index_select(g: Graph, node: Any) -> str:
    x, dim, index = _args(g, node, 3)
    return g.op("Gather", [x, index], axis=int(dim))


@converts(
    "aten.arange.start_step",
    cases=[
        call(lambda m, x: x + torch.arange(1, 7, 2, dtype=torch.float32), (2, 3)),
        call(lambda m, x: x * torch.arange(x.shape[0]).unsqueeze(1), (3, 2), dynamic=[(0, 0)]),
    ],
)
def arange(g: Graph, node: Any) -> str:
    start, end, step = _args(g, node, 3)
    dtype = _dtype(node)
    bounds = []
    for v in (start, end, step):  # a size is a one-element tensor: Range takes scalars
        v = g.op("Squeeze", [v, g.const([0], np.int64)]) if isinstance(v, str) else v
        v = (
            g.op("Cast", [v], to=onnx_type(_val(node).dtype, "arange"))
            if isinstance(v, str) and dtype != np.int64
            else v
        )
        bounds.append(g.tensor(v, dtype=dtype))
    return g.op("Range", bounds)


@converts(
    "aten.split_with_sizes.default",
    cases=[call(lambda m, x: torch.cat(list(torch.split(x, [1, 3], 1))[::-1], 1), (2, 4))],
)
def split(g: Graph, node: Any) -> list:
    x, sizes, dim = _args(g, node, 3)
    return list(g.op("Split", [x, g.const(list(sizes), np.int64)], outputs=len(sizes), axis=int(dim)))


@converts(
    "aten.max.dim",
    "aten.min.dim",
    cases=[call(lambda m, x: torch.max(x, 1).values + torch.min(x, 1)[0] + torch.max(x, 1)[1].float(), (3, 4))],
)
def max_dim(g: Graph, node: Any) -> tuple:
    x, dim, keepdim = _args(g, node, 3)
    keep = int(bool(keepdim))
    is_max = _key(node) == "aten.max.dim"
    values = g.op("ReduceMax" if is_max else "ReduceMin", [x, g.const([dim], np.int64)], keepdims=keep)
    indices = g.op("ArgMax" if is_max else "ArgMin", [x], axis=int(dim), keepdims=keep, select_last_index=0)
    return (values, indices)


@converts(
    "aten.argmax.default",
    "aten.argmin.default",
    cases=[call(lambda m, x: (torch.argmax(x, -1, keepdim=True) + torch.argmin(x, 1, keepdim=True)).float(), (3, 4))],
)
def argmax(g: Graph, node: Any) -> str:
    x, dim, keepdim = _args(g, node, 3)
    op = "ArgMax" if _key(node) == "aten.argmax.default" else "ArgMin"
    if dim is None:
        x, dim = g.op("Reshape", [x, g.const([-1], np.int64)]), 0
    return g.op(op, [x], axis=int(dim), keepdims=int(bool(keepdim)))


@converts(
    "aten.var.correction",
    cases=[call(lambda m, x: torch.var(x, 1, keepdim=True) + torch.var(x, (0, 1), unbiased=False), (3, 4))],
)
def variance(g: Graph, node: Any) -> str:
    x, dims = _args(g, node, 2)
    correction = node.kwargs.get("correction", 1)
    keepdim = node.kwargs.get("keepdim", False)
    shape = list(_val(node.args[0]).shape)
    dims = list(range(len(shape))) if dims is None else list(dims)
    axes = g.const(dims, np.int64)
    mean = g.op("ReduceMean", [x, axes], keepdims=1)
    centered = g.op("Sub", [x, mean])
    squares = g.op("ReduceSum", [g.op("Mul", [centered, centered]), axes], keepdims=int(bool(keepdim)))
    count = int(np.prod([shape[d] for d in dims]))
    return g.op("Div", [squares, g.const(max(count - (correction or 0), 0), _dtype(node))])


@converts(
    "aten.native_group_norm.default",
    cases=[Case(lambda: Call(lambda m, x: m.parts[0](x), nn.GroupNorm(2, 4)), ((2, 4, 3, 3),))],
)
def group_norm(g: Graph, node: Any) -> tuple:
    x, weight, bias, _n, channels, _hw, groups, eps = _args(g, node, 8)
    dtype = _dtype(node.args[0])
    weight = weight if weight is not None else g.const(np.ones(channels, dtype))
    bias = bias if bias is not None else g.const(np.zeros(channels, dtype))
    rank = len(_val(node.args[0]).shape)
    grouped = g.op("Reshape", [x, g.const([0, int(groups), -1], np.int64)])
    normed = g.op(
        "InstanceNormalization",
        [grouped, g.const(np.ones(int(groups), dtype)), g.const(np.zeros(int(groups), dtype))],
        epsilon=float(eps),
    )
    back = g.op("Reshape", [normed, g.op("Shape", [x])])
    affine = [1, int(channels)] + [1] * (rank - 2)
    scaled = g.op("Mul", [back, g.op("Reshape", [weight, g.const(affine, np.int64)])])
    return (g.op("Add", [scaled, g.op("Reshape", [bias, g.const(affine, np.int64)])]), None, None)


@converts(
    "aten.upsample_nearest2d.vec",
    cases=[call(lambda m, x: nn.functional.interpolate(x, scale_factor=2, mode="nearest"), (1, 2, 3, 3))],
)
def upsample_nearest(g: Graph, node: Any) -> str:
    x, size, scales = _args(g, node, 3)
    if size is not None:
        shape = list(_val(node.args[0]).shape[:2]) + list(size)
        sizes, scales_in = g.ints(shape), ""
    else:
        sizes, scales_in = "", g.const([1.0, 1.0, *(float(s) for s in scales)], np.float32)
    inputs = [x, "", scales_in] + ([sizes] if sizes else [])
    # PyTorch's nearest: source index floor(dst * in / out), ONNX's asymmetric transform with floor
    return g.op("Resize", inputs, mode="nearest", nearest_mode="floor", coordinate_transformation_mode="asymmetric")


SCALAR = {
    "aten.add.Scalar": "Add",
    "aten.sub.Scalar": "Sub",
    "aten.div.Scalar": "Div",
    "aten.pow.Tensor_Tensor": "Pow",
    "aten.logical_xor.default": "Xor",
    "aten.bitwise_xor.Tensor": "Xor",
}


@converts(
    *SCALAR,
    cases=[
        call(
            lambda m, x: (
                torch.ops.aten.add.Scalar(x, 2.0) * torch.ops.aten.sub.Scalar(x, 1.0)
                + torch.ops.aten.div.Scalar(x, 4.0)
            ),
            (2, 3),
        ),
        call(lambda m, x, y: torch.pow(x.abs() + 1, y), (2, 3), (2, 3)),
        call(lambda m, x, y: torch.where(torch.logical_xor(x > 0, y > 0) ^ (x > y), x, y), (2, 3), (2, 3)),
    ],
)
def scalar_binary(g: Graph, node: Any) -> str:
    a, b = _args(g, node, 2)
    dtype = _dtype(node.args[0])
    return g.op(SCALAR[_key(node)], [g.tensor(a, dtype=dtype), g.tensor(b, dtype=dtype)])


@converts(
    "aten.expm1.default",
    "aten.log1p.default",
    "aten.log2.default",
    "aten.log10.default",
    "aten.trunc.default",
    "aten.isinf.default",
    cases=[
        call(
            lambda m, x: torch.expm1(x) + torch.log1p(x.abs()) + torch.log2(x.abs() + 1) + torch.log10(x.abs() + 1),
            (2, 3),
        ),
        call(lambda m, x: torch.trunc(x * 3) + torch.isinf(x / 0.0).float(), (2, 3)),
    ],
)
def more_math(g: Graph, node: Any) -> str:
    (x,) = _args(g, node, 1)
    key, dtype = _key(node), _dtype(node.args[0])
    one = g.const(1, dtype)
    if key == "aten.expm1.default":
        return g.op("Sub", [g.op("Exp", [x]), one])
    if key == "aten.log1p.default":
        return g.op("Log", [g.op("Add", [x, one])])
    if key == "aten.isinf.default":
        return g.op("IsInf", [x])
    if key == "aten.trunc.default":
        negative = g.op("Less", [x, g.const(0, dtype)])
        return g.op("Where", [negative, g.op("Ceil", [x]), g.op("Floor", [x])])
    base = 2.0 if key == "aten.log2.default" else 10.0
    return g.op("Div", [g.op("Log", [x]), g.const(np.log(base), dtype)])


@converts(
    "aten.mean.default",
    "aten.prod.default",
    "aten.prod.dim_int",
    "aten.any.default",
    "aten.any.dims",
    cases=[
        call(lambda m, x: x.mean() + x.prod() + x.prod(1, keepdim=True), (2, 3)),
        call(lambda m, x: torch.where((x > 1).any() | (x > 0).any((0, 1)), x, -x), (2, 3)),
    ],
)
def reduce_all(g: Graph, node: Any) -> str:
    key = _key(node)
    rank = len(_val(node.args[0]).shape)
    if key in ("aten.prod.dim_int",):
        x, dim, keepdim = _args(g, node, 3)
        dims, keep = [int(dim)], int(bool(keepdim))
    elif key == "aten.any.dims":
        x, dims, keepdim = _args(g, node, 3)
        dims, keep = list(dims) if dims else list(range(rank)), int(bool(keepdim))
    else:
        (x,) = _args(g, node, 1)
        dims, keep = list(range(rank)), 0
    axes = g.const(dims, np.int64)
    if key.startswith("aten.any"):
        as_int = g.op("Cast", [x], to=onnx_type(torch.int32, "any"))
        return g.op("Cast", [g.op("ReduceMax", [as_int, axes], keepdims=keep)], to=onnx_type(torch.bool, "any"))
    op = "ReduceMean" if key == "aten.mean.default" else "ReduceProd"
    return g.op(op, [x, axes], keepdims=keep)


@converts("aten.elu.default", cases=[call(lambda m, x: nn.functional.elu(x, 0.7), (2, 5))])
def elu(g: Graph, node: Any) -> str:
    x, alpha, scale, input_scale = _args(g, node, 4)
    if scale != 1 or input_scale != 1:
        raise TorchImportError("elu with scale or input_scale other than 1 (selu, celu) is not supported")
    return g.op("Elu", [x], alpha=float(alpha))


@converts(
    "aten.clamp.Tensor",
    cases=[call(lambda m, x, lo: torch.clamp(x, min=lo, max=lo + 1), (2, 3), (2, 3))],
)
def clamp_tensor(g: Graph, node: Any) -> str:
    x, low, high = _args(g, node, 3)
    if low is not None:
        x = g.op("Max", [x, g.tensor(low, dtype=_dtype(node))])
    if high is not None:
        x = g.op("Min", [x, g.tensor(high, dtype=_dtype(node))])
    return x


@converts("aten.repeat.default", cases=[call(lambda m, x: x.repeat(2, 1, 3), (2, 3))])
def repeat(g: Graph, node: Any) -> str:
    x, repeats = _args(g, node, 2)
    rank = len(_val(node.args[0]).shape)
    if len(repeats) > rank:  # new leading dims of 1 first
        x = g.op("Unsqueeze", [x, g.const(list(range(len(repeats) - rank)), np.int64)])
    return g.op("Tile", [x, g.ints(repeats)])


@converts(
    "aten.topk.default",
    "aten.sort.default",
    cases=[call(lambda m, x: torch.topk(x, 2, 1).values + torch.sort(x, 1, descending=True).values[:, :2], (3, 5))],
)
def topk(g: Graph, node: Any) -> tuple:
    if _key(node) == "aten.topk.default":
        x, k, dim, largest, is_sorted = _args(g, node, 5)
    else:
        x, dim, descending = _args(g, node, 3)
        rank = len(_val(node.args[0]).shape)
        k, largest, is_sorted = g.op("Shape", [x], start=int(dim) % rank, end=int(dim) % rank + 1), descending, True
    values, indices = g.op(
        "TopK", [x, g.ints([k])], outputs=2, axis=int(dim), largest=int(bool(largest)), sorted=int(bool(is_sorted))
    )
    return (values, indices)


@converts(
    "aten._adaptive_avg_pool2d.default",
    cases=[call(lambda m, x: nn.functional.adaptive_avg_pool2d(x, (2, 3)), (1, 2, 4, 6))],
)
def adaptive_avg_pool(g: Graph, node: Any) -> str:
    x, size = _args(g, node, 2)
    spatial = list(_val(node.args[0]).shape[2:])
    if any(not isinstance(d, int) or d % int(o) for d, o in zip(spatial, size)):
        raise TorchImportError(
            f"adaptive average pooling of {spatial} to {list(size)}: only whole windows are supported"
        )
    kernel = [d // int(o) for d, o in zip(spatial, size)]
    return g.op("AveragePool", [x], kernel_shape=kernel, strides=kernel)


@converts(
    "aten.upsample_bilinear2d.vec",
    cases=[
        call(
            lambda m, x: nn.functional.interpolate(x, size=(5, 7), mode="bilinear", align_corners=False), (1, 2, 3, 4)
        ),
        call(
            lambda m, x: nn.functional.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True), (1, 2, 3, 4)
        ),
    ],
)
def upsample_bilinear(g: Graph, node: Any) -> str:
    x, size, align, scales = _args(g, node, 4)
    mode = "align_corners" if align else "pytorch_half_pixel"
    if size is not None:
        shape = g.ints(list(_val(node.args[0]).shape[:2]) + list(size))
        return g.op("Resize", [x, "", "", shape], mode="linear", coordinate_transformation_mode=mode)
    factors = g.const([1.0, 1.0, *(float(s) for s in scales)], np.float32)
    return g.op("Resize", [x, "", factors], mode="linear", coordinate_transformation_mode=mode)


@converts(
    "aten.index.Tensor",
    cases=[
        call(lambda m, x: x[torch.tensor([2, 0, 2])] + x[:, torch.tensor([1, 1, 0, 2])].sum(1, keepdim=True), (3, 3)),
        call(lambda m, x: x[torch.tensor([[0], [2]]), torch.tensor([1, 0, 1])], (3, 4, 2)),
        call(lambda m, x: x[:, torch.tensor([[0], [2]]), torch.tensor([1, 0, 1])], (2, 3, 4, 2)),
        call(lambda m, x: x[torch.tensor([1, 0]), :, torch.tensor([3, 1])], (2, 3, 4, 2)),
    ],
)
def index(g: Graph, node: Any) -> str:
    """Advanced indexing: the indexed dims moved to the front, GatherND on the stacked index
    tensors, and the broadcast index dims put back where PyTorch puts them (in place of the
    indexed dims when those are adjacent, else in front)."""
    x, indices = _args(g, node, 2)
    given = [k for k, i in enumerate(indices) if i is not None]
    if any(_val(node.args[1][k]).dtype == torch.bool for k in given):
        raise TorchImportError("indexing by a boolean mask gives a shape known only at run time")
    if len(given) == 1:
        return g.op("Gather", [x, indices[given[0]]], axis=given[0])
    rank = _rank(node.args[0])
    others = [d for d in range(rank) if d not in given]
    moved = g.op("Transpose", [x], perm=given + others) if given != list(range(len(given))) else x
    gathered = g.op("GatherND", [moved, stacked_indices(g, [indices[k] for k in given])])
    first = given[0]
    if first == 0 or given != list(range(first, first + len(given))):
        return gathered
    spread = len(torch.broadcast_shapes(*(_val(node.args[1][k]).shape for k in given)))
    back = [*range(spread, spread + first), *range(spread), *range(spread + first, spread + len(others))]
    return g.op("Transpose", [gathered], perm=back)


def stacked_indices(g: Graph, tensors: list[str]) -> str:
    """Index tensors broadcast together and stacked on a last axis (GatherND's and ScatterND's
    indices into the dims they index, in order)."""
    zero = g.const(0, np.int64)
    spread = tensors
    if len(tensors) > 1:  # broadcast together: each plus another times zero
        spread = [g.op("Add", [t, g.op("Mul", [next(o for o in tensors if o is not t), zero])]) for t in tensors]
    for t in tensors[2:]:  # more than two: each result broadcast against the rest as well
        spread = [g.op("Add", [s, g.op("Mul", [t, zero])]) for s in spread]
    last = g.const([-1], np.int64)
    return g.op("Concat", [g.op("Unsqueeze", [s, last]) for s in spread], axis=-1)


@converts(
    "aten.linalg_vector_norm.default",
    cases=[
        call(lambda m, x: torch.linalg.vector_norm(x, dim=-1, keepdim=True) + torch.linalg.vector_norm(x), (2, 3)),
        call(
            lambda m, x: torch.linalg.vector_norm(x, 1, (0, 2)) + torch.linalg.vector_norm(x, float("inf")), (2, 3, 4)
        ),
        call(lambda m, x: torch.linalg.vector_norm(x, 3, 1), (2, 5)),
    ],
)
def vector_norm(g: Graph, node: Any) -> str:
    x, order, dim, keepdim, dtype = _args(g, node, 5)
    if dtype is not None:
        x = g.op("Cast", [x], to=onnx_type(dtype, "vector_norm's dtype"))
    axes = list(range(_rank(node.args[0]))) if dim in (None, []) else [int(d) for d in _listed(dim)]
    reduce = dict(keepdims=int(bool(keepdim)))
    order = float(order)
    if order == 2:
        return g.op("ReduceL2", [x, g.ints(axes)], **reduce)
    if order == 1:
        return g.op("ReduceL1", [x, g.ints(axes)], **reduce)
    if order in (float("inf"), float("-inf")):
        return g.op("ReduceMax" if order > 0 else "ReduceMin", [g.op("Abs", [x]), g.ints(axes)], **reduce)
    if order == 0:
        nonzero = g.op("Cast", [g.op("Not", [g.op("Equal", [x, g.const(0.0, _dtype(node.args[0]))])])], to=1)
        return g.op("ReduceSum", [nonzero, g.ints(axes)], **reduce)
    p = g.const(order, np.float32)
    summed = g.op("ReduceSum", [g.op("Pow", [g.op("Abs", [x]), p]), g.ints(axes)], **reduce)
    return g.op("Pow", [summed, g.const(1.0 / order, np.float32)])


def _listed(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else [value]


@converts(
    "aten.unfold.default",
    cases=[call(lambda m, x: x.unfold(1, 3, 2), (2, 8, 3)), call(lambda m, x: x.unfold(-1, 4, 4), (2, 8))],
)
def unfold(g: Graph, node: Any) -> str:
    """Windows of `size` every `step` along `dim`: a Gather by the windows' positions (n x size)
    there, the window axis moved last."""
    x, dim, size, step = _args(g, node, 4)
    shape = list(_val(node.args[0]).shape)
    rank = len(shape)
    dim = int(dim) % max(rank, 1)
    if not isinstance(shape[dim], int):
        raise TorchImportError(f"unfold along a symbolic dim ({shape[dim]}) is not supported")
    count = (shape[dim] - int(size)) // int(step) + 1
    positions = np.arange(count)[:, None] * int(step) + np.arange(int(size))[None, :]
    gathered = g.op("Gather", [x, g.const(positions, np.int64)], axis=dim)
    perm = [*range(dim + 1), *range(dim + 2, rank + 1), dim + 1]
    return g.op("Transpose", [gathered], perm=perm)


SIZE_ARITHMETIC = {"mul": "Mul", "sub": "Sub"}
"""Python arithmetic on symbolic sizes (operator.mul, operator.sub in a graph exported with dynamic
dims, as an attention's head split writes them); sizes are one-element int64 tensors here."""


@converts(
    *SIZE_ARITHMETIC,
    cases=[
        call(
            lambda m, x: x.reshape(x.shape[0] * x.shape[1], -1)[: x.shape[0] * x.shape[1] - 1].sum(0),
            (3, 4, 2),
            dynamic=[(0, 0), (0, 1)],
        )
    ],
)
def size_arithmetic(g: Graph, node: Any) -> Any:
    a, b = _args(g, node, 2)
    if not isinstance(a, str) and not isinstance(b, str):
        return a * b if _key(node) == "mul" else a - b
    return g.op(SIZE_ARITHMETIC[_key(node)], [g.ints([a]), g.ints([b])])


@converts(
    "aten.scalar_tensor.default",
    cases=[call(lambda m, x: x * torch.ops.aten.scalar_tensor.default(2.5), (2, 3))],
)
def scalar_tensor(g: Graph, node: Any) -> str:
    (value,) = _args(g, node, 1)
    return g.const(value, _dtype(node))
