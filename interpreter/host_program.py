"""The host's part of a partitioned module at the stream level: control flow and calls of sunk
subgraphs (passes/partition_dynamic.py), run as GE's executor runs them; and control programs
(passes/sink_control_flow.py), whose label tasks the device runs.

A function lowered to streams (a known subgraph, a branch, a loop body) runs its tasks on the arena
executor; a host program (`@main` after partition-dynamic) runs on the interpreter, which calls
those functions: `func.call` launches a subgraph, `ge.if` reads its condition back from the device
and runs the branch, `ge.loop` reads its condition back once per iteration, `ge.gears` picks the
gear from the inputs' shapes (known to the host: no read). A control program is one launch: the
functions it calls run on the device without launches of their own, and its label switches read
their conditions there. `HostFunctions` routes every call of a lowered function to the arena and
records it, so that the run's modeled time can be given after it (`host_time`): each called
function's simulated latency (its launches included, unless a control program called it), one
launch per control program the host started, `[events] label_s` per label task and
`[host] d2h_read_s` per condition read back.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    Successor,
    impl,
    impl_callable,
    impl_terminator,
    register_impls,
)
from xdsl.interpreters.func import FuncFunctions

from ge.ge_dialects import stream
from ge.ge_dialects.ge.control_flow import UNKNOWN_SHAPE_ATTR, IfOp, LoopOp
from ge.ge_dialects.ge.weights import weights_of
from ge.ge_dialects.stream import LabelGotoOp, LabelSwitchOp, is_control_program
from ge.interpreter.arena_executor import run_program
from ge.interpreter.control_flow import ControlFlowFunctions, goto_target, switch_target
from ge.interpreter.control_program import read_control_program
from ge.interpreter.layouts import to_logical, to_physical
from ge.interpreter.runner import (
    check_inputs,
    main_function,
    module_interpreter,
    output_names,
    run_threads,
    tensor_types,
)
from ge.interpreter.stream_executor import simulate_module
from ge.interpreter.stream_program import StreamProgram, stream_program
from ge.target import Target


def on_streams(fn: func.FuncOp) -> bool:
    """Whether `fn` is lowered to streams (a sunk subgraph, branch, body or gear)."""
    return isinstance(fn.attributes.get(stream.MODE_ATTR), StringAttr)


Binder = Callable[[func.FuncOp, tuple[tuple[int, ...], ...]], tuple[ModuleOp, func.FuncOp]]
"""Binds a function of unknown shapes to its arguments' shapes and lowers it: the module holding
the bound function, and the function (lowering/run_time.py)."""


@dataclass
class HostRecord:
    """What the host did in a run: the lowered functions it called, in order, how many times each
    function was entered, and how many values (conditions) it read back from the device."""

    calls: list[str] = field(default_factory=list)
    on_device: list[bool] = field(default_factory=list)
    """Per call: whether a control program made it (the device runs it, no launch of its own)."""
    entered: Counter[str] = field(default_factory=Counter)
    reads: int = 0
    programs: int = 0
    """Control programs the host launched (one launch each)."""
    labels: int = 0
    """Label tasks (switches and gotos) the device ran."""
    functions: dict[str, tuple[ModuleOp, str]] = field(default_factory=dict)
    """Each call's label -> the module and function it ran (a function bound at run time is a
    module of its own, labelled `<name>@<shapes>`)."""


@register_impls
class HostFunctions(InterpreterFunctions):
    """Calls of lowered functions run on the arena executor (in program order) and are recorded;
    a host program's own body runs as any function's."""

    def __init__(self, bind: Binder | None = None) -> None:
        self.record = HostRecord()
        self.bind = bind
        self.in_programs = 0  # control programs being run (calls inside them need no launch)
        self.gone_to: Counter[LabelGotoOp] = Counter()
        self._programs: dict[func.FuncOp, StreamProgram] = {}
        self._checked: set[func.FuncOp] = set()
        self._bound: dict[tuple[func.FuncOp, tuple], tuple[str, StreamProgram, Interpreter]] = {}

    @impl_callable(func.FuncOp)
    def call_func(self, interpreter: Interpreter, op: func.FuncOp, args: PythonValues) -> PythonValues:
        self.record.entered[op.sym_name.data] += 1
        if UNKNOWN_SHAPE_ATTR in op.attributes and self.bind is not None:
            label, program, own = self._bound_program(op, args)
            self._called(label)
            return tuple(run_program(program, own, tuple(args), None))
        if is_control_program(op):
            if op not in self._checked:
                read_control_program(op)  # StreamError: no reading, or a loop with no way out
                self._checked.add(op)
            self.record.programs += self.in_programs == 0
            self.in_programs += 1
            try:
                return FuncFunctions().call_func(interpreter, op, args)
            finally:
                self.in_programs -= 1
        if not on_streams(op):
            return FuncFunctions().call_func(interpreter, op, args)
        if op not in self._programs:
            self._programs[op] = stream_program(op)
        name = op.sym_name.data
        self._called(name)
        module = op.parent_op()
        assert isinstance(module, ModuleOp)
        self.record.functions[name] = (module, name)
        return tuple(run_program(self._programs[op], interpreter, tuple(args), None))

    def _called(self, label: str) -> None:
        self.record.calls.append(label)
        self.record.on_device.append(self.in_programs > 0)

    @impl_terminator(LabelSwitchOp)
    def run_label_switch(self, interpreter: Interpreter, op: LabelSwitchOp, args: PythonValues):
        self.record.labels += 1
        return Successor(switch_target(op, args[0]), ()), ()

    @impl_terminator(LabelGotoOp)
    def run_label_goto(self, interpreter: Interpreter, op: LabelGotoOp, args: PythonValues):
        self.record.labels += 1
        return Successor(goto_target(op, self.gone_to), args), ()

    def _bound_program(self, op: func.FuncOp, args: PythonValues) -> tuple[str, StreamProgram, Interpreter]:
        """`op` bound to its arguments' sizes and lowered by the binder (kept for the next call
        with these sizes), with an interpreter over the bound module's weights."""
        assert self.bind is not None
        shapes = tuple(tuple(np.shape(a)) for a in args)
        known = self._bound.get((op, shapes))
        if known is None:
            alone, fn = self.bind(op, shapes)
            label = f"{op.sym_name.data}@{'/'.join('x'.join(map(str, s)) for s in shapes)}"
            self.record.functions[label] = (alone, fn.sym_name.data)
            known = (label, stream_program(fn), module_interpreter(alone, weights_of(alone)))
            self._bound[(op, shapes)] = known
        return known

    @impl(IfOp)
    def run_if(self, interpreter: Interpreter, op: IfOp, args: PythonValues) -> PythonValues:
        self.record.reads += 1  # the condition, read back
        return ControlFlowFunctions().run_if(interpreter, op, args).values  # the @impl wrapper's result

    @impl(LoopOp)
    def run_loop(self, interpreter: Interpreter, op: LoopOp, args: PythonValues) -> PythonValues:
        body = op.body.root_reference.data
        before = self.record.entered[body]
        results = ControlFlowFunctions().run_loop(interpreter, op, args).values
        self.record.reads += 1 + self.record.entered[body] - before  # the first condition, then one per iteration
        return results


