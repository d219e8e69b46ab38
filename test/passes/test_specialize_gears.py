"""specialize-gears: a graph with named dims (batch, seq) compiled ahead for a few shapes. Each gear
equals onnxruntime at O0 and O3 and has the kernels of the graph exported at its shape; an input
that fits no gear is one line naming the gears."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper, numpy_helper
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from ge.frontend import models
from ge.frontend.onnx_importer import import_model
from ge.ge_dialects import ge
from ge.ge_dialects.ge.weights import attach_weights
from ge.interpreter.control_flow import GearError
from ge.interpreter.differential import relative_error
from ge.interpreter.runner import run
from ge.passes.fusion.census import census
from ge.passes.ge_optimize import GeOptimizePass
from ge.tools.common import make_context

F32 = onnx.TensorProto.FLOAT
GEARS = "batch=1,seq=16;batch=2,seq=8;batch=4,seq=4"
SHAPES = [(1, 16), (2, 8), (4, 4)]


def _model(batch="batch", seq="seq") -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    weights = [
        numpy_helper.from_array(rng.standard_normal((16, 32)).astype(np.float32), "W"),
        numpy_helper.from_array(rng.standard_normal((32,)).astype(np.float32), "B"),
        numpy_helper.from_array(np.int64([2]), "axis"),
    ]
    nodes = [
        helper.make_node("MatMul", ["x", "W"], ["h"]),
        helper.make_node("Add", ["h", "B"], ["hb"]),
        helper.make_node("Relu", ["hb"], ["r"]),
        helper.make_node("Unsqueeze", ["mask", "axis"], ["m3"]),
        helper.make_node("Mul", ["r", "m3"], ["p"]),
        helper.make_node("Softmax", ["p"], ["y"], axis=-1),
    ]
    inputs = [
        helper.make_tensor_value_info("x", F32, [batch, seq, 16]),
        helper.make_tensor_value_info("mask", F32, [batch, seq]),
    ]
    graph = helper.make_graph(nodes, "g", inputs, [helper.make_tensor_value_info("y", F32, [batch, seq, 32])], weights)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def _feeds(batch: int, seq: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(batch * 100 + seq)
    return {
        "x": rng.standard_normal((batch, seq, 16)).astype(np.float32),
        "mask": (rng.random((batch, seq)) < 0.7).astype(np.float32),
    }


@pytest.fixture(scope="module", params=[0, 3], ids=["O0", "O3"])
def geared(request):
    module, weights = import_model(_model())
    GeOptimizePass(level=request.param, dynamic_dims=GEARS).apply(make_context(), module)
    module.verify()
    return request.param, module, weights


def test_every_gear_equals_onnxruntime(geared):
    _, module, weights = geared
    session = ort.InferenceSession(_model().SerializeToString(), providers=["CPUExecutionProvider"])
    for batch, seq in SHAPES:
        feeds = _feeds(batch, seq)
        (want,) = session.run(None, feeds)
        got = run(module, feeds, weights)["y"]
        assert got.shape == want.shape and relative_error(want, got) <= 1e-5


def test_each_gear_has_the_kernels_of_the_graph_exported_at_its_shape(geared):
    level, module, _ = geared
    gears = {fn.sym_name.data: fn for fn in module.ops if isinstance(fn, func.FuncOp)}
    dispatch = next(op for op in gears["main"].body.block.ops if isinstance(op, ge.GearsOp))
    assert [s.data for s in dispatch.sizes.data] == GEARS.split(";")
    for index, (batch, seq) in enumerate(SHAPES):
        static, _ = import_model(_model(batch, seq))
        GeOptimizePass(level=level).apply(make_context(), static)
        alone = ModuleOp([gears[f"main.gear{index}"].clone()])
        assert census(alone).kernels == census(static).kernels


def test_an_input_that_fits_no_gear_is_one_line(geared):
    _, module, weights = geared
    with pytest.raises(GearError) as e:
        run(module, _feeds(3, 8), weights)
    assert str(e.value) == (
        "ge.gears 'gears': the inputs' shapes [3, 8, 16], [3, 8] fit no gear (batch=1,seq=16; batch=2,seq=8; batch=4,seq=4)"
    )


BERT_GEARS = [(1, 16), (2, 8), (4, 4)]


def _bert(batch, seq) -> onnx.ModelProto:
    from ge.frontend import models

    return models.bert_base(batch=batch, seq=seq, layers=1, hidden=64, heads=4, intermediate=128, vocab=100)


def test_a_dynamic_bert_as_gears_equals_onnxruntime_with_the_static_kernels():
    """BERT exported with batch and seq as dim_params: each gear at O3 equals onnxruntime and has
    the kernels of BERT exported at its shape (the dynamic export's token types, input_ids * 0,
    fold to the static one's zeros), or one more: the importer folds the static export's
    token-type embedding lookup at any size, the optimizer's growth guard keeps the gear's when
    the lookup is 8x its operands (4x4)."""
    model = _bert("batch", "seq")
    module, weights = import_model(model)
    attach_weights(module, weights)  # beside those the passes add
    dims = ";".join(f"batch={b},seq={s}" for b, s in BERT_GEARS)
    GeOptimizePass(level=3, dynamic_dims=dims).apply(make_context(), module)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    gears = {fn.sym_name.data: fn for fn in module.ops if isinstance(fn, func.FuncOp)}
    for index, (batch, seq) in enumerate(BERT_GEARS):
        feeds = models.random_inputs(model, batch * 100 + seq, {"batch": batch, "seq": seq})
        (want,) = session.run(None, feeds)
        assert relative_error(want, run(module, feeds)["last_hidden_state"]) <= 1e-5
        static, static_weights = import_model(_bert(batch, seq))
        attach_weights(static, static_weights)
        GeOptimizePass(level=3).apply(make_context(), static)
        kernels = census(ModuleOp([gears[f"main.gear{index}"].clone()])).kernels
        assert census(static).kernels <= kernels <= census(static).kernels + 1


def test_an_if_on_a_dim_a_gear_makes_static_becomes_its_branch():
    """If batch == 1 then relu(x) else -x: the condition is known only at run time in the dynamic
    graph (a ge.if), and a constant in each gear, where O1's cleanup inlines the branch."""

    def branch(op: str, out: str) -> onnx.GraphProto:
        return helper.make_graph([helper.make_node(op, ["x"], [out])], op, [], [onnx.ValueInfoProto(name=out)])

    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "zero"], ["batch"]),
        helper.make_node("Equal", ["batch", "one"], ["single"]),
        helper.make_node(
            "If", ["single"], ["y"], name="if_single", then_branch=branch("Relu", "r"), else_branch=branch("Neg", "n")
        ),
    ]
    constants = [numpy_helper.from_array(np.int64(0), "zero"), numpy_helper.from_array(np.int64(1), "one")]
    inputs = [helper.make_tensor_value_info("x", F32, ["batch", 4])]
    graph = helper.make_graph(nodes, "g", inputs, [helper.make_tensor_value_info("y", F32, ["batch", 4])], constants)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    module, weights = import_model(model)
    assert any(isinstance(op, ge.IfOp) for op in module.walk())
    GeOptimizePass(level=1, dynamic_dims="batch=1;batch=2").apply(make_context(), module)
    assert not any(isinstance(op, ge.IfOp) for op in module.walk())
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for batch in (1, 2):
        x = np.random.default_rng(batch).standard_normal((batch, 4)).astype(np.float32)
        np.testing.assert_array_equal(run(module, {"x": x}, weights)["y"], session.run(None, {"x": x})[0])


