"""Compile the kernels ahead of use: ``python -m engine.warm``.

numba compiles each kernel on its first call and keeps the result on disk next to the
source. In a fresh checkout or image every process that draws before that cache exists
compiles the same kernels again (about two minutes on 2 cores), so parallel workers, test
processes or cluster tasks started together each pay it. Running this once first (an image
build, ``make test``) leaves them all a cache to load.
"""
from __future__ import annotations

import sys
import time

from .registry import get_task, representatives

SIZE = 64       # pixels: the kernels do not depend on the size, the time does


def warm(pattern: str | None = None, parts: int = 2) -> list[str]:
    """Draw and encode two samples of one task per group of the registry (tasks sharing
    their first ``parts`` id parts; those matching ``pattern`` when given), compiling every
    kernel those draws reach. Returns the task ids drawn."""
    from .outputs import encoded_panels

    chosen = representatives(parts, pattern)
    for t in chosen:
        encoded_panels(get_task(t).samples(0, range(2)), SIZE)
    return chosen


def main() -> None:
    start = time.perf_counter()
    chosen = warm()
    print(f"procvis: kernels ready: {len(chosen)} tasks drawn in {time.perf_counter() - start:.0f} s",
          file=sys.stderr)


if __name__ == "__main__":
    main()
