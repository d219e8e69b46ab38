"""Device bytes of a value: its storage format's physical shape x element size (sub-byte packed)."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import IndexType, f16, f32, i1, i8

from ge.ge_dialects.ge.layout import with_storage
from ge.ge_dialects.ge.sizes import storage_bytes
from ge.ge_dialects.ge.types import f4E2M1FN, i4, tensor


@pytest.mark.parametrize(
    "element, storage, shape, expected",
    [
        (f32, "ND", (1, 3, 8, 8), 3 * 64 * 4),
        (f32, "NCHW", (1, 3, 8, 8), 3 * 64 * 4),
        (f32, "NC1HWC0", (1, 3, 8, 8), 1 * 1 * 64 * 8 * 4),  # C=3 padded to C0=8
        (f16, "NC1HWC0", (1, 3, 8, 8), 1 * 1 * 64 * 16 * 2),  # C0=16 in f16
        (f16, "NC1HWC0", (1, 17, 2, 2), 1 * 2 * 4 * 16 * 2),  # two C1 slices
        (f16, "FRACTAL_Z", (3, 5, 3, 3), 1 * 9 * 1 * 16 * 16 * 2),  # N padded to 16, C to C0
        (f16, "FRACTAL_NZ", (2, 20, 24), 2 * 2 * 2 * 16 * 16 * 2),  # H 20 -> 32, W 24 -> 32
        (i8, "NC1HWC0", (1, 3, 1, 1), 32),  # C0 = 32 bytes of int8
        (i4, "ND", (7,), 4),  # packed, rounded up
        (f4E2M1FN, "ND", (3,), 2),
        (i1, "ND", (5,), 5),  # a bool is one byte
    ],
)
def test_storage_bytes(element, storage, shape, expected):
    t = with_storage(tensor(element, shape), storage)
    assert storage_bytes(t) == expected


def test_a_non_tensor_takes_no_bytes():
    assert storage_bytes(IndexType()) == 0
