"""``upload``: copy a finished dataset folder to any file system ``fsspec`` can write (an
object store such as ``s3://``, ``gs://``, ``az://``, ``hf://``, a mounted path, ``memory://``).

``procvis generate`` keeps its lock, journal and resume on a local (or shared) folder;
``upload(folder, url)`` then publishes the finished dataset: it checks the folder against
its manifest first (:func:`engine.outputs.check`), sends every shard, ``run.json`` and the
card, and ``manifest.json`` last, so a reader that finds a manifest at ``url`` finds every
file it lists. Run again after a failure, it skips the files already there with the size the
manifest records and sends the rest. An object store shows an object only once its upload
is complete; on other file systems each file is written under a temporary name and renamed.
The installed ``fsspec`` driver for the URL's scheme (``s3fs``, ``gcsfs``, ``adlfs``, ...)
and its credentials are used as they are configured.
"""
from __future__ import annotations

import contextlib
import json
from pathlib import Path

from . import outputs
from .errors import OutputError, UserError

OBJECT_STORES = {"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "adl", "oci", "oss", "r2", "hf", "memory"}


def filesystem(url: str):
    """``(fsspec file system, path in it)`` of ``url``; :class:`UserError` naming the URL when
    no installed driver serves its scheme."""
    try:
        import fsspec
    except ImportError:
        raise UserError(f"url={url!r} needs fsspec, which is not installed; allowed: pip install fsspec "
                        "and the driver of the URL's scheme (s3fs, gcsfs, adlfs, ...)") from None
    try:
        return fsspec.core.url_to_fs(url)
    except (ImportError, ValueError) as e:
        raise UserError(f"url={url!r}: no file system driver for it is installed "
                        f"({str(e).splitlines()[0] if str(e) else type(e).__name__}); allowed: a scheme whose "
                        "fsspec driver is installed (s3fs for s3://, gcsfs for gs://, adlfs for az://)") from None


def _is_object_store(fs) -> bool:
    """Whether ``fs`` shows an object only once its upload completes (no rename needed)."""
    protocols = fs.protocol if isinstance(fs.protocol, (tuple, list)) else (fs.protocol,)
    return bool(set(protocols) & OBJECT_STORES)


def _size(fs, path: str) -> int | None:
    """The size of ``path`` on ``fs`` (``None`` when it is not there)."""
    try:
        return int(fs.size(path))
    except (FileNotFoundError, OSError):
        return None


def _send(fs, local: Path, remote: str, atomic: bool, marker: str) -> None:
    """Copy ``local`` to ``remote`` (through a temporary name with the run's ``marker`` when
    ``atomic`` is needed)."""
    parent = remote.rsplit("/", 1)[0]
    if parent and parent != remote:
        fs.makedirs(parent, exist_ok=True)
    if not atomic:
        fs.put_file(str(local), remote)
        return
    tmp = f"{parent}/{outputs.TMP_PREFIX}{marker}-{remote.rsplit('/', 1)[-1]}"
    fs.put_file(str(local), tmp)
    fs.mv(tmp, remote)


def upload(out: str, url: str) -> list[str]:
    """Copy the finished dataset in ``out`` to ``url`` (see the module docstring); returns the
    relative paths sent (files already there with their recorded size are skipped).
    :class:`OutputError` when ``out`` is not an intact finished dataset (naming the first
    problem); :class:`UserError` when no installed driver serves ``url``."""
    root = Path(out)
    manifest = outputs.load_manifest(str(root)) if (root / outputs.MANIFEST_FILE).is_file() else None
    problems = outputs.check(str(root)) if manifest is not None else {outputs.MANIFEST_FILE: "missing"}
    if problems:
        path, what = next(iter(problems.items()))
        raise OutputError(f"{str(root)!r} is not an intact finished dataset ({path}: {what}); allowed: a folder "
                          "procvis generate finished (run the same command again to repair it)")
    fs, base = filesystem(url)
    base = base.rstrip("/")
    atomic = not _is_object_store(fs)
    marker = outputs.RunConfig(**manifest["config"]).marker()
    journal = _Sent(root, url)
    sizes = manifest.get("sizes", {})
    # a file is skipped only when this folder sent these very bytes to this URL and a file
    # of their size is there: a size alone would keep another run's file of equal size
    todo = [rel for rel in sorted(manifest["files"])
            if not (journal.sent.get(rel) == manifest["files"][rel] and _size(fs, f"{base}/{rel}") == sizes.get(rel))]
    todo += [outputs.RUN_FILE, outputs.CARD_FILE]          # small, and they describe this run: always sent
    if _size(fs, f"{base}/{outputs.MANIFEST_FILE}") is not None:
        fs.rm_file(f"{base}/{outputs.MANIFEST_FILE}")    # no manifest listing files being replaced
    for rel in todo:
        _send(fs, root / rel, f"{base}/{rel}", atomic, marker)
        if rel in manifest["files"]:
            journal.add(rel, manifest["files"][rel])
    _send(fs, root / outputs.MANIFEST_FILE, f"{base}/{outputs.MANIFEST_FILE}", atomic, marker)
    return todo + [outputs.MANIFEST_FILE]                 # last: its presence means every file is there


class _Sent:
    """What the folder ``root`` has sent to ``url``: ``sent`` ``{relative path: sha256}``, one
    line per file as it lands, in ``$PROCVIS_CACHE/uploads/<hash of both>.jsonl`` (outside
    the dataset, which stays exactly what its manifest lists)."""

    def __init__(self, root: Path, url: str):
        import hashlib

        from kernels.glyphs import cache_dir

        cache = cache_dir() / "uploads"
        cache.mkdir(parents=True, exist_ok=True)
        key = hashlib.sha256(f"{root.resolve()}\x00{url}".encode()).hexdigest()[:24]
        self.path = cache / f"{key}.jsonl"
        self.sent: dict[str, str] = {}
        if self.path.is_file():
            for line in self.path.read_text().splitlines():
                with contextlib.suppress(ValueError, KeyError, TypeError):
                    rec = json.loads(line)
                    self.sent[rec["file"]] = rec["sha256"]

    def add(self, rel: str, sha: str) -> None:
        with open(self.path, "a") as f:
            f.write(json.dumps({"file": rel, "sha256": sha}) + "\n")


__all__ = ["filesystem", "upload"]
