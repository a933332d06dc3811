"""The KiVA objects as sprites: each rendered once per (object, view, size) and cached in
memory and on disk (``$PROCVIS_CACHE/kiva``, default ``~/.cache/procvis/kiva``)."""
from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path

import numpy as np
import torch
from PIL import Image

from kernels.glyphs import cache_dir
from kernels.mesh_render import render_parts

from .objects import build

CACHE_VERSION = 2                # 2: edges un-premultiplied (no dark fringe)


def _cache_dir() -> Path:
    return cache_dir() / "kiva"


@functools.lru_cache(maxsize=512)
def sprite(name: str, view: str = "front", size: int = 256) -> torch.Tensor:
    """The RGBA sprite of object ``name`` (``[4, size, size]`` uint8), rendered once and then
    read from the cache."""
    digest = hashlib.blake2b(f"{CACHE_VERSION}:{name}:{view}:{size}".encode(), digest_size=6).hexdigest()
    path = _cache_dir() / f"{name}-{view}-{size}-{digest}.png"
    if path.exists():
        try:
            return torch.from_numpy(np.asarray(Image.open(path).convert("RGBA")).copy()).permute(2, 0, 1).contiguous()
        except OSError:
            pass                         # a damaged cache file: render again
    img = render_parts(build(name), view, size)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".tmp-{os.getpid()}-{path.name}")
        Image.fromarray(img.permute(1, 2, 0).numpy(), "RGBA").save(tmp)
        tmp.replace(path)
    except OSError:
        pass                             # an unwritable cache only costs speed
    return img
