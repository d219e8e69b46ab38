"""One reading of the stream level (interpreter/stream_program.py): the verifier checks it, the
arena executor runs it and the simulator times it, with each wait linked to its record by SSA (not
re-derived from hardware event ids); `run` executes a stream-level module on the arena executor."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest
from xdsl.dialects.builtin import DenseArrayBase, i64

from ge.device import simulate
from ge.frontend import models
from ge.frontend.onnx_importer import import_model
from ge.ge_dialects import task
from ge.ge_dialects.ge.weights import attach_weights, clone_with_weights
from ge.interpreter.differential import relative_error
from ge.interpreter.runner import main_function, run
from ge.interpreter.stream_executor import sim_tasks
from ge.interpreter.stream_program import stream_program
from ge.lowering.streams.verify import StreamError, verify_stream_function
from ge.passes.pipeline import apply_all, parse_passes
from ge.tools.common import make_context, parse_module

LOWER = "lower-to-tasks,plan-memory,lower-to-streams{streams=4}"


@functools.cache
def _gpt2():
    model = models.gpt2(layers=1, seq=8, hidden=64, heads=4, vocab=100)
    module, weights = import_model(model)
    attach_weights(module, weights)
    inputs = models.random_inputs(model, 0)
    reference = run(module, inputs)
    apply_all(make_context(), module, parse_passes(LOWER))
    return module, inputs, reference


def gpt2():
    module, inputs, reference = _gpt2()
    return clone_with_weights(module), inputs, reference


def test_the_verifier_the_executor_and_the_simulator_read_one_structure():
    fn = main_function(gpt2()[0])
    program = stream_program(fn)
    links = {(program.recorder(e), t.index) for t in program.tasks for e in t.waits}
    assert len(links) >= 5
    assert set(verify_stream_function(fn).events) == links
    timed = sim_tasks(fn)
    assert [(t.stream, t.launch) for t in timed] == [(t.stream, t.launch) for t in program.tasks]
    assert {(src, i) for i, t in enumerate(timed) for src in t.wait_from or ()} == links
    assert all(len(t.waits) == len(t.wait_from or ()) for t in timed)


def _kernel(name: str, operands: str, stream: int, offset: int, body: str = "relu") -> str:
    args = ", ".join(f"%a{i}: tensor<1024xf32>" for i in range(operands.count("%")))
    types = ", ".join(["tensor<1024xf32>"] * operands.count("%"))
    value = "%a0" if body == "relu" else "%a0, %a1"
    return f"""task.kernel "{name}" ({operands}) : ({types}) -> tensor<1024xf32> attributes {{engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "{body}", offsets = array<i64: {offset}>, stream = {stream} : i64, launch = 0 : i64}} {{
  ^bb0({args}):
    %r = ge.{body} {value} : ({types}) -> tensor<1024xf32>
    task.yield %r : tensor<1024xf32>
  }}"""


REUSED_ID = f"""
func.func @main(%x: tensor<1024xf32>) -> tensor<1024xf32> attributes {{stream.mode = "graph", stream.count = 2 : i64}} {{
  %0 = {_kernel("/a", "%x", 0, 0)}
  %e0 = stream.record 0 on 0 after %0 : tensor<1024xf32>
  %1 = {_kernel("/b", "%x", 1, 4096)}
  %e1 = stream.record 0 on 1 after %1 : tensor<1024xf32>
  stream.wait %e0 on 1
  %2 = {_kernel("/c", "%0", 1, 8192)}
  %e2 = stream.record 1 on 1 after %2 : tensor<1024xf32>
  stream.wait %e1 on 0
  stream.wait %e2 on 0
  %3 = {_kernel("/d", "%1, %2", 0, -1, "add")}
  func.return %3 : tensor<1024xf32>
}}
"""
"""`/c` waits for the record after `/a`; a later record of the same hardware id (after `/b`) is
issued before the wait, which the verifier refuses (latest-record semantics would bind the wait
to `/b`)."""


def test_a_wait_is_linked_to_its_record_not_to_the_latest_record_of_its_id():
    fn = main_function(parse_module(REUSED_ID, "<test>"))
    with pytest.raises(StreamError, match="recorded after '/b' before the wait of its previous record"):
        verify_stream_function(fn)
    timed = sim_tasks(fn)
    assert timed[2].wait_from == (0,)
    (wait,) = simulate(timed, "ascend910b", "graph").tasks[2].waits
    assert wait.source == 0
    by_id = [dataclasses.replace(t, wait_from=None) for t in timed]
    (wait,) = simulate(by_id, "ascend910b", "graph").tasks[2].waits
    assert wait.source == 1  # re-derived from the id: the latest record, after '/b'


def test_run_executes_a_stream_level_module_over_its_planned_arena():
    """Every result moved to offset 0: the plain interpreter would not notice (it keeps each value
    apart); `run` goes through the arena, where later results overwrite earlier live ones."""
    module, inputs, reference = gpt2()
    assert max(relative_error(reference[k], v) for k, v in run(module, inputs).items()) <= 1e-4
    for op in main_function(module).body.block.ops:
        if isinstance(op, task.KernelOp) and op.offsets is not None:
            op.offsets = DenseArrayBase.from_list(i64, [0 if o >= 0 else o for o in op.offsets.get_values()])
    clobbered = run(module, inputs)
    errors = [relative_error(reference[k], v) for k, v in clobbered.items()]
    assert any(np.isnan(e) or e > 1e-2 for e in errors)
