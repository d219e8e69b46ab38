"""GE's own operators in an ONNX graph: domain `ai.ge`, the op type a ge op's name without its
dialect prefix (`conv_backprop_input` for ge.conv_backprop_input), its attributes the op's
properties, its inputs the op's operands in order.

ONNX has no operator for what some frontends need to say directly: a convolution's or a pool's
gradient (GE's Conv2DBackpropInput / Filter, MaxPoolGrad), which the PyTorch frontend writes for
AOT autograd's backward graphs (frontend/torch_converters.py). Such a node imports as the one ge
op it names, typed by the op's own shape function, as a default-domain node mapped to a ge op is.
"""

from __future__ import annotations

import onnx

from ge.ge_dialects import ge

GE_DOMAIN = "ai.ge"
GE_DOMAIN_VERSION = 1


def ge_domain_op(node: onnx.NodeProto) -> type[ge.GeOp] | None:
    """The ge op an `ai.ge` node names; None for another domain or a name ge has no op for."""
    if node.domain != GE_DOMAIN:
        return None
    return _ops_by_name().get(f"ge.{node.op_type}")


def _ops_by_name() -> dict[str, type[ge.GeOp]]:
    return {op.name: op for op in ge.ALL_OPS if issubclass(op, ge.GeOp)}
