"""``generate``: deterministic, resumable dataset shards on disk.

Layout of an output folder::

    README.md                 dataset card whose ``configs`` lets ``datasets.load_dataset(DIR)``
                              read the data with no custom code
    run.json                  the run's identity: every setting that changes the bytes
    data/<root>/shard-00000.parquet          (--format parquet: a benchmark's rows, its tasks in
                                              order, shard_size rows a file; see Layout)
    images/<task>/shard-00000/{metadata.jsonl, 000000_0.png, ...}   (--format imagefolder)
    data/<config>/<split>-00000.parquet      (--format hf: per-benchmark configs, the papers'
                                              splits, shards sized by bytes; see engine.hub)
    manifest.json             version, config, seed, tasks, counts, a sha256 and size per file

While a run is going on the folder also holds ``.procvis.lock`` (the writer's pid, held with
an advisory lock, so a second writer is refused and a killed writer's lock is stale) and
``.procvis-journal.jsonl`` (the checksums of the shards written so far). Both are gone when
the run ends.

Each shard is written under a temporary name that carries the run's marker (a digest of its
identity) and renamed when complete, so a killed run never leaves a partial shard. Running
the same command again checks every existing shard against the manifest (or the journal),
rewrites what is missing or does not match, and ends with exactly the files of an
uninterrupted run. procvis writes, renames and deletes only files it created: a folder that
holds something else is refused, and a file it did not write inside the data tree is named
in a one-line error rather than removed. Files beside the data tree (a contact sheet, notes)
are left alone.

The run's identity (pattern, seed, count, size, format, shard size, family settings, the
content of any folder a setting names, the font and the procvis version) is recorded in
``run.json`` and the manifest; a resume with any difference is refused, naming the setting.
"""
from __future__ import annotations

import contextlib
import errno
import functools
import gc
import hashlib
import itertools
import json
import math
import multiprocessing
import os
import re
import shutil
import signal
import struct
import sys
import threading
import time
import zlib
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from . import hub, jsontext
from .canvas import (BUDGET_ENV, ENCODE_BYTES_PER_PX, WORKER_BASE_BYTES, canvas_size, gib, images_per_batch,
                     memory_budget)
from .errors import Interrupted, OutputError, UserError
from .lazy import lazy_module
from .registry import family_of, get_family, get_task, resolve, run_settings
from .task import drawing_starts

if TYPE_CHECKING:
    import torch

# torch, loaded where pixels are made with it: a parent process only plans, journals and
# starts its workers, which load it side by side when a job draws with it (batched tasks
# are rendered from numpy arrays without it, see _encoded_rows)
frames, rendering = lazy_module("engine.frames"), lazy_module("engine.rendering")
deflate = lazy_module("kernels.deflate")          # numba too: only where images are encoded

FORMATS = ("parquet", "imagefolder", "hf")
SHARD_SIZES = {"parquet": 256, "imagefolder": 256, "hf": 100}   # default rows per shard (hf: per row group)
FORMAT_VERSION = 2            # 2: parquet rows of many tasks per file (Layout)

RUN_FILE, CARD_FILE, MANIFEST_FILE = "run.json", "README.md", "manifest.json"
LOCK_FILE, JOURNAL_FILE = ".procvis.lock", ".procvis-journal.jsonl"
PLAN_FILE = ".procvis-hub-plan.json"     # an unfinished hf run's rows per shard, read back on resume
TMP_PREFIX = ".tmp-procvis-"
INT64 = 2 ** 63
MAX_COUNT = 10 ** 8            # samples per task (the command line's --count bound too)
PARENT_POLL_S = 0.25           # how often a worker checks that its parent is alive


@dataclass(frozen=True)
class RunConfig:
    """What decides a run's bytes; ``settings``: the tasks' family settings, qualified;
    ``inputs``: a content digest of every file or folder a setting names; ``font``: a digest
    of the glyph font; ``procvis_version``: the installed version."""

    pattern: str
    seed: int
    count: int
    size: int
    format: str
    shard_size: int
    settings: dict = field(default_factory=dict)
    inputs: dict = field(default_factory=dict)
    font: str | None = None
    procvis_version: str | None = None
    shard_bytes: int | None = None

    def identity(self) -> dict:
        """The settings a resume must repeat (``settings`` and ``inputs`` only when there are
        any, ``font`` and ``procvis_version`` only when known, ``shard_bytes`` for ``hf``)."""
        out = {"format_version": FORMAT_VERSION, **asdict(self)}
        for key in ("settings", "inputs", "font", "procvis_version", "shard_bytes"):
            if not out[key]:
                del out[key]
        return out

    def marker(self) -> str:
        """A short digest of the identity: the run-specific part of its temporary names."""
        return self._marker

    @functools.cached_property
    def _marker(self) -> str:                # asked twice per shard: worth keeping (the fields never change)
        return hashlib.sha256(json.dumps(self.identity(), sort_keys=True).encode()).hexdigest()[:12]

    def shard_count(self) -> int:
        """Shards per task."""
        return math.ceil(self.count / self.shard_size)

    def rows(self, k: int) -> range:
        """The sample indices of a task's shard ``k`` (``imagefolder``: each shard one task's)."""
        return range(k * self.shard_size, min(self.count, (k + 1) * self.shard_size))

    def tree(self) -> str:
        """The folder that holds the shards."""
        return "images" if self.format == "imagefolder" else "data"


def _slug(task: str) -> str:
    return task.replace("/", "__")


def _root(task: str) -> str:
    """The task's root, the first part of its id (a benchmark: ``elvis``, ``kiva_adults``)."""
    return task.split("/", 1)[0]


@dataclass(frozen=True)
class Shard:
    """One shard of a run: ``rel``, its path relative to the output folder (a Parquet file,
    or a folder of images), and ``segments``, the samples it holds in row order as
    ``(task, sample indices)`` pairs."""

    rel: str
    segments: tuple

    @property
    def rows(self) -> int:
        """How many samples the shard holds."""
        return sum(len(idx) for _, idx in self.segments)

    def members(self) -> list[tuple[str, int]]:
        """``(task, index)`` of every row, in order."""
        return [(t, i) for t, idx in self.segments for i in idx]


_PACKED = re.compile(r"data/([^/]+)/shard-(\d{5,})\.parquet")
_PER_TASK = re.compile(r"images/([^/]+)/shard-(\d{5,})")