@pytest.mark.parametrize("level", [0, 3])
def test_with_hybrid_mode_an_input_that_fits_no_gear_runs_the_dynamic_graph(level):
    module, weights = import_model(_model())
    GeOptimizePass(level=level, dynamic_dims=GEARS, compile_hybrid_mode=True).apply(make_context(), module)
    module.verify()
    dispatch = next(op for op in module.walk() if isinstance(op, ge.GearsOp))
    assert dispatch.fallback is not None and dispatch.fallback.root_reference.data == "main.dynamic"
    session = ort.InferenceSession(_model().SerializeToString(), providers=["CPUExecutionProvider"])
    for batch, seq in [*SHAPES, (3, 8), (1, 5)]:  # the gears, then two shapes no gear has
        feeds = _feeds(batch, seq)
        (want,) = session.run(None, feeds)
        assert relative_error(want, run(module, feeds, weights)["y"]) <= 1e-5


def test_a_dynamic_bert_with_hybrid_mode_equals_onnxruntime_in_and_out_of_its_gears():
    model = _bert("batch", "seq")
    module, weights = import_model(model)
    attach_weights(module, weights)
    dims = ";".join(f"batch={b},seq={s}" for b, s in BERT_GEARS)
    GeOptimizePass(level=3, dynamic_dims=dims, compile_hybrid_mode=True).apply(make_context(), module)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for batch, seq in [*BERT_GEARS, (3, 5)]:
        feeds = models.random_inputs(model, batch * 100 + seq, {"batch": batch, "seq": seq})
        (want,) = session.run(None, feeds)
        assert relative_error(want, run(module, feeds)["last_hidden_state"]) <= 1e-5
    fallback = next(fn for fn in module.ops if isinstance(fn, func.FuncOp) and fn.sym_name.data == "main.dynamic")
    assert (
        census(ModuleOp([fallback.clone()])).kernels
        <= census(
            ModuleOp(
                [
                    next(
                        fn for fn in module.ops if isinstance(fn, func.FuncOp) and fn.sym_name.data == "main.gear0"
                    ).clone()
                ]
            )
        ).kernels
        + 6
    )  # the dynamic graph fuses as a gear does (fold-symbolic-shapes)


