"""Content digests of files and model checkpoint folders: what a cache keys on when the
same name can hold different contents."""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

_CHUNK = 1 << 20
_FILE_DIGESTS: dict[tuple[str, int, int], str] = {}     # (resolved path, size, mtime_ns) -> sha256


def file_digest(path: Path) -> str:
    """The sha256 hex digest of the file at ``path``, read in 1 MiB chunks; computed once per
    (resolved path, size, modification time) in this process."""
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _FILE_DIGESTS:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(_CHUNK), b""):
                h.update(chunk)
        _FILE_DIGESTS[key] = h.hexdigest()
    return _FILE_DIGESTS[key]


def _is_model_file(entry: os.DirEntry) -> bool:
    """Whether ``entry`` is a checkpoint file the model's replies can depend on: every regular
    top-level file but hidden files and documentation (``.md``)."""
    return entry.is_file() and not entry.name.startswith(".") and not entry.name.lower().endswith(".md")


def checkpoint_digest(folder: str | Path) -> str:
    """The sha256 hex digest of a checkpoint folder's contents: its files' names and contents
    (config, weights, tokenizer, processor, chat template), whatever the folder is called or
    where it lies."""
    with os.scandir(folder) as it:
        names = sorted(e.name for e in it if _is_model_file(e))
    h = hashlib.sha256()
    for name in names:
        h.update(json.dumps([name, file_digest(Path(folder) / name)]).encode() + b"\n")
    return h.hexdigest()
