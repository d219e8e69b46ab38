"""The layout passes keep the numbers: real models run in the interpreter before and after
assign-formats + cancel + merge + fold-trans-data give the same outputs (the same arithmetic, on
values held in their physical layouts), and the TransData counts are what the rules promise."""

from __future__ import annotations

import collections

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from ge.ge_dialects import ge
from ge.ge_dialects.ge.layout import storage_of
from ge.ge_dialects.ge.weights import attach_weights, weights_of
from ge.interpreter.runner import run
from ge.passes import remarks
from ge.passes.layout.assign_formats import AssignFormatsPass
from ge.passes.layout.cancel_trans_data import CancelTransDataPass
from ge.passes.layout.fold_trans_data import FoldTransDataPass
from ge.passes.layout.merge_trans_data import MergeTransDataPass
from ge.tools.common import make_context

PIPELINE = (AssignFormatsPass(), CancelTransDataPass(), MergeTransDataPass(), FoldTransDataPass())

#: The small models: every layout decision of the full ones (the CNNs' stages at 64x64, two
#: transformer layers with the full widths, so the per-layer TransData are counted per layer).
MODEL_NAMES = ["resnet50", "mobilenet_v2", "bert_base", "gpt2"]


def _apply(module: ModuleOp, passes=PIPELINE) -> list[remarks.Remark]:
    with remarks.collected() as found:
        for p in passes:
            p.apply(Context(), module)
    module.verify()
    return found


def _trans_data(module: ModuleOp) -> list[ge.TransDataOp]:
    return [op for op in module.walk() if isinstance(op, ge.TransDataOp)]


@pytest.fixture(scope="module", params=MODEL_NAMES)
def compiled(request, references):
    """(name, module after the passes, remarks, outputs before, outputs after)."""
    module = references.module(request.param)
    inputs = references.model(request.param)[1]
    before = run(module, inputs)
    found = _apply(module)
    after = run(module, inputs)
    return request.param, module, found, before, after


def test_outputs_equal(compiled):
    name, _, _, before, after = compiled
    assert before.keys() == after.keys()
    for key in before:
        np.testing.assert_allclose(after[key], before[key], rtol=1e-5, atol=1e-5, err_msg=f"{name}: {key}")


# TransData left after the passes: graph edges and the places a format cannot flow through
# (reshape / transpose / split / where in the transformers), never a constant.
# BERT: 8 per layer and 2 at the graph's edges (98 at 12 layers). GPT-2: the whole-graph choice
# converts the embeddings before the first LayerNorm, whose result the residual add also reads
# (19 op by op).
EXPECTED_TRANS_DATA = {"resnet50": 2, "mobilenet_v2": 2, "bert_base": 18, "gpt2": 18}


def test_trans_data_counts(compiled):
    name, module, _, _, _ = compiled
    left = _trans_data(module)
    assert len(left) == EXPECTED_TRANS_DATA[name]
    assert not any(isinstance(op.src.owner, ge.ConstantOp) for op in left), "a constant's TransData was not folded"


def test_cnn_activations_stay_nc1hwc0(compiled):
    """One TransData in (graph input -> NC1HWC0), one out (before Flatten); every conv, BN, pool
    and elementwise op between them computes on NC1HWC0; conv weights are folded to FRACTAL_Z
    (grouped, i.e. depthwise, ones keep NCHW)."""
    name, module, found, _, _ = compiled
    if name not in ("resnet50", "mobilenet_v2"):
        pytest.skip("CNNs only")
    edges = sorted((op.p("src_format"), op.p("dst_format")) for op in _trans_data(module))
    assert edges == [("NC1HWC0", "NCHW"), ("ND", "NC1HWC0")]
    image_ops = (ge.ConvOp, ge.BatchNormOp, ge.ReluOp, ge.AddOp, ge.ClipOp, ge.MaxPoolOp, ge.GlobalAvgPoolOp)
    for op in module.walk():
        if isinstance(op, image_ops):
            assert storage_of(op.results[0].type) == "NC1HWC0", op
        if isinstance(op, ge.ConvOp):
            assert isinstance(op.W.owner, ge.ConstantOp)
            assert storage_of(op.W.type) == ("FRACTAL_Z" if op.p("group") == 1 else "ND")
    rejected = {(r.rule, r.reason.split(": ", 1)[-1]) for r in found if r.kind == "rejected"}
    assert (
        "gemm-fractal-nz",
        "A, B, Y not in FRACTAL_NZ: M = 1 < nz-min-dim=16 (the tile would be mostly padding)",
    ) in rejected


