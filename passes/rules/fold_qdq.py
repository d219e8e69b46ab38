"""Rules of `fold-qdq`: a float Conv or MatMul between DequantizeLinear inputs and a
QuantizeLinear result becomes the integer op onnxruntime's QDQ transformer makes of it, and
DQ / Q pairs that mean nothing are removed.

    Q(MatMul(DQ(a), DQ(b)), ys, yz)         ->  QLinearMatMul(a, as, az, b, bs, bz, ys, yz)
    Q(Conv(DQ(x), DQ(w)[, B]), ys, yz)      ->  QLinearConv(x, xs, xz, w, ws, wz, ys, yz[, Bq])
    Q(Gemm(DQ(x), DQ(w)[, C]), ys, yz)      ->  Q(MatMulInteger(x, w, xz, wz)[ + Cq] * xs ws / ys, 1, yz)
    Q(op(DQ(q, s, z)), s, z)                ->  op(q)     (op `CopiesElements`: a reshape, a max pool)
    Q(DQ(q, s, z), s, z)                    ->  q

`Bq` is the int32 bias on the grid of `xs * ws` (per output channel when `ws` is): the int32
constant itself when B is a DequantizeLinear of one with that scale (what `quantize_static`
writes), else round(B / (xs * ws)) of a float constant B. The quantized values are those the DQ
ops read, so the integer op computes what the QDQ graph means up to the requantization's
rounding (one step of the result's grid). The DQ ops may have other users: those keep them; the
float product must have the Q as its only user.

The last two are exact (onnxruntime's DropQDQNodes and its Q/DQ cancellation): on one grid (type,
scale, zero point) Q(DQ(q)) = round((q - z) * s / s) + z is q, since the f32 product and quotient
are within a few ulps of q - z, far from a rounding boundary; and an op whose result elements are
copies of its operand's (by position, or by order: a max, monotone under a positive scale)
computes the same on the integers. quantize_static puts such pairs around every Reshape,
Transpose and MaxPool it quantizes.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import f32, i32
from xdsl.ir import SSAValue

from ge.ge_dialects import ge
from ge.ge_dialects.ge.base import describe, location_name
from ge.ge_dialects.ge.facts import CopiesElements
from ge.ge_dialects.ge.quantize import PRODUCT_TYPES, QuantizeError, scale_axis
from ge.ge_dialects.ge.types import numpy_dtype, shape_of, type_name
from ge.ge_dialects.ge.weights import constant_array
from ge.passes.rewrite import Builder, Check, Match, Op, Rule, copy_props
from ge.passes.tensor_values import tensor_type

_BIAS_RTOL = 1e-6
"""How close a bias DQ's scale must be to x_scale * w_scale (quantize_static rounds the product to f32)."""


def _dq(m: Match, name: str) -> ge.DequantizeLinearOp:
    return m.op_as(name, ge.DequantizeLinearOp)


def _zero_point(op: ge.DequantizeLinearOp | ge.QuantizeLinearOp) -> SSAValue | None:
    return op.x_zero_point if isinstance(op, ge.DequantizeLinearOp) else op.y_zero_point


def _scale(op: ge.DequantizeLinearOp | ge.QuantizeLinearOp) -> SSAValue:
    return op.x_scale if isinstance(op, ge.DequantizeLinearOp) else op.y_scale


def _quantized(op: ge.DequantizeLinearOp | ge.QuantizeLinearOp) -> SSAValue:
    """The integer side: what a DQ reads, what a Q makes."""
    return op.x if isinstance(op, ge.DequantizeLinearOp) else op.y


def _axis(op: ge.DequantizeLinearOp | ge.QuantizeLinearOp) -> int | None:
    """The axis the op's scale runs along, None for one scale (the verifier accepted the shapes)."""
    data = shape_of(tensor_type(_quantized(op)))
    try:
        return scale_axis(data, shape_of(tensor_type(_scale(op))), op.p("axis"), op.p("block_size"), "scale")
    except QuantizeError:  # pragma: no cover - the op's verifier refused these
        return None


