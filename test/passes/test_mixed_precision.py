"""mixed-precision on the reference models, the op lists, cancel-casts and the low-precision
kernels.

Numerics: each model runs in the interpreter before and after the pass on the same inputs; the
error is rel_err = max|ref - got| / max|ref| (bench/precision_error.py). The reducing modes must stay
under a tolerance per mode (a margin of about 3x over the error measured on the four models, seed 0);
force_fp32 and must_keep_origin_dtype must leave an f32 model bit-identical.

    python test/passes/test_mixed_precision.py     # prints the error table
"""

from __future__ import annotations

import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import ModuleOp, bf16, f16, f32, f64, i1, i8, i16, i32, i64
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.precision_error import MODEL_NAMES, Loaded, convert, error, main
from ge.ge_dialects import ge
from ge.ge_dialects.ge import ALL_OPS, GE
from ge.ge_dialects.ge.facts import Engine
from ge.ge_dialects.ge.types import numpy_dtype, ui8, ui16, ui32
from ge.ge_dialects.ge.weights import weights_of
from ge.interpreter.runner import run
from ge.passes import remarks
from ge.passes.cancel_casts import cancel_casts, composable, is_exact
from ge.passes.mixed_precision import (
    DATA_OPERANDS,
    MODES,
    MixedPrecisionPass,
    load_lists,
    saturate,
)

#: Upper bounds of rel_err per mode. Measured (seed 0): force_fp16 6.2e-4 .. 2.3e-3 (BERT),
#: allow_mix_precision 6.2e-4 .. 1.1e-3, allow_mix_precision_bf16 5.2e-3 .. 7.6e-3.
TOLERANCE = {
    "force_fp16": 7e-3,
    "allow_mix_precision": 4e-3,
    "allow_mix_precision_bf16": 2.5e-2,
}


@pytest.fixture(scope="module")
def loaded(references):
    """The conversions of this module's tests, by model and mode, and the session's models."""
    return {"references": references}


def _model(loaded, name) -> Loaded:
    """`name` at full size (the error budget is the full depth's), from the session's cache."""
    references = loaded["references"]
    return Loaded(
        name, references.module(name, "full"), references.model(name, "full")[1], references.outputs(name, "full")
    )


def _converted(loaded, name, mode):
    """(module after the pass, remarks, outputs), computed once per model and mode."""
    key = (name, mode)
    if key not in loaded:
        model = _model(loaded, name)
        converted, found = convert(model.module, mode)
        loaded[key] = converted, found, run(converted, model.inputs)
    return loaded[key]


def _text(module: ModuleOp) -> str:
    from io import StringIO

    out = StringIO()
    Printer(stream=out, print_debuginfo=True).print_op(module)
    return out.getvalue()


def _parse(text: str) -> ModuleOp:
    ctx = Context()
    for dialect in (builtin.Builtin, func.Func, GE):
        ctx.load_dialect(dialect)
    module = Parser(ctx, text).parse_module()
    module.verify()
    return module


def _apply(module: ModuleOp, **options) -> list:
    with remarks.collected() as found:
        MixedPrecisionPass(**options).apply(Context(), module)
    module.verify()
    return found


# -- the models --------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", list(TOLERANCE))
@pytest.mark.parametrize("name", list(MODEL_NAMES))
def test_model_error_within_tolerance(loaded, name, mode):
    model = _model(loaded, name)
    _, found, got = _converted(loaded, name, mode)
    rel, _, _ = error(model.reference, got)
    assert 0 < rel <= TOLERANCE[mode], f"{name} {mode}: rel_err {rel:.3g}"
    for key, value in got.items():  # outputs keep their f32 type
        assert value.dtype == model.reference[key].dtype
    assert any(r.kind == "applied" for r in found)


@pytest.mark.parametrize("mode", ["force_fp32", "must_keep_origin_dtype"])
@pytest.mark.parametrize("name", MODEL_NAMES)
def test_exact_modes_are_bit_equal(references, name, mode):
    """On the small models: leaving every op alone is structural (the error budget is the full
    models', above)."""
    module, inputs = references.module(name), references.model(name)[1]
    converted, found = convert(module, mode)
    assert _text(converted) == _text(module)
    got, reference = run(converted, inputs), run(module, inputs)
    for key, ref in reference.items():
        assert got[key].dtype == ref.dtype and got[key].tobytes() == ref.tobytes()
    assert not [r for r in found if r.kind == "applied"]


