"""``stream``: an endless (or bounded) torch ``IterableDataset`` of rendered batches.

Sample ``i`` of the stream is ``(tasks[i % T], index = offset + i // T)``: tasks are
interleaved round-robin. Batches ``[j*B, (j+1)*B)`` are dealt to the global workers
``w = rank * num_workers + worker_id`` as ``j % (world_size * num_workers) == w``, so the
ranks and DataLoader workers together cover the stream exactly once, and what a batch
holds never depends on how many of them there are.
"""
from __future__ import annotations

import itertools

import torch
from torch.utils.data import IterableDataset, get_worker_info

from kernels.layout import stitch

from .canvas import canvas_size
from .errors import UserError
from .registry import get_task, resolve, run_settings
from .outputs import render_samples


def _rank_world() -> tuple[int, int]:
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


class SampleStream(IterableDataset):
    """Rendered batches of the tasks matching ``pattern``; see :func:`stream`."""

    def __init__(self, pattern: str, seed: int = 0, batch_size: int = 32, size=224, device="cpu",
                 count: int | None = None, offset: int = 0, panels: str = "stitch", settings: dict | None = None):
        if int(batch_size) != batch_size or batch_size <= 0:
            raise UserError(f"batch_size={batch_size!r} must be a positive integer")
        if count is not None and (int(count) != count or count <= 0):
            raise UserError(f"count={count!r} must be a positive integer or None (endless)")
        if panels not in ("stitch", "first"):
            raise UserError(f"panels={panels!r}; allowed: stitch, first")
        bound = resolve(pattern, settings)
        self.tasks = [t.id for t in bound]
        self.settings = run_settings(bound)       # resolved here, so every worker draws the same samples
        self._task_objs = None
        self.seed, self.batch_size, self.count, self.offset = int(seed), int(batch_size), count, int(offset)
        self.size = canvas_size(size)
        self.device = device
        self.panels = panels

    def item(self, i: int):
        """The sample at stream position ``i``."""
        if self._task_objs is None:
            self._task_objs = [get_task(t, self.settings) for t in self.tasks]
        T = len(self.tasks)
        return self._task_objs[i % T].sample(self.seed, self.offset + i // T)

    def batch(self, j: int) -> dict:
        """Batch ``j`` of the stream: ``images [B,3,H,W]`` uint8 on ``device`` plus text fields."""
        lo = j * self.batch_size
        hi = lo + self.batch_size if self.count is None else min(lo + self.batch_size, self.count)
        samples = [self.item(i) for i in range(lo, hi)]
        # a panel keeps its own extent (a Bongard collage, Percept-V's tall rows and wide
        # strips), as evaluations show it
        imgs = render_samples(samples, self.size, device=self.device, first=self.panels == "first")
        out = [ims[0] if len(ims) == 1 else _side_by_side(ims) for ims in imgs]
        if any(o.shape != out[0].shape for o in out):
            H, W = max(o.shape[1] for o in out), max(o.shape[2] for o in out)
            out = [torch.nn.functional.pad(o, (0, W - o.shape[2], 0, H - o.shape[1]), value=255) for o in out]
        return {"images": torch.stack(out), "id": [s.id for s in samples], "task": [s.task for s in samples],
                "index": torch.tensor([s.index for s in samples]), "question": [s.question for s in samples],
                "answer": [s.answer_text for s in samples], "answer_type": [s.answer_type for s in samples]}

    def num_batches(self) -> int | None:
        return None if self.count is None else -(-self.count // self.batch_size)

    def __iter__(self):
        info = get_worker_info()
        wid, nw = (info.id, info.num_workers) if info is not None else (0, 1)
        rank, world = _rank_world()
        me, total = rank * nw + wid, world * nw
        stop = self.num_batches()
        js = itertools.count(me, total) if stop is None else range(me, stop, total)
        for j in js:
            yield self.batch(j)


def _side_by_side(images: list[torch.Tensor], gap: int = 8) -> torch.Tensor:
    """Panels ``[3,h,w]`` of one sample in a row, as :func:`kernels.layout.stitch` lays out
    panels of one shape; panels of other shapes (a collage and its panels) are padded below
    to the tallest, in white."""
    if all(im.shape == images[0].shape for im in images):
        return stitch(torch.stack(images), gap=gap)
    H = max(im.shape[1] for im in images)
    parts = []
    for j, im in enumerate(images):
        if j:
            parts.append(torch.full((3, H, gap), 255, dtype=im.dtype, device=im.device))
        parts.append(torch.nn.functional.pad(im, (0, 0, 0, H - im.shape[1]), value=255))
    return torch.cat(parts, dim=2)


def stream(pattern: str, seed: int = 0, batch_size: int = 32, size=224, device="cpu", count: int | None = None,
           offset: int = 0, panels: str = "stitch", settings: dict | None = None) -> SampleStream:
    """An ``IterableDataset`` yielding dicts of rendered batches of the tasks matching ``pattern``.

    Each item: ``images`` ``[B,3,H,W]`` uint8 on ``device`` (several panels are stitched side
    by side, or ``panels="first"`` keeps the first), and lists ``id``, ``task``,
    ``question``, ``answer``, ``answer_type`` and tensor ``index``. Endless unless ``count``
    (total samples) is given. Use it with ``DataLoader(ds, batch_size=None, num_workers=K)``;
    under ``torchrun`` each rank takes its own share. With DataLoader workers keep
    ``device="cpu"`` and move batches in the main process. ``settings``: family settings
    (qualified names, e.g. ``{"jigsaw.images": "/data/photos"}``).
    """
    return SampleStream(pattern, seed, batch_size, size, device, count, offset, panels, settings)
