"""Compile the kernels ahead of use: ``python -m engine.warm``.

numba compiles each kernel on its first call and keeps the result on disk next to the
source. In a fresh checkout or image every process that draws before that cache exists
compiles the same kernels again (about two minutes on 2 cores), so parallel workers, test
processes or cluster tasks started together each pay it. Running this once first (an image
build, ``make test``) leaves them all a cache to load.
"""
from __future__ import annotations

import compileall
import multiprocessing
import sys
import time
from pathlib import Path

from .registry import get_task, representatives

SIZE = 64       # pixels: the kernels do not depend on the size, the time does


def _render_one() -> None:
    """Render one small scene: compiles the rasterizer (the longest kernel by far: about
    100 s of the 130 on 2 cores), and nothing a family's sampling needs."""
    from .rendering import render
    from .scene import Scene

    scene = Scene()
    scene.circle((0.5, 0.5), 0.3, color=(200, 30, 30))
    render([scene], 16)


def _start_renderer():
    """A spawned process compiling the rasterizer, or ``None`` when it is compiled on disk
    already or no process can be started here (a daemonic process): then this one does it."""
    from kernels import raster_numba

    if raster_numba.compiled_on_disk():
        return None
    try:
        child = multiprocessing.get_context("spawn").Process(target=_render_one)
        child.start()
    except (AssertionError, OSError):
        return None
    return child


PACKAGES = ("engine", "kernels", "scenes", "evals")


def compile_sources() -> None:
    """Write the bytecode of procvis's own modules (``__pycache__`` beside each) where it is
    missing or stale. An editable install has none, and where ``PYTHONDONTWRITEBYTECODE`` is
    set no import writes it: every process (each worker of a run) then compiled about 150
    modules again, 0.5 s of its start on 2 cores. A folder that cannot be written is skipped."""
    root = Path(__file__).resolve().parents[1]
    for name in PACKAGES:
        if (root / name / "__init__.py").is_file():
            compileall.compile_dir(root / name, quiet=2)


def warm(pattern: str | None = None, parts: int = 2, processes: int = 2) -> list[str]:
    """Draw and encode two samples of one task per group of the registry (tasks sharing
    their first ``parts`` id parts; those matching ``pattern`` when given), compiling every
    kernel those draws reach. With ``processes`` > 1 the rasterizer compiles in a second
    process meanwhile the samples are drawn and the PNG encoder compiles here (a note on
    stderr if that process fails: this one compiles it then). The modules' bytecode is
    written first (:func:`compile_sources`). Returns the task ids drawn."""
    import numpy as np
    import torch

    from .jsontext import Rows
    from .outputs import encode_png, encoded_panels, pngs_of_planes

    compile_sources()
    chosen = representatives(parts, pattern)
    child = _start_renderer() if processes > 1 and chosen else None
    try:
        encode_png(torch.zeros((3, 8, 8), dtype=torch.uint8))
        pngs_of_planes(np.zeros((1, 3, 8, 8), np.uint8))     # the batched tasks' encoder (kernels.deflate._streams)
        Rows({"x": torch.zeros((1, 1)).numpy()}, [1])     # the metadata writer of batched tasks
        drawn = [get_task(t).samples(0, range(2)) for t in chosen]
    except BaseException:
        if child is not None:
            child.terminate()
        raise
    finally:
        if child is not None:
            child.join()
    if child is not None and child.exitcode != 0:
        print(f"procvis: note: the process compiling the rasterizer ended with exit code {child.exitcode}; "
              "compiling it here", file=sys.stderr)
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