def test_bert_mix_keeps_layer_norm_and_residuals_f32(loaded):
    """In BERT the residual adds mix an f16 projection with the f32 stream: they promote to f32,
    so every layer norm stays f32, while every matmul computes in f16."""
    converted, found, _ = _converted(loaded, "bert_base", "allow_mix_precision")
    types = {op.name: set() for op in converted.walk()}
    for op in converted.walk():
        if op.results and hasattr(op.results[0].type, "element_type"):
            types[op.name].add(op.results[0].type.element_type)
    assert types["ge.matmul"] == {f16}
    assert types["ge.layer_norm"] == {f32}
    assert {r.rule for r in found if r.nodes[0].endswith("LayerNormalization")} == {"gray-list"}


def test_weights_are_converted_at_compile_time(loaded):
    """force_fp16 converts the weight constants once, into new sidecar weights; no ge.cast reads a
    constant and the f32 originals are no longer referenced."""
    converted, _, _ = _converted(loaded, "gpt2", "force_fp16")
    added = weights_of(converted).added
    assert added and all(k.endswith(".f16") and v.dtype == np.float16 for k, v in added.items())
    consts = [op for op in converted.walk() if op.name == "ge.constant"]
    assert all(op.output.type.element_type != f32 for op in consts if op.weight_key)
    casts = [op for op in converted.walk() if op.name == "ge.cast"]
    assert not [c for c in casts if c.input.owner in consts]


def test_every_float_op_gets_one_remark(loaded):
    module = _model(loaded, "gpt2").module
    _, found, _ = _converted(loaded, "gpt2", "allow_mix_precision")
    float_ops = [
        op
        for op in module.walk()
        if type(op) in DATA_OPERANDS and any(getattr(v.type, "element_type", None) == f32 for v in op.operands)
    ]
    mine = [r for r in found if r.pass_name == "mixed-precision"]
    assert len(mine) == len(float_ops)
    assert {r.rule for r in mine} == {"white-list", "black-list", "gray-list"}


DIALECT_TESTS = Path(__file__).resolve().parents[1] / "ge_dialects" / "ge"


@pytest.mark.parametrize("path", sorted(p.name for p in DIALECT_TESTS.glob("*.mlir") if "invalid" not in p.name))
def test_every_mode_keeps_dialect_tests_valid(path):
    """Every op of the dialect's round-trip tests (all ops, all operand forms, f16/f64/int
    variants) comes out of every mode verified, with the signature unchanged."""
    for chunk in (DIALECT_TESTS / path).read_text().split("// -----"):
        if "func.func" not in chunk:
            continue
        for mode in MODES:
            module = _parse(chunk)
            before = [op.function_type for op in module.walk() if isinstance(op, func.FuncOp)]
            _apply(module, mode=mode)
            assert [op.function_type for op in module.walk() if isinstance(op, func.FuncOp)] == before


# -- options and lists -------------------------------------------------------------------------

SMALL = """
func.func @main(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %e = ge.constant dense<2.0> : tensor<f32>
  %0 = ge.matmul %x, %x : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32> loc("/mm")
  %1 = ge.pow %0, %e : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32> loc("/pow")
  %2 = ge.tanh %1 : (tensor<2x2xf32>) -> tensor<2x2xf32> loc("/tanh")
  func.return %2 : tensor<2x2xf32>
}
"""


def _types(module: ModuleOp) -> dict[str, str]:
    """The result element type of each named op the graph had (the casts the pass inserts, named
    after the values they convert, left out)."""
    out = {}
    for op in module.walk():
        loc = getattr(op.location, "desc", None)
        if loc is not None and op.results and op.name != "ge.cast":
            out[loc.data] = str(op.results[0].type.element_type)
    return out


@pytest.mark.parametrize("bad", ["fp8", "FORCE_FP16", ""])
def test_unknown_mode_is_one_line_error(bad):
    with pytest.raises(DiagnosticException) as e:
        MixedPrecisionPass(mode=bad)
    message = str(e.value)
    assert "\n" not in message and f"'{bad}'" in message
    assert all(mode in message for mode in MODES)


def test_precision_mode_alias():
    assert _types(_apply(m := _parse(SMALL), precision_mode="force_fp16") and m) == _types(
        _apply(n := _parse(SMALL), mode="force_fp16") and n
    )
    with pytest.raises(DiagnosticException, match="disagree"):
        MixedPrecisionPass(mode="force_fp32", precision_mode="force_fp16")


def test_every_op_declares_its_list_and_its_data_operands():
    """Each op's PRECISION is a list; it is keep exactly when the op has no data operands, and
    every data operand it names is one of its operands."""
    lists = load_lists()
    assert set(lists.kind) == set(ALL_OPS)
    for op, kind in lists.kind.items():
        assert kind in ("white", "black", "gray", "keep"), op.name
        assert (kind == "keep") == (op not in DATA_OPERANDS), op.name
        operands = {name for name, _ in op.get_irdl_definition().operands}
        assert set(op.DATA_OPERANDS) <= operands, op.name
    assert lists.cube <= {op for op, k in lists.kind.items() if k == "white"}


