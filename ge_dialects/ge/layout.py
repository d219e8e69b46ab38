"""Storage formats: what GE's physical layouts are, which conversions exist, and `ge.trans_data`.

A ge tensor type carries its logical shape (in its origin format) and, in its `#ge.fmt<origin,
storage>` encoding, the storage format the device keeps its bytes in. This module knows, from the
type alone, whether a storage format is a real relayout ("non-trivial"), whether it is supported for
the tensor's rank and element type, and the physical shape of the stored array
(`storage_shape(type)`). The numpy conversions live in `interpreter/layouts.py`.

The formats (hicann/ge `base/formats/format_transfers`; C0 is 32 bytes of the element type, i.e. 8
for 32-bit, 16 for 16-bit, 32 for 8-bit and 64 for 4-bit types):

    NCHW    [N, C, H, W]                                   the logical order of a 4-D image tensor
    NHWC    [N, H, W, C]                                   channels last
    NC1HWC0 [N, ceil(C/C0), H, W, C0]                      C split in C0-wide slices, zero-padded
    FRACTAL_Z  [ceil(C/C0)*H*W, ceil(N/16), 16, C0]        conv weights (N = output channels)
    FRACTAL_NZ [..., ceil(W/C0), ceil(H/16), 16, C0]       matmul operands: 16 x C0 fractals of
                                                           the last two dims [..., H, W], column-
                                                           block major, zero-padded
    ND      the logical order, whatever the rank

An ND (or unencoded) 4-D tensor is read as NCHW by the image formats, as GE does.

`ge.trans_data` converts a tensor between two storage formats of the same logical shape and element
type; it is the only op whose semantics are defined on the stored (physical) arrays:

    %y = ge.trans_data %x {src_format = "NCHW", dst_format = "NC1HWC0"}
           : (tensor<1x3x8x8xf32, #ge.fmt<NCHW>>) -> tensor<1x3x8x8xf32, #ge.fmt<NCHW, NC1HWC0>>
"""

from __future__ import annotations

from functools import lru_cache
from typing import ClassVar

from xdsl.dialects.builtin import TensorType, i1
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def, traits_def
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from ge.ge_dialects.ge.base import GeOp, InferArgs, StrProp, describe, name_loc
from ge.ge_dialects.ge.facts import Carries, ComputesIn, CopiesElements, Engine, MovesData, RunsOn, StorageFormats
from ge.ge_dialects.ge.types import (
    ROW_MAJOR,
    FormatAttr,
    Shape,
    format_of,
    shape_of,
    tensor,
    tensor_type_of,
    type_name,
)

ND, NCHW, NHWC = "ND", "NCHW", "NHWC"
NC1HWC0, FRACTAL_Z, FRACTAL_NZ = "NC1HWC0", "FRACTAL_Z", "FRACTAL_NZ"
ACTIVATION_FORMATS = (NC1HWC0, FRACTAL_NZ)
"""The blocked formats of activations, which format-agnostic ops carry (`facts.Carries`)."""


def whole_channel_blocks(
    rule: str, data: str, result: str, condition: str, full_shape: str, all_arrive: bool = False
) -> StorageFormats:
    """NC1HWC0 through a copy that takes whole C1 blocks along C (a concat, split or slice) when
    `condition` says its channel offsets are multiples of C0; `full_shape` names which operands
    count as full-shape."""
    return StorageFormats(
        Carries(rule, (NC1HWC0,), (data,), (result,), ((condition,),), full_shape=full_shape, all_arrive=all_arrive)
    )


def nz_along_last_axis(rule: str, operands: tuple[str, ...], result: str) -> StorageFormats:
    """FRACTAL_NZ through an op that works along its last axis (softmax, layer norm), when its
    `axis` is the last: each row of fractals holds whole rows."""
    return StorageFormats(Carries(rule, (FRACTAL_NZ,), operands, (result,), (("last_axis", "axis", operands[0]),)))


def conv_formats(rule: str, x: str, y: str, w: str, backward: bool = False) -> StorageFormats:
    """A Cube convolution's formats (GE's Conv2D op info): `x` and `y` in NC1HWC0, the filter `w`
    in FRACTAL_Z when it is a constant or a variable and the conv is not grouped (GE's group-packed
    FRACTAL_Z is not modeled)."""
    return StorageFormats(
        ComputesIn(f"{rule}-nc1hwc0", NC1HWC0, (x,), (y,), backward=backward),
        ComputesIn(f"{rule}-weight-fractal-z", FRACTAL_Z, (w,), (), (("weight", w), ("ungrouped",)), backward=backward),
    )


