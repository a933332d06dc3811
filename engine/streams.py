"""``stream``: an endless (or bounded) torch ``IterableDataset`` of rendered batches that fits
a training loop.

The contract:

* **Samples.** Sample ``i`` of the stream is ``(tasks[i % T], index = offset + i // T)``:
  tasks are interleaved round-robin. Batch ``j`` holds samples ``[j*B, (j+1)*B)`` (the last
  batch of a bounded stream may be shorter). What a batch holds never depends on how many
  ranks or DataLoader workers read the stream.
* **Dealing.** Batches are dealt to ranks first, then to each rank's DataLoader workers:
  rank ``r`` of ``world`` takes batches ``r, r + world, r + 2*world, ...`` (its ``k``-th
  batch is ``r + k*world``), and worker ``w`` of ``K`` takes that rank's ``k``-th batches
  with ``k % K == w``. Which batches a rank gets never depends on its worker count.
* **Equal batches per rank.** A bounded stream of ``N`` batches gives every rank
  ``ceil(N / world)`` of them: the ranks short of a batch wrap around to the stream's first
  batches (``(r + k*world) % N``, as ``DistributedSampler`` pads by repeating), so no rank
  waits on another in a collective. ``drop_last=True`` gives every rank
  ``floor(N / world)`` batches instead and never repeats one. With one rank nothing repeats
  or drops.
* **Splitting.** When a ``torch.distributed`` process group is initialised each rank reads
  only its share (``split=True``, the default), even when only one rank iterates (a
  validation loop on rank 0 sees ``1/world`` of the stream). ``split=False`` reads the whole
  stream on every rank on purpose; DataLoader workers of one process still share it.
* **One image shape.** ``shape="fit"`` (the default) puts every sample's image (panels
  rendered at ``size`` and stitched side by side) on one canvas ``size`` (``H x W``):
  scaled down to fit with its aspect kept, centred, the margins white. Every batch of the
  stream is then ``[B, 3, H, W]``, whatever the tasks' panel counts and extents; a square
  one-panel sample is left untouched. ``shape="pad"`` keeps each image's native size and pads
  a batch to its largest image in white (shapes then differ between batches).
* **Labels.** A task whose answers come from a declared set (the options of a choice, else
  the exact answer distribution it declares) has that list in ``stream.label_map[task]``;
  a batch's ``label`` is the index of each answer in its task's list, ``-1`` for tasks with
  open answers (counts, words, lists).
* **Threads.** A DataLoader worker sets its torch threads and its numba renderer's threads
  to ``threads or 1`` when it starts iterating; the main process is left alone unless
  ``threads`` is given. Iterated in the main process on the CPU, a stream renders each
  batch on a helper thread (with the iterating thread's numba thread count) while it draws
  the next (the renderer releases the GIL): the same batches as :meth:`SampleStream.batch`,
  drawing and rendering on different cores, still at most two batches of images alive at
  once; ``ahead=False`` turns it off.
* **Device.** ``device`` is checked when the stream is made: a bad or unavailable device
  raises :class:`engine.errors.UserError` naming it and the devices available.
"""
from __future__ import annotations

import itertools
import numbers
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np
import torch
from torch.utils.data import IterableDataset, get_worker_info

from .answers import format_answer
from .canvas import canvas_size, images_per_batch
from .errors import UserError
from .frames import Frames, fit as _fit, panel_groups, side_by_side as _side_by_side, stack as _stack  # noqa: F401
from .registry import get_task, resolve, run_settings
from .task import draw_together
from .batch import SceneBatch


class _Row(NamedTuple):
    """What a stream batch reports of a sample drawn in a batch."""

    id: str
    task: str
    index: int
    question: str
    answer_text: str
    answer_type: str

SHAPE_POLICIES = ("fit", "pad")