def test_default_white_and_black_lists_are_ges_policy():
    """GE's precision_reduce flags (true = white, false = black) as the ops declare them."""
    lists = load_lists()

    def listed(kind):
        return {op.name.removeprefix("ge.") for op, k in lists.kind.items() if k == kind}

    assert listed("white") == {
        "conv", "conv_transpose", "conv_backprop_input", "conv_backprop_filter", "matmul", "gemm", "max_pool",
        "attention", "einsum", "deform_conv", "lstm", "lstm_grad",
    }  # fmt: skip
    assert listed("black") == {
        "pow", "gather_grad", "reduce_mean", "reduce_sum", "mod", "log", "softmax_cross_entropy_loss",
        "nll_loss", "softmax_cross_entropy_loss_grad", "nll_loss_grad", "scatter_elements", "scatter_nd",
        "reduce_prod", "cum_sum", "cum_prod",
    }  # fmt: skip
    assert {op.name for op in lists.fp16_only} == {"ge.avg_pool"}


def test_default_cube_set_is_the_engine_trait():
    """The precision pass's Cube ops are the ops whose RunsOn trait uses the Cube, not a list of its own."""
    assert {op.name for op in load_lists().cube} == {
        "ge.conv",
        "ge.matmul",
        "ge.gemm",
        "ge.attention",
        "ge.conv_backprop_input",
        "ge.conv_backprop_filter",
        "ge.einsum",
        "ge.conv_transpose",
        "ge.deform_conv",
        "ge.lstm",
        "ge.lstm_grad",
    }


def test_cube_set_follows_the_trait(monkeypatch):
    """Mutation: an op whose engine trait says Vector leaves the default cube set."""
    monkeypatch.setattr(ge.ConvOp, "engine_class", classmethod(lambda cls: Engine.VECTOR))
    assert ge.ConvOp not in load_lists().cube


def test_user_list_moves_ops(tmp_path):
    module = _parse(SMALL)
    _apply(module)
    assert _types(module) == {"/mm": "f16", "/pow": "f32", "/tanh": "f32"}
    user = tmp_path / "lists.toml"
    user.write_text('white = ["pow"]\nblack = ["ge.matmul"]\n')
    module = _parse(SMALL)
    found = _apply(module, lists=str(user))
    assert _types(module) == {"/mm": "f32", "/pow": "f16", "/tanh": "f16"}
    assert [(r.rule, r.kind) for r in found] == [
        ("black-list", "rejected"),
        ("white-list", "applied"),
        ("gray-list", "applied"),
    ]


def test_user_list_replaces_device_sets(tmp_path):
    user = tmp_path / "lists.toml"
    user.write_text('fp16_only = ["ge.tanh"]\ncube = []\n')
    module = _parse(SMALL)
    _apply(module, mode="allow_fp32_to_fp16", lists=str(user))
    assert _types(module) == {"/mm": "f32", "/pow": "f32", "/tanh": "f16"}


@pytest.mark.parametrize(
    "content, message",
    [
        ('white = ["ge.nope"]', "'ge.nope' in 'white' is not a ge op"),
        ('whit = ["ge.add"]', "unknown key 'whit'"),
        ('white = ["ge.add"]\nblack = ["add"]', "ge.add is in both 'white' and 'black'"),
        ('white = "ge.add"', "'white' must be a list of op names"),
        ("white = [", "op lists"),
    ],
)
def test_bad_user_lists(tmp_path, content, message):
    user = tmp_path / "lists.toml"
    user.write_text(content)
    with pytest.raises(DiagnosticException, match=message.replace("[", r"\[").replace("(", r"\(")) as e:
        _apply(_parse(SMALL), lists=str(user))
    assert "\n" not in str(e.value)


def test_missing_user_list():
    with pytest.raises(DiagnosticException, match="cannot read op lists"):
        _apply(_parse(SMALL), lists="/no/such/lists.toml")


def test_saturate():
    a = np.array([1.5, -3.4e38, 7e4, np.inf, -np.inf, np.nan], np.float32)
    h = saturate(a, f16)
    assert h.dtype == np.float16
    assert h[:3].tolist() == [1.5, -65504.0, 65504.0]
    assert np.isposinf(h[3]) and np.isneginf(h[4]) and np.isnan(h[5])
    b = saturate(a, bf16)
    assert b.dtype == np.dtype(ml_dtypes.bfloat16) and np.isfinite(b[1]) and float(b[1]) < -3e38
    assert saturate(np.array([1, 2], np.int64), f16).tolist() == [1.0, 2.0]


