"""`data-parallel`: N replicas on their shards give the one-device full-batch gradient, every
replica ends an SGD step with bit-identical parameters, `local` parameters keep the replica's own
gradient and no collective reads them; the replicas' run refuses what does not split."""

from __future__ import annotations

import numpy as np
import pytest
from training_models import mlp
from xdsl.context import Context
from xdsl.utils.exceptions import DiagnosticException, InterpretationError

from ge.frontend import models
from ge.frontend.onnx_importer import import_model
from ge.ge_dialects import ge
from ge.ge_dialects.ge.types import numpy_dtype
from ge.ge_dialects.ge.weights import attach_weights, weights_of
from ge.interpreter.replicas import ReplicaError
from ge.interpreter.runner import input_signature, main_function, output_names, run, run_each_replica
from ge.passes import data_parallel
from ge.passes.pipeline import apply_all, parse_passes
from ge.tools.common import parse_module


def _mlp(pipeline: str, batch: int = 16):
    model, inputs = mlp(np.random.default_rng(3), dtype=np.float32, batch=batch)
    module, weights = import_model(model, training=True)
    attach_weights(module, weights)
    apply_all(Context(), module, parse_passes(pipeline))
    return module, inputs


def _bert(pipeline: str):
    model = models.bert_base(batch=8, seq=16, layers=1, hidden=32, heads=2, intermediate=64)
    module, weights = import_model(model, training=True)
    attach_weights(module, weights)
    apply_all(Context(), module, parse_passes(pipeline))
    return module


