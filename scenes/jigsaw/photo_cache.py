"""The built-in photographs kept on disk once drawn (``$PROCVIS_CACHE/jigsaw``), so that a
new process (a DataLoader or generate worker, the next run) reads a photo in under a
millisecond instead of drawing it again (about 35 ms at 384 px; a hard missing-piece item
looks at two dozen of them).

A photo is stored as its raw pixels (``.npy``, 3 x S x S bytes: the default set of 1,100
photos at 384 px takes about 490 MB): photos are noisy textures that PNG shrinks by half
at a third of the drawing's cost, which a first run would pay for every photo.

What is read must be what drawing gives, bit for bit, so the folder is named for a digest
of everything that draws a photo: the source of :mod:`.photos`, of every module of the
``engine`` and ``kernels`` packages, and the versions of numpy, torch and numba. Any change
there starts a new folder (older folders are removed once no process has written to them
for :data:`STALE_S`). A file that cannot be read is drawn again; a cache that cannot be
written only costs speed.
"""
from __future__ import annotations

import functools
import hashlib
import os
import shutil
import time
from pathlib import Path

import numpy as np
import torch

import engine
import kernels
from kernels.glyphs import cache_dir

from . import photos

STALE_S = 600     # a folder of other code untouched this long is no longer being filled


@functools.lru_cache(maxsize=1)
def code_digest() -> str:
    """Hex digest of what a drawn photo's pixels depend on (see the module's docstring)."""
    import numba

    h = hashlib.blake2b(digest_size=8)
    files = [Path(photos.__file__)] + sorted(
        p for pkg in (engine, kernels) for p in Path(pkg.__file__).parent.glob("*.py"))
    for f in files:
        h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    h.update(f"numpy {np.__version__} torch {torch.__version__} numba {numba.__version__}".encode())
    return h.hexdigest()


def folder() -> Path:
    """Where this code's photos are kept: ``$PROCVIS_CACHE/jigsaw/<code_digest()>``."""
    return cache_dir() / "jigsaw" / code_digest()


def photo(p: int, shot: int, size: int) -> torch.Tensor:
    """:func:`.photos.photo` ``(p, shot, size)``, ``[3, size, size]`` uint8: read from the
    cache when it holds it, else drawn and written there."""
    path = folder() / str(size) / f"{p}-{shot}.npy"
    try:
        pixels = np.load(path, allow_pickle=False)
        if pixels.shape == (3, size, size) and pixels.dtype == np.uint8:
            return torch.from_numpy(pixels)
    except (OSError, ValueError, EOFError):
        pass                              # absent or damaged: draw it
    img = photos.photo(p, shot, size)
    _keep(path, img)
    return img


def _keep(path: Path, img: torch.Tensor) -> None:
    """Write ``img`` to ``path`` (whole or not at all); a write that makes a new folder also
    clears the folders of other code (:func:`_clear_stale`)."""
    try:
        fresh = not path.parent.is_dir()
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".tmp-{os.getpid()}-{path.name}")
        with open(tmp, "wb") as f:
            np.save(f, img.numpy(), allow_pickle=False)
        os.replace(tmp, path)
        if fresh:
            _clear_stale(path.parent.parent.parent)
    except OSError:
        pass                              # an unwritable cache only costs speed


def _clear_stale(root: Path) -> None:
    """Remove the folders under ``root`` (``$PROCVIS_CACHE/jigsaw``) of other code that no
    process has written to for :data:`STALE_S` seconds."""
    now = time.time()
    for other in root.iterdir():
        if other.name == code_digest() or not other.is_dir():
            continue
        try:
            newest = max([other.stat().st_mtime] + [d.stat().st_mtime for d in other.iterdir()])
        except OSError:
            continue
        if now - newest > STALE_S:
            shutil.rmtree(other, ignore_errors=True)
