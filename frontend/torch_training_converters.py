"""The converters of the ATen overloads training graphs hold (AOT autograd's forward and backward
graphs): the backward operators of convolution, max pooling and attention, BatchNorm in training
mode, index_put (an embedding's backward) and the alias functionalization leaves. A rule table
beside frontend/torch_converters.py, read through the same `converter_table()`.

Where GE has a backward operator the converter writes it as a node of GE's own domain
(frontend/onnx_ge_domain.py): convolution_backward is GE's Conv2DBackpropInput / Filter on the Cube,
max_pool2d_with_indices_backward GE's MaxPoolGrad. The attention's backward is written out in
matmuls and a softmax, recomputing the probabilities from the query and key.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ge.frontend.onnx_ge_domain import GE_DOMAIN
from ge.frontend.torch_converters import _args, _pair, _rank, _val, call
from ge.frontend.torch_fx import Graph, TorchImportError, converts

aten = torch.ops.aten


def _static_shape(node: Any, what: str) -> list[int]:
    shape = list(_val(node).shape)
    if not all(isinstance(d, int) for d in shape):
        raise TorchImportError(f"{what} of symbolic shape {shape}: only static shapes are supported")
    return shape


def _flat(*tensors: torch.Tensor) -> torch.Tensor:
    """A case's several results as one tensor (a case returns one)."""
    return torch.cat([t.flatten() for t in tensors if t is not None])


@converts(
    "aten.alias.default",
    cases=[call(lambda m, x: aten.alias(x) + x, (2, 3))],
)
def alias(g: Graph, node: Any) -> Any:
    return _args(g, node, 1)[0]


@converts(
    "aten.convolution_backward.default",
    cases=[
        call(
            lambda m, dy, x, w: _flat(
                *aten.convolution_backward(dy, x, w, [4], [2, 2], [1, 1], [1, 1], False, [0, 0], 1, [True] * 3)
            ),
            (2, 4, 4, 4),
            (2, 3, 8, 8),
            (4, 3, 3, 3),
        ),
        call(
            lambda m, dy, x, w: _flat(
                *aten.convolution_backward(
                    dy, x, w, None, [1, 1], [0, 0], [2, 2], False, [0, 0], 2, [True, True, False]
                )
            ),
            (1, 4, 5, 5),
            (1, 4, 9, 9),
            (4, 2, 3, 3),
        ),
    ],
)
def convolution_backward(g: Graph, node: Any) -> tuple:
    dy, x, w, _bias_sizes, stride, padding, dilation, transposed, _output_padding, groups, mask = _args(g, node, 11)
    if transposed:
        raise TorchImportError("the backward of a transposed convolution is not supported")
    n = _rank(node.args[2]) - 2
    window: dict[str, Any] = dict(
        strides=_pair(stride, n), pads=_pair(padding, n) * 2, dilations=_pair(dilation, n), group=int(groups)
    )
    dx = dw = db = None
    if mask[0]:
        shape = _static_shape(node.args[1], "the gradient of a convolution's input")
        dx = g.op("conv_backprop_input", [dy, w], domain=GE_DOMAIN, input_shape=shape, **window)
    if mask[1]:
        shape = _static_shape(node.args[2], "the gradient of a convolution's weight")
        dw = g.op("conv_backprop_filter", [x, dy], domain=GE_DOMAIN, filter_shape=shape, **window)
    if mask[2]:
        db = g.op("ReduceSum", [dy, g.ints([0, *range(2, n + 2)])], keepdims=0)
    return (dx, dw, db)


@converts(
    "aten.max_pool2d_with_indices_backward.default",
    cases=[
        call(
            lambda m, dy, x: aten.max_pool2d_with_indices_backward(
                dy, x, [3, 3], [2, 2], [1, 1], [1, 1], False, aten.max_pool2d_with_indices(x, [3, 3], [2, 2], [1, 1])[1]
            ),
            (1, 2, 4, 4),
            (1, 2, 8, 8),
        )
    ],
)
def max_pool_backward(g: Graph, node: Any) -> str:
    dy, x, kernel, stride, padding, dilation, ceil_mode, _indices = _args(g, node, 8)
    return g.op(
        "max_pool_grad",
        [x, dy],
        domain=GE_DOMAIN,
        kernel_shape=_pair(kernel),
        strides=_pair(stride or kernel),
        pads=_pair(padding) * 2,
        dilations=_pair(dilation),
        ceil_mode=int(bool(ceil_mode)),
    )


