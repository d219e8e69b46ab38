"""A ge-level or fused-level module as a Graphviz DOT graph (`ge-translate --export-dot`, `ge.visualize`).

- one node per op of @main, labelled with the op (`ge.conv`) and its model node name; constants are
  not nodes: a consumer lists its constant operands (`W: 64x3x7x7 f32 FRACTAL_Z`) in its label;
- the graph's inputs and outputs are house-shaped nodes named like the graph's signature;
- each `fused.group` is a cluster (`cluster_<n>`) titled with its pattern class and rule, holding its
  member ops; edges cross the cluster's border where the kernel reads and writes memory;
- every edge is labelled with the value's logical shape, element type and storage format
  (`1x64x56x56 f16 NC1HWC0`; no format: an ND tensor);
- with remarks, the rejected fusions of `fuse-ops` on this graph are notes with dashed edges to the
  ops they name. Remarks are not kept in the IR, so they are made again: fuse-ops runs on a copy
  (a fused module's groups are first dissolved back into their ops, which gives fuse-ops the graph
  it fused). The module itself is never changed.

Stream- and task-level modules are refused in one line (their kernels and events are not a
dataflow graph of operators). The output depends only on the module: node ids follow program
order, and every name is escaped for DOT's quoted strings.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Block, Operation, SSAValue

from ge.ge_dialects import fused, ge
from ge.ge_dialects.context import make_context
from ge.ge_dialects.ge.base import location_name
from ge.ge_dialects.ge.types import format_of, shape_of, type_name
from ge.ge_dialects.ge.weights import clone_with_weights
from ge.interpreter.runner import InputError, input_names, main_function, output_names
from ge.passes import remarks as remark_log
from ge.passes.fuse_ops import FuseOpsPass
from ge.passes.pipeline import LOWERED_DIALECTS
from ge.tools.common import UserError


def escape(text: str) -> str:
    """`text` inside a DOT double-quoted string: backslashes and quotes escaped (DOT reads `\\n`,
    `\\l`, `\\N` ... as escapes), control characters as spaces (a label is one logical line)."""
    text = text.replace("\\", "\\\\").replace('"', '\\"')
    return "".join(" " if ord(c) < 32 or ord(c) == 127 else c for c in text)


def type_label(t: object) -> str:
    """`1x64x56x56 f16 NC1HWC0`: logical shape, element type, storage format (when it has one)."""
    if not isinstance(t, TensorType):
        return str(t)
    dims = "x".join("?" if d is None else str(d) for d in shape_of(t)) or "scalar"
    fmt = format_of(t)
    text = f"{dims} {type_name(t.element_type)}"
    return f"{text} {fmt.storage.data}" if fmt is not None else text


def _label(*lines: str) -> str:
    return "\\n".join(escape(line) for line in lines if line)


@dataclass
class _Dot:
    lines: list[str] = field(default_factory=list)
    source: dict[SSAValue, str] = field(default_factory=dict)
    """Value -> the DOT node that produces it (group block args and results resolved across the border)."""
    constants: dict[SSAValue, ge.ConstantOp] = field(default_factory=dict)
    by_name: dict[str, list[str]] = field(default_factory=dict)
    edges: list[str] = field(default_factory=list)
    count: int = 0
    clusters: int = 0

    def new_id(self) -> str:
        self.count += 1
        return f"n{self.count - 1}"

    def block(self, block: Block, indent: str) -> list[SSAValue]:
        for op in block.ops:
            if isinstance(op, (func.ReturnOp, fused.YieldOp)):
                return list(op.operands)
            if isinstance(op, ge.ConstantOp):
                self.constants[op.output] = op
            elif isinstance(op, fused.GroupOp):
                self.group(op, indent)
            else:
                self.op(op, indent)
        return []

    def op(self, op: Operation, indent: str) -> None:
        node = self.new_id()
        name = location_name(op)
        consts = []
        names = [n for n, _ in op.get_irdl_definition().operands] if isinstance(op, ge.GeOp) else []
        for i, v in enumerate(op.operands):
            if v in self.constants:
                what = names[i] if i < len(names) else f"#{i}"
                consts.append(f"{what}: {type_label(v.type)}")
            else:
                self.edges.append(f'{self.source[v]} -> {node} [label="{escape(type_label(v.type))}"];')
        extra = f"{op.p('src_format')} -> {op.p('dst_format')}" if isinstance(op, ge.TransDataOp) else ""
        self.lines.append(f'{indent}{node} [label="{_label(op.name, name or "", extra, *consts)}"];')
        if name:
            self.by_name.setdefault(name, []).append(node)
        for r in op.results:
            self.source[r] = node

    def group(self, group: fused.GroupOp, indent: str) -> None:
        n = self.clusters
        self.clusters += 1
        title = _label(f"{group.pattern.data}: {group.rule.data}", location_name(group) or "")
        self.lines.append(f"{indent}subgraph cluster_{n} {{")
        self.lines.append(f'{indent}  label="{title}"; style="rounded,filled"; fillcolor="#eef3fb"; color="#5b7db1";')
        for arg, outer in zip(group.body.block.args, group.inputs):
            if outer in self.constants:
                self.constants[arg] = self.constants[outer]
            else:
                self.source[arg] = self.source[outer]
        yielded = self.block(group.body.block, indent + "  ")
        self.lines.append(f"{indent}}}")
        for r, v in zip(group.results, yielded):
            if v in self.constants:
                self.constants[r] = self.constants[v]
            else:
                self.source[r] = self.source[v]


def _check_graph_level(module: ModuleOp) -> None:
    for op in module.walk():
        if op.name.split(".", 1)[0] in LOWERED_DIALECTS:
            raise UserError(
                f"DOT export: the module is lowered ({op.name} found); "
                "DOT export draws ge-level or fused-level IR (export before lower-to-tasks)"
            )


def dissolve_groups(module: ModuleOp) -> None:
    """Moves every fused.group's ops back into @main (the graph fuse-ops started from)."""
    main = main_function(module).body.block
    for group in [op for op in main.ops if isinstance(op, fused.GroupOp)]:
        body = group.body.block
        terminator = body.last_op
        assert isinstance(terminator, fused.YieldOp)
        for arg, outer in zip(body.args, group.inputs):
            arg.replace_all_uses_with(outer)
        for result, value in zip(group.results, terminator.operands):
            result.replace_all_uses_with(value)
        for op in list(body.ops):
            if op is not terminator:
                op.detach()
                main.insert_op_before(op, group)
        group.detach()
        group.erase(safe_erase=False)