def run_host(
    module: ModuleOp,
    inputs: Mapping[str, np.ndarray],
    weights: Mapping[str, np.ndarray] | None = None,
    threads: int | None = None,
    bind: Binder | None = None,
) -> tuple[dict[str, np.ndarray], HostRecord]:
    """Runs a module whose `@main` the host runs (a host program, or a function of unknown shapes):
    its outputs by name, and what the host did. `bind` binds and lowers a function of unknown
    shapes when it is called (lowering/run_time.py); without it such a function runs at the graph
    level."""
    fn = main_function(module)
    args = tuple(
        to_physical(a, t) for a, t in zip(check_inputs(module, inputs), tensor_types(fn.function_type.inputs.data))
    )
    interpreter = module_interpreter(module, weights_of(module) if weights is None else weights)
    host = HostFunctions(bind)
    interpreter.register_implementations(host, override=True)
    with run_threads(threads):
        results = interpreter.call_op(fn, args)
    outputs = (to_logical(np.asarray(r), t) for r, t in zip(results, tensor_types(fn.function_type.outputs.data)))
    return dict(zip(output_names(fn), outputs)), host.record


@dataclass(frozen=True)
class HostTime:
    """A run's modeled time: the sunk subgraphs' (each call's simulated latency, with its launch
    unless a control program made it), the control programs' launches and label tasks, and the
    conditions read back."""

    device_s: float
    reads_s: float
    calls: int
    reads: int
    labels: int = 0

    @property
    def total_s(self) -> float:
        return self.device_s + self.reads_s


def host_time(record: HostRecord, target: Target) -> HostTime:
    """The modeled time of the run `record` describes, on `target`."""
    latency: dict[str, float] = {}
    for label in record.calls:
        if label not in latency:
            owner, name = record.functions[label]
            latency[label] = simulate_module(owner, target, name).latency
    launch = target.host.launch_s
    device = sum(latency[label] - (launch if sunk else 0.0) for label, sunk in zip(record.calls, record.on_device))
    device += record.programs * launch + record.labels * target.events.label_s
    return HostTime(device, record.reads * target.host.d2h_read_s, len(record.calls), record.reads, record.labels)
