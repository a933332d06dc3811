"""``ray_dataset``: the samples of :func:`engine.stream` as a ``ray.data.Dataset``, for Ray
Data pipelines and Ray Train loops.

Row ``i`` (column ``position``) is stream position ``i``: task ``tasks[i % T]``, sample index
``offset + i // T``, drawn and rendered exactly as :func:`engine.stream` draws and renders
it, so the same ``(task, seed, index)`` gives the same pixels, answer and label whatever
the number of blocks, workers or nodes, and whichever block a row lands in. Ray Data may
hand blocks on out of order; sort by ``position`` (or set
``DataContext.get_current().execution_options.preserve_order = True``) where order matters.

Ray is optional (``pip install 'procvis[ray]'``); it is imported when a dataset is made.
"""
from __future__ import annotations

import numpy as np

from . import streams
from .errors import UserError

ROWS_PER_BATCH = 32            # rows a Ray task draws and renders at once


class _Render:
    """The ``map_batches`` function: positions in, rendered rows out (one stream per worker
    process, built on first use from the stream's arguments)."""

    def __init__(self, args: dict):
        self.args, self.stream = args, None

    def __call__(self, batch: dict) -> dict:
        """The rows of ``batch["id"]`` (stream positions): ``images`` ``[B,3,H,W]`` uint8,
        ``label``, ``index`` and ``position`` int64, and ``id``, ``task``, ``question``,
        ``answer``, ``answer_type`` as text."""
        if self.stream is None:
            self.stream = streams.stream(**self.args)
        s = self.stream
        positions = [int(i) for i in batch["id"]]
        samples, frames = s.frames(positions)
        return {"images": frames.render("cpu").numpy(),
                "label": s._labels(positions, samples).numpy(),
                "index": np.array([x.index for x in samples], dtype=np.int64),
                "position": np.array(positions, dtype=np.int64),
                "id": np.array([x.id for x in samples], dtype=object),
                "task": np.array([x.task for x in samples], dtype=object),
                "question": np.array([x.question for x in samples], dtype=object),
                "answer": np.array([x.answer_text for x in samples], dtype=object),
                "answer_type": np.array([x.answer_type for x in samples], dtype=object)}


def ray_dataset(pattern: str, seed: int = 0, count: int = 1000, size=224, *, offset: int = 0,
                panels: str = "stitch", settings: dict | None = None, rows_per_batch: int = ROWS_PER_BATCH,
                num_blocks: int | None = None):
    """A ``ray.data.Dataset`` of ``count`` rendered samples of the tasks matching ``pattern``
    (the first ``count`` positions of ``engine.stream(pattern, seed, size=size,
    offset=offset, panels=panels, settings=settings)``; see the module docstring).

    Columns: ``images`` (``[3,H,W]`` uint8, every image on the ``size`` canvas as the
    stream's ``shape="fit"``), ``label``, ``index``, ``position`` (int64), ``id``, ``task``,
    ``question``, ``answer``, ``answer_type``. ``rows_per_batch``: rows a task renders at
    once; ``num_blocks``: blocks of the dataset (Ray's choice when ``None``); neither
    changes a row. Raises :class:`UserError` for a bad argument (checked here, before Ray
    runs anything); returns the (lazy) dataset."""
    if isinstance(count, bool) or int(count) != count or count <= 0:
        raise UserError(f"count={count!r} must be a positive integer (a Ray dataset is bounded)")
    for name, value in (("rows_per_batch", rows_per_batch), ("num_blocks", num_blocks)):
        if value is not None and (isinstance(value, bool) or int(value) != value or value <= 0):
            raise UserError(f"{name}={value!r} must be a positive integer")
    args = {"pattern": pattern, "seed": int(seed), "batch_size": int(rows_per_batch), "size": size,
            "count": int(count), "offset": int(offset), "panels": panels}
    stream = streams.stream(**args, settings=settings)          # checks every argument here
    args["settings"] = stream.settings                          # resolved once: every worker draws alike
    try:
        import ray.data
    except ImportError:
        raise UserError("ray_dataset needs Ray Data, which is not installed; allowed: install it with "
                        "pip install 'procvis[ray]'") from None
    ds = ray.data.range(int(count), override_num_blocks=num_blocks)
    return ds.map_batches(_Render(args), batch_size=int(rows_per_batch), batch_format="numpy")


__all__ = ["ray_dataset"]