# -- cancel-casts ------------------------------------------------------------------------------

TYPES = [f16, bf16, f32, f64, i8, i16, i32, i64, ui8, ui16, ui32, i1]


def _samples(t, rng):
    dt = numpy_dtype(t)
    if t == i1:
        return np.array([True, False])
    if dt.kind in "iu":
        info = np.iinfo(dt)
        edges = [info.min, info.max, 0, 1, -1, 2048, 65504, 65505, 2**24 + 1, 2**53 + 1]
        edges = np.array([e for e in edges if info.min <= e <= info.max], dtype=dt)
        return np.concatenate([edges, rng.integers(info.min, info.max, 200, dtype=dt, endpoint=True)])
    wide = np.concatenate(
        [
            rng.standard_normal(200) * 10.0 ** rng.integers(-8, 9, 200),
            [0.0, -0.0, 65504, 65520, 1e38, -1e38, 3.4e38, np.inf, -np.inf, np.nan],
        ]
    )
    with np.errstate(over="ignore"):
        return wide.astype(dt)


def _cast(x, t):
    with np.errstate(over="ignore", invalid="ignore"):
        return x.astype(numpy_dtype(t))


def test_composable_rule_is_sound():
    """Whenever compose applies, cast(cast(x: a -> b): b -> c) == cast(x: a -> c) on edge and random
    values of a (float -> int excluded: C leaves out-of-range conversions undefined)."""
    rng = np.random.default_rng(0)
    for a in TYPES:
        x = _samples(a, rng)
        for b in TYPES:
            for c in TYPES:
                if not composable(a, b, c) or (numpy_dtype(c).kind in "iub" and numpy_dtype(b).kind == "f"):
                    continue
                two, one = _cast(_cast(x, b), c), _cast(x, c)
                assert np.array_equal(two.astype(np.float64), one.astype(np.float64), equal_nan=True), (a, b, c)


def test_exact_casts_round_trip():
    rng = np.random.default_rng(1)
    for a in TYPES:
        x = _samples(a, rng)
        for b in TYPES:
            if is_exact(a, b):
                back = _cast(_cast(x, b), a)
                assert np.array_equal(back.astype(np.float64), x.astype(np.float64), equal_nan=True), (a, b)


CHAIN = """
func.func @main(%x: tensor<4xf32>, %i: tensor<4xi64>, %h: tensor<4xf16>) -> (tensor<4xf32>, tensor<4xi1>, tensor<4xf16>, tensor<4xf16>, tensor<4xf32>) {
  %0 = ge.cast %x {to = 10 : i64} : (tensor<4xf32>) -> tensor<4xf16>
  %1 = ge.cast %0 {to = 1 : i64} : (tensor<4xf16>) -> tensor<4xf32>
  %2 = ge.cast %x {to = 9 : i64} : (tensor<4xf32>) -> tensor<4xi1>
  %3 = ge.cast %2 {to = 1 : i64} : (tensor<4xi1>) -> tensor<4xf32>
  %4 = ge.cast %3 {to = 9 : i64} : (tensor<4xf32>) -> tensor<4xi1>
  %5 = ge.cast %i {to = 1 : i64} : (tensor<4xi64>) -> tensor<4xf32>
  %6 = ge.cast %5 {to = 10 : i64} : (tensor<4xf32>) -> tensor<4xf16>
  %7 = ge.cast %h {to = 1 : i64} : (tensor<4xf16>) -> tensor<4xf32>
  %8 = ge.cast %7 {to = 16 : i64} : (tensor<4xf32>) -> tensor<4xbf16>
  %9 = ge.cast %8 {to = 1 : i64} : (tensor<4xbf16>) -> tensor<4xf32>
  %10 = ge.cast %7 {to = 10 : i64} : (tensor<4xf32>) -> tensor<4xf16>
  func.return %1, %4, %6, %10, %9 : tensor<4xf32>, tensor<4xi1>, tensor<4xf16>, tensor<4xf16>, tensor<4xf32>
}
"""