def rejected_fusions(module: ModuleOp) -> list[remark_log.Remark]:
    """The fusions fuse-ops rejects on this graph, in the order it considered them (on a copy)."""
    copy = clone_with_weights(module)
    dissolve_groups(copy)
    with remark_log.collected() as found:
        FuseOpsPass().apply(make_context(), copy)
    return [r for r in found if r.kind == "rejected" and r.pass_name == FuseOpsPass.name]


def module_to_dot(module: ModuleOp, remarks: bool = False, title: str = "main") -> str:
    """The DOT text of the module's @main (see the module docstring)."""
    _check_graph_level(module)
    try:
        fn = main_function(module)
    except InputError:
        raise UserError("DOT export: the module has no func.func @main") from None
    dot = _Dot()
    inputs = []
    for i, (arg, name) in enumerate(zip(fn.body.block.args, input_names(fn))):
        dot.source[arg] = f"in{i}"
        inputs.append(f'  in{i} [label="{_label(name, type_label(arg.type))}", shape=invhouse, fillcolor="#e3f2e1"];')
    returned = dot.block(fn.body.block, "  ")
    outputs = []
    for i, (value, name) in enumerate(zip(returned, output_names(fn))):
        outputs.append(f'  out{i} [label="{_label(name)}", shape=house, fillcolor="#fbe9d0"];')
        if value in dot.constants:
            continue
        dot.edges.append(f'{dot.source[value]} -> out{i} [label="{escape(type_label(value.type))}"];')
    notes = []
    if remarks:
        for i, remark in enumerate(rejected_fusions(module)):
            text = f"rejected {remark.rule}: {remark.reason}"
            notes.append(f'  r{i} [label="{_label(text)}", shape=note, fillcolor="#fff7c2", fontsize=8];')
            targets = sorted({node for name in remark.nodes for node in dot.by_name.get(name, [])}, key=_node_order)
            for node in targets:
                notes.append(f"  r{i} -> {node} [style=dashed, arrowhead=none, color=gray50];")
    head = [
        f'digraph "{escape(title)}" {{',
        '  graph [rankdir=TB, fontname="Helvetica", fontsize=10];',
        '  node [shape=box, style="rounded,filled", fillcolor=white, fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=8];',
    ]
    body = [*inputs, *dot.lines, *outputs, *(f"  {e}" for e in dot.edges), *notes]
    return "\n".join([*head, *body, "}"]) + "\n"


def _node_order(node: str) -> int:
    return int(node[1:])