def _why_not_linear(op: ge.DequantizeLinearOp | ge.QuantizeLinearOp, axes: tuple[int | None, ...]) -> str | None:
    """Why a DQ or Q cannot become an integer op's operand: its integer type, its float type,
    scale and zero point not constants, blocks, or a scale along another axis than `axes`."""
    what = describe(op)
    qtype = tensor_type(_quantized(op)).element_type
    if qtype not in PRODUCT_TYPES:
        return f"{what} is {type_name(qtype)}, not int8 or uint8"
    ftype = tensor_type(op.y if isinstance(op, ge.DequantizeLinearOp) else op.x).element_type
    if ftype != f32:
        return f"{what} dequantizes to {type_name(ftype)}, not f32"
    if constant_array(_scale(op)) is None:
        return f"the scale of {what} is not constant"
    zero = _zero_point(op)
    if zero is not None and constant_array(zero) is None:
        return f"the zero point of {what} is not constant"
    if op.p("block_size"):
        return f"{what} is blocked (block_size {op.p('block_size')})"
    if isinstance(op, ge.QuantizeLinearOp) and op.p("precision") not in (0, 1):
        return f"{what} divides in another type than f32 (precision {op.p('precision')})"
    if _axis(op) not in axes:
        return f"the scale of {what} is per axis {_axis(op)}, not per tensor" + (
            f" or per axis {axes[1]}" if len(axes) > 1 else ""
        )
    return None


def _zero_array(op: ge.DequantizeLinearOp | ge.QuantizeLinearOp) -> np.ndarray | None:
    """The zero point's values (a missing one is 0), None when not constant."""
    zero = _zero_point(op)
    if zero is None:
        return np.zeros(
            tuple(d or 1 for d in shape_of(tensor_type(_scale(op)))),
            numpy_dtype(tensor_type(_quantized(op)).element_type),
        )
    return constant_array(zero)


def _why_not_one_grid(dq: ge.DequantizeLinearOp, q: ge.QuantizeLinearOp) -> str | None:
    """Why Q(DQ(x)) is not x: the two differ in integer type, scale, zero point or axis (each
    already a per-tensor or per-axis 8-bit grid of constants, `_why_not_linear`)."""
    read, made = tensor_type(dq.x).element_type, tensor_type(q.y).element_type
    if read != made:
        return f"{describe(dq)} reads {type_name(read)}, {describe(q)} makes {type_name(made)}"
    dq_scale, q_scale = constant_array(dq.x_scale), constant_array(q.y_scale)
    assert dq_scale is not None and q_scale is not None  # _why_not_linear refused the others
    if _axis(dq) != _axis(q) or dq_scale.shape != q_scale.shape or not np.array_equal(dq_scale, q_scale):
        return f"{describe(dq)} and {describe(q)} have different scales"
    if not np.all(np.isfinite(dq_scale)) or np.any(np.abs(dq_scale) < np.finfo(np.float32).tiny):
        return f"the scale of {describe(dq)} is not a normal finite f32"
    dq_zero, q_zero = _zero_array(dq), _zero_array(q)
    assert dq_zero is not None and q_zero is not None
    if not np.array_equal(np.broadcast_to(dq_zero, dq_scale.shape), np.broadcast_to(q_zero, q_scale.shape)):
        return f"{describe(dq)} and {describe(q)} have different zero points"
    return None


def _why_not_cancel(m: Match) -> str | None:
    dq, q = _dq(m, "dq"), m.root_as(ge.QuantizeLinearOp)
    axes = (None, _axis(dq))
    for op in (dq, q):
        if (reason := _why_not_linear(op, axes)) is not None:
            return reason
    return _why_not_one_grid(dq, q)


def _why_not_drop(m: Match) -> str | None:
    """Why op(q) does not compute Q(op(DQ(q))): the pair is not one grid, the scale is per axis
    (the op moves elements across axes), not positive (a max picks by order), or the op's float
    result or another result has other users."""
    dq, q, op = _dq(m, "dq"), m.root_as(ge.QuantizeLinearOp), m.op("moved")
    if (reason := _why_not_alone(m, "moved")) is not None:
        return reason
    if len(op.results) != 1:
        return f"{describe(op)} has {len(op.results)} results"
    for quantize in (dq, q):
        if (reason := _why_not_linear(quantize, (None,))) is not None:
            return reason
    if (reason := _why_not_one_grid(dq, q)) is not None:
        return reason
    scale = constant_array(dq.x_scale)
    assert scale is not None
    if not np.all(scale > 0):
        return f"the scale of {describe(dq)} is not positive"
    return None