def test_transformer_matmuls_run_in_nz(compiled):
    name, module, found, _, _ = compiled
    if name not in ("bert_base", "gpt2"):
        pytest.skip("transformers only")
    for op in module.walk():
        if isinstance(op, ge.MatMulOp):
            assert {storage_of(v.type) for v in (op.A, op.B, op.Y)} == {"FRACTAL_NZ"}
    kinds = collections.Counter(r.rule for r in found if r.kind == "applied")
    assert kinds["layer-norm-last-axis"] > 0 and kinds["elementwise"] > 0


def test_passes_are_idempotent(compiled):
    _, module, _, _, _ = compiled
    count = len(_trans_data(module))
    text = str(module)
    _apply(module)
    assert len(_trans_data(module)) == count and str(module) == text


# -- a layout bug is a wrong number ----------------------------------------------------------------

SMALL = """
func.func @main(%x: tensor<1x16x6x6xf16>, %a: tensor<2x40x16xf16>, %b: tensor<16x24xf16>)
    -> (tensor<1x16x4x4xf16, #ge.fmt<NCHW>>, tensor<2x40x24xf16>) {
  %w = ge.constant #ge.weight<"w"> : tensor<16x16x3x3xf16>
  %c = ge.conv %x, %w : (tensor<1x16x6x6xf16>, tensor<16x16x3x3xf16>) -> tensor<1x16x4x4xf16, #ge.fmt<NCHW>>
  %r = ge.relu %c : (tensor<1x16x4x4xf16, #ge.fmt<NCHW>>) -> tensor<1x16x4x4xf16, #ge.fmt<NCHW>>
  %m = ge.matmul %a, %b : (tensor<2x40x16xf16>, tensor<16x24xf16>) -> tensor<2x40x24xf16>
  %t = ge.tanh %m : (tensor<2x40x24xf16>) -> tensor<2x40x24xf16>
  func.return %r, %t : tensor<1x16x4x4xf16, #ge.fmt<NCHW>>, tensor<2x40x24xf16>
}
"""


def _small() -> tuple[ModuleOp, dict]:
    module = Parser(make_context(), SMALL).parse_module()
    rng = np.random.default_rng(3)
    attach_weights(module, {"w": rng.standard_normal((16, 16, 3, 3)).astype(np.float16)})
    shapes = {"arg0": (1, 16, 6, 6), "arg1": (2, 40, 16), "arg2": (16, 24)}
    return module, {k: rng.standard_normal(s).astype(np.float16) for k, s in shapes.items()}


@pytest.mark.mutation
def test_a_wrong_layout_gives_a_wrong_number():
    module, inputs = _small()
    want = run(module, inputs)
    _apply(module)
    got = run(module, inputs)
    for key in want:  # NC1HWC0 / FRACTAL_Z conv, FRACTAL_NZ matmul and tanh (f16: C0 = 16)
        np.testing.assert_array_equal(got[key], want[key])
    (folded,) = [
        op
        for op in module.walk()
        if isinstance(op, ge.ConstantOp) and op.weight_key != "w" and storage_of(op.output.type) == "FRACTAL_Z"
    ]
    table = weights_of(module)
    physical = table[folded.weight_key]
    assert physical.shape == (9, 1, 16, 16)
    table.added[folded.weight_key] = np.ascontiguousarray(physical.swapaxes(2, 3))  # N0 <-> C0: same shape
    assert not np.array_equal(run(module, inputs)["result0"], want["result0"])


def test_fold_needs_the_weight_values():
    module, _ = _small()
    attach_weights(module, {})  # the sidecar is not loaded
    found = _apply(module, (AssignFormatsPass(), FoldTransDataPass()))
    rejected = [r for r in found if r.pass_name == "fold-trans-data" and r.kind == "rejected"]
    assert len(rejected) == 1 and "weight 'w' is not loaded" in rejected[0].reason
    assert any(isinstance(op.src.owner, ge.ConstantOp) for op in _trans_data(module))


@pytest.mark.parametrize("nz, storage", [(True, "FRACTAL_NZ"), (False, "ND")])
def test_nz_option(nz, storage):
    module, _ = _small()
    _apply(module, (AssignFormatsPass(nz=nz),))
    (matmul,) = [op for op in module.walk() if isinstance(op, ge.MatMulOp)]
    assert storage_of(matmul.Y.type) == storage