class Layout:
    """Where the samples of a run of ``tasks`` go.

    * ``parquet``: per task root (the id's first part: ``elvis``, ``kiva_adults``, ...), its
      rows (its tasks in the run's order, then sample index) cut into files of ``shard_size``
      rows, ``data/<root>/shard-00000.parquet``: a file holds many tasks when their counts
      are small (``elvis/*`` at 10 samples a task: 133 files, not 3,388 of 10 rows, each
      with its own Parquet footer, writes and rename, about a fifth of the run's time), and
      a task spans files when its count is large. A task's rows are consecutive: the
      ``task`` column's statistics let a filtered read skip the other files.
    * ``imagefolder``: shards of ``shard_size`` samples of one task,
      ``images/<task>/shard-00000/`` (a folder per task is what one browses).

    Everything is computed, never listed: a run of 10**8 samples per task never holds a list
    of its shards."""

    def __init__(self, cfg: RunConfig, tasks: list[str]):
        self.cfg, self.tasks = cfg, list(tasks)
        if len(set(self.tasks)) != len(self.tasks):
            raise ValueError("a run's tasks are distinct: a task listed twice would hold its rows twice")
        self.roots: dict[str, list[str]] = {}
        for t in self.tasks:
            self.roots.setdefault(_root(t), []).append(t)
        self._position = {t: p for members in self.roots.values() for p, t in enumerate(members)}
        self._slugs = {_slug(t): t for t in self.tasks}
        self._folders = {f"data/{r}" for r in self.roots} if self.packed else {f"images/{s}" for s in self._slugs}

    @property
    def packed(self) -> bool:
        """Whether shards hold the rows of several tasks (``parquet``)."""
        return self.cfg.format == "parquet"

    def shards(self):
        """Every :class:`Shard` of the run, in order, lazily."""
        keys = self.roots if self.packed else self.tasks
        return (self._shard(key, k) for key in keys for k in range(self._count(key)))

    def shard_of(self, task: str, index: int) -> Shard:
        """The shard that holds sample ``index`` of ``task`` (one of the run's tasks)."""
        return self._shard(*self._locate(task, index))

    def rel_of(self, task: str, index: int) -> str:
        """The path of :meth:`shard_of` alone (without listing what the shard holds)."""
        return self._rel(*self._locate(task, index))

    def shard(self, key: str, k: int) -> Shard:
        """Shard ``k`` of ``key``, a task root (``parquet``) or a task (``imagefolder``);
        :class:`UserError` when the run has no such shard."""
        n = self._count(key)
        if not 0 <= k < n:
            raise UserError(f"shard {k} of {key!r}: the run has {n} there")
        return self._shard(key, k)

    def folders(self) -> set[str]:
        """The folders of the data tree that hold shards (relative paths)."""
        return self._folders

    def shard_number(self, rel: str) -> int | None:
        """The number of the shard at ``rel`` in its folder, or None when no shard of the
        run has that path."""
        m = (_PACKED if self.packed else _PER_TASK).fullmatch(rel)
        if m is None or m[2] != f"{int(m[2]):05d}":          # not the name as written
            return None
        key = m[1] if self.packed else self._slugs.get(m[1])
        return int(m[2]) if key is not None and int(m[2]) < self._count(key) else None

    def _locate(self, task: str, index: int) -> tuple[str, int]:
        """``(key, shard number)`` of sample ``index`` of ``task``."""
        if not self.packed:
            return task, index // self.cfg.shard_size
        return _root(task), (self._position[task] * self.cfg.count + index) // self.cfg.shard_size

    def _count(self, key: str) -> int:
        """Shards of ``key`` (a root or a task; 0 when the run has none)."""
        if self.packed:
            return -(-len(self.roots[key]) * self.cfg.count // self.cfg.shard_size) if key in self.roots else 0
        return self.cfg.shard_count() if key in self._position else 0

    def _rel(self, key: str, k: int) -> str:
        return f"data/{key}/shard-{k:05d}.parquet" if self.packed else f"images/{_slug(key)}/shard-{k:05d}"

    def _shard(self, key: str, k: int) -> Shard:
        if not self.packed:
            return Shard(self._rel(key, k), ((key, self.cfg.rows(k)),))
        members, count, size = self.roots[key], self.cfg.count, self.cfg.shard_size
        a, b = k * size, min(len(members) * count, (k + 1) * size)
        segments = tuple((members[p], range(max(a - p * count, 0), min(b - p * count, count)))
                         for p in range(a // count, (b - 1) // count + 1))
        return Shard(self._rel(key, k), segments)


def procvis_version() -> str:
    """The installed procvis version (``"unknown"`` when run from a bare checkout)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("procvis")
    except PackageNotFoundError:
        return "unknown"


def font_digest() -> str | None:
    """``sha256:...`` of the glyph font's bytes (``$PROCVIS_FONT`` or the system's); ``None``
    when there is none (a run that draws text then fails with the font's own error)."""
    from kernels.errors import SetupError
    from kernels.glyphs import find_font

    try:
        return "sha256:" + _sha256(Path(find_font()))[:16]
    except (SetupError, OSError):
        return None


def input_digests(settings: dict) -> dict:
    """``{setting: sha256:...}`` of the content of every file or folder a setting names
    (as its whole value, or after a ``kind:`` prefix such as ``hf:``)."""
    out = {}
    for name, value in sorted(settings.items()):
        path = _named_path(value)
        if path is not None:
            out[name] = "sha256:" + _tree_digest(path)[:16]
    return out


def _named_path(value) -> Path | None:
    """The existing file or folder a setting's value names, or ``None``."""
    if not isinstance(value, str) or not value:
        return None
    for candidate in (value, value.partition(":")[2]):
        if candidate and os.path.exists(candidate):
            return Path(candidate)
    return None


def _tree_digest(path: Path) -> str:
    """sha256 over the relative names, sizes and bytes of every file below ``path``."""
    h = hashlib.sha256()
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    for f in files:
        h.update(f"{f.relative_to(path) if f != path else f.name}\0{f.stat().st_size}\0".encode())
        h.update(bytes.fromhex(_sha256(f)))
    return h.hexdigest()


def _chunk(kind: bytes, data) -> list:
    """A PNG chunk holding ``data`` (bytes-like) as the pieces to join: length, type, data, CRC."""
    return [struct.pack(">I", len(data)) + kind, data, struct.pack(">I", zlib.crc32(data, zlib.crc32(kind)))]


_PNG_END = b"".join(_chunk(b"IEND", b""))


@functools.lru_cache(maxsize=64)
def _png_start(h: int, w: int) -> bytes:
    """A PNG's signature and header chunk for 8-bit RGB ``h x w``."""
    return b"\x89PNG\r\n\x1a\n" + b"".join(_chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)))


def encode_png(image: torch.Tensor) -> bytes:
    """PNG bytes of a ``[3,H,W]`` uint8 tensor (:func:`png_of_planes` of its array)."""
    import torch                # loaded already wherever a tensor is encoded

    if image.dim() != 3 or image.shape[0] != 3 or image.dtype != torch.uint8:
        raise ValueError(f"encode_png takes a [3,H,W] uint8 image, not {image.dtype} of shape {list(image.shape)}")
    return png_of_planes(image.numpy())


def png_of_planes(planes: np.ndarray) -> bytes:
    """PNG bytes of ``planes [3,H,W]`` uint8: 8-bit RGB, no row filter, one zlib stream made
    by :func:`kernels.deflate.zlib_rows` (drawings: matches with the pixel before and the
    pixel above, smaller than zlib's level 3 in about two thirds of its time, the same bytes
    on every machine; photographs and textures: zlib level 3).

    Written directly rather than through Pillow, whose adaptive row filtering costs more
    than the compression saves on rendered images."""
    rows = deflate.png_rows(planes)
    h, w = planes.shape[1:]
    # joined once: each ``+`` copied the whole stream again
    return b"".join([_png_start(h, w), *_chunk(b"IDAT", deflate.zlib_rows(rows)), _PNG_END])


def pngs_of_planes(images: np.ndarray) -> list[bytes]:
    """PNG bytes of each image of ``images [B,3,H,W]`` uint8 (B >= 1): :func:`png_of_planes`
    of each, their zlib streams made by one compiled call for the batch
    (:func:`kernels.deflate.zlib_planes`: about 40 us an image less at 224 px)."""
    streams = deflate.zlib_planes(images)
    start = _png_start(*images.shape[2:])
    return [b"".join([start, *_chunk(b"IDAT", z), _PNG_END]) for z in streams]


def render_samples(samples, size, batch_panels: int = 128, device="cpu",
                   first: bool = False) -> list[list[torch.Tensor]]:
    """Render every panel of ``samples`` (``first``: only each one's first panel) in batches
    on ``device`` (one batch per panel size: ``size`` square, or each panel's own extent,
    e.g. a wider collage; at most as many panels at once as the memory budget holds); returns
    per sample a list of ``[3,H,W]`` uint8."""
    hw = canvas_size(size)
    out: list[list] = [[None] * (1 if first else len(s.panels)) for s in samples]
    for hw, flat in frames.panel_groups(samples, hw, first).items():
        step = min(batch_panels, images_per_batch(hw, "numba"))          # results within the memory budget
        for j in range(0, len(flat), step):
            chunk = flat[j:j + step]
            for ((i, k), _), img in zip(chunk, rendering.render([p for _, p in chunk], hw, device=device)):
                out[i][k] = img
    return out


def _pixels(sample, hw: tuple[int, int]) -> int:
    return sum(h * w for h, w in (sample.panel_hw(k, hw) for k in range(len(sample.panels))))


def _pixels_at_once() -> int:
    """How many pixels may be rendered at once before encoding (the memory budget over the
    bytes a pixel takes while rendered and encoded)."""
    return max(1, memory_budget() // ENCODE_BYTES_PER_PX)


def encoded_panels(samples, size) -> list[list[bytes]]:
    """PNG bytes (:func:`encode_png`) of every panel of ``samples``, rendered and encoded a
    few samples at a time so that the raw pixels in memory stay within the memory budget
    (only the compressed bytes are kept); returns per sample a list of bytes."""
    hw = canvas_size(size)
    limit = _pixels_at_once()
    out, chunk, px = [], [], 0
    for s in [*samples, None]:
        p = _pixels(s, hw) if s is not None else 0
        if chunk and (s is None or px + p > limit):
            out += [[encode_png(im) for im in ims] for ims in render_samples(chunk, size)]
            chunk, px = [], 0
        if s is not None:
            chunk.append(s)
            px += p
    return out


def _encoded_rows(batch, size) -> list[list[bytes]]:
    """PNG bytes of each sample of the :class:`engine.batched.ShapeBatch` ``batch`` (one panel
    each, on the ``size`` canvas), rendered from its columns a few at a time within the
    memory budget as :func:`encoded_panels` renders; returns per sample a one-item list.

    Numpy arrays into the numba kernels (:func:`kernels.raster_numba.render_arrays`): the
    pixels :func:`engine.rendering.render` gives ``batch.scene_batch()``, and a worker that
    writes only such tasks never loads torch (about 2.7 s of its start on two cores)."""
    from kernels.raster_numba import render_arrays

    h, w = canvas_size(size)
    step = max(1, _pixels_at_once() // (h * w))
    prims, background = batch.primitive_arrays(), batch.background_rgb()
    out = []
    for a in range(0, len(batch), step):
        out += [[png] for png in pngs_of_planes(render_arrays(prims.rows(a, a + step), h, w, background[a:a + step]))]
    return out


HF_FEATURES = {
    "id": {"dtype": "string", "_type": "Value"},
    "task": {"dtype": "string", "_type": "Value"},
    "seed": {"dtype": "int64", "_type": "Value"},
    "index": {"dtype": "int64", "_type": "Value"},
    "question": {"dtype": "string", "_type": "Value"},
    "answer": {"dtype": "string", "_type": "Value"},
    "answer_type": {"dtype": "string", "_type": "Value"},
    "options": {"dtype": "string", "_type": "Value"},
    "num_panels": {"dtype": "int64", "_type": "Value"},
    "meta": {"dtype": "string", "_type": "Value"},
    "images": {"feature": {"_type": "Image"}, "_type": "List"},
}


# records are trees built by the tasks, never cyclic: skipping the cycle check saves about
# an eighth of encoding an ELVIS record's 6 KB (the encoders are made once, not per call)
_options_json = json.JSONEncoder(check_circular=False).encode


def _row(sample) -> dict:
    # ``meta`` and ``options`` are JSON text: their shapes vary by task, and a typed empty
    # list cannot survive schema inference from a metadata.jsonl shard.
    r = sample.record()
    r["meta"] = jsontext.encode(r["meta"])
    r["options"] = _options_json(r["options"])
    return r


_NO_STATISTICS = {"question", "options", "meta"}      # long texts


def _parquet_options(schema) -> dict:
    """``pyarrow.parquet`` writer options of every Parquet file procvis writes: zstd, no
    dictionary pages, and min/max statistics only for the short scalar columns (those of the
    image bytes, the metadata or the question would hold whole PNGs and texts in the footer:
    about 10 KB per row group of ELVIS images, a sixth of a 10-sample shard).

    Dictionaries hashed every PNG and metadata text only to fall back to plain pages; without
    them a 10-row ELVIS shard is written in 1,140 us instead of 1,272 and is 0.9% smaller
    (zstd takes the repeats a dictionary would), 100-row shards of three families 0.2% smaller."""
    import pyarrow as pa

    short = [f.name for f in schema if f.name not in _NO_STATISTICS and not pa.types.is_nested(f.type)
             and not pa.types.is_binary(f.type) and not pa.types.is_large_binary(f.type)]
    return {"compression": "zstd", "use_dictionary": False, "write_statistics": short}


class _NoPandas:
    """An import finder that refuses pandas (see :func:`_pyarrow`)."""

    def find_spec(self, name, path=None, target=None):
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError("pandas is not needed to write shards")
        return None


@functools.cache
def _pyarrow():
    """``pyarrow``, in a process procvis owns (:func:`own_heap`) once it has settled that
    pandas is not there: its first array looks for pandas and imported it, 0.7 s of every
    worker's start that no shard uses. Where pandas is wanted later (``to_pandas``), pyarrow
    looks again and finds it."""
    import pyarrow as pa

    if _OWN_HEAP and "pandas" not in sys.modules:
        held = _NoPandas()
        sys.meta_path.insert(0, held)
        try:
            pa.array([0])
        finally:
            sys.meta_path.remove(held)
    return pa


@functools.cache
def _shard_schema():
    """``(schema, writer options)`` of a ``parquet`` shard (made once per process)."""
    import pyarrow as pa

    schema = pa.schema([
        ("id", pa.string()), ("task", pa.string()), ("seed", pa.int64()), ("index", pa.int64()),
        ("question", pa.string()), ("answer", pa.string()), ("answer_type", pa.string()),
        ("options", pa.string()), ("num_panels", pa.int64()), ("meta", pa.string()),
        ("images", pa.list_(pa.struct([("bytes", pa.binary()), ("path", pa.string())]))),
    ], metadata={"huggingface": json.dumps({"info": {"features": HF_FEATURES}})})
    return schema, _parquet_options(schema)


def _write_parquet(path: Path, samples, images) -> list:
    """Write one Parquet shard: ``images`` holds per sample the PNG bytes of its panels.
    Returns the file's ``[size, sha256]``, as :func:`_file_record` gives it."""
    import pyarrow.parquet as pq

    pa = _pyarrow()

    rows = [_row(s) for s in samples]
    cols = {k: [r[k] for r in rows] for k in HF_FEATURES if k != "images"}
    cols["images"] = [[{"bytes": png, "path": None} for png in pngs] for pngs in images]
    schema, options = _shard_schema()
    # through a buffered file of ours: pyarrow's own file made about 80 small writes and seeks
    # per shard, and the digest then read the file back
    with open(path, "wb", buffering=WRITE_BUFFER) as f:
        out = _DigestingFile(f)
        pq.write_table(pa.table(cols, schema=schema), out, **options)
        return [f.tell(), out.sha256.hexdigest()]


def _write_imagefolder(folder: Path, samples, images) -> None:
    """Write one imagefolder shard: ``images`` holds per sample the PNG bytes of its panels."""
    folder.mkdir(parents=True)
    lines = []
    for s, ims in zip(samples, images):
        names = []
        for j, png in enumerate(ims):
            name = f"{s.index:06d}_{j}.png"
            (folder / name).write_bytes(png)
            names.append(name)
        row = _row(s)
        row["file_names"] = names
        lines.append(json.dumps(row, sort_keys=True))
    (folder / "metadata.jsonl").write_text("\n".join(lines) + "\n")


def _disk_full(e: OSError) -> bool:
    """Whether ``e`` says the disk (or the user's quota) is full."""
    return e.errno in (errno.ENOSPC, errno.EDQUOT) or "No space left on device" in str(e)


def _disk_full_error(root: Path, what: str) -> OutputError:
    """The one-line error for a full disk while writing ``what``."""
    return OutputError(f"disk full while writing {what} in {str(root)!r}: free some space, then run the same "
                       "command again to resume")


def _remove(path: Path) -> None:
    """Delete a file or folder that procvis wrote (nothing when it is gone already)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def _file_record(path: Path, rel: str) -> dict:
    """``{relative name: [size, sha256]}`` of a shard written at ``path`` (a file or a folder)
    that will live at ``rel``."""
    if path.is_file():
        return {rel: [path.stat().st_size, _sha256(path)]}
    return {f"{rel}/{f.name}": [f.stat().st_size, _sha256(f)] for f in sorted(path.iterdir())}


def _install(tmp: Path, final: Path, marker: str) -> None:
    """Put the complete shard ``tmp`` at ``final``; a damaged folder there is moved aside
    under a temporary name first (a folder cannot be replaced in one rename)."""
    if final.is_dir() and not final.is_symlink():
        old = final.parent / f"{TMP_PREFIX}{marker}-{os.getpid()}-old-{final.name}"
        _remove(old)
        os.rename(final, old)
        os.rename(tmp, final)
        _remove(old)
    else:
        os.replace(tmp, final)


_OWN_HEAP = False     # True in processes procvis owns: its workers, and the command line while it runs


def own_heap() -> None:
    """Say that this process belongs to procvis (a worker it spawned), so each job may tune
    the garbage collector (:func:`_settle_heap`)."""
    global _OWN_HEAP
    _OWN_HEAP = True


@contextlib.contextmanager
def owned_heap():
    """While the block runs (the command line's run in its own process), as :func:`own_heap`
    (the collector then runs only between jobs, for the whole process); afterwards the
    process's collector is as it was: the flag cleared, what the jobs froze unfrozen and
    collection on again if it was on. Where something else had frozen objects before
    (``gc.unfreeze`` would release them too), the collector is not tuned at all."""
    global _OWN_HEAP
    if _OWN_HEAP or gc.get_freeze_count():      # tuned already, or by someone else: left alone
        yield
        return
    _OWN_HEAP, enabled = True, gc.isenabled()
    try:
        yield
    finally:
        _OWN_HEAP = False
        gc.unfreeze()
        if enabled:
            gc.enable()


def _settle_heap() -> None:
    """In a process procvis owns, before a job: collect the last job's cyclic garbage, move
    everything still alive out of the collector's sight (``gc.freeze``) and leave the
    collector off until the next job's call. A job makes tens of thousands of short-lived
    metadata objects; without the freeze each full collection also rescanned the modules
    (torch, numba) and what earlier jobs left, about a tenth of a worker's time on ELVIS, and
    the collections the allocations set off during a job cost a few percent more, for
    garbage that reference counting frees anyway (a job's cycles wait for the next call: one
    job's worth at most). Frozen objects are still freed when unreferenced; a cycle among them
    that dies later is not collected (no growth measured over 464 jobs in one worker)."""
    if _OWN_HEAP:
        gc.collect()
        gc.freeze()
        gc.disable()


def _write_shard(out: str, cfg: RunConfig, shard: Shard) -> tuple[str, int, dict]:
    """Generate, render and atomically write one shard (over a damaged one); returns its
    relative path, its number of samples and its file record."""
    return _write_bundle(out, cfg, [shard])[0]


def _drawn(cfg: RunConfig, members: list) -> tuple[list, list]:
    """``(samples, images)`` of ``members`` ``(task, index)``, in order, with per sample the
    PNG bytes of its panels: consecutive members of batched tasks sharing a batch key drawn
    :data:`engine.task.BATCH` at a time across their tasks and rendered from the batch's
    columns, the others task by task (the samples and bytes of drawing each alone). The
    samples are for writing (:func:`_row`): part of a batched sample's meta may be JSON text
    (:mod:`engine.jsontext`)."""
    from .task import BATCH, draw_together
    samples, images = [], []
    for key, run in itertools.groupby(members, key=lambda m: m[0].batch_key if m[0].batched else None):
        run = list(run)
        if key is None:                   # drawn task by task, rendered together (with torch)
            _torch_threads()
            drawn = [s for task, part in itertools.groupby(run, key=lambda m: m[0])
                     for s in task.samples(cfg.seed, [i for _, i in part])]
            samples += drawn
            images += encoded_panels(drawn, cfg.size)
            continue
        for a in range(0, len(run), BATCH):
            part = run[a:a + BATCH]
            drawn = draw_together(cfg.seed, part)
            # the records need no scene (the images are rendered from the batch's columns) and
            # no meta to read (only its text is written)
            samples += [task.build(drawn.draw(b, scene=False, text=True), cfg.seed, i)
                        for b, (task, i) in enumerate(part)]
            images += _encoded_rows(drawn, cfg.size)
    return samples, images


def _bound_members(cfg: RunConfig, segments) -> list[tuple]:
    """``(task bound to the run's settings, index)`` of every row of ``segments`` (``(task,
    indices)``), each task bound once."""
    bound = {t: get_task(t, cfg.settings) for t, _ in segments}
    return [(bound[t], i) for t, idx in segments for i in idx]


def _write_bundle(out: str, cfg: RunConfig, shards: list[Shard]) -> list[tuple[str, int, dict]]:
    """Write the ``shards`` (each as :func:`_write_shard` writes it alone, the same files),
    their samples drawn together by :func:`_drawn`. Returns each shard's result, in order."""
    _settle_heap()
    samples, images = _drawn(cfg, _bound_members(cfg, [seg for s in shards for seg in s.segments]))
    out_rows, at = [], 0
    for s in shards:
        out_rows.append(_install_shard(out, cfg, s, samples[at:at + s.rows], images[at:at + s.rows]))
        at += s.rows
    return out_rows


def _install_shard(out: str, cfg: RunConfig, shard: Shard, samples: list, images: list) -> tuple[str, int, dict]:
    """Atomically write ``shard`` holding ``samples`` and their PNG ``images``; returns its
    relative path, its number of samples and its file record."""
    root = Path(out)
    rel = shard.rel
    final = root / rel
    tmp = final.parent / f"{TMP_PREFIX}{cfg.marker()}-{os.getpid()}-{final.name}"
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        _remove(tmp)
        if cfg.format == "parquet":
            record = {rel: _write_parquet(tmp, samples, images)}
        else:
            _write_imagefolder(tmp, samples, images)
            record = _file_record(tmp, rel)
        if not (root / RUN_FILE).exists():
            # the folder says whose shards it holds before the first one lands: a run stopped
            # between a worker's install and the parent's journal entry still resumes
            _write_identity(root, cfg)
        _install(tmp, final, cfg.marker())
    except BaseException as e:
        _remove(tmp)
        if isinstance(e, OSError) and _disk_full(e):
            raise _disk_full_error(root, rel) from None
        raise
    return rel, len(samples), record


BUNDLE = 256   # samples of one batch key's shards a local worker draws and renders together


def _batch_key(cfg: RunConfig, shard: Shard):
    """The batch key every task of ``shard`` shares, or None (a task drawn alone, or several keys)."""
    tasks = [get_task(t, cfg.settings) for t, _ in shard.segments]
    keys = {task.batch_key if task.batched else None for task in tasks}
    return keys.pop() if len(keys) == 1 else None


def _bundled(jobs):
    """``jobs`` (``(out, cfg, shard)``, in order) with consecutive shards of batched tasks
    sharing a batch key gathered into bundles of about :data:`BUNDLE` samples: each item
    ``(out, cfg, [shard, ...])``."""
    bundle, key, size, where = [], None, 0, None      # where: the bundle's (out, cfg)
    for out, c, shard in jobs:
        here = _batch_key(c, shard)
        if bundle and (here is None or here != key or size >= BUNDLE or (out, c) != where):
            yield (*where, bundle)
            bundle, size = [], 0
        bundle.append(shard)
        key, size, where = here, size + shard.rows, (out, c)
    if bundle:
        yield (*where, bundle)


def write_shard(out: str, cfg: RunConfig, task: str, k: int) -> int:
    """Generate, render and atomically write shard ``k`` of a run of ``task`` alone (its
    samples ``k * shard_size`` on); returns its number of samples."""
    layout = Layout(cfg, [task])
    return _write_shard(out, cfg, layout.shard(_root(task) if layout.packed else task, k))[1]


def _watch_parent(parent: int) -> None:
    """End this process as soon as its parent is gone (killed with any signal, even -9)."""
    while True:
        time.sleep(PARENT_POLL_S)
        if os.getppid() != parent:
            os._exit(1)


_TORCH_THREADS = None    # in a worker: the thread count torch is to get when a job loads it


def _init_worker(threads: int, parent: int, budget: int) -> None:
    """Set up a worker: its thread counts, its share of the memory budget, no Ctrl-C of its
    own, and a watch on its parent. Torch is not loaded here: a worker drawing only batched
    tasks never needs it (:func:`_encoded_rows`); a job that does loads it first
    (:func:`_torch_threads`)."""
    global _TORCH_THREADS
    import numba      # in the worker only: a parent rendering on the torch path never loads it

    # Ctrl-C reaches the whole process group: the parent alone decides how the run ends.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    os.environ[BUDGET_ENV] = str(budget)
    own_heap()
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))   # the user's NUMBA_NUM_THREADS caps it
    _TORCH_THREADS = threads


def _torch_threads() -> None:
    """In a worker, before drawing with torch: load torch and give it the worker's thread
    count (once). Elsewhere nothing."""
    global _TORCH_THREADS
    if _TORCH_THREADS is not None:
        import torch

        torch.set_num_threads(_TORCH_THREADS)
        _TORCH_THREADS = None


def _worker(args) -> tuple[str, int, dict]:
    return _write_shard(*args)


def _bundle_worker(args) -> list[tuple[str, int, dict]]:
    return _write_bundle(*args)


def _stop_pool(pool: ProcessPoolExecutor) -> None:
    """End every worker of ``pool`` now (they may be mid-shard) and wait until they are gone."""
    # ``_processes``: before Python 3.14 the executor has no public way to end busy workers.
    procs = list((getattr(pool, "_processes", None) or {}).values())
    for p in procs:
        with contextlib.suppress(OSError, ValueError):
            p.terminate()
    pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        with contextlib.suppress(OSError, ValueError, AssertionError):
            p.join(5)
            if p.is_alive():
                p.kill()
                p.join(5)


AUTO_SAMPLES = 2_000   # a run this small ends before spawned workers (a few seconds each to start) pay off


def auto_workers(samples: int, size: int) -> int:
    """The worker count ``workers="auto"`` picks for a run of ``samples`` panels of ``size``:
    one process under :data:`AUTO_SAMPLES` samples, else every core the memory budget allows
    (:func:`worker_cap`)."""
    return 1 if samples < AUTO_SAMPLES else worker_cap(os.cpu_count() or 1, size)[0]


def worker_cap(workers: int, size: int) -> tuple[int, str | None]:
    """``(workers to start, a note or None)``: ``workers`` capped by the cores and by the memory
    budget (each worker: ``WORKER_BASE_BYTES`` plus one panel of ``size`` rendered and encoded)."""
    cores = os.cpu_count() or 1
    budget = memory_budget()
    each = WORKER_BASE_BYTES + ENCODE_BYTES_PER_PX * size * size
    by_memory = max(1, budget // each)
    n = min(workers, cores, by_memory)
    if n == workers:
        return n, None
    why = f"{cores} cores" if n == cores else \
        f"a memory budget of {gib(budget)} at about {gib(each)} per worker; {BUDGET_ENV} sets the budget"
    return n, f"procvis: note: --workers {workers} capped at {n} ({why})"


def _start_pool(jobs: list, workers: int, fn=None) -> tuple[ProcessPoolExecutor, list]:
    """A pool of spawned workers (each with its share of the memory budget) with ``fn``
    (default: write a shard) submitted for each of ``jobs``; returns it and the futures in
    the order of ``jobs``.

    The workers and the pool's helper process start with SIGHUP blocked: a closed terminal
    hangs up the whole process group, and the parent alone should answer it (it ends them)."""
    workers = min(workers, len(jobs))
    threads = max(1, (os.cpu_count() or 1) // workers)
    drawing_starts()                                 # the workers draw: a note waiting for that is said now
    ctx = multiprocessing.get_context("spawn")
    hangup = {signal.SIGHUP} if hasattr(signal, "SIGHUP") else set()
    before = signal.pthread_sigmask(signal.SIG_BLOCK, hangup)
    try:
        pool = ProcessPoolExecutor(workers, mp_context=ctx, initializer=_init_worker,
                                   initargs=(threads, os.getpid(), max(1, memory_budget() // workers)))
        return pool, [pool.submit(fn or _worker, job) for job in jobs]
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def _here_or_pool(jobs, workers: int, run, done):
    """Start on ``jobs``: when one process suffices (one worker, or at most one job) run every
    job here in order, ``done(run(job))``, and return None; else ``(the rest of the jobs, the
    first 2 * workers)`` for a pool."""
    queue = iter(jobs)
    first = list(itertools.islice(queue, 2 * workers))
    if workers == 1 or len(first) <= 1:
        for job in itertools.chain(first, queue):
            done(run(job))
        return None
    return queue, first


@contextlib.contextmanager
def _stops_held():
    """Hold the stop signals while waiting on a pool: raised inside the executor's locks, one
    would leave a lock held and the shutdown would wait on it for ever. They land after."""
    stops = {getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n)}
    before = signal.pthread_sigmask(signal.SIG_BLOCK, stops)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def _run_jobs(jobs, workers: int, done) -> None:
    """Write every shard of ``jobs`` (an iterable of ``(out, cfg, shard)``, consumed lazily:
    at most two bundles per worker are submitted at a time; shards of batched tasks sharing a
    batch key go together, :func:`_bundled`), calling ``done(result)`` as each shard
    completes; on any failure or interruption the workers are ended before the exception
    propagates."""
    jobs = iter(jobs)
    head = next(jobs, None)
    if head is None:
        return
    bundles = _bundled(itertools.chain([head], jobs))

    def finished_bundle(results) -> None:
        for r in results:
            done(r)
    started = _here_or_pool(bundles, workers, lambda job: _write_bundle(*job), finished_bundle)
    if started is None:
        return
    queue, first = started
    pool, futures = _start_pool(first, workers, _bundle_worker)
    pending = set(futures)
    try:
        while pending:
            with _stops_held():
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for f in finished:
                finished_bundle(f.result())
            pending |= {pool.submit(_bundle_worker, job) for job in itertools.islice(queue, len(finished))}
    except BaseException:
        _stop_pool(pool)
        raise
    pool.shutdown()


def _features_yaml() -> str:
    # The declared schema: without it a reader infers types from the first shard (an empty
    # ``options`` list would become a list of nulls there).
    out = ["dataset_info:", "  config_name: default", "  features:"]
    for name, f in HF_FEATURES.items():
        if f["_type"] == "Value":
            out += [f"  - name: {name}", f"    dtype: {f['dtype']}"]
        else:
            inner = f["feature"]
            out += [f"  - name: {name}", f"    list: {'image' if inner['_type'] == 'Image' else inner['dtype']}"]
    return "\n".join(out) + "\n"


def _card(cfg: RunConfig, parts: list | None = None) -> str:
    """The dataset card (README.md) of a run (``parts``: its Hub plan, for ``hf``)."""
    if cfg.format == "hf":
        return _hub_card(cfg, parts)
    if cfg.format == "parquet":
        data_files = "data/**/*.parquet"
    else:
        data_files = "images/**"
    sets = "".join(f" --set {k}={v}" for k, v in cfg.settings.items())
    return (f"---\n{_features_yaml()}configs:\n- config_name: default\n  data_files:\n  - split: train\n"
            f"    path: \"{data_files}\"\n---\n"
            f"# procvis dataset\n\nGenerated by `procvis generate '{cfg.pattern}' --seed {cfg.seed} --count {cfg.count} "
            f"--size {cfg.size} --format {cfg.format}{sets}`.\nLoad it with `datasets.load_dataset(\"<this folder>\")`; "
            f"each row has `images` (one per panel), `question`, `answer`, `answer_type`, and JSON text "
            f"`options` (the answer space of a fixed-choice answer) and `meta` (the task's own fields).\n")


WRITE_BUFFER = 1 << 20        # bytes a shard's file gathers before each write to the disk


class _DigestingFile:
    """A binary file being written (from ``open(path, "wb")``) that keeps the sha256 of the
    bytes written to it, for a writer that takes a file object: the file's digest without
    reading it back. Closing is left to the file's owner."""

    def __init__(self, f):
        self.f, self.sha256 = f, hashlib.sha256()

    def write(self, data) -> int:
        self.sha256.update(data)
        return self.f.write(data)

    def tell(self) -> int:
        return self.f.tell()

    @property
    def closed(self) -> bool:
        return self.f.closed


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _atomic_write(path: Path, text: str, marker: str) -> None:
    """Write ``text`` to ``path`` through a temporary file with the run's ``marker``."""
    tmp = path.parent / f"{TMP_PREFIX}{marker}-{os.getpid()}-{path.name}"
    try:
        tmp.write_text(text)
        os.replace(tmp, path)
    except OSError as e:
        _remove(tmp)
        if _disk_full(e):
            raise _disk_full_error(path.parent, path.name) from None
        raise


def _read_json(path: Path) -> dict | None:
    """The JSON object in ``path``; ``None`` when it is missing, unreadable or not an object."""
    try:
        value = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return value if isinstance(value, dict) else None


# ---------------------------------------------------------------- the output folder

def _holds_a_run(root: Path) -> bool:
    """Whether ``root`` holds a procvis run (finished, interrupted or failed)."""
    if (root / LOCK_FILE).is_file() or (root / JOURNAL_FILE).is_file():
        return True
    run, manifest = _read_json(root / RUN_FILE), _read_json(root / MANIFEST_FILE)
    return bool(run and {"format_version", "pattern"} <= set(run)) or \
        bool(manifest and {"files", "config"} <= set(manifest))


def _check_out(out) -> tuple[Path, bool]:
    """The output folder, created when missing; returns it and whether this call created it.
    A folder that exists, is not empty and holds no procvis run is refused."""
    if not str(out).strip():
        raise OutputError("--out '' names no folder; give the folder to write the dataset to")
    root = Path(out)
    if root.exists() and not root.is_dir():
        raise OutputError(f"--out {str(root)!r} exists and is not a directory")
    existed = root.exists()
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputError(f"cannot create output directory {str(root)!r}: {e.strerror}") from None
    if not os.access(root, os.W_OK | os.X_OK):
        raise OutputError(f"output directory {str(root)!r} is not writable")
    if existed and not _holds_a_run(root) and any(root.iterdir()):
        raise OutputError(f"--out {str(root)!r} is not empty and holds no procvis dataset; choose a new or empty "
                          "folder (procvis writes only into its own)")
    return root, not existed


class _Lock:
    """The folder's single-writer lock: ``.procvis.lock`` names the owner's pid and run
    marker and is held with ``flock``, which the kernel releases when the owner dies, so a
    lock file left by a killed run is stale and is taken over. ``stale``: what that file
    said (``{}`` when there was none)."""

    def __init__(self, root: Path, marker: str):
        self.root, self.path, self.marker = root, root / LOCK_FILE, marker
        self.fd: int | None = None
        self.stale: dict = {}

    def __enter__(self) -> _Lock:
        import fcntl

        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                owner = _lock_owner(fd)
                os.close(fd)
                raise OutputError(f"{str(self.root)!r} is being written by another procvis generate (pid {owner}); "
                                  "wait for it to end, or stop it and run the command again") from None
            if self._still_the_lock_file(fd):
                break
            os.close(fd)       # its owner removed this file as we opened it: take the new one
        self.fd = fd
        self.stale = _read_lock(fd)
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps({"pid": os.getpid(), "run": self.marker}).encode(), 0)
        return self

    def _still_the_lock_file(self, fd: int) -> bool:
        """Whether ``fd`` is still the file at the lock's path (its owner may remove it)."""
        try:
            return os.fstat(fd).st_ino == os.stat(self.path).st_ino
        except FileNotFoundError:
            return False

    def __exit__(self, *exc) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        os.close(self.fd)


def _read_lock(fd: int) -> dict:
    """What a lock file says: ``{"pid": ..., "run": marker}``, or ``{}``."""
    try:
        value = json.loads(os.pread(fd, 4096, 0) or b"{}")
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _lock_owner(fd: int) -> str:
    """The pid a lock file names (``"unknown"`` when it names none yet)."""
    return str(_read_lock(fd).get("pid", "unknown"))


@contextlib.contextmanager
def _signals_raised():
    """Within: SIGINT, SIGTERM and SIGHUP raise :class:`Interrupted`, so a run told to stop
    ends its workers and removes its temporary files on the way out (a signal the process
    ignores stays ignored; outside the main thread nothing changes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    sigs = [s for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP) if signal.getsignal(s) is not signal.SIG_IGN]

    def stop(signum, frame):
        for s in sigs:                       # the clean-up must not be cut short by a second signal
            signal.signal(s, signal.SIG_IGN)
        raise Interrupted(signum)

    old = {s: signal.signal(s, stop) for s in sigs}
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


def _our_dirs(root: Path, cfg: RunConfig) -> list[Path]:
    """The folders where procvis puts temporary files: the root, the data tree and its task folders."""
    tree = root / cfg.tree()
    out = [root]
    if tree.is_dir() and not tree.is_symlink():
        out += [tree] + [d for d in sorted(tree.iterdir()) if d.is_dir() and not d.is_symlink()]
    return out


def _remove_temporary(root: Path, cfg: RunConfig, markers: set[str]) -> None:
    """Delete the temporary files and folders of the runs with these markers."""
    prefixes = tuple(f"{TMP_PREFIX}{m}-" for m in markers)
    for d in _our_dirs(root, cfg):
        for p in list(d.iterdir()):
            if p.name.startswith(prefixes):
                _remove(p)


def _prune_empty(tree: Path) -> None:
    """Remove the empty folders of the data tree, the tree included when it ends empty."""
    if not tree.is_dir() or tree.is_symlink():
        return
    for d, _, _ in sorted(os.walk(tree), key=lambda w: -len(w[0])):
        with contextlib.suppress(OSError):
            os.rmdir(d)


def _own_image_file(path: Path, rows: range) -> bool:
    """Whether a file in an image shard folder has a name this shard writes."""
    if not path.is_file() or path.is_symlink():
        return False
    m = re.fullmatch(r"(\d{6})_(\d+)\.png", path.name)
    return path.name == "metadata.jsonl" or (m is not None and int(m[1]) in rows)


def _strays(root: Path, cfg: RunConfig, tasks: list[str]) -> list[str]:
    """Entries of the data tree that no shard of this run accounts for (relative paths):
    files and folders procvis did not write, which it must not remove."""
    name = cfg.tree()
    tree = root / name
    if not tree.exists() and not tree.is_symlink():
        return []
    if not tree.is_dir() or tree.is_symlink():
        return [name]
    layout = Layout(cfg, tasks)
    out = []
    for d in sorted(tree.iterdir()):
        rel = f"{name}/{d.name}"
        if rel not in layout.folders() or not d.is_dir() or d.is_symlink():
            out.append(rel)
            continue
        for s in sorted(d.iterdir()):
            srel = f"{rel}/{s.name}"
            k = layout.shard_number(srel)
            if k is None:
                out.append(srel)
            elif layout.packed:
                if not s.is_file() or s.is_symlink():
                    out.append(srel)
            elif not s.is_dir() or s.is_symlink():
                out.append(srel)
            else:
                rows = cfg.rows(k)
                out += [f"{srel}/{f.name}" for f in sorted(s.iterdir()) if not _own_image_file(f, rows)]
    return out


def _refuse_strays(root: Path, cfg: RunConfig, tasks: list[str]) -> None:
    """:class:`OutputError` naming the first entry of the data tree procvis did not write."""
    strays = _strays(root, cfg, tasks)
    if strays:
        more = f" (and {len(strays) - 1} more)" if len(strays) > 1 else ""
        raise OutputError(f"{strays[0]!r}{more} in {str(root)!r} is not part of this dataset and procvis did not "
                          "write it; move it out of the folder and run the same command again")


# ---------------------------------------------------------------- the run's identity

def _identity_of_manifest(manifest: dict) -> dict | None:
    """The identity a manifest records (``None`` when it records none that parses)."""
    config = manifest.get("config")
    if not isinstance(config, dict):
        return None
    try:
        identity = RunConfig(**config).identity()
    except TypeError:
        return {"format_version": manifest.get("format_version"), **config}
    identity["format_version"] = manifest.get("format_version")
    return identity


def _recorded_identity(root: Path) -> dict | None:
    """The identity of the run already in ``root``: its run.json, or its manifest's."""
    run = _read_json(root / RUN_FILE)
    if run is not None:
        return run
    manifest = _read_json(root / MANIFEST_FILE)
    return _identity_of_manifest(manifest) if manifest else None


SETTING_NAMES = {"font": "font ($PROCVIS_FONT)"}


def _differences(before: dict, now: dict) -> list[str]:
    """``name: old there, new asked`` for every setting that differs (family settings and
    folder contents one by one)."""
    out = []
    for key in sorted(set(before) | set(now)):
        old, new = before.get(key), now.get(key)
        if old == new:
            continue
        if key in ("settings", "inputs") and isinstance(old or {}, dict) and isinstance(new or {}, dict):
            for name in sorted(set(old or {}) | set(new or {})):
                o, n = (old or {}).get(name), (new or {}).get(name)
                if o != n:
                    out.append(f"{name if key == 'settings' else 'content of ' + name}: {o!r} there, {n!r} asked")
        else:
            out.append(f"{SETTING_NAMES.get(key, key)}: {old!r} there, {new!r} asked")
    return out


def _refuse_other_settings(root: Path, cfg: RunConfig) -> None:
    """:class:`OutputError` naming every setting in which the run in ``root`` differs from ``cfg``."""
    before = _recorded_identity(root)
    diff = _differences(before, cfg.identity()) if before is not None else []
    if diff:
        raise OutputError(f"{str(root)!r} holds a dataset generated with other settings ({'; '.join(diff)}); "
                          "choose another --out or remove it")


def _identity_files(cfg: RunConfig, parts: list | None = None) -> tuple:
    """``((name, text), ...)``: run.json and the dataset card as this run writes them."""
    return (RUN_FILE, json.dumps(cfg.identity(), sort_keys=True) + "\n"), (CARD_FILE, _card(cfg, parts))


def _write_identity(root: Path, cfg: RunConfig, parts: list | None = None) -> None:
    """Write run.json and the dataset card unless they already say what they should (one
    line on stderr for each one that was there and is repaired)."""
    for name, text in _identity_files(cfg, parts):
        path = root / name
        # one read decides: two workers landing their first shards at once both write, and
        # a second look (exists) after a failed read saw the other's file as one to repair
        try:
            before = path.read_text()
        except FileNotFoundError:
            before = None
        except (OSError, UnicodeDecodeError):
            before = ""                   # there, unreadable
        if before == text:
            continue
        if before is not None:
            print(f"procvis: repairing {name}: it differs from this run's", file=sys.stderr)
        _atomic_write(path, text, cfg.marker())


# ---------------------------------------------------------------- checksums on record

class _Journal:
    """``.procvis-journal.jsonl``: one line per shard written, with its file record, so an
    interrupted run's shards are checked on resume as a finished run's are."""

    def __init__(self, root: Path, marker: str):
        self.path, self.marker = root / JOURNAL_FILE, marker

    def add(self, rel: str, record: dict) -> None:
        """Record that shard ``rel`` was written with the files of ``record``."""
        try:
            with open(self.path, "a") as f:
                f.write(json.dumps({"run": self.marker, "shard": rel, "files": record}, sort_keys=True) + "\n")
        except OSError as e:
            if _disk_full(e):
                raise _disk_full_error(self.path.parent, JOURNAL_FILE) from None
            raise

    def read(self) -> dict:
        """``{file: (size, sha256)}`` of every shard this run wrote (a torn last line is skipped)."""
        out = {}
        try:
            lines = self.path.read_text().splitlines()
        except (OSError, UnicodeDecodeError):
            return out
        for line in lines:
            try:
                entry = json.loads(line)
                if entry.get("run") == self.marker:
                    out.update({f: (v[0], v[1]) for f, v in entry["files"].items()})
            except (ValueError, AttributeError, KeyError, TypeError, IndexError):
                continue
        return out

    def remove(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()


def _records(root: Path, cfg: RunConfig) -> dict:
    """``{file: (size or None, sha256)}`` on record for this run: its manifest's (when the
    manifest is this run's) updated with its journal's."""
    out = {}
    manifest = _read_json(root / MANIFEST_FILE)
    if manifest and _identity_of_manifest(manifest) == cfg.identity() and isinstance(manifest.get("files"), dict):
        sizes = manifest.get("sizes") if isinstance(manifest.get("sizes"), dict) else {}
        out = {f: (sizes.get(f), h) for f, h in manifest["files"].items()}
    out.update(_Journal(root, cfg.marker()).read())
    return out


UNRECORDED = "unrecorded"


def _files_problem(root: Path, rel: str, mine: dict) -> str | None:
    """What is wrong with the files of shard ``rel`` against their record, or ``None``."""
    path = root / rel
    actual = {rel: path} if path.is_file() else {f"{rel}/{f.name}": f for f in sorted(path.iterdir())}

    def name(f: str) -> str:
        return "it" if f == rel else f[len(rel) + 1:]

    for f in sorted(set(mine) - set(actual)):
        return f"{name(f)} is missing"
    for f in sorted(set(actual) - set(mine)):
        return f"{name(f)} is not in the manifest"
    for f, (size, sha) in sorted(mine.items()):
        if not actual[f].is_file():
            return f"{name(f)} is not a file"
        wrong = _mismatch(actual[f], size, sha)
        if wrong:
            return f"{name(f)} {wrong}"
    return None


def _mismatch(path: Path, size: int | None, sha: str) -> str | None:
    """How the file at ``path`` differs from its record (``size`` None: not recorded), or None."""
    have = path.stat().st_size
    if size is not None and have != size:
        return f"has {have} bytes, the manifest says {size}"
    if _sha256(path) != sha:
        return "does not match its checksum in the manifest"
    return None


def _shard_problem(root: Path, cfg: RunConfig, shard: Shard, mine: dict) -> str | None:
    """What is wrong with ``shard`` (``UNRECORDED``: on disk or not, no record says what it
    should hold), or ``None`` when it matches its record and its rows are right. ``mine``:
    the recorded files of this shard (``{file: (size, sha256)}``)."""
    if not (root / shard.rel).exists():
        return "missing" if mine else UNRECORDED
    if not mine:
        return UNRECORDED
    return _files_problem(root, shard.rel, mine) or _rows_problem(root, cfg, shard)


# ---------------------------------------------------------------- generate

def _check_arguments(fmt, count, workers, shard_size, seed, size, shard_bytes=None) -> int:
    """The panel side, once every argument is checked (:class:`UserError` otherwise)."""
    if fmt not in FORMATS:
        raise UserError(f"format={fmt!r}; allowed: {', '.join(FORMATS)}")
    if shard_bytes is not None and (fmt != "hf" or int(shard_bytes) != shard_bytes or shard_bytes < 1024):
        raise UserError(f"shard_bytes={shard_bytes!r} (--shard-mb): a whole number of bytes from 1024 up, for format 'hf' only "
                        f"(format is {fmt!r})")
    if int(count) != count or not 0 < count <= MAX_COUNT:
        raise UserError(f"count={count!r} must be a positive integer up to {MAX_COUNT} per task")
    if workers != "auto" and (isinstance(workers, str) or int(workers) != workers or workers <= 0):
        raise UserError(f"workers={workers!r} must be a positive integer or 'auto'")
    if int(shard_size) != shard_size or shard_size <= 0:
        raise UserError(f"shard_size={shard_size!r} must be a positive integer")
    if int(seed) != seed:
        raise UserError(f"seed={seed!r} must be an integer")
    if not -INT64 <= int(seed) < INT64 or count >= INT64:
        raise UserError(f"seed={seed!r} must lie in -2**63..2**63-1 (datasets store it as a 64-bit integer)")
    H, W = canvas_size(size)
    if H != W:
        raise UserError(f"size={size!r}: panels are drawn N pixels square (or at their own extent); give one number")
    return H


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def _progress_bar(progress: bool, total: int):
    """A progress bar on stderr (one that shows nothing when ``progress`` is off)."""
    if not progress:
        return _NoBar()
    from tqdm import tqdm

    return tqdm(total=total, unit="sample", desc="generate", file=sys.stderr, dynamic_ncols=True)


def generate(pattern: str, out: str, seed: int = 0, count: int = 10, size: int = 224, fmt: str = "parquet",
             workers: int | str = "auto", shard_size: int | None = None, progress: bool = True,
             settings: dict | None = None, shard_bytes: int | None = None, executor=None) -> dict:
    """Generate ``count`` samples of every task matching ``pattern`` into ``out``, panels
    ``size`` pixels square (or their own extent), with family ``settings`` (qualified names,
    e.g. ``{"jigsaw.images": "/data/photos"}``; defaults for the rest).

    ``fmt``: ``parquet`` (files of ``shard_size`` rows of a task root, default 256: many
    tasks to a file when each has few samples, :class:`Layout`), ``imagefolder`` (shards of
    ``shard_size`` samples of one task, default 256), or ``hf`` (the Hub layout of
    :mod:`engine.hub`: Parquet shards of about ``shard_bytes`` bytes, default 256 MiB, per config and split, row groups of
    ``shard_size`` rows, default 100). ``workers``: local worker processes, capped by the cores
    and the memory budget (with a note); ``"auto"`` (the default) takes one process for runs
    under :data:`AUTO_SAMPLES` samples and every core otherwise; the files are the same
    whatever the count. ``executor``: what makes the shards instead of local worker
    processes, e.g. :class:`engine.ray_jobs.RayExecutor` (``run_jobs(jobs, workers,
    done)`` and ``run_ordered(jobs, workers, done)``, with the contracts of :func:`_run_jobs`
    and :func:`_run_ordered`); the files are the same.

    A folder that already holds this run is checked shard by shard and completed or repaired
    (one line on stderr per repaired shard); anything that cannot be repaired without
    touching files procvis did not write is a :class:`OutputError`. SIGINT, SIGTERM and SIGHUP
    end the workers and raise :class:`Interrupted`; the same call then resumes.

    Returns the manifest (also written to ``out/manifest.json``).
    """
    shard_size = SHARD_SIZES.get(fmt, 256) if shard_size is None else shard_size
    side = _check_arguments(fmt, count, workers, shard_size, seed, size, shard_bytes)
    if fmt == "hf" and shard_bytes is None:
        shard_bytes = hub.SHARD_BYTES
    images_per_batch(side, "numba", memory_budget() // ENCODE_BYTES_PER_PX * 3)   # one panel must fit
    bound = resolve(pattern, settings)
    tasks = [t.id for t in bound]
    if workers == "auto":
        workers = auto_workers(len(tasks) * int(count), side)
    else:
        workers, note = worker_cap(int(workers), side)
        if note:
            print(note, file=sys.stderr)
    chosen = run_settings(bound)
    cfg = RunConfig(pattern=pattern, seed=int(seed), count=int(count), size=side, format=fmt,
                    shard_size=int(shard_size), settings=chosen, inputs=input_digests(chosen), font=font_digest(),
                    procvis_version=procvis_version(), shard_bytes=None if shard_bytes is None else int(shard_bytes))
    with _signals_raised():
        root, created = _check_out(out)
        try:
            with _Lock(root, cfg.marker()) as lock:
                try:
                    return _generate_locked(root, cfg, tasks, workers, progress, lock.stale.get("run"), executor)
                except BaseException:
                    _clean_after_failure(root, cfg)
                    raise
        except BaseException:
            if created:
                with contextlib.suppress(OSError):
                    root.rmdir()                 # only when nothing is left in it
            raise


def _generate_locked(root: Path, cfg: RunConfig, tasks: list[str], workers: int, progress: bool,
                     stale: str | None, executor=None) -> dict:
    """``generate`` once the folder is locked; returns the manifest."""
    if cfg.format == "hf":
        return _generate_hub_locked(root, cfg, tasks, workers, progress, stale, executor)
    _refuse_other_settings(root, cfg)
    _remove_temporary(root, cfg, {cfg.marker()} | ({stale} if isinstance(stale, str) else set()))
    if not (root / RUN_FILE).exists():
        _prune_empty(root / cfg.tree())          # what a failed first attempt left
    _refuse_strays(root, cfg, tasks)
    records = _records(root, cfg)
    by_shard: dict[str, list] = {}                 # shard -> its recorded files, grouped once
    for f, v in records.items():
        by_shard.setdefault(f if cfg.format == "parquet" else f.rsplit("/", 1)[0], []).append((f, v))
    files = {}
    bar = _progress_bar(progress, len(tasks) * cfg.count)

    def jobs():                                    # lazily: a run never lists all its shards
        for shard in Layout(cfg, tasks).shards():
            rel = shard.rel
            problem = _shard_problem(root, cfg, shard, dict(by_shard.get(rel, [])))
            if problem is None:
                files.update({f: (s if s is not None else (root / f).stat().st_size, h)
                              for f, (s, h) in by_shard.get(rel, [])})
                bar.update(shard.rows)
                continue
            if problem != UNRECORDED:
                print(f"procvis: repairing {rel}: {problem}", file=sys.stderr)
            yield str(root), cfg, shard
    try:
        journal = _Journal(root, cfg.marker())
        written = []

        def done(result) -> None:
            rel, n, record = result
            files.update({f: tuple(v) for f, v in record.items()})
            journal.add(rel, record)
            if not written:
                _write_identity(root, cfg)
                written.append(rel)
            bar.update(n)

        (executor.run_jobs if executor is not None else _run_jobs)(jobs(), workers, done)
    finally:
        bar.close()
    # a worker killed mid-shard (its task retried elsewhere) leaves its temporary file behind
    _remove_temporary(root, cfg, {cfg.marker()})
    _write_identity(root, cfg)
    manifest = _write_manifest(root, cfg, tasks, files)
    journal.remove()
    return manifest


def _clean_after_failure(root: Path, cfg: RunConfig) -> None:
    """Remove this run's temporary files; when no shard was ever written, also what the run
    created (empty folders, an empty journal, the run.json and card written for a first
    shard that never landed), so the corrected command starts afresh."""
    with contextlib.suppress(OSError):
        _remove_temporary(root, cfg, {cfg.marker()})
        identified, tree = (root / RUN_FILE).exists(), root / cfg.tree()
        if identified and ((root / MANIFEST_FILE).exists() or _Journal(root, cfg.marker()).read()):
            return                                   # shards on record: the same command resumes
        _prune_empty(tree)
        if not tree.exists():
            if identified:
                _remove_own_identity(root, cfg)
            if not (root / RUN_FILE).exists():
                _Journal(root, cfg.marker()).remove()


def _remove_own_identity(root: Path, cfg: RunConfig) -> None:
    """Remove run.json and the card when both are exactly what this run writes (not for
    ``hf`` runs: their card depends on the plan, and they write both only with a shard)."""
    if cfg.format == "hf":
        return
    files = _identity_files(cfg)
    with contextlib.suppress(OSError, UnicodeDecodeError):
        if all((root / name).read_text() == text for name, text in files):
            for name, _ in files:
                (root / name).unlink()


def _write_manifest(root: Path, cfg: RunConfig, tasks: list[str], files: dict, extra: dict | None = None) -> dict:
    """Write manifest.json from ``files`` (``{file: (size, sha256)}``) and ``extra`` entries;
    returns the manifest."""
    manifest = {**(extra or {}),
                "procvis_version": cfg.procvis_version or procvis_version(), "format_version": FORMAT_VERSION,
                "config": asdict(cfg), "seed": cfg.seed, "tasks": tasks, "counts": {t: cfg.count for t in tasks},
                "total": cfg.count * len(tasks), "files": {f: h for f, (_, h) in files.items()},
                "sizes": {f: s for f, (s, _) in files.items()}}
    _atomic_write(root / MANIFEST_FILE, json.dumps(manifest, indent=1, sort_keys=True) + "\n", cfg.marker())
    return manifest


# ---------------------------------------------------------------- verify

def load_manifest(out: str) -> dict:
    """The manifest of the dataset in ``out``, as written."""
    return json.loads((Path(out) / MANIFEST_FILE).read_text())


def _finished_run(root: Path) -> tuple[dict, RunConfig]:
    """The manifest of a finished run in ``root`` and its config (:class:`OutputError` when
    there is none that reads)."""
    manifest = _read_json(root / MANIFEST_FILE)
    try:
        cfg = RunConfig(**manifest["config"])
        if not isinstance(manifest["files"], dict) or cfg.format not in FORMATS:
            raise TypeError
    except (TypeError, KeyError):
        raise OutputError(f"{str(root)!r} has no readable manifest.json: not a finished procvis dataset (the "
                          "generate command that wrote it finishes it)") from None
    stale = stale_layout(manifest)
    if stale:
        raise OutputError(f"{str(root)!r}: {stale}")
    return manifest, cfg


def stale_layout(manifest: dict) -> str | None:
    """Why this procvis cannot read the files of the dataset ``manifest`` describes (a layout
    of another format version), or None. Version 1 differs only in its ``parquet`` files (one
    folder per task)."""
    version, fmt = manifest.get("format_version"), (manifest.get("config") or {}).get("format")
    if version == FORMAT_VERSION or (version == 1 and fmt != "parquet"):
        return None
    return (f"a dataset of format version {version!r} ({fmt}); this procvis ({procvis_version()}) reads version "
            f"{FORMAT_VERSION}: generate it again into a new folder")


def _extra_files(root: Path, cfg: RunConfig, listed: set[str]) -> list[str]:
    """Files and folders of the data tree that the manifest does not list (relative paths)."""
    tree = root / cfg.tree()
    needed = {str(Path(f).parents[i]) for f in listed for i in range(len(Path(f).parents) - 1)}
    out = []
    for d, dirs, names in os.walk(tree):
        rel = Path(d).relative_to(root).as_posix()
        for sub in sorted(dirs):
            if f"{rel}/{sub}" not in needed:
                out.append(f"{rel}/{sub}")
                dirs.remove(sub)
        out += [f"{rel}/{n}" for n in sorted(names) if f"{rel}/{n}" not in listed]
    return out


def check(out: str) -> dict[str, str]:
    """Everything wrong with a finished dataset folder, as ``{relative path: what}``: files of
    the manifest that are missing or changed (size or checksum); files and folders of the data
    tree it does not list; shards whose rows are missing, extra, out of place or drawn under
    other family settings (found from the rows, even under a rewritten manifest); a run.json or
    card that does not match the manifest. Files beside the data tree are not the dataset's."""
    root = Path(out)
    manifest, cfg = _finished_run(root)
    files = manifest["files"]
    sizes = manifest.get("sizes") if isinstance(manifest.get("sizes"), dict) else {}
    bad = {}
    for f, h in sorted(files.items()):
        p = root / f
        wrong = _mismatch(p, sizes.get(f), h) if p.is_file() else "missing"
        if wrong:
            bad[f] = wrong
    bad.update({f: "not in the manifest" for f in _extra_files(root, cfg, set(files))})
    tasks = manifest.get("tasks") or []
    parts = _hub_plan(cfg, tasks, known=_recorded_rows(manifest)) if cfg.format == "hf" else None
    _check_rows(root, cfg, tasks, parts, set(files), bad)
    if _read_json(root / RUN_FILE) != cfg.identity() | {"format_version": manifest.get("format_version")}:
        bad[RUN_FILE] = "does not match the manifest's settings"
    try:
        card_ok = (root / CARD_FILE).read_text() == _card(cfg, parts)
    except (OSError, UnicodeDecodeError):
        card_ok = False
    if not card_ok:
        bad[CARD_FILE] = "is not the card of the manifest's settings"
    return bad


def _check_rows(root: Path, cfg: RunConfig, tasks: list[str], parts: list | None, files: set, bad: dict) -> None:
    """Add to ``bad`` every shard of the run that ``files`` (the manifest's) does not list and
    every listed shard whose rows are wrong (``parts``: the Hub plan of an ``hf`` run)."""
    if parts is not None:
        every = ((p.shard_file(k), lambda p=p, k=k: _hub_rows_problem(root, cfg, p, k))
                 for p in parts for k in range(p.shard_count()))
    else:
        every = ((s.rel, lambda s=s: _rows_problem(root, cfg, s)) for s in Layout(cfg, tasks).shards())
    shards = {f if cfg.format != "imagefolder" else f.rsplit("/", 1)[0] for f in files}
    for rel, rows_problem in every:
        target = rel if cfg.format != "imagefolder" else f"{rel}/metadata.jsonl"
        if rel not in shards:
            bad[rel] = "a shard of the run that the manifest does not list"
        elif target not in bad:
            problem = rows_problem()
            if problem:
                bad[target] = problem


def verify(out: str) -> list[str]:
    """Relative paths of everything :func:`check` finds wrong; empty when the dataset is
    intact. A re-run of the same generate command repairs each of them, or refuses with a
    one-line error naming a file it did not write."""
    return list(check(out))


def _rows_problem(root: Path, cfg: RunConfig, shard: Shard) -> str | None:
    """What is wrong with the rows of ``shard``, or ``None``."""
    path = root / shard.rel if cfg.format == "parquet" else root / shard.rel / "metadata.jsonl"
    try:
        rows = _rows(path)
    except Exception as e:     # any damage a reader trips on means the same: rewrite the shard
        return f"{path.relative_to(root).as_posix()} cannot be read ({type(e).__name__})"
    want = shard.members()
    if [(t, i) for t, i, _ in rows] != want:
        (first, a), (last, b) = want[0], want[-1]
        span = f"rows {a}..{b} of {first}" if first == last else f"its rows from {first} {a} to {last} {b}"
        return f"holds {len(rows)} rows, not {span}"
    metas: dict[str, list] = {}
    for t, _, meta in rows:
        metas.setdefault(t, []).append(meta)
    if any(_other_settings(cfg, t, m) for t, m in metas.items()):
        return "holds rows drawn under other family settings"
    return None


def _other_settings(cfg: RunConfig, task: str, metas: list[dict]) -> bool:
    """Whether any of ``metas`` (rows of ``task``) records family settings other than the run's."""
    family = get_family(family_of(task))
    expected = {k: v for k, v in cfg.settings.items()
                if k.split(".", 1)[0] == family.name and family.settings[k.split(".", 1)[1]].concerns(task)}
    return any({f"{family.name}.{k}": v for k, v in (meta.get("settings") or {}).items()} != expected for meta in metas)


def _rows(path: Path) -> list[tuple[str, int, dict]]:
    """``(task, index, meta dict)`` of every row of a shard file."""
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        table = pq.read_table(path, columns=["task", "index", "meta"])
        cols = [table.column(c).to_pylist() for c in ("task", "index", "meta")]
        return [(t, i, json.loads(m)) for t, i, m in zip(*cols)]
    rows = [json.loads(line) for line in path.read_text().splitlines() if line]
    return [(r["task"], r["index"], json.loads(r["meta"])) for r in rows]


# ---------------------------------------------------------------- --format hf: the Hub layout

def _hub_plan(cfg: RunConfig, tasks: list[str], progress: bool = False, known: dict | None = None) -> list:
    """The :class:`engine.hub.Part` list of an ``hf`` run, each with its rows per shard: as
    ``known`` records them (``{config: rows}``: the run's own record, so a resumed or checked
    run never measures again, possibly with another zlib), else the byte target over the PNG
    bytes of a row, measured on a few samples of its config (:func:`_row_bytes`;
    ``progress``: a bar on stderr, since that draws and encodes images before the first
    shard starts)."""
    parts = hub.plan(tasks, cfg.count)
    per_config: dict[str, int] = {k: int(v) for k, v in (known or {}).items()}
    shown = parts
    if progress:
        from tqdm import tqdm

        shown = tqdm(parts, desc="sizing shards", unit="part", file=sys.stderr, dynamic_ncols=True, leave=False)
    for p in shown:
        if p.config not in per_config:
            members = [m for q in parts if q.config == p.config for m in q.members]
            per_config[p.config] = hub.rows_per_shard(_row_bytes(cfg, members), cfg.shard_bytes or hub.SHARD_BYTES)
        p.rows_per_shard = per_config[p.config]
    return parts


def hub_locate(out: str, task: str, index: int, parts: list | None = None) -> tuple[str, int]:
    """``(file, row group)`` that holds sample ``index`` of ``task`` in the finished ``hf``
    dataset in ``out`` (``parts``: its plan, when the caller keeps it; :func:`hub_plan`), so a
    reader opens only that row group (``pyarrow.parquet.ParquetFile(...).read_row_group``).
    :class:`OutputError` when the folder is no ``hf`` dataset or does not hold the sample."""
    manifest, cfg = _finished_run(Path(out))
    if cfg.format != "hf":
        raise OutputError(f"{str(out)!r} holds format {cfg.format!r}, not 'hf'")
    for part in parts if parts is not None else hub_plan(out):
        row = part.position(task, index) if part.config == hub.root_of(task) else None
        if row is not None and task in manifest.get("tasks", []):
            return part.shard_file(row // part.rows_per_shard), row % part.rows_per_shard // cfg.shard_size
    raise OutputError(f"{str(out)!r} does not hold sample {index} of {task!r}")


def hub_plan(out: str) -> list:
    """The plan (:class:`engine.hub.Part` list) of the finished ``hf`` dataset in ``out``."""
    manifest, cfg = _finished_run(Path(out))
    return _hub_plan(cfg, list(manifest.get("tasks") or []), known=_recorded_rows(manifest))


def _recorded_rows(manifest: dict | None) -> dict:
    """``{config: rows per shard}`` that a finished ``hf`` run's manifest records."""
    layout = (manifest or {}).get("layout") or []
    return {e["config"]: e["rows_per_shard"] for e in layout if isinstance(e, dict) and "rows_per_shard" in e}


def _row_bytes(cfg: RunConfig, members: list) -> float:
    """Mean PNG bytes of a row over the first sample of up to ``hub.ESTIMATE_TASKS`` tasks
    spread over ``members`` (``(task, indices)``): photographs and drawings compress very
    differently, so the shard size is measured rather than guessed (deterministic, like
    every render)."""
    step = max(1, len(members) // hub.ESTIMATE_TASKS)
    chosen = members[::step][:hub.ESTIMATE_TASKS]
    samples = [get_task(task, cfg.settings).samples(cfg.seed, [sel[0]])[0] for task, sel in chosen]
    images = encoded_panels(samples, cfg.size)
    return sum(len(png) for pngs in images for png in pngs) / len(samples)


def _hub_schema(config: str):
    """The Arrow schema of a config's shards, with the ``datasets`` features in its metadata."""
    import pyarrow as pa

    kinds = {"string": pa.string(), "int64": pa.int64()}
    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    cols = hub.features(config)
    info = {n: ({"feature": {"_type": "Image"}, "_type": "List"} if d == "image list" else
                {"dtype": d, "_type": "Value"}) for n, d in cols.items()}
    return pa.schema([(n, pa.list_(image) if d == "image list" else kinds[d]) for n, d in cols.items()],
                     metadata={"huggingface": json.dumps({"info": {"features": info}})})


def _hub_piece(cfg: RunConfig, config: str, rel: str, j: int, n: int, segments: list) -> tuple:
    """Draw, render and encode piece ``j`` of ``n`` of shard ``rel`` (``segments``: ``(task,
    indices)``); returns ``(rel, j, n, Arrow table of its rows)``."""
    pa = _pyarrow()
    _settle_heap()
    samples, images = _drawn(cfg, _bound_members(cfg, segments))
    schema = _hub_schema(config)
    rows = [_row(s) for s in samples]
    cols = {}
    for name in schema.names:
        if name == "images":
            cols[name] = [[{"bytes": png, "path": None} for png in pngs] for pngs in images]
        elif name == "problem_size":
            cols[name] = [s.meta.get("size") for s in samples]
        else:
            cols[name] = [r[name] for r in rows]
    return rel, j, n, pa.table(cols, schema=schema)


def _hub_worker(args) -> tuple:
    return _hub_piece(*args)


def _run_ordered(jobs, workers: int, done) -> None:
    """Make every piece of ``jobs`` (an iterable of :func:`_hub_piece` arguments, consumed
    lazily) and call ``done(result)`` in the order of ``jobs``, whatever order the workers
    finish in (at most two pieces per worker made or held at once); on any failure or
    interruption the workers are ended before the exception propagates."""
    started = _here_or_pool(jobs, workers, _hub_worker, done)
    if started is None:
        return
    queue, first = started
    pool, window = _start_pool(first, workers, _hub_worker)
    try:
        while window:
            with _stops_held():
                wait([window[0]])
            done(window.pop(0).result())
            window += [pool.submit(_hub_worker, job) for job in itertools.islice(queue, 1)]
    except BaseException:
        _stop_pool(pool)
        raise
    pool.shutdown()


class _HubShards:
    """Writes the pieces of each shard, in order, into one Parquet file under a temporary
    name, and installs it when its last piece is in; ``on_shard(rel, record)`` then."""

    def __init__(self, root: Path, cfg: RunConfig, on_shard):
        self.root, self.cfg, self.on_shard = root, cfg, on_shard
        self.writer, self.tmp, self.file, self.out = None, None, None, None

    def add(self, result: tuple) -> int:
        """Write one piece (:func:`_hub_piece`'s result); returns its number of rows."""
        import pyarrow.parquet as pq

        rel, j, n, table = result
        final = self.root / rel
        try:
            if j == 0:
                final.parent.mkdir(parents=True, exist_ok=True)
                self.tmp = final.parent / f"{TMP_PREFIX}{self.cfg.marker()}-{os.getpid()}-{final.name}"
                _remove(self.tmp)
                # digested as written (:class:`_DigestingFile`): not read back, at up to 256 MiB a shard
                self.file = open(self.tmp, "wb", buffering=WRITE_BUFFER)
                self.out = _DigestingFile(self.file)
                self.writer = pq.ParquetWriter(self.out, table.schema, **_parquet_options(table.schema))
            self.writer.write_table(table, row_group_size=self.cfg.shard_size)
            if j == n - 1:
                self.writer.close()
                self.writer = None
                record = {rel: [self.file.tell(), self.out.sha256.hexdigest()]}
                self.file.close()
                self.file = None
                _install(self.tmp, final, self.cfg.marker())
                self.on_shard(rel, record)
        except OSError as e:
            self.abort()
            if _disk_full(e):
                raise _disk_full_error(self.root, rel) from None
            raise
        return table.num_rows

    def abort(self) -> None:
        """Close and remove the shard being written, if any (even when interrupted meanwhile)."""
        try:
            if self.writer is not None:
                with contextlib.suppress(Exception):
                    self.writer.close()
        finally:
            self.writer = None
            if self.file is not None:
                with contextlib.suppress(OSError):
                    self.file.close()
                self.file = None
            if self.tmp is not None:
                _remove(self.tmp)


def _hub_strays(root: Path, parts: list) -> list[str]:
    """Entries of ``data/`` that no shard of the plan accounts for (relative paths)."""
    tree = root / "data"
    if not tree.exists() and not tree.is_symlink():
        return []
    if not tree.is_dir() or tree.is_symlink():
        return ["data"]
    expected = {p.shard_file(k) for p in parts for k in range(p.shard_count())}
    dirs = {f"data/{p.config}" for p in parts}
    out = []
    for d in sorted(tree.iterdir()):
        rel = f"data/{d.name}"
        if rel not in dirs or not d.is_dir() or d.is_symlink():
            out.append(rel)
            continue
        out += [f"{rel}/{f.name}" for f in sorted(d.iterdir())
                if f"{rel}/{f.name}" not in expected or not f.is_file() or f.is_symlink()]
    return out


def _hub_rows_problem(root: Path, cfg: RunConfig, part, k: int) -> str | None:
    """What is wrong with the rows of shard ``k`` of ``part``, or ``None``."""
    rel = part.shard_file(k)
    try:
        rows = _rows(root / rel)
    except Exception as e:     # any damage a reader trips on means the same: rewrite the shard
        return f"{rel} cannot be read ({type(e).__name__})"
    want = [(t, i) for t, idx in part.segments(*part.shard_rows(k)) for i in idx]
    if [(t, i) for t, i, _ in rows] != want:
        return f"holds {len(rows)} rows, not the {len(want)} rows of its place in {part.config}/{part.split}"
    by_task: dict[str, list] = {}
    for t, _, meta in rows:
        by_task.setdefault(t, []).append(meta)
    if any(_other_settings(cfg, t, metas) for t, metas in by_task.items()):
        return "holds rows drawn under other family settings"
    return None


def _hub_jobs(root: Path, cfg: RunConfig, parts: list, records: dict, files: dict, bar):
    """The pieces still to make (lazily), shard by shard in plan order; a shard whose files
    match their record and whose rows are right is kept (its files go into ``files``)."""
    for part in parts:
        for k in range(part.shard_count()):
            rel = part.shard_file(k)
            mine = {rel: records[rel]} if rel in records else {}
            lo, hi = part.shard_rows(k)
            if not (root / rel).exists():
                problem = "missing" if mine else UNRECORDED
            else:
                problem = (_files_problem(root, rel, mine) or _hub_rows_problem(root, cfg, part, k)) if mine \
                    else UNRECORDED
            if problem is None:
                size, sha = mine[rel]
                files[rel] = (size if size is not None else (root / rel).stat().st_size, sha)
                bar.update(hi - lo)
                continue
            if problem != UNRECORDED:
                print(f"procvis: repairing {rel}: {problem}", file=sys.stderr)
            starts = range(lo, hi, cfg.shard_size)
            for j, a in enumerate(starts):
                yield cfg, part.config, rel, j, len(starts), part.segments(a, min(hi, a + cfg.shard_size))


def _generate_hub_locked(root: Path, cfg: RunConfig, tasks: list[str], workers: int, progress: bool,
                         stale: str | None, executor=None) -> dict:
    """``generate`` of an ``hf`` run once the folder is locked; returns the manifest."""
    _refuse_other_settings(root, cfg)
    _remove_temporary(root, cfg, {cfg.marker()} | ({stale} if isinstance(stale, str) else set()))
    if not (root / RUN_FILE).exists():
        _prune_empty(root / cfg.tree())          # what a failed first attempt left
    known = _read_json(root / PLAN_FILE) or _recorded_rows(_read_json(root / MANIFEST_FILE))
    parts = _hub_plan(cfg, tasks, progress, known if isinstance(known, dict) else None)
    rows = {p.config: p.rows_per_shard for p in parts}
    if known != rows:
        _atomic_write(root / PLAN_FILE, json.dumps(rows, sort_keys=True) + "\n", cfg.marker())
    strays = _hub_strays(root, parts)
    if strays:
        more = f" (and {len(strays) - 1} more)" if len(strays) > 1 else ""
        raise OutputError(f"{strays[0]!r}{more} in {str(root)!r} is not part of this dataset and procvis did not "
                          "write it; move it out of the folder and run the same command again")
    records, files = _records(root, cfg), {}
    journal = _Journal(root, cfg.marker())
    bar = _progress_bar(progress, len(tasks) * cfg.count)

    written = []

    def on_shard(rel: str, record: dict) -> None:
        if not written:
            _write_identity(root, cfg, parts)
            written.append(rel)
        files.update({f: tuple(v) for f, v in record.items()})
        journal.add(rel, record)

    writer = _HubShards(root, cfg, on_shard)
    try:
        run = executor.run_ordered if executor is not None else _run_ordered
        run(_hub_jobs(root, cfg, parts, records, files, bar), workers, lambda r: bar.update(writer.add(r)))
    finally:
        writer.abort()
        bar.close()
    _write_identity(root, cfg, parts)
    layout = [{"config": p.config, "split": p.split, "part": p.part, "rows": p.total, "shards": p.shard_count(),
               "rows_per_shard": p.rows_per_shard} for p in parts]
    manifest = _write_manifest(root, cfg, tasks, files, {"layout": layout})
    journal.remove()
    (root / PLAN_FILE).unlink(missing_ok=True)           # the manifest records it now
    return manifest


def _hub_card(cfg: RunConfig, parts: list) -> str:
    """The Hub dataset card of an ``hf`` run: YAML header and text (:mod:`engine.hub`)."""
    mb = (cfg.shard_bytes or hub.SHARD_BYTES) / 2 ** 20
    opts = [f"--seed {cfg.seed}", f"--count {cfg.count}", f"--size {cfg.size}"]
    if cfg.shard_size != SHARD_SIZES["hf"]:
        opts.append(f"--shard-size {cfg.shard_size}")
    if cfg.shard_bytes not in (None, hub.SHARD_BYTES):
        opts.append(f"--shard-mb {int(mb) if mb.is_integer() else mb!r}")
    opts += [f"--set {k}={v}" for k, v in cfg.settings.items()]
    command = f"procvis generate '{cfg.pattern}' --format hf {' '.join(opts)} --out DIR"
    hub_ids = {k for k, v in cfg.settings.items() if isinstance(v, str) and v.startswith("hf:")}
    outside = sorted(set(cfg.inputs) | hub_ids)
    if outside:
        license_id = "other"
        note = ("The samples draw on data named by the settings " + ", ".join(f"`{k}`" for k in outside) +
                ": the data carries the licenses of those files; procvis's own part is Apache-2.0.")
    else:
        license_id = "apache-2.0"
        note = ("Apache-2.0, as procvis itself: every image is drawn by procvis's code from its built-in sources "
                "(no photograph or outside file). The benchmarks' designs belong to their papers' authors: cite them.")
    return hub.card_header(parts, license_id) + hub.card_body(parts, command, cfg.procvis_version or "unknown",
                                                              cfg.seed, note)


__all__ = ["generate", "verify", "check", "load_manifest", "render_samples", "encode_png", "write_shard", "Layout",
           "Shard", "FORMAT_VERSION", "stale_layout", "FORMATS", "SHARD_SIZES", "OutputError", "RunConfig",
           "hub_locate", "hub_plan"]
