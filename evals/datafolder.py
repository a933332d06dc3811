"""Scoring a dataset folder written by ``procvis generate`` (``procvis eval --data DIR``).

The folder's manifest decides the seed, panel size, family settings and how many samples
each task holds. The samples themselves are drawn again from their tasks (a sample's
question, gold answer and reader come from its task, given the seed and index), every row of
the folder is checked against them (id, question, answer and metadata: a folder written by a
procvis that draws other samples is refused, naming the row), and the panels are the
folder's own PNG images, decoded to the ``uint8 [3,H,W]`` tensors a fresh render gives. So an
evaluation of the folder asks the same requests and scores the same replies as one that
renders the same tasks, seed, count and size afresh.
"""
from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import torch

from engine.errors import UserError
from engine.outputs import (MANIFEST_FILE, Layout, RunConfig, hub_locate, hub_plan, load_manifest, procvis_version,
                            stale_layout)

KEEP_SHARDS = 4          # shards held in memory at once (their PNG bytes)


class DataFolder:
    """A finished dataset folder: ``seed``, ``size``, ``count`` (samples per task),
    ``settings`` (family settings), ``tasks`` (the task ids it holds) and :meth:`images`."""

    def __init__(self, folder: str | Path):
        self.root = Path(folder)
        try:
            manifest = load_manifest(str(self.root))
            self.cfg = RunConfig(**manifest["config"])
            self.tasks = list(manifest["tasks"])
        except (OSError, ValueError, TypeError, KeyError):
            raise UserError(f"--data {str(folder)!r}: no readable {MANIFEST_FILE}; expected a folder written by "
                            "'procvis generate'") from None
        self.version = manifest.get("procvis_version")
        stale = stale_layout(manifest)
        if stale:
            raise UserError(f"--data {str(folder)!r} holds {stale}")
        self.seed, self.size, self.count = self.cfg.seed, self.cfg.size, self.cfg.count
        self.settings = dict(self.cfg.settings or {})
        self._shards: dict[tuple, dict[tuple[str, int], tuple[dict, list[bytes]]]] = {}
        self._plan = None                 # an hf folder's shard plan, made on first use
        self._layout = None               # a parquet or imagefolder folder's layout, made on first use

    def fit(self, seed, size, settings, count) -> tuple[int, int, dict, int]:
        """The run's ``(seed, size, settings, count)``: the folder's, where the caller gave
        None (``count``: the folder's count); a given value that differs from the folder's
        is a :class:`UserError` naming the option (a count above the folder's too)."""
        for option, given, own in (("--seed", seed, self.seed), ("--size", size, self.size)):
            if given is not None and given != own:
                raise UserError(f"{option} {given}: the dataset in {str(self.root)!r} was generated with "
                                f"{option.lstrip('-')} {own}; leave {option} out to use it")
        if settings and dict(settings) != self.settings:
            raise UserError(f"--set {settings}: the dataset in {str(self.root)!r} was generated with settings "
                            f"{self.settings or 'none'}; leave --set out to use them")
        if count is not None and count > self.count:
            raise UserError(f"--count {count}: the dataset in {str(self.root)!r} holds {self.count} samples per task")
        return self.seed, self.size, self.settings, self.count if count is None else count

    def check_tasks(self, tasks, indices) -> None:
        """A :class:`UserError` naming the first of ``tasks`` the folder does not hold, or an
        index of ``indices`` beyond its count; returns None when every sample is there."""
        missing = [t.id for t in tasks if t.id not in self.tasks]
        if missing:
            held = ", ".join(self.tasks[:5]) + (", ..." if len(self.tasks) > 5 else "")
            raise UserError(f"--data {str(self.root)!r} does not hold task {missing[0]!r} (it holds {held})")
        beyond = [i for i in indices if not 0 <= i < self.count]
        if beyond:
            raise UserError(f"--data {str(self.root)!r}: the protocol asks for sample {beyond[0]}, and the dataset "
                            f"holds samples 0..{self.count - 1} per task")

    def images(self, samples) -> list[list[torch.Tensor]]:
        """Per sample, its panels as ``uint8 [3,H,W]`` tensors decoded from the folder, after
        checking the folder's row against the sample (a :class:`UserError` naming the row
        that differs)."""
        out = []
        for s in samples:
            key = self._shard_of(s.task, s.index)
            if key not in self._shards:
                if len(self._shards) >= KEEP_SHARDS:        # samples come task by task, in index order
                    self._shards.clear()
                self._shards[key] = self._read_shard(key)
            row, pngs = self._shards[key].get((s.task, s.index), (None, []))
            if row is None or _comparable(row) != _comparable(s.record()):
                raise UserError(f"--data {str(self.root)!r}: row {s.id} is not the sample this procvis "
                                f"({procvis_version()}) draws (the dataset was written by procvis "
                                f"{self.version}); regenerate it or evaluate without --data")
            out.append([_decode(png, f"{s.id} panel {j}") for j, png in enumerate(pngs)])
        return out

    def _shard_of(self, task: str, index: int) -> tuple:
        """The key of the piece of the folder that holds ``(task, index)``: ``(file, row
        group)`` in an ``hf`` folder, else ``(shard path, None)``."""
        if self.cfg.format != "hf":
            if self._layout is None:
                self._layout = Layout(self.cfg, self.tasks)
            return self._layout.rel_of(task, index), None
        if self._plan is None:
            self._plan = hub_plan(str(self.root))
        return hub_locate(str(self.root), task, index, self._plan)

    def _read_shard(self, key: tuple) -> dict[tuple[str, int], tuple[dict, list[bytes]]]:
        """``{(task, index): (row, PNG bytes of its panels)}`` of the piece ``key``."""
        rel = key[0]
        path = self.root / rel
        try:
            if self.cfg.format in ("parquet", "hf"):
                import pyarrow.parquet as pq

                table = pq.ParquetFile(path).read_row_group(key[1]) if self.cfg.format == "hf" else pq.read_table(path)
                pairs = [(r, [im["bytes"] for im in r.pop("images")]) for r in table.to_pylist()]
            else:
                rows = [json.loads(line) for line in (path / "metadata.jsonl").read_text().splitlines() if line]
                pairs = [(r, [(path / name).read_bytes() for name in r.pop("file_names")]) for r in rows]
        except (OSError, ValueError, KeyError) as e:
            raise UserError(f"--data {str(self.root)!r}: cannot read {rel} ({type(e).__name__}); "
                            "'procvis verify' names what is damaged") from None
        return {(r["task"], r["index"]): (r, pngs) for r, pngs in pairs}


def _comparable(row: dict) -> dict:
    """The fields of a record that must agree between a folder's row and a fresh sample
    (``meta`` and ``options`` as JSON values, whether stored as text or not)."""
    def value(v):
        return json.loads(v) if isinstance(v, str) else json.loads(json.dumps(v))

    keep = ("id", "task", "seed", "index", "question", "answer", "answer_type", "num_panels")
    return {**{k: row.get(k) for k in keep}, "meta": value(row.get("meta")), "options": value(row.get("options"))}


def _decode(png: bytes, what: str) -> torch.Tensor:
    """The RGB PNG ``png`` as a ``uint8 [3,H,W]`` tensor (a :class:`UserError` naming ``what``
    when it does not decode)."""
    from PIL import Image

    try:
        with Image.open(io.BytesIO(png)) as im:
            pixels = np.asarray(im.convert("RGB"))
    except (OSError, ValueError):
        raise UserError(f"--data: the image of {what} does not decode; 'procvis verify' names what is damaged") \
            from None
    return torch.from_numpy(pixels.copy()).permute(2, 0, 1).contiguous()
