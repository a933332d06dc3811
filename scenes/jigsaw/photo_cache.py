"""Jigsaw's photos kept on disk once made, so that a new process (a DataLoader or generate
worker, the next run) reads a photo in well under a millisecond instead of making it again:
the built-in photographs (drawn in about 35-40 ms at 384 px) and the photos of a folder
(decoded and squared: about 20 ms for a 2 MP JPEG), with a folder's verdicts (which files
are skipped and why: about 7.5 ms per file to judge). A hard missing-piece item looks at 33
photos.

Where: ``$PROCVIS_PHOTO_CACHE`` when set (``off`` turns the cache off), else
``$PROCVIS_CACHE/jigsaw`` (default ``~/.cache/procvis/jigsaw``). Photos of at most
:data:`MAX_SIZE` pixels are kept, as raw RGB planes with a CRC-32 trailer (3 x S x S + 4
bytes: the default set of 1,100 photos takes about 490 MB at 384 px, 1.9 GB at 768):
photos are noisy textures that PNG shrinks by half at a third of the drawing's cost.

What is read must be what this process would draw, bit for bit:

* the folder is named for a digest of everything that draws a photo: the source of every
  module of the ``engine`` and ``kernels`` packages and of :mod:`.photos` (which imports
  nothing else of the project: a test reads its imports) and :mod:`.sources` (which reads
  and judges a folder's files with ``kernels.images``), the storage :data:`FORMAT`, the
  versions of Python, numpy, torch, numba and llvmlite, and the processor (its name and the
  vector instructions numpy uses: a cache shared by machines keeps their photos apart);
* the digest is of the files as they were when this module was imported (with the code that
  draws): a file changed on disk in between (a checkout during a run) turns the cache off
  for this process;
* a folder's file is kept under :func:`file_key`: its real path, device, inode, size and
  modification and change times (a rewrite, a rename into place, a permission change or a
  restored timestamp all move the change time, which no program can set back), with the
  decoder's settings and codec versions and, for verdicts, the filter's settings; a file
  changed in the last :data:`RACY_S` seconds, or while it was read, is not kept;
* a file of the wrong length or checksum (a verdict: of another form) is made again and
  replaced; files are written whole under a unique temporary name, then renamed; a cache
  that cannot be written costs only speed.

Each process marks its folder as used on first access (and every hour) and removes folders
of other code, and photos and verdicts of folder files, that nothing has used for
:data:`STALE_S`.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import platform
import shutil
import sys
import tempfile
import time
import zlib
from importlib import metadata
from pathlib import Path

import numpy as np
import torch

import engine     # (imported for where their files are)
import kernels
from kernels.glyphs import cache_dir

from . import photos

ENV = "PROCVIS_PHOTO_CACHE"
FORMAT = 2                 # raw RGB planes + CRC-32 of them, little-endian
MAX_SIZE = 768             # larger photos are drawn every time (1,100 photos at 2,400 px would be 19 GB)
STALE_S = 24 * 3600        # a folder of other code unused this long is removed
RACY_S = 3.0               # a folder's file changed this recently is not kept (coarse clocks)
VERDICT = "procvis verdict:"       # a kept verdict: this, the reason, a newline
VERDICTS = ("", "too small", "aspect ratio", "low structure", "too large")   # those kept ("": used)
_KEPT_VERDICTS = {f"{VERDICT}{v}\n".encode("ascii"): v or None for v in VERDICTS}   # the only valid files


def _stamp(files: list[Path]) -> tuple:
    """``(path, mtime_ns, size)`` of each file, or ``None`` when one cannot be read."""
    try:
        return tuple((str(f), s.st_mtime_ns, s.st_size) for f in files for s in [f.stat()])
    except OSError:
        return None


_FILES = [Path(photos.__file__), Path(__file__), Path(__file__).with_name("sources.py")] + sorted(
    p for pkg in (engine, kernels) for p in Path(pkg.__file__).parent.glob("*.py"))
_LOADED = _stamp(_FILES)     # the drawing code's files as this process imported them
_digest: list = []           # [the digest or None], once computed
_marked: dict[Path, float] = {}   # folder -> when this process last marked it as used


def code_digest() -> str | None:
    """Hex digest of what a drawn photo's pixels depend on (see the module's docstring), or
    ``None`` when the files were changed after this process imported them (no cache then)."""
    if not _digest:
        h = hashlib.blake2b(digest_size=8)
        try:
            for f in _FILES:
                h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
            versions = [metadata.version(d) for d in ("numpy", "torch", "numba", "llvmlite")]
        except (OSError, metadata.PackageNotFoundError):
            versions = None
        if versions is None or _LOADED is None or _stamp(_FILES) != _LOADED:
            _digest.append(None)
        else:
            h.update(f"format {FORMAT} python {sys.version} {' '.join(versions)} cpu {_processor()}".encode())
            _digest.append(h.hexdigest())
    return _digest[0]


def _processor() -> str:
    """The processor as far as drawing can tell: its architecture, the compiler's name for it
    and the vector instructions numpy dispatches to (float32 functions may round differently
    from one set to another), so a cache shared between machines keeps their photos apart."""
    import llvmlite.binding as llvm

    simd = getattr(getattr(np, "_core", None), "_multiarray_umath", None)
    features = getattr(simd, "__cpu_features__", {})
    return f"{platform.machine()} {llvm.get_host_cpu_name()} " + ",".join(k for k, on in sorted(features.items()) if on)


def root() -> Path | None:
    """The folder holding one subfolder per code digest, or ``None`` when turned off."""
    where = os.environ.get(ENV)
    if where == "off":
        return None
    return Path(where) if where else cache_dir() / "jigsaw"


def folder() -> Path | None:
    """Where this code's photos are kept (``root() / code_digest()``), or ``None`` when there is
    no cache for this process."""
    try:
        top, digest = root(), code_digest()
    except (RuntimeError, ImportError, OSError):      # no home folder, no compiler library: no cache
        return None
    return None if top is None or digest is None else top / digest


def photo(p: int, shot: int, size: int) -> torch.Tensor:
    """:func:`.photos.photo` ``(p, shot, size)``, ``[3, size, size]`` uint8: read from the
    cache when it holds it, else drawn and written there."""
    where = folder() if size <= MAX_SIZE else None
    if where is None:
        return photos.photo(p, shot, size)
    return _kept(where, f"{size}/{p}-{shot}", size, lambda: photos.photo(p, shot, size))


def file_key(path: Path, extra: str) -> str | None:
    """A name for what the photo file ``path`` holds now, with ``extra`` (text naming what
    else a result depends on): from its real path, device, inode, size and modification and
    change times (the change time moves with every write, rename into place, permission
    change or restored timestamp, and no program can set it back). ``None`` when the file
    cannot be opened or was changed in the last :data:`RACY_S` seconds (a write within
    the filesystem's clock tick could leave every time as it was)."""
    try:
        fd = os.open(path, os.O_RDONLY)        # (opening revalidates a network file's attributes)
        try:
            st = os.fstat(fd)
        finally:
            os.close(fd)
        if time.time() - max(st.st_mtime, st.st_ctime) < RACY_S:
            return None
        key = os.fsencode(os.path.realpath(path)) + (
            f"\0{st.st_dev}\0{st.st_ino}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ctime_ns}\0{extra}").encode()
    except (OSError, ValueError, RuntimeError):
        return None
    return hashlib.blake2b(key, digest_size=12).hexdigest()


def file_photo(path: Path, size: int, extra: str, read) -> torch.Tensor:
    """``read()``: the photo file ``path`` decoded and squared to ``[3, size, size]`` uint8
    (``extra``: the decoder's settings), kept in the cache under :func:`file_key`."""
    where, extra = folder() if size <= MAX_SIZE else None, f"{size} {extra}"
    key = file_key(path, extra) if where is not None else None
    if key is None:
        return read()
    return _kept(where, f"files/{size}/{key}", size, read, lambda: file_key(path, extra) == key)


def file_verdict(path: Path, extra: str, judge) -> str | None:
    """``judge()``: why the photo file ``path`` is not used, one of :data:`VERDICTS`, or
    ``None``, under ``extra`` (the filter's and the decoder's settings), kept in the cache
    under :func:`file_key`: a folder of a thousand photos is judged once, not by every
    process that opens it. Verdicts of ``unreadable`` are not kept (a permission or a mount
    may be mended)."""
    where = folder()
    key = file_key(path, extra) if where is not None else None
    if key is None:
        return judge()
    _mark_used(where)
    kept = where / "verdicts" / f"{key}.txt"
    try:
        text = kept.read_bytes()
    except OSError:
        text = b""
    if text in _KEPT_VERDICTS:
        _touch(kept)
        return _KEPT_VERDICTS[text]
    why = judge()
    if (why or "") in VERDICTS and file_key(path, extra) == key:
        _write(kept, f"{VERDICT}{why or ''}\n".encode("ascii"))
    return why


def _kept(where: Path, rel: str, size: int, make, unchanged=lambda: True) -> torch.Tensor:
    """``make()`` (a ``[3, size, size]`` uint8 photo), or the copy kept at ``rel`` in
    ``where``; what is made is kept there if ``unchanged()`` still holds after making it."""
    _mark_used(where)
    path = where / f"{rel}.rgb"
    pixels = _read(path, 3 * size * size)
    if pixels is not None:
        _touch(path)
        return torch.from_numpy(pixels).reshape(3, size, size)
    img = make()
    if unchanged():
        raw = img.contiguous().numpy().tobytes()
        _write(path, raw + zlib.crc32(raw).to_bytes(4, "little"))
    return img


def _read(path: Path, n: int) -> np.ndarray | None:
    """The ``n`` pixel bytes kept at ``path`` (writable), or ``None`` when it is missing or
    damaged (wrong length, wrong checksum)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if len(data) != n + 4 or zlib.crc32(data[:n]) != int.from_bytes(data[n:], "little"):
        return None
    return np.frombuffer(data, np.uint8, count=n).copy()


def _write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all (a unique temporary file, then a rename)."""
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        tmp = None
    except OSError:
        pass                              # an unwritable cache only costs speed
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _touch(path: Path) -> None:
    """Mark a kept file as used now (its modification time), if it was not in the last hour."""
    with contextlib.suppress(OSError):
        if time.time() - path.stat().st_mtime > STALE_S / 24:
            os.utime(path)


def _mark_used(where: Path) -> None:
    """At most every :data:`STALE_S` / 24 in this process: mark ``where`` as used now, remove
    the folders of other code beside it that nothing has used for :data:`STALE_S`, and in
    ``where`` the photos and verdicts of folder files unused that long (files since
    changed, moved or deleted leave such entries behind)."""
    now = time.time()
    if now - _marked.get(where, -STALE_S) < STALE_S / 24:
        return
    _marked[where] = now
    try:
        where.mkdir(parents=True, exist_ok=True)
        os.utime(where, (now, now))
        others = [d for d in where.parent.iterdir() if d.is_dir() and d.name != where.name]
        entries = list(where.glob("files/*/*")) + list(where.glob("verdicts/*"))
    except OSError:
        return
    for other in others:
        with contextlib.suppress(OSError):
            if now - other.stat().st_mtime > STALE_S:
                shutil.rmtree(other, ignore_errors=True)
    for f in entries:
        with contextlib.suppress(OSError):
            if now - f.stat().st_mtime > STALE_S:
                f.unlink()