def _random_inputs(module, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    out = {}
    for name, t in input_signature(module).items():
        dtype = numpy_dtype(t.element_type)
        shape = t.get_shape()
        out[name] = (
            rng.integers(0, 2, shape).astype(dtype) if dtype.kind in "iu" else rng.standard_normal(shape).astype(dtype)
        )
    return out


def _grads(outputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {k: v for k, v in outputs.items() if k.endswith("_grad")}


def _worst(got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> float:
    return max(float(np.abs(got[k] - w).max() / max(np.abs(w).max(), 1e-30)) for k, w in want.items())


@pytest.fixture(scope="module")
def mlp_full_batch():
    module, inputs = _mlp("autodiff")
    return _grads(run(module, inputs)), inputs


@pytest.mark.parametrize("devices", [2, 4, 8])
def test_reduced_gradients_are_the_full_batch_gradients(mlp_full_batch, devices):
    want, inputs = mlp_full_batch
    module, _ = _mlp(f"autodiff,data-parallel{{devices={devices}}}")
    each = run_each_replica(module, inputs)
    assert len(each) == devices
    assert _worst(_grads(each[0]), want) < 1e-5
    for other in each[1:]:
        for k in want:
            assert np.array_equal(other[k], each[0][k]), k


@pytest.mark.parametrize("devices", [2, 4, 8])
def test_a_transformer_splits_and_reduces_alike(devices):
    """BERT (one layer, small): its attention's reshapes hold the batch as a number, folded at import."""
    full = _bert("add-loss{kind=mse},autodiff")
    inputs = _random_inputs(full)
    want = _grads(run(full, inputs))
    each = run_each_replica(_bert(f"add-loss{{kind=mse}},autodiff,data-parallel{{devices={devices}}}"), inputs)
    assert _worst(_grads(each[0]), want) < 1e-5
    assert all(np.array_equal(o[k], each[0][k]) for o in each for k in want)


def test_after_an_sgd_step_every_replica_holds_the_same_parameters(mlp_full_batch):
    _, inputs = mlp_full_batch
    module, _ = _mlp("autodiff,data-parallel{devices=4 bucket_mib=1},apply-optimizer{kind=sgd lr=0.1}")
    single, _ = _mlp("autodiff,apply-optimizer{kind=sgd lr=0.1}")
    want = run(single, inputs)
    each = run_each_replica(module, inputs)
    keys = [k for k in output_names(main_function(module)) if k.startswith("fc")]
    assert keys
    for k in keys:
        assert all(np.array_equal(o[k], each[0][k]) for o in each), k
        np.testing.assert_allclose(each[0][k], want[k], rtol=1e-5, atol=1e-6)


def test_local_parameters_are_never_reduced_and_keep_the_replicas_own_gradient():
    module, inputs = _mlp('autodiff,data-parallel{devices=4 local="fc2.bias,fc1.weight"}')
    fn = main_function(module)
    ret = fn.body.block.last_op
    local = {ret.operands[output_names(fn).index(f"{k}_grad")] for k in ("fc2.bias", "fc1.weight")}
    reduced = {v for op in fn.walk() if isinstance(op, ge.HcomAllReduceOp) for v in op.inputs}
    assert reduced and not (reduced & local)
    assert all(not isinstance(use.operation, ge.HcomAllReduceOp) for v in local for use in v.uses)
    each = run_each_replica(module, inputs)
    for rank, outputs in enumerate(each):  # the gradient of a one-device graph on the replica's rows
        shard, _ = _mlp("autodiff", batch=4)
        own = run(shard, {k: v[rank * 4 : (rank + 1) * 4] for k, v in inputs.items()})
        for k in ("fc2.bias_grad", "fc1.weight_grad"):
            np.testing.assert_allclose(outputs[k], own[k], rtol=1e-6, atol=1e-7)
    assert not np.array_equal(each[0]["fc2.bias_grad"], each[1]["fc2.bias_grad"])


def test_buckets_follow_the_split_strategy():
    """GE's default two segments by size; idx boundaries; DDP-sized buckets; fusionTensorSize caps."""

    def bucket_sizes(options: str) -> list[int]:
        module, _ = _mlp(f"autodiff,data-parallel{{devices=2 {options}}}")
        return [len(op.inputs) for op in main_function(module).walk() if isinstance(op, ge.HcomAllReduceOp)]

    assert sum(bucket_sizes("")) == 4
    assert bucket_sizes('split="idx:0,2"') == [1, 2, 1]
    assert bucket_sizes('split="size:50,50"') in ([2, 2], [1, 3], [3, 1])
    assert bucket_sizes("fusion_tensor_size=1") == [1, 1, 1, 1]
    assert bucket_sizes("bucket_mib=500") == [4]


# -- values from literal constants that hold the batch ---------------------------------------------

_MASKED = """
func.func @main(%x: tensor<4x3xf32> {{ge.name = "x"}}) -> (tensor<f32> {{ge.name = "loss"}}) {{
  %w = ge.constant parameter<"w"> dense<[[0.5, -1.0, 2.0], [1.5, 0.25, -0.5], [1.0, 2.0, 3.0]]> : tensor<3x3xf32>
  %mask = {mask} : tensor<4x3xf32> loc("mask")
  %h = ge.matmul %x, %w : (tensor<4x3xf32>, tensor<3x3xf32>) -> tensor<4x3xf32>
  %y = ge.add %h, %mask : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32> loc("y")
  %s = ge.mul %y, %y : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %loss = ge.reduce_mean %s {{keepdims = 0 : i64}} : (tensor<4x3xf32>) -> tensor<f32>
  func.return %loss : tensor<f32>
}}
"""
_SAME_ROWS = "ge.constant dense<[[1.0, 2.0, 3.0], [1.0, 2.0, 3.0], [1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]>"


def _masked(mask: str, pipeline: str):
    module = parse_module(_MASKED.format(mask=mask), "masked.mlir")
    apply_all(Context(), module, parse_passes(pipeline))
    return module


def test_a_constant_that_holds_the_batch_gives_each_replica_its_rows():
    """An exported causal mask is a constant expanded to the batch: each replica adds its rows."""
    x = np.random.default_rng(5).standard_normal((4, 3)).astype(np.float32)
    want = run(_masked(_SAME_ROWS, "autodiff"), {"x": x})
    for devices in (2, 4):
        each = run_each_replica(_masked(_SAME_ROWS, f"autodiff,data-parallel{{devices={devices}}}"), {"x": x})
        np.testing.assert_allclose(each[0]["w_grad"], want["w_grad"], rtol=1e-6)


@pytest.mark.parametrize(
    "mask, reason",
    [
        (
            "ge.constant dense<[[1.0, 2.0, 3.0], [1.0, 2.0, 3.0], [1.0, 2.0, 3.0], [1.0, 2.0, 4.0]]>",
            "ge.add 'y' combines the batch with ge.constant 'mask', a constant whose rows differ along the batch: "
            "a part of the batch cannot tell its own rows",
        ),
        (
            'ge.constant parameter<"m"> dense<1.0>',
            "ge.add 'y' combines the batch with ge.constant 'mask', which has the batch's rows but is neither an "
            "input's nor a literal constant's",
        ),
    ],
    ids=["rows-differ", "parameter"],
)
def test_a_constant_that_holds_the_batch_unevenly_is_refused(mask, reason):
    with pytest.raises(DiagnosticException) as caught:
        _masked(mask, "autodiff,data-parallel{devices=2}")
    assert str(caught.value) == f"data-parallel: {reason}"


# -- the replicas' run -----------------------------------------------------------------------------


def test_the_whole_batch_must_split_over_the_replicas(mlp_full_batch):
    _, inputs = mlp_full_batch
    module, _ = _mlp("autodiff,data-parallel{devices=4}")
    assert input_signature(module)["x"].get_shape() == (16, 5)  # the caller gives the whole batch
    with pytest.raises(ReplicaError, match="input .x. has 6 rows, which do not split over the 4 replicas"):
        run_each_replica(module, {k: v[:6] for k, v in inputs.items()})


def test_a_collective_outside_a_run_of_its_replicas_is_an_error():
    module, inputs = _mlp("autodiff,data-parallel{devices=2}")
    del main_function(module).attributes[data_parallel.REPLICAS_ATTR]  # run as if one device
    with pytest.raises(
        InterpretationError, match="a collective over 2 replicas runs only in a data-parallel run of all of them"
    ):
        run(module, {k: v[:8] for k, v in inputs.items()})


def test_a_failing_replica_stops_the_others_instead_of_hanging(mlp_full_batch, monkeypatch):
    _, inputs = mlp_full_batch
    module, _ = _mlp("autodiff,data-parallel{devices=4}")
    from ge.interpreter import replicas

    def failing_one(module, inputs, weights):
        raise RuntimeError("replica failed")

    with pytest.raises(RuntimeError, match="replica failed"):
        replicas.run_replicas(module, main_function(module), ["x", "t"], inputs, weights_of(module), failing_one)


# -- mutations -------------------------------------------------------------------------------------


def test_mutation_a_sum_without_the_mean_is_caught(mlp_full_batch, monkeypatch):
    """Without the 1/N after the sum, the gradient is N times the full batch's: the check fails."""
    want, inputs = mlp_full_batch
    monkeypatch.setattr(data_parallel.GradBuilder, "scale", lambda self, a, factor: a)
    module, _ = _mlp("autodiff,data-parallel{devices=2}")
    assert _worst(_grads(run_each_replica(module, inputs)[0]), want) > 0.5


def test_mutation_a_collective_that_does_not_reduce_is_caught(mlp_full_batch, monkeypatch):
    """A collective that hands back the replica's own operands leaves shard gradients: caught."""
    want, inputs = mlp_full_batch
    from ge.interpreter.replicas import Communicator

    monkeypatch.setattr(Communicator, "all_reduce", lambda self, rank, ops, reduction: [a * 2 for a in ops])
    module, _ = _mlp("autodiff,data-parallel{devices=2}")
    each = run_each_replica(module, inputs)
    assert _worst(_grads(each[0]), want) > 1e-3
    assert not all(np.array_equal(each[0][k], each[1][k]) for k in want)
