"""Compile the kernels ahead of use: ``python -m engine.warm``.

numba compiles each kernel on its first call and keeps the result on disk next to the
source. In a fresh checkout or image every process that draws before that cache exists
compiles the same kernels again (about two minutes on 2 cores), so parallel workers, test
processes or cluster tasks started together each pay it. Running this once first (an image
build, ``make test``) leaves them all a cache to load.
"""
from __future__ import annotations

import multiprocessing
import sys
import time

from .registry import get_task, representatives

SIZE = 64       # pixels: the kernels do not depend on the size, the time does


def _render_one(task: str) -> None:
    """Render and encode one sample of ``task``: compiles the rasterizer (the longest kernel
    by far: about 100 s of the 130 on 2 cores)."""
    from .outputs import encoded_panels

    encoded_panels(get_task(task).samples(0, range(1)), SIZE)


def warm(pattern: str | None = None, parts: int = 2, processes: int = 2) -> list[str]:
    """Draw and encode two samples of one task per group of the registry (tasks sharing
    their first ``parts`` id parts; those matching ``pattern`` when given), compiling every
    kernel those draws reach. With ``processes`` > 1 the rasterizer compiles in a second
    process meanwhile the samples are drawn and the PNG encoder compiles here. Returns the
    task ids drawn."""
    import torch

    from .outputs import encode_png, encoded_panels

    chosen = representatives(parts, pattern)
    child = None
    if processes > 1 and chosen:
        child = multiprocessing.get_context("spawn").Process(target=_render_one, args=(chosen[0],))
        child.start()
    try:
        encode_png(torch.zeros((3, 8, 8), dtype=torch.uint8))
        drawn = [get_task(t).samples(0, range(2)) for t in chosen]
    finally:
        if child is not None:
            child.join()
    for samples in drawn:                 # the rasterizer now loads from the disk cache
        encoded_panels(samples, SIZE)
    return chosen


def main() -> None:
    start = time.perf_counter()
    chosen = warm()
    print(f"procvis: kernels ready: {len(chosen)} tasks drawn in {time.perf_counter() - start:.0f} s",
          file=sys.stderr)


if __name__ == "__main__":
    main()
