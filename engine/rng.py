"""Per-sample randomness: a counter-based generator keyed by ``(seed, task id, index)``.

Each sample gets its own Philox stream whose 128-bit key is a hash of the three values, so
its content never depends on which other samples were drawn before it, in which order, in
which process, worker or rank, or in batches of which size.
"""
from __future__ import annotations

import hashlib

import numpy as np


def sample_key(seed: int, task_id: str, index: int) -> int:
    """The 128-bit Philox key of one sample."""
    if int(seed) != seed or int(index) != index or index < 0:
        raise ValueError(f"seed={seed!r} must be an integer and index={index!r} a non-negative integer")
    h = hashlib.blake2b(f"procvis\x00{int(seed)}\x00{task_id}\x00{int(index)}".encode(), digest_size=16)
    return int.from_bytes(h.digest(), "little")


def sample_rng(seed: int, task_id: str, index: int) -> np.random.Generator:
    """A fresh numpy ``Generator`` (Philox, counter 0) for sample ``(seed, task_id, index)``."""
    return np.random.Generator(np.random.Philox(key=sample_key(seed, task_id, index)))
