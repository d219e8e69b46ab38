"""Data-movement and shape ops: transpose, reshape, concat, slice, gather, cast, pad, resize, ..."""

TENSOR_OPS: list = []