def test_cancel_casts_rules():
    module = _parse(CHAIN)
    with remarks.collected() as found:
        cancel_casts(module)
    module.verify()
    ret = next(op for op in module.walk() if op.name == "func.return")
    fn = ret.parent_op()
    x, i, h = fn.body.block.args
    assert ret.operands[0] is x  # f32 -> f16 -> f32 cancels (GE's symmetric rule)
    assert ret.operands[1].owner.name == "ge.cast"  # f32 -> i1 -> f32 -> i1: the test is kept
    assert ret.operands[2].owner.input is i  # i64 -> f32 -> f16 is one cast
    assert ret.operands[3] is h  # f16 -> f32 -> f16 is h
    assert ret.operands[4].owner.input.owner.input is h  # f16 -> f32 -> bf16 is f16 -> bf16
    rules = sorted((r.kind, r.rule) for r in found)
    assert ("rejected", "symmetric-pair") in rules and ("applied", "compose") in rules


# -- kernels: the Cube unit and the widened vector kernels --------------------------------------

KERNELS = """
func.func @main(%a: tensor<1x4096x{t}>, %b: tensor<4096x1x{t}>, %x: tensor<1x4096x1x1x{t}>, %w: tensor<1x4096x1x1x{t}>, %s: tensor<2x8x{t}>, %g: tensor<8x{t}>) -> (tensor<1x1x{t}>, tensor<1x1x{t}>, tensor<1x1x1x1x{t}>, tensor<2x8x{t}>, tensor<2x8x{t}>) {{
  %0 = ge.matmul %a, %b : (tensor<1x4096x{t}>, tensor<4096x1x{t}>) -> tensor<1x1x{t}>
  %1 = ge.gemm %a, %b {{alpha = 1.0 : f32}} : (tensor<1x4096x{t}>, tensor<4096x1x{t}>) -> tensor<1x1x{t}>
  %2 = ge.conv %x, %w : (tensor<1x4096x1x1x{t}>, tensor<1x4096x1x1x{t}>) -> tensor<1x1x1x1x{t}>
  %3 = ge.softmax %s : (tensor<2x8x{t}>) -> tensor<2x8x{t}>
  %4 = ge.layer_norm %s, %g : (tensor<2x8x{t}>, tensor<8x{t}>) -> tensor<2x8x{t}>
  func.return %0, %1, %2, %3, %4 : tensor<1x1x{t}>, tensor<1x1x{t}>, tensor<1x1x1x1x{t}>, tensor<2x8x{t}>, tensor<2x8x{t}>
}}
"""


@pytest.mark.parametrize("t", ["f16", "bf16"])
def test_cube_accumulates_in_f32(t):
    """4096 products of ones: an f16 accumulator would stop at 2048 (bf16 at 256); the Cube
    accumulates in f32 and rounds once. Softmax and layer norm of values whose exponentials and
    variance overflow f16 stay finite (computed in f32 inside)."""
    dt = numpy_dtype({"f16": f16, "bf16": bf16}[t])
    module = _parse(KERNELS.format(t=t))
    ones = np.ones(4096)
    s = np.array([np.linspace(-60000, 60000, 8), np.linspace(0, 7, 8)])
    inputs = {
        "arg0": ones.reshape(1, 4096),
        "arg1": ones.reshape(4096, 1),
        "arg2": ones.reshape(1, 4096, 1, 1),
        "arg3": ones.reshape(1, 4096, 1, 1),
        "arg4": s,
        "arg5": np.ones(8),
    }
    out = run(module, {k: v.astype(dt) for k, v in inputs.items()})
    for k in ("result0", "result1", "result2"):
        assert out[k].dtype == dt and float(out[k].reshape(-1)[0]) == 4096.0
    softmax, norm = out["result3"].astype(np.float32), out["result4"].astype(np.float32)
    assert np.all(np.isfinite(softmax)) and np.allclose(softmax.sum(-1), 1, atol=1e-2)
    assert np.all(np.isfinite(norm)) and abs(float(norm[0, -1]) - 1.5275) < 2e-2


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16])
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_cube_rounds_once(dtype, data):
    """An f16/bf16 matmul equals the f32 product of the same values rounded once."""
    m, k, n = (data.draw(st.integers(1, 9)) for _ in range(3))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    t = "f16" if dtype == np.float16 else "bf16"
    module = _parse(f"""
func.func @main(%a: tensor<{m}x{k}x{t}>, %b: tensor<{k}x{n}x{t}>) -> tensor<{m}x{n}x{t}> {{
  %0 = ge.matmul %a, %b : (tensor<{m}x{k}x{t}>, tensor<{k}x{n}x{t}>) -> tensor<{m}x{n}x{t}>
  func.return %0 : tensor<{m}x{n}x{t}>
}}""")
    got = run(module, {"arg0": a, "arg1": b})["result0"]
    want = (a.astype(np.float32) @ b.astype(np.float32)).astype(dtype)
    assert got.tobytes() == want.tobytes()


if __name__ == "__main__":
    main(sys.argv[1:])
