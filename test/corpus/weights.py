"""The corpus' weights and inputs, drawn again from a stored model's records (numpy and onnx only).

One definition for both sides: test/corpus/export.py (the torch venv) calibrates the records on
the very tensors these functions draw, and bench/corpus.py (the project's venv, no torch) draws
them for the tests and the bench.

A stored model has, in its metadata entry "ge.corpus" (JSON), a record per removed initializer:
name, dims, dtype, mean, std and whether it is non-negative; and the [low, high) range of each
integer input (`int_ranges`).
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Mapping

import numpy as np
import onnx
from onnx import helper, numpy_helper

META_KEY = "ge.corpus"


def meta(model: onnx.ModelProto) -> dict:
    """The model's "ge.corpus" record: library, family, exporter, opset, weights, int_ranges."""
    for entry in model.metadata_props:
        if entry.key == META_KEY:
            return json.loads(entry.value)
    raise KeyError(f"the model has no {META_KEY!r} metadata entry")


def set_meta(model: onnx.ModelProto, record: Mapping) -> None:
    for entry in model.metadata_props:
        if entry.key == META_KEY:
            entry.value = json.dumps(record)
            return
    entry = model.metadata_props.add()
    entry.key, entry.value = META_KEY, json.dumps(record)


def draw(record: Mapping, seed: int) -> np.ndarray:
    """A seeded normal of the record's mean and std (its absolute value for a non-negative tensor),
    in the record's dtype; the stream of each tensor depends on the seed and its name only."""
    rng = np.random.default_rng([seed, zlib.crc32(record["name"].encode())])
    values = rng.standard_normal(tuple(record["dims"]), dtype=np.float32) * np.float32(record["std"])
    values += np.float32(record["mean"])
    if record.get("nonnegative"):
        values = np.abs(values)
    return values.astype(helper.tensor_dtype_to_np_dtype(onnx.TensorProto.DataType.Value(record["dtype"])))


def with_weights(model: onnx.ModelProto, seed: int = 0) -> onnx.ModelProto:
    """A copy of a stored model with every recorded initializer drawn (`draw`)."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    for record in meta(model)["weights"]:
        out.graph.initializer.append(numpy_helper.from_array(draw(record, seed), record["name"]))
    return out


def inputs(model: onnx.ModelProto, seed: int = 0) -> dict[str, np.ndarray]:
    """Seeded inputs: integers uniform in their recorded [low, high) ([0, 2) when none is recorded),
    floats standard normal."""
    ranges = meta(model)["int_ranges"]
    rng = np.random.default_rng(seed)
    feeds = {}
    for value in model.graph.input:
        tensor_type = value.type.tensor_type
        shape = tuple(d.dim_value for d in tensor_type.shape.dim)
        dtype = helper.tensor_dtype_to_np_dtype(tensor_type.elem_type)
        if np.issubdtype(dtype, np.integer) or dtype == np.bool_:
            low, high = ranges.get(value.name, (0, 2))
            feeds[value.name] = rng.integers(low, high, size=shape).astype(dtype)
        else:
            feeds[value.name] = rng.standard_normal(shape, dtype=np.float32).astype(dtype)
    return feeds