def test_ge_batch_and_image_gears_size_the_dims_at_their_axes():
    """GE's dynamic_batch_size sizes the inputs' unknown dim 0, dynamic_image_size dims 2 and 3."""
    module, _ = import_model(_model(seq=8))
    GeOptimizePass(level=1, dynamic_batch_size="1,2,4").apply(make_context(), module)
    dispatch = next(op for op in module.walk() if isinstance(op, ge.GearsOp))
    assert dispatch.size_texts() == ["batch=1", "batch=2", "batch=4"]
    nodes = [helper.make_node("Relu", ["img"], ["y"])]
    image = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("img", F32, [1, 3, "h", "w"])],
        [helper.make_tensor_value_info("y", F32, [1, 3, "h", "w"])],
    )
    module, _ = import_model(helper.make_model(image, opset_imports=[helper.make_opsetid("", 21)]))
    GeOptimizePass(level=1, dynamic_image_size="224,224;448,320").apply(make_context(), module)
    dispatch = next(op for op in module.walk() if isinstance(op, ge.GearsOp))
    assert dispatch.size_texts() == ["h=224,w=224", "h=448,w=320"]
    x = np.ones((1, 3, 448, 320), np.float32)
    assert run(module, {"img": x})["y"].shape == (1, 3, 448, 320)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"compile_hybrid_mode": True},
            "ge-optimize: compile_hybrid_mode falls back from gears; give dynamic_dims, dynamic_batch_size "
            "or dynamic_image_size",
        ),
        ({"dynamic_image_size": "224,224"}, "specialize-gears: image_sizes: the inputs have no unknown dim at axis 2"),
        (
            {"dynamic_batch_size": "1,2", "dynamic_dims": "batch=1,seq=2"},
            "specialize-gears: dims and batch_sizes both give gears; give one",
        ),
        ({"dynamic_batch_size": "1,2"}, "specialize-gears: gear 0 ('batch=1') gives no size for seq"),
    ],
)
def test_gear_options_that_do_not_fit_are_one_line(options, message):
    from xdsl.utils.exceptions import DiagnosticException

    module, _ = import_model(_model())
    with pytest.raises(DiagnosticException) as e:
        GeOptimizePass(level=1, **options).apply(make_context(), module)
    assert str(e.value) == message


def test_a_geared_bert_lowered_runs_each_gear_sunk_at_the_stream_level():
    """Lowered, @main stays the host's dispatch (ge.gears) and each gear is a sunk graph with its
    own tasks and streams, sharing one pool: each shape equals onnxruntime at the stream level."""
    from ge.ge_dialects.ge.control_flow import is_host_program
    from ge.interpreter.runner import main_function
    from ge.passes.pipeline import apply_all, parse_passes

    model = _bert("batch", "seq")
    module, weights = import_model(model)
    attach_weights(module, weights)
    dims = ";".join(f"batch={b},seq={s}" for b, s in BERT_GEARS)
    GeOptimizePass(level=3, dynamic_dims=dims).apply(make_context(), module)
    apply_all(make_context(), module, parse_passes("partition-dynamic,lower-to-tasks,plan-memory,lower-to-streams"))
    assert is_host_program(main_function(module))
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for batch, seq in BERT_GEARS:
        feeds = models.random_inputs(model, batch * 100 + seq, {"batch": batch, "seq": seq})
        (want,) = session.run(None, feeds)
        assert relative_error(want, run(module, feeds)["last_hidden_state"]) <= 1e-5


def test_with_hybrid_mode_lowered_the_fallback_is_bound_when_an_input_fits_no_gear():
    """Lowered with hybrid mode: the gears are sunk graphs, the fallback (the dynamic graph) is
    left unknown-shape and bound to the sizes of the input that fits no gear when it runs."""
    from ge.lowering.run_time import run_dynamic
    from ge.passes.pipeline import apply_all, parse_passes

    model = _bert("batch", "seq")
    module, weights = import_model(model)
    attach_weights(module, weights)
    dims = ";".join(f"batch={b},seq={s}" for b, s in BERT_GEARS)
    GeOptimizePass(level=3, dynamic_dims=dims, compile_hybrid_mode=True).apply(make_context(), module)
    apply_all(make_context(), module, parse_passes("partition-dynamic,lower-to-tasks,plan-memory,lower-to-streams"))
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for index, (batch, seq) in enumerate([*BERT_GEARS, (3, 5)]):
        feeds = models.random_inputs(model, batch * 100 + seq, {"batch": batch, "seq": seq})
        (want,) = session.run(None, feeds)
        got, record = run_dynamic(module, feeds)
        assert relative_error(want, got["last_hidden_state"]) <= 1e-5
        assert record.calls == ([f"main.gear{index}"] if index < len(BERT_GEARS) else ["main.dynamic@3x5/3x5"])