@converts(
    "aten._native_batch_norm_legit_functional.default",
    cases=[
        call(
            lambda m, x, w, b, rm, rv: _flat(
                *aten._native_batch_norm_legit_functional(x, w, b, rm, rv.abs() + 0.5, True, 0.1, 1e-5)
            ),
            (3, 4, 2, 5),
            (4,),
            (4,),
            (4,),
            (4,),
        )
    ],
)
def batch_norm_training(g: Graph, node: Any) -> tuple:
    """BatchNorm on the batch's statistics: the normalized x, the batch mean and 1/std (saved for the
    backward), and the running statistics moved by `momentum` (the variance unbiased, as PyTorch's)."""
    x, weight, bias, running_mean, running_var, training, momentum, eps = _args(g, node, 8)
    if not training:
        raise TorchImportError("_native_batch_norm_legit_functional with training=False is not supported")
    shape = _static_shape(node.args[0], "BatchNorm's input")
    rank = len(shape)
    axes = g.ints([0, *range(2, rank)])
    per_channel = g.ints([1, -1] + [1] * (rank - 2))
    mean = g.op("ReduceMean", [x, axes], keepdims=1)
    centred = g.op("Sub", [x, mean])
    var = g.op("ReduceMean", [g.op("Mul", [centred, centred]), axes], keepdims=1)
    rstd = g.op("Reciprocal", [g.op("Sqrt", [g.op("Add", [var, g.const(float(eps), np.float32)])])])
    y = g.op("Mul", [centred, rstd])
    if weight is not None:
        y = g.op("Mul", [y, g.op("Reshape", [weight, per_channel])])
    if bias is not None:
        y = g.op("Add", [y, g.op("Reshape", [bias, per_channel])])
    count = int(np.prod(shape)) // shape[1]
    channels = g.ints([-1])
    mean, var, rstd = (g.op("Reshape", [v, channels]) for v in (mean, var, rstd))
    keep, move = g.const(1.0 - float(momentum), np.float32), g.const(float(momentum), np.float32)
    unbiased = g.op("Mul", [var, g.const(count / max(count - 1, 1), np.float32)])
    new_mean = g.op("Add", [g.op("Mul", [running_mean, keep]), g.op("Mul", [mean, move])])
    new_var = g.op("Add", [g.op("Mul", [running_var, keep]), g.op("Mul", [unbiased, move])])
    return (y, mean, rstd, new_mean, new_var)


@converts(
    "aten.index_put.default",
    cases=[
        call(lambda m, x, v: aten.index_put(x, [torch.tensor([2, 0, 2])], v, True), (4, 3), (3, 3)),
        call(lambda m, x, v: aten.index_put(x, [torch.tensor([[1], [3]]), torch.tensor([0, 2])], v), (4, 3, 2), (2,)),
        call(lambda m, x, v: aten.index_put(x, [x[:, :, 0] > 0], v.sum()), (4, 3, 2), (2,)),
    ],
)
def index_put(g: Graph, node: Any) -> str:
    """x with the values at the indexed places (added to them with `accumulate`): ScatterND on the
    stacked index tensors, the values broadcast to the indexed shape."""
    from ge.frontend.torch_converters import stacked_indices

    x, indices, values, accumulate = _args(g, node, 4)
    given = [k for k, i in enumerate(indices) if i is not None]
    if len(given) == 1 and _val(node.args[1][given[0]]).dtype == torch.bool:
        return _put_by_mask(g, node, x, indices[given[0]], node.args[1][given[0]], values, accumulate)
    if given != list(range(len(given))):
        raise TorchImportError("index_put's index tensors must be on the leading dims, one after another")
    stacked = stacked_indices(g, [indices[k] for k in given])
    indexed = g.op("Shape", [g.op("GatherND", [x, stacked])])
    updates = g.op("Expand", [values, indexed])
    return g.op("ScatterND", [x, stacked, updates], reduction="add" if accumulate else "none")