C0_BYTES = 32
"""C0 is this many bytes of the element type: 32 int8 / uint8 elements, as GE's format transfer
gives 1-byte types (formats/utils, GetCubeSizeByDataType: 2 x kCubeSize = 32), 16 f16 elements.
GE gives every wider type kCubeSize = 16 as well; the 8 f32 elements here are 32 bytes too."""
FRACTAL_ROWS = 16
"""Rows of a cube fractal: FRACTAL_Z's N block and FRACTAL_NZ's H block."""

IMAGE_FORMATS = (NCHW, NHWC)
"""Origin formats of a 4-D image tensor (ND stands for NCHW at rank 4)."""
STORAGE_FORMATS = (ND, NCHW, NHWC, NC1HWC0, FRACTAL_Z, FRACTAL_NZ)
"""Every format a tensor may be stored in."""
_C0_BITS = (4, 8, 16, 32)


class LayoutError(ValueError):
    """A storage format that a tensor's rank, element type or shape cannot have."""


# -- formats of a type -----------------------------------------------------------------------------


def origin_of(t: TensorType) -> str:
    fmt = format_of(t)
    return fmt.origin.data if fmt is not None else ND


def storage_of(t: TensorType) -> str:
    fmt = format_of(t)
    return fmt.storage.data if fmt is not None else ND


def image_origin(origin: str, rank: int) -> str:
    """The origin as the image formats read it: ND at rank 4 is NCHW."""
    return NCHW if origin == ND and rank == 4 else origin


def is_trivial(origin: str, storage: str, rank: int) -> bool:
    """Whether a tensor stored in `storage` is held in its logical order (no relayout)."""
    return storage == ND or image_origin(storage, rank) == image_origin(origin, rank)


def is_stored_logically(t: Attribute) -> bool:
    """Whether values of type `t` are held in their logical order (not a tensor: trivially so)."""
    if not isinstance(t, TensorType) or not isinstance(t.encoding, FormatAttr):
        return True
    fmt = t.encoding
    return fmt.storage == fmt.origin or is_trivial(fmt.origin.data, fmt.storage.data, len(t.get_shape()))


def c0_of(element_type: Attribute) -> int | None:
    """C0 of an element type (32 bytes of it), or None for the types without one (64-bit, 2-bit)."""
    if element_type == i1:
        return C0_BYTES  # bool is one byte on the device
    bits = getattr(element_type, "bitwidth", None)
    return C0_BYTES * 8 // bits if bits in _C0_BITS else None


def _padded_dims(origin: str, storage: str, rank: int) -> tuple[int, ...]:
    """The logical dims a storage format splits into blocks (and pads): they must be static."""
    if storage == NC1HWC0:
        return (1 if image_origin(origin, rank) == NCHW else 3,)
    if storage == FRACTAL_Z:
        return (0, 1) if image_origin(origin, rank) == NCHW else (0, 3)
    if storage == FRACTAL_NZ:
        return (rank - 2, rank - 1)
    return ()


def unsupported(origin: str, storage: str, shape: Shape, element_type: Attribute) -> str | None:
    """Why `storage` is not a layout of a tensor of this origin, shape and element type (None: it is)."""
    rank = len(shape)
    if storage not in STORAGE_FORMATS:
        return f"unknown storage format {storage}"
    if is_trivial(origin, storage, rank):
        return None
    if storage in (NCHW, NHWC, NC1HWC0, FRACTAL_Z):
        if rank != 4 or image_origin(origin, rank) not in IMAGE_FORMATS:
            return f"{storage} needs a 4-D NCHW or NHWC tensor, got origin {origin} of rank {rank}"
    elif storage == FRACTAL_NZ and rank < 2:
        return f"{storage} needs rank >= 2, got rank {rank}"
    if storage in (NC1HWC0, FRACTAL_Z, FRACTAL_NZ):
        if c0_of(element_type) is None:
            return f"{storage} has no C0 for element type {type_name(element_type)}"
        dynamic = [i for i in _padded_dims(origin, storage, rank) if shape[i] is None]
        if dynamic:
            return f"{storage} needs static dims {dynamic} (they are split into blocks)"
    return None