def _drop(m: Match, b: Builder) -> SSAValue:
    """The op again, on the integers the DQ reads."""
    op, dq = m.op("moved"), _dq(m, "dq")
    assert isinstance(op, ge.GeOp)
    operands = {name: getattr(op, name) for name, _ in op.get_irdl_definition().operands}
    operands = {name: dq.x if value is m["dq"] else value for name, value in operands.items() if value is not None}
    return b.op(type(op), operands, copy_props(op), num_results=1, name=location_name(op)).results[0]


def _why_not_alone(m: Match, product: str) -> str | None:
    """Why the float product cannot go: a user besides the Q (which would lose its input)."""
    other = next((u.operation for u in m[product].uses if u.operation is not m.root), None)
    if other is None:
        return None
    return f"{describe(m.op(product))} has a user outside the pattern ({describe(other)})"


def _why_not_matmul(m: Match) -> str | None:
    if (reason := _why_not_alone(m, "mm")) is not None:
        return reason
    b_rank = len(m.shape("b"))
    for op, axes in ((_dq(m, "ad"), (None,)), (_dq(m, "bd"), (None, b_rank - 1)), (m.root, (None,))):
        assert isinstance(op, ge.DequantizeLinearOp | ge.QuantizeLinearOp)
        if (reason := _why_not_linear(op, axes)) is not None:
            return reason
    return None


def _why_not_conv(m: Match) -> str | None:
    if (reason := _why_not_alone(m, "conv")) is not None:
        return reason
    for op, axes in ((_dq(m, "xd"), (None,)), (_dq(m, "wd"), (None, 0)), (m.root, (None,))):
        assert isinstance(op, ge.DequantizeLinearOp | ge.QuantizeLinearOp)
        if (reason := _why_not_linear(op, axes)) is not None:
            return reason
    conv = m.op_as("conv", ge.ConvOp)
    bias = _int32_bias(m) if conv.B is not None else None
    return bias if isinstance(bias, str) else None


def _why_not_gemm(m: Match) -> str | None:
    """Why Q(Gemm(DQ(a), DQ(w), C)) is not MatMulInteger(a, w^T) + C with its requantization: the
    gemm scales or transposes its activations (alpha = beta = 1 and transA = 0 are needed;
    a weight constant), or the Conv conditions (one grid per tensor, w per output channel, the
    bias on x_scale * w_scale)."""
    if (reason := _why_not_alone(m, "gemm")) is not None:
        return reason
    gemm = m.op_as("gemm", ge.GemmOp)
    props = {"alpha": 1.0, "beta": 1.0, "transA": 0}
    if any(gemm.p(k) != v for k, v in props.items()):
        shown = ", ".join(f"{k} = {gemm.p(k)}" for k in props)
        return f"{describe(gemm)} has {shown}, not a plain product (alpha = beta = 1, transA = 0)"
    if constant_array(_dq(m, "wd").x) is None:
        return f"the weight of {describe(gemm)} is not a constant"
    for op, axes in ((_dq(m, "xd"), (None,)), (_dq(m, "wd"), (None, _channel_axis(m))), (m.root, (None,))):
        assert isinstance(op, ge.DequantizeLinearOp | ge.QuantizeLinearOp)
        if (reason := _why_not_linear(op, axes)) is not None:
            return reason
    bias = _int32_bias(m) if gemm.C is not None else None
    return bias if isinstance(bias, str) else None


def _bias_scale(m: Match) -> np.ndarray:
    """x_scale * w_scale in f32, one per output channel."""
    xs = constant_array(_dq(m, "xd").x_scale)
    ws = constant_array(_dq(m, "wd").x_scale)
    assert xs is not None and ws is not None  # _why_not_linear refused the others
    channels = m.shape("w")[_channel_axis(m)]
    assert channels is not None  # _int32_bias refused the others
    return np.broadcast_to(xs.astype(np.float32).reshape(-1) * ws.astype(np.float32).reshape(-1), (channels,))


def _channel_axis(m: Match) -> int:
    """The weight's output-channel axis: a conv's 0, a gemm's 0 with transB, else 1."""
    return 1 if "gemm" in m and not m.op_as("gemm", ge.GemmOp).p("transB") else 0


