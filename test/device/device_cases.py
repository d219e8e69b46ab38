"""Builders of task records for the device-model tests."""

from __future__ import annotations

import math

from ge.device import SimTask, TaskWork, Tensor, dtype_bytes


def tensor(name: str, shape: tuple[int, ...], dtype: str = "f16", fmt: str = "ND") -> Tensor:
    return Tensor(name, int(math.prod(shape) * dtype_bytes(dtype)), tuple(shape), dtype, fmt)


def raw(name: str, nbytes: int, dtype: str = "f16") -> Tensor:
    """A tensor of `nbytes` bytes (1-D shape)."""
    return Tensor(name, nbytes, (int(nbytes // dtype_bytes(dtype)),), dtype, "ND")


def vector_task(
    name: str,
    in_bytes: int,
    out_bytes: int,
    elems: int = 0,
    block_dim: int = 1,
    dtype: str = "f16",
    inputs: tuple[str, ...] | None = None,
    output: str | None = None,
    transcendental: int = 0,
) -> TaskWork:
    ins = (
        tuple(raw(n, in_bytes // len(inputs), dtype) for n in inputs)
        if inputs
        else (raw(f"{name}:in", in_bytes, dtype),)
    )
    outs = (raw(output or f"{name}:out", out_bytes, dtype),)
    return TaskWork(name, "Add", "vector", dtype, 0, elems, transcendental, ins, outs, block_dim=block_dim)


def conv_work(
    name: str = "/layer1/0/conv2/Conv",
    n: int = 1,
    c: int = 64,
    hw: int = 56,
    k: int = 64,
    r: int = 3,
    block_dim: int = 32,
    engine: str = "cube+vector",
    dtype: str = "f16",
    x: str = "x",
    y: str = "y",
) -> TaskWork:
    """A ResNet-50-like 3x3 conv (stride 1, same padding) with a ReLU epilogue."""
    xt = tensor(x, (n, c, hw, hw), dtype, "NC1HWC0")
    wt = tensor(f"{name}:w", (k, c, r, r), dtype, "FRACTAL_Z")
    yt = tensor(y, (n, k, hw, hw), dtype, "NC1HWC0")
    macs = n * k * hw * hw * c * r * r
    out_elems = n * k * hw * hw
    c2v = yt.nbytes if engine == "cube+vector" else 0
    vec = out_elems if engine != "cube" else 0
    return TaskWork(
        name,
        "fused:cube_epilogue" if engine == "cube+vector" else "Conv",
        engine,
        dtype,
        macs,
        vec,
        0,
        (xt, wt),
        (yt,),
        cube_to_vector_bytes=c2v,
        block_dim=block_dim,
    )


def chain(works: list[TaskWork], stream: int = 0) -> list[SimTask]:
    return [SimTask(w, stream, i) for i, w in enumerate(works)]