def _put_by_mask(g: Graph, node: Any, x: str, mask: str, mask_node: Any, values: str, accumulate: bool) -> str:
    """`x[mask] = values` with values that broadcast to x (a fill): Where on the mask."""
    shape, put, picked = (tuple(_val(n).shape) for n in (node.args[0], node.args[2], mask_node))
    try:
        fills = torch.broadcast_shapes(put, shape) == shape
    except RuntimeError:
        fills = False
    if not fills:
        raise TorchImportError("index_put by a mask with one value per selected element: a shape known at run time")
    if len(picked) < len(shape):  # the mask covers the leading dims
        mask = g.op("Unsqueeze", [mask, g.ints(range(len(picked), len(shape)))])
    new = g.op("Add", [x, values]) if accumulate else g.op("Expand", [values, g.op("Shape", [x])])
    return g.op("Where", [mask, new, x])


@converts(
    "aten._scaled_dot_product_flash_attention_for_cpu_backward.default",
    cases=[
        call(
            lambda m, do, q, k, v: _flat(
                *aten._scaled_dot_product_flash_attention_for_cpu_backward(
                    do, q, k, v, *aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, True), 0.0, True
                )
            ),
            (1, 2, 3, 4),
            (1, 2, 3, 4),
            (1, 2, 5, 4),
            (1, 2, 5, 4),
        ),
        call(
            lambda m, do, q, k, v: _flat(
                *aten._scaled_dot_product_flash_attention_for_cpu_backward(
                    do,
                    q,
                    k,
                    v,
                    *aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, scale=0.3),
                    0.0,
                    False,
                    scale=0.3,
                )
            ),
            (2, 1, 3, 4),
            (2, 1, 3, 4),
            (2, 1, 3, 4),
            (2, 1, 3, 4),
        ),
    ],
)
def attention_backward(g: Graph, node: Any) -> tuple:
    """The gradients of softmax(q k^T scale + mask) v for q, k and v, the probabilities P recomputed:
    dV = P^T dO; dS = P (dO V^T - rowsum(dO O)); dQ = dS K scale; dK = dS^T Q scale."""
    do, q, k, v, out, _lse, dropout, causal, mask, scale = _args(g, node, 10)
    if dropout:
        raise TorchImportError(f"attention's backward with dropout {dropout} is not supported")
    query, key = _val(node.args[1]).shape, _val(node.args[2]).shape
    if query[1] != key[1]:
        raise TorchImportError("attention's backward with fewer key heads than query heads is not supported")
    scale = g.const(float(scale) if scale is not None else 1.0 / float(query[-1]) ** 0.5, np.float32)
    rank = len(query)
    swap = [*range(rank - 2), rank - 1, rank - 2]
    scores = g.op("Mul", [g.op("MatMul", [q, g.op("Transpose", [k], perm=swap)]), scale])
    if causal:
        length, source = _static_shape(node.args[1], "causal attention")[-2], _static_shape(node.args[2], "keys")[-2]
        allowed = g.const(np.tril(np.ones((length, source), bool)))
        scores = g.op("Where", [allowed, scores, g.const(-np.inf, np.float32)])
    if mask is not None:
        is_bool = _val(node.kwargs["attn_mask"]).dtype == torch.bool
        blocked = g.op("Where", [mask, scores, g.const(-np.inf, np.float32)]) if is_bool else None
        scores = blocked if is_bool else g.op("Add", [scores, mask])
    p = g.op("Softmax", [scores], axis=-1)
    dv = g.op("MatMul", [g.op("Transpose", [p], perm=swap), do])
    dp = g.op("MatMul", [do, g.op("Transpose", [v], perm=swap)])
    row = g.op("ReduceSum", [g.op("Mul", [do, out]), g.ints([-1])], keepdims=1)
    ds = g.op("Mul", [p, g.op("Sub", [dp, row])])
    dq = g.op("Mul", [g.op("MatMul", [ds, k]), scale])
    dk = g.op("Mul", [g.op("MatMul", [g.op("Transpose", [ds], perm=swap), q]), scale])
    return (dq, dk, dv)