def _rank_world() -> tuple[int, int]:
    """``(rank, world_size)`` of the initialised process group, else ``(0, 1)``."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def _available_devices() -> list[str]:
    """The device names this torch build can use here, e.g. ``["cpu", "cuda:0"]``."""
    out = ["cpu"]
    if torch.cuda.is_available():
        out += [f"cuda:{i}" for i in range(torch.cuda.device_count())]
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        out.append("mps")
    return out


def check_device(device) -> torch.device:
    """``device`` parsed as a :class:`torch.device`; raises a one-line :class:`UserError`
    naming it and the available devices when it is not a device or not usable here."""
    available = _available_devices()
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError, ValueError):
        raise UserError(f"device={device!r} is not a device name; available: {', '.join(available)}") from None
    if dev.type == "cpu":
        return dev
    if dev.type == "cuda":
        ok = torch.cuda.is_available() and (dev.index is None or dev.index < torch.cuda.device_count())
    else:
        ok = dev.type == "mps" and "mps" in available and dev.index in (None, 0)
    if not ok:
        raise UserError(f"device={device!r} is not available here; available: {', '.join(available)}")
    return dev


def _check_args(batch_size, count, panels, shape, threads, **flags) -> None:
    """Raise :class:`UserError` naming the first bad argument of :func:`stream` (``flags``:
    its switches, each True or False; a string such as ``"False"`` would count as on)."""
    if int(batch_size) != batch_size or batch_size <= 0:
        raise UserError(f"batch_size={batch_size!r} must be a positive integer")
    if count is not None and (int(count) != count or count <= 0):
        raise UserError(f"count={count!r} must be a positive integer or None (endless)")
    if panels not in ("stitch", "first"):
        raise UserError(f"panels={panels!r}; allowed: stitch, first")
    if shape not in SHAPE_POLICIES:
        raise UserError(f"shape={shape!r}; allowed: {', '.join(SHAPE_POLICIES)}")
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, numbers.Integral) or threads <= 0):
        raise UserError(f"threads={threads!r} must be a positive integer or None")
    for name, value in flags.items():
        if not isinstance(value, (bool, np.bool_)):
            raise UserError(f"{name}={value!r} must be True or False")


def _set_threads(n: int) -> None:
    """Give this process ``n`` torch threads and ``n`` threads of the numba renderer (capped
    by ``NUMBA_NUM_THREADS``): K DataLoader workers that each kept every core's worth of
    render threads would run K times as many threads as there are cores."""
    import numba

    torch.set_num_threads(n)
    numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))


class SampleStream(IterableDataset):
    """Rendered batches of the tasks matching ``pattern``; see :func:`stream` and the module
    docstring for the contract."""

    def __init__(self, pattern: str, seed: int = 0, batch_size: int = 32, size=224, device="cpu",
                 count: int | None = None, offset: int = 0, panels: str = "stitch", settings: dict | None = None,
                 *, shape: str = "fit", split: bool = True, drop_last: bool = False, threads: int | None = None,
                 defer: bool = False, ahead: bool = True):
        _check_args(batch_size, count, panels, shape, threads, split=split, drop_last=drop_last, defer=defer,
                    ahead=ahead)
        self.size = canvas_size(size)
        check_device(device)
        bound = resolve(pattern, settings)
        self.tasks = [t.id for t in bound]
        self.settings = run_settings(bound)       # resolved here, so every worker draws the same samples
        self._task_objs = None
        self._answers: dict[str, list[str]] = {}
        self.seed, self.batch_size, self.count, self.offset = int(seed), int(batch_size), count, int(offset)
        self.device, self.panels, self.shape = device, panels, shape
        self.split, self.drop_last = bool(split), bool(drop_last)
        self.threads = None if threads is None else int(threads)
        self.defer, self.ahead = bool(defer), bool(ahead)

    def _task(self, t: int):
        """The bound :class:`engine.task.Task` ``tasks[t]`` (looked up once per process)."""
        if self._task_objs is None:
            self._task_objs = [get_task(tid, self.settings) for tid in self.tasks]
        return self._task_objs[t]

    def item(self, i: int):
        """The :class:`engine.sample.Sample` at stream position ``i``."""
        T = len(self.tasks)
        return self._task(i % T).sample(self.seed, self.offset + i // T)

    def answers(self, t: int) -> list[str]:
        """The answer texts task ``tasks[t]`` declares (its options, else its exact answer
        distribution; ``[]`` for open answers), read from its sample ``(0, 0)`` so that every
        seed and offset shares them."""
        tid = self.tasks[t]
        if tid not in self._answers:
            task = self._task(t)
            if task.options is not None:
                declared = list(task.options)
            else:
                declared = list(task.sample(0, 0).options or []) or list(task.answer_distribution or {})
            self._answers[tid] = [] if task.open_answer else [str(a) for a in declared]
        return self._answers[tid]

    @property
    def label_map(self) -> dict[str, list[str]]:
        """``{task id: [answer text, ...]}``: batch ``label`` ``k`` of a sample of task ``t``
        stands for ``label_map[t][k]``; ``[]`` for tasks with open answers (label ``-1``)."""
        return {tid: list(self.answers(t)) for t, tid in enumerate(self.tasks)}

    def _labels(self, positions, samples) -> torch.Tensor:
        """``[B]`` int64: each sample's answer index in its task's list, ``-1`` when open."""
        T = len(self.tasks)
        out = []
        for i, s in zip(positions, samples):
            answers = self.answers(i % T)
            out.append(answers.index(s.answer_text) if s.answer_text in answers else -1)
        return torch.tensor(out, dtype=torch.long)

    def batch(self, j: int) -> dict:
        """Batch ``j`` of the stream: ``images`` ``[B,3,H,W]`` uint8 on ``device`` (``H, W`` =
        ``size`` under ``shape="fit"``; with ``defer=True`` instead ``frames``, a
        :class:`engine.frames.Frames` whose ``render(device)`` gives those images), ``label``
        and ``index`` ``[B]`` int64, and lists ``id``, ``task``, ``question``, ``answer``,
        ``answer_type``."""
        frames, rest = self._unrendered(j)
        return {**({"frames": frames} if self.defer else {"images": frames.render(self.device)}), **rest}

    def _unrendered(self, j: int) -> tuple[Frames, dict]:
        """Batch ``j``'s frames and the rest of :meth:`batch` (everything but the images)."""
        lo = j * self.batch_size
        hi = lo + self.batch_size if self.count is None else min(lo + self.batch_size, self.count)
        positions = range(lo, hi)
        samples, frames = self.frames(positions)
        return frames, {"label": self._labels(positions, samples),
                        "id": [s.id for s in samples], "task": [s.task for s in samples],
                        "index": torch.tensor([s.index for s in samples]), "question": [s.question for s in samples],
                        "answer": [s.answer_text for s in samples], "answer_type": [s.answer_type for s in samples]}

    def _rendered_ahead(self, batches):
        """:meth:`batch` of each of ``batches``, in order, each one rendered on a helper thread
        while this thread draws the next (the numba renderer releases the GIL, so drawing and
        rendering share the cores). The same batches as :meth:`batch` gives. A render starts
        only when the caller asks for the next batch, so at most two batches of images are
        alive at once (the caller's and the one rendering), as without the helper, and nothing
        renders while the caller works on a batch."""
        import numba

        def render(frames, threads: int):
            numba.set_num_threads(threads)         # numba's thread count is per thread: the caller's
            return frames.render(self.device)

        def finished(job, rest) -> dict:
            return {"images": job.result(), **rest}

        with ThreadPoolExecutor(1, thread_name_prefix="procvis-render") as pool:
            ahead = None
            for j in batches:
                frames, rest = self._unrendered(j)
                frames.make_sprite_floats()            # on this thread, beside the render of the batch before
                if ahead is not None:
                    yield finished(*ahead)
                ahead = (pool.submit(render, frames, numba.get_num_threads()), rest)
            if ahead is not None:
                yield finished(*ahead)

    def frames(self, positions) -> tuple[list, Frames]:
        """The samples at ``positions`` (in position order) and their panels, collated but not
        rendered. Tasks that draw whole batches (:mod:`engine.batched`) are drawn together
        straight into padded columns, one call per batch key (a task, or a group of tasks
        sharing one function); the others one sample at a time, their panels collated per
        panel size. Either way the images are those of each sample alone."""
        T = len(self.tasks)
        rows: list = [None] * len(positions)
        groups, single = [], []
        together: dict = {}                      # batch key -> [(k, task, index)]: drawn in one call
        for k, i in enumerate(positions):
            task, index = self._task(i % T), self.offset + i // T
            if task.batched:
                together.setdefault(task.batch_key, []).append((k, task, index))
            else:
                rows[k] = task.sample(self.seed, index)
                single.append(k)
        for drawn_here in together.values():
            drawn = draw_together(self.seed, [(task, index) for _, task, index in drawn_here])
            groups.append((self.size, drawn.scene_batch(), [(k, 0) for k, _, _ in drawn_here]))
            for b, (k, task, index) in enumerate(drawn_here):
                rows[k] = _Row(f"{task.id}:{self.seed}:{index}", task.id, index, drawn.question_of(b),
                               format_answer(drawn.answer[b], drawn.answer_type), drawn.answer_type)
        # a panel keeps its own extent (a Bongard collage, Percept-V's tall rows and wide
        # strips), as evaluations show it; "fit" then scales the whole image onto the canvas
        first = self.panels == "first"
        atlases: dict = {}                                         # panel groups drawing the same sprites share them
        for hw, flat in panel_groups([rows[k] for k in single], self.size, first).items():
            step = images_per_batch(hw, "numba")                   # collated columns within the memory budget
            for a in range(0, len(flat), step):
                part = flat[a:a + step]
                groups.append((hw, SceneBatch.from_scenes([sc for _, sc in part], atlases),
                               [(single[i], p) for (i, p), _ in part]))
        panels = [1 if first or isinstance(s, _Row) else len(s.panels) for s in rows]
        return rows, Frames(groups, panels, self.shape, self.size)

    def num_batches(self) -> int | None:
        """Batches in the whole bounded stream (``None`` when endless)."""
        return None if self.count is None else -(-self.count // self.batch_size)

    def batches_per_rank(self, world: int | None = None) -> int | None:
        """Batches each of ``world`` ranks reads (default: the process group's size, or 1
        when ``split=False``); ``None`` when endless."""
        n = self.num_batches()
        world = world if world is not None else (_rank_world()[1] if self.split else 1)
        if n is None:
            return None
        return n // world if self.drop_last else -(-n // world)

    def rank_batches(self, rank: int, world: int):
        """The batch indices rank ``rank`` of ``world`` reads, in order (an endless iterator
        for an endless stream)."""
        n = self.num_batches()
        if n is None:
            return itertools.count(rank, world)
        return ((rank + k * world) % n for k in range(self.batches_per_rank(world)))

    def __iter__(self):
        info = get_worker_info()
        wid, nw = (info.id, info.num_workers) if info is not None else (0, 1)
        if self.threads is not None or info is not None:
            _set_threads(self.threads or 1)
        rank, world = _rank_world() if self.split else (0, 1)
        batches = itertools.islice(self.rank_batches(rank, world), wid, None, nw)
        if self.ahead and info is None and not self.defer and torch.device(self.device).type == "cpu":
            yield from self._rendered_ahead(batches)     # a DataLoader's workers already keep every core busy
        elif self.defer and info is not None:
            for j in batches:
                b = self.batch(j)
                # packed in this thread: left to pickling, packing (compiled code, compiled on
                # first use) would run in the queue's feeder thread beside this one's drawing
                b["frames"]._packed()
                yield b
        else:
            yield from (self.batch(j) for j in batches)


def stream(pattern: str, seed: int = 0, batch_size: int = 32, size=224, device="cpu", count: int | None = None,
           offset: int = 0, panels: str = "stitch", settings: dict | None = None, *, shape: str = "fit",
           split: bool = True, drop_last: bool = False, threads: int | None = None,
           defer: bool = False, ahead: bool = True) -> SampleStream:
    """An ``IterableDataset`` yielding dicts of rendered batches of the tasks matching ``pattern``.

    Each item: ``images`` ``[B,3,H,W]`` uint8 on ``device`` (several panels are stitched side
    by side, or ``panels="first"`` keeps the first; ``shape="fit"`` puts every image on the
    ``size`` canvas, ``"pad"`` pads a batch to its largest image), ``label`` ``[B]`` int64
    (the answer's index in ``stream.label_map[task]``, ``-1`` for open answers), ``index``
    ``[B]`` int64 and lists ``id``, ``task``, ``question``, ``answer``, ``answer_type``.
    Endless unless ``count`` (total samples) is given. Use it with
    ``DataLoader(ds, batch_size=None, num_workers=K)``; under ``torchrun`` each rank takes
    its own share (``split=False``: every rank reads everything), and a bounded stream gives
    every rank the same number of batches (wrapping around, or ``drop_last=True``). With
    DataLoader workers keep ``device="cpu"`` and move batches in the main process. Workers
    use ``threads`` (default 1) torch threads; the main process only when ``threads`` is
    given. ``settings``: family settings (qualified names, e.g.
    ``{"jigsaw.images": "/data/photos"}``). ``defer=True``: each item carries ``frames``
    (:class:`engine.frames.Frames`: the batch's scenes collated, not rendered) instead of
    ``images``, and ``frames.render(device)`` gives those images; DataLoader workers then
    sample on the CPU while the main process renders on a GPU (``pin_memory=True`` pins
    the frames). ``ahead=False``: iterating in the main process renders each batch in this
    thread after drawing it, instead of on a helper thread while the next is drawn (needed
    when the loop body runs numba ``parallel=True`` code of its own: numba's default
    threading layer here refuses two threads at once). Raises :class:`UserError` for a bad
    argument or an unavailable ``device``.
    """
    return SampleStream(pattern, seed, batch_size, size, device, count, offset, panels, settings,
                        shape=shape, split=split, drop_last=drop_last, threads=threads, defer=defer, ahead=ahead)