def _bias(m: Match) -> SSAValue | None:
    """The float product's bias operand: a conv's B, a gemm's C."""
    return m.op_as("conv", ge.ConvOp).B if "conv" in m else m.op_as("gemm", ge.GemmOp).C


def _int32_bias(m: Match) -> np.ndarray | str:
    """The bias on the grid of x_scale * w_scale as int32, one per output channel, or why there is
    none."""
    bias_value = _bias(m)
    assert bias_value is not None
    if m.shape("w")[_channel_axis(m)] is None:
        return "the output channels are not static"
    scale = _bias_scale(m)
    owner = bias_value.owner
    if isinstance(owner, ge.DequantizeLinearOp):
        q = constant_array(owner.x)
        s = constant_array(owner.x_scale)
        if tensor_type(owner.x).element_type != i32 or q is None or s is None:
            return f"the bias {describe(owner)} is not a DequantizeLinear of an int32 constant with a constant scale"
        if owner.p("block_size") or not np.allclose(
            np.broadcast_to(s.reshape(-1), scale.shape), scale, rtol=_BIAS_RTOL, atol=0
        ):
            return f"the scale of the bias {describe(owner)} is not x_scale * w_scale"
        if q.size not in (1, scale.size):
            return f"the bias {describe(owner)} has {q.size} values, not one per output channel ({scale.size})"
        return np.broadcast_to(q.reshape(-1), scale.shape).astype(np.int32)
    bias = constant_array(bias_value)
    if bias is None:
        return "the bias is neither a constant nor a DequantizeLinear of one"
    if bias.size not in (1, scale.size):
        return f"the bias has {bias.size} values, not one per output channel ({scale.size})"
    q = np.round(np.broadcast_to(bias.astype(np.float64).reshape(-1), scale.shape) / scale.astype(np.float64))
    if np.abs(q).max(initial=0) > np.iinfo(np.int32).max:
        return "the bias does not fit int32 on the grid of x_scale * w_scale"
    return q.astype(np.int32)


def _linear_operands(b: Builder, op: ge.DequantizeLinearOp | ge.QuantizeLinearOp, prefix: str) -> dict[str, SSAValue]:
    """The quantized value, scale and zero point of a DQ or Q as an integer op's operands; a
    missing zero point becomes a 0 of the quantized type, shaped like the scale."""
    zero = _zero_point(op)
    if zero is None:
        scale_type = tensor_type(_scale(op))
        qtype = numpy_dtype(tensor_type(_quantized(op)).element_type)
        zeros = np.zeros(tuple(d or 1 for d in shape_of(scale_type)), qtype)
        zero = b.const(zeros, f"{location_name(op) or prefix}.zero_point", op, "zero_point")
    operands = {f"{prefix}_scale": _scale(op), f"{prefix}_zero_point": zero}
    if isinstance(op, ge.DequantizeLinearOp):
        operands[prefix] = op.x
    return operands


def _fold_matmul(m: Match, b: Builder) -> SSAValue:
    q = m.root_as(ge.QuantizeLinearOp)
    operands = {
        **_linear_operands(b, _dq(m, "ad"), "a"),
        **_linear_operands(b, _dq(m, "bd"), "b"),
        **_linear_operands(b, q, "y"),
    }
    return b.op(ge.QLinearMatMulOp, operands, name=location_name(m.op("mm"))).results[0]


def _fold_conv(m: Match, b: Builder) -> SSAValue:
    q, conv = m.root_as(ge.QuantizeLinearOp), m.op_as("conv", ge.ConvOp)
    operands = {
        **_linear_operands(b, _dq(m, "xd"), "x"),
        **_linear_operands(b, _dq(m, "wd"), "w"),
        **_linear_operands(b, q, "y"),
    }
    if conv.B is not None:
        bias = _int32_bias(m)
        assert isinstance(bias, np.ndarray)  # _why_not_conv refused the others
        name = location_name(conv) or "conv"
        operands["B"] = b.const(bias, f"{name}.bias_quantized", conv.B, "bias_quantized")
    return b.op(ge.QLinearConvOp, operands, copy_props(conv), name=location_name(conv)).results[0]


def _multiplier(m: Match) -> np.ndarray:
    """x_scale * w_scale / y_scale in f32 per output channel, as QLinearConv requantizes."""
    y_scale = constant_array(m.root_as(ge.QuantizeLinearOp).y_scale)
    assert y_scale is not None  # _why_not_linear refused the others
    return (_bias_scale(m) / y_scale.astype(np.float32).reshape(())).astype(np.float32)


