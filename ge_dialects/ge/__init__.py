"""The ge dialect: one op per graph operator, GE's tensor formats, weights by reference.

The ops are split over modules by kind (elementwise, nn, tensor, indexing); this module gathers them into
one `Dialect` and re-exports every op class, so `from ge.ge_dialects import ge; ge.AddOp` works.
"""

from xdsl.ir import Dialect

from ge.ge_dialects.ge.attention import *  # noqa: F403
from ge.ge_dialects.ge.attention import ATTENTION_OPS
from ge.ge_dialects.ge.base import GeOp as GeOp
from ge.ge_dialects.ge.base import InferArgs as InferArgs
from ge.ge_dialects.ge.bitwise import *  # noqa: F403
from ge.ge_dialects.ge.bitwise import BITWISE_OPS
from ge.ge_dialects.ge.col2im import *  # noqa: F403
from ge.ge_dialects.ge.col2im import COL2IM_OPS
from ge.ge_dialects.ge.collective import *  # noqa: F403
from ge.ge_dialects.ge.collective import COLLECTIVE_OPS
from ge.ge_dialects.ge.constant import ConstantOp as ConstantOp
from ge.ge_dialects.ge.control_flow import CONTROL_FLOW_OPS
from ge.ge_dialects.ge.control_flow import GearsOp as GearsOp
from ge.ge_dialects.ge.control_flow import IfOp as IfOp
from ge.ge_dialects.ge.control_flow import LoopOp as LoopOp
from ge.ge_dialects.ge.conv_grad import *  # noqa: F403
from ge.ge_dialects.ge.conv_grad import CONV_GRAD_OPS
from ge.ge_dialects.ge.conv_transpose import *  # noqa: F403
from ge.ge_dialects.ge.conv_transpose import CONV_TRANSPOSE_OPS
from ge.ge_dialects.ge.custom import *  # noqa: F403
from ge.ge_dialects.ge.custom import CUSTOM_OPS
from ge.ge_dialects.ge.deform_conv import *  # noqa: F403
from ge.ge_dialects.ge.deform_conv import DEFORM_CONV_OPS
from ge.ge_dialects.ge.elementwise import *  # noqa: F403
from ge.ge_dialects.ge.elementwise import ELEMENTWISE_OPS
from ge.ge_dialects.ge.grid_sample import *  # noqa: F403
from ge.ge_dialects.ge.grid_sample import GRID_SAMPLE_OPS
from ge.ge_dialects.ge.indexing import *  # noqa: F403
from ge.ge_dialects.ge.indexing import INDEXING_OPS
from ge.ge_dialects.ge.instance_norm import *  # noqa: F403
from ge.ge_dialects.ge.instance_norm import INSTANCE_NORM_OPS
from ge.ge_dialects.ge.layout import LAYOUT_OPS
from ge.ge_dialects.ge.layout import TransDataOp as TransDataOp
from ge.ge_dialects.ge.linalg import *  # noqa: F403
from ge.ge_dialects.ge.linalg import LINALG_OPS
from ge.ge_dialects.ge.logic import *  # noqa: F403
from ge.ge_dialects.ge.logic import LOGIC_OPS
from ge.ge_dialects.ge.loss import *  # noqa: F403
from ge.ge_dialects.ge.loss import LOSS_OPS
from ge.ge_dialects.ge.nn import *  # noqa: F403
from ge.ge_dialects.ge.nn import NN_OPS
from ge.ge_dialects.ge.norm_grad import *  # noqa: F403
from ge.ge_dialects.ge.norm_grad import NORM_GRAD_OPS
from ge.ge_dialects.ge.optimizer import *  # noqa: F403
from ge.ge_dialects.ge.optimizer import OPTIMIZER_OPS
from ge.ge_dialects.ge.pooling import *  # noqa: F403
from ge.ge_dialects.ge.pooling import POOLING_OPS
from ge.ge_dialects.ge.quantize import *  # noqa: F403
from ge.ge_dialects.ge.quantize import QUANTIZE_OPS
from ge.ge_dialects.ge.recurrent import *  # noqa: F403
from ge.ge_dialects.ge.recurrent import RECURRENT_OPS
from ge.ge_dialects.ge.reductions import *  # noqa: F403
from ge.ge_dialects.ge.reductions import REDUCTION_OPS
from ge.ge_dialects.ge.resize import *  # noqa: F403
from ge.ge_dialects.ge.resize import RESIZE_OPS
from ge.ge_dialects.ge.target_attr import TargetAttr as TargetAttr
from ge.ge_dialects.ge.tensor_grad import *  # noqa: F403
from ge.ge_dialects.ge.tensor_grad import TENSOR_GRAD_OPS
from ge.ge_dialects.ge.tensor_ops import *  # noqa: F403
from ge.ge_dialects.ge.tensor_ops import TENSOR_OPS
from ge.ge_dialects.ge.types import FormatAttr as FormatAttr
from ge.ge_dialects.ge.types import WeightRefAttr as WeightRefAttr
from ge.ge_dialects.ge.unary_math import *  # noqa: F403
from ge.ge_dialects.ge.unary_math import UNARY_MATH_OPS

ALL_OPS: list[type[GeOp]] = [
    ConstantOp,
    *ELEMENTWISE_OPS,
    *UNARY_MATH_OPS,
    *LOGIC_OPS,
    *BITWISE_OPS,
    *NN_OPS,
    *LINALG_OPS,
    *QUANTIZE_OPS,
    *CONV_TRANSPOSE_OPS,
    *COL2IM_OPS,
    *DEFORM_CONV_OPS,
    *POOLING_OPS,
    *INSTANCE_NORM_OPS,
    *CONV_GRAD_OPS,
    *NORM_GRAD_OPS,
    *TENSOR_OPS,
    *TENSOR_GRAD_OPS,
    *REDUCTION_OPS,
    *INDEXING_OPS,
    *RESIZE_OPS,
    *GRID_SAMPLE_OPS,
    *ATTENTION_OPS,
    *RECURRENT_OPS,
    *LAYOUT_OPS,
    *LOSS_OPS,
    *OPTIMIZER_OPS,
    *COLLECTIVE_OPS,
    *CUSTOM_OPS,
]

GE = Dialect("ge", [*ALL_OPS, *CONTROL_FLOW_OPS], [FormatAttr, WeightRefAttr, TargetAttr])
"""The graph operators (ALL_OPS, each a GeOp with its facts) and the control flow that runs
functions of the module (CONTROL_FLOW_OPS)."""