def _checked_c0(element_type: Attribute) -> int:
    """C0 of a blocked layout's element type; `unsupported` has rejected the types without one."""
    c0 = c0_of(element_type)
    assert c0 is not None, "unsupported() rejects blocked layouts of types without a C0"
    return c0


def _static(dim: int | None) -> int:
    """A dim `unsupported` has required static (a padded dim of a blocked layout)."""
    assert dim is not None, "unsupported() rejects blocked layouts with a dynamic padded dim"
    return dim


def _ceil(a: int | None, b: int) -> int | None:
    return None if a is None else -(-a // b)


def physical_shape(shape: Shape, origin: str, storage: str, element_type: Attribute) -> Shape:
    """The shape of the array a tensor of logical `shape` is stored as (None: unknown dim)."""
    reason = unsupported(origin, storage, shape, element_type)
    if reason is not None:
        raise LayoutError(reason)
    rank = len(shape)
    if is_trivial(origin, storage, rank):
        return tuple(shape)
    if storage == FRACTAL_NZ:
        c0 = _checked_c0(element_type)
        *batch, h, w = shape
        return (*batch, _ceil(w, c0), _ceil(h, FRACTAL_ROWS), FRACTAL_ROWS, c0)
    n, c, h, w = shape if image_origin(origin, rank) == NCHW else (shape[0], shape[3], shape[1], shape[2])
    if storage == NCHW:
        return (n, c, h, w)
    if storage == NHWC:
        return (n, h, w, c)
    c0 = _checked_c0(element_type)
    if storage == NC1HWC0:
        return (n, _ceil(c, c0), h, w, c0)
    hw = None if h is None or w is None else h * w
    return (None if hw is None else _static(_ceil(c, c0)) * hw, _ceil(n, FRACTAL_ROWS), FRACTAL_ROWS, c0)  # FRACTAL_Z


def storage_shape(t: TensorType) -> Shape:
    """The physical shape of a value of type `t` (its logical shape unless stored relayouted)."""
    return physical_shape(shape_of(t), origin_of(t), storage_of(t), t.element_type)


# -- types with another storage --------------------------------------------------------------------


@lru_cache(maxsize=8192)
def with_storage(t: TensorType, storage: str) -> TensorType:
    """`t` stored in `storage`: same shape and element type, and `storage_of(result) == storage`.
    An ND 4-D origin becomes NCHW for the image formats; ND storage drops the encoding (plain
    row-major, no format claim). Cached: a model has few distinct types, asked again and again."""
    if storage == ND:
        return tensor(t.element_type, shape_of(t))
    rank = len(t.get_shape())
    origin = origin_of(t)
    if storage in (NCHW, NHWC, NC1HWC0, FRACTAL_Z) and origin == ND and rank == 4:
        origin = NCHW
    if is_trivial(origin, storage, rank):
        origin = storage
    return tensor(t.element_type, shape_of(t), FormatAttr(origin, storage))


def cannot_store(t: TensorType, storage: str) -> str | None:
    """Why a tensor of type `t` cannot be stored in `storage` (None: it can)."""
    want = with_storage(t, storage)
    return unsupported(origin_of(want), storage, shape_of(want), want.element_type)


def origins_compatible(a: str, b: str) -> bool:
    """Relayout keeps the meaning of the data: the origins agree, or one is ND (no claim)."""
    return a == b or ND in (a, b)


# -- ge.trans_data ---------------------------------------------------------------------------------


@irdl_op_definition
class TransDataOp(GeOp):
    """GE TransData: the same logical tensor, stored in another format.

    `src_format` must be the operand's storage format and `dst_format` the result's; the logical
    shape and element type do not change, and the origin formats agree (an ND origin may be read as
    NCHW). Both formats must be layouts the tensor can have (`unsupported`)."""

    name = "ge.trans_data"
    NO_GRADIENT: ClassVar = "layouts are assigned after autodiff"
    # precision is decided before layouts (as in GE, before TransData insertion), and C0 depends on the element type
    PRECISION: ClassVar = "keep"
    src = operand_def(TensorType)
    dst = result_def(TensorType)
    src_format = prop_def(StrProp)
    dst_format = prop_def(StrProp)
    traits = traits_def(
        Pure(), RunsOn(Engine.VECTOR), CopiesElements(), MovesData()
    )  # a layout change; its padding is zeros

    OPERATES_ON_STORAGE: ClassVar[bool] = True
    """Its kernel reads and writes the stored (physical) arrays; every other op's kernel sees
    logical arrays."""

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        t = a.type("src")
        src, dst = a.prop("src_format"), a.prop("dst_format")
        if src != storage_of(t):
            raise a.fail(f"src_format {src} does not match the operand's storage format {storage_of(t)}")
        if src == dst:
            raise a.fail(f"src_format and dst_format are both {src}: nothing to convert")
        for which, fmt in (("src_format", src), ("dst_format", dst)):
            reason = unsupported(origin_of(t), fmt, shape_of(t), t.element_type)
            if reason is not None:
                raise a.fail(f"{which}: {reason}, for {t}")
        return [with_storage(t, dst)]

    def verify_(self) -> None:
        super().verify_()
        src, dst = tensor_type_of(self.src), tensor_type_of(self.dst)
        if storage_of(dst) != self.p("dst_format"):
            raise _fail(
                self, f"result storage format {storage_of(dst)} does not match dst_format {self.p('dst_format')}"
            )
        if not origins_compatible(origin_of(src), origin_of(dst)):
            raise _fail(self, f"origin format changes from {origin_of(src)} to {origin_of(dst)}")
        reason = unsupported(origin_of(dst), storage_of(dst), shape_of(dst), dst.element_type)
        if reason is not None:
            raise _fail(self, f"result type {dst}: {reason}")

    def converts_nd_nz(self) -> bool:
        """Between a row-major layout (ND, or NCHW stored as is) and FRACTAL_NZ: the conversion an
        MTE with ND2NZ / NZ2ND channels does while it moves the data."""
        formats = {self.p("src_format"), self.p("dst_format")}
        return "FRACTAL_NZ" in formats and bool(formats & ROW_MAJOR)

    def converts_5hd(self) -> bool:
        """Between NCHW stored as is (ND at rank 4) and NC1HWC0: what the Vector's TransDataTo5HD
        does in the UB (`[vector] transdata_5hd_bits` says for which element widths)."""
        formats = {self.p("src_format"), self.p("dst_format")}
        t = tensor_type_of(self.src)
        nchw = image_origin(origin_of(t), len(t.get_shape())) == NCHW
        return NC1HWC0 in formats and bool(formats & ROW_MAJOR) and nchw

    def is_view(self) -> bool:
        """Both storage arrays hold the same bytes in the same order, so the conversion moves
        nothing: NC1HWC0 of [N, C, 1, 1] with C a multiple of C0 (pooled features), FRACTAL_NZ of
        [..., H, C0] with H a multiple of 16 (one column of whole fractals)."""
        t = tensor_type_of(self.src)
        dims, c0 = shape_of(t), c0_of(t.element_type)
        formats = {self.p("src_format"), self.p("dst_format")}
        if not formats & ROW_MAJOR or c0 is None or any(d is None for d in dims):
            return False
        shape = [d for d in dims if d is not None]
        if NC1HWC0 in formats:
            nchw = image_origin(origin_of(t), len(shape)) == NCHW
            return nchw and len(shape) == 4 and shape[2] == shape[3] == 1 and shape[1] % c0 == 0
        if FRACTAL_NZ in formats:
            return len(shape) >= 2 and shape[-1] == c0 and shape[-2] % 16 == 0
        return False

    @staticmethod
    def to(value, target: TensorType, name: str | None = None) -> TransDataOp:
        """A (detached) trans_data of `value` whose result has type `target`."""
        op = TransDataOp.build(
            operands=[value],
            result_types=[target],
            properties={"src_format": StrProp(storage_of(value.type)), "dst_format": StrProp(storage_of(target))},
        )
        if name:
            op.location = name_loc(name)
        return op


def _fail(op: GeOp, message: str) -> VerifyException:
    return VerifyException(f"{describe(op)}: {message}")


LAYOUT_OPS = [TransDataOp]

__all__ = ["TransDataOp", "LAYOUT_OPS"]