def _fold_gemm(m: Match, b: Builder) -> SSAValue:
    """MatMulInteger(a, w) on the Cube (w transposed at compile time under transB), the int32
    bias, and the requantization the integer ops make: acc as f32 times x_scale * w_scale /
    y_scale (in f32), rounded and shifted by the zero point (a QuantizeLinear of scale 1)."""
    q, gemm = m.root_as(ge.QuantizeLinearOp), m.op_as("gemm", ge.GemmOp)
    xd, wd = _dq(m, "xd"), _dq(m, "wd")
    name = location_name(gemm) or "gemm"
    weight = constant_array(wd.x)
    assert weight is not None  # _why_not_gemm refused the others
    x, w = _linear_operands(b, xd, "x"), _linear_operands(b, wd, "w")
    if gemm.p("transB"):
        weight_kn = b.const(np.ascontiguousarray(weight.T), f"{name}.weight_transposed", wd.x, "weight_transposed")
    else:
        weight_kn = wd.x
    operands = {"A": xd.x, "B": weight_kn, "a_zero_point": x["x_zero_point"], "b_zero_point": w["w_zero_point"]}
    acc = b.op(ge.MatMulIntegerOp, operands, name=name).results[0]
    if gemm.C is not None:
        bias = _int32_bias(m)
        assert isinstance(bias, np.ndarray)
        quantized_bias = b.const(bias, f"{name}.bias_quantized", gemm.C, "bias_quantized")
        acc = b.op(ge.AddOp, {"a": acc, "b": quantized_bias}, name=f"{name}/bias").results[0]
    real = b.op(ge.CastOp, {"input": acc}, {"to": 1}, name=f"{name}/requantize").results[0]
    multiplier = b.const(_multiplier(m), f"{name}.multiplier")
    scaled = b.op(ge.MulOp, {"a": real, "b": multiplier}, name=f"{name}/requantize").results[0]
    one = b.const(np.array(1.0, np.float32), f"{name}.unit_scale")
    y = _linear_operands(b, q, "y")
    return b.op(ge.QuantizeLinearOp, {"x": scaled, "y_scale": one, "y_zero_point": y["y_zero_point"]}).results[0]


def _dequantized(value: str, name: str) -> Op:
    return Op(ge.DequantizeLinearOp, value, name=name)


COPYING = tuple(op for op in ge.ALL_OPS if op.has_trait(CopiesElements))
"""The ops a per-tensor Q / DQ pair passes through (their `CopiesElements` trait)."""


def _quantized_product(name: str, cls: type[ge.GeOp], product: str, factors: tuple[str, str], build, why_not) -> Rule:
    """Q(product(DQ(a), DQ(b))) folded by `build`, refused by `why_not`. A DQ with other users
    stays for them (not private); `_why_not_alone` checks that the product has none."""
    a, b = factors
    pattern = Op(ge.QuantizeLinearOp, Op(cls, _dequantized(a, f"{a}d"), _dequantized(b, f"{b}d"), name=product))
    return Rule(name, pattern, build, rejects=[Check(why_not)], private=False)


RULES: list[Rule] = [
    _quantized_product("qdq-matmul", ge.MatMulOp, "mm", ("a", "b"), _fold_matmul, _why_not_matmul),
    _quantized_product("qdq-conv", ge.ConvOp, "conv", ("x", "w"), _fold_conv, _why_not_conv),
    _quantized_product("qdq-gemm", ge.GemmOp, "gemm", ("x", "w"), _fold_gemm, _why_not_gemm),
    Rule(
        "qdq-drop",
        Op(ge.QuantizeLinearOp, Op(COPYING, Op(ge.DequantizeLinearOp, "q", name="dq"), name="moved")),
        _drop,
        rejects=[Check(_why_not_drop)],
        private=False,  # the DQ's other users keep it; _why_not_drop checks the op's
    ),
    Rule(
        "qdq-cancel",
        Op(ge.QuantizeLinearOp, Op(ge.DequantizeLinearOp, "q", name="dq")),
        lambda m, b: m["q"],
        rejects=[Check(_why_not_cancel)],
        private=False,
    ),
]
