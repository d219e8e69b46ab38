"""Raw byte damage, for any file a case holds (a model, an IR text, a sidecar, an inputs file)."""

from __future__ import annotations

import random


def mutate_bytes(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """Raw byte damage: flips, truncation, insertion, splicing."""
    data = bytearray(data)
    choice = rng.random()
    if not data or choice < 0.3:
        for _ in range(rng.choice([1, 2, 8, 64])):
            if data:
                i = rng.randrange(len(data))
                data[i] = rng.choice([0, 0xFF, data[i] ^ (1 << rng.randrange(8)), rng.randrange(256)])
        return bytes(data), "bytes:flip"
    if choice < 0.55:
        return bytes(data[: rng.randrange(len(data))]), "bytes:truncate"
    if choice < 0.7:
        i = rng.randrange(len(data))
        return bytes(
            data[:i] + bytes(rng.randrange(256) for _ in range(rng.choice([1, 7, 100]))) + data[i:]
        ), "bytes:insert"
    if choice < 0.8:
        i, j = sorted(rng.randrange(len(data)) for _ in range(2))
        return bytes(data[:j] + data[i:j] + data[j:]), "bytes:repeat"
    if choice < 0.9:
        return b"", "bytes:empty"
    return bytes(rng.randrange(256) for _ in range(rng.choice([1, 16, 4096]))), "bytes:random"
