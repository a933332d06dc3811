"""Batched sampling: a task that draws a whole batch of samples at once, straight into
padded columns, with no per-primitive Python objects.

A batched task is ``fn(rng: BatchRandom, **params) -> ShapeBatch``. Its per-index definition
is the batch of one: ``task.sample(seed, index)`` runs ``fn`` on the single key of
``(seed, task, index)`` and reads row 0, so a sample is the same whatever batch it is drawn
in. That holds because :class:`BatchRandom` is counter-based: draw ``k`` of a sample is a
fixed function of its key and ``k``, and every call draws the same number of values for every
sample of the batch.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Callable

from typing import TYPE_CHECKING

import numpy as np

from kernels.primitives import ELLIPSE, Primitives
from kernels.clearance import GOLDEN, M1, M2, uniforms

from .placement import PlacementError
from .rng import sample_key
from .sample import Draw
from .scene import Primitive, Scene, parse_color
from .shapes import SHAPES, draw_shape

if TYPE_CHECKING:
    from .batch import SceneBatch

_MASK = (1 << 64) - 1


def _mix(z: np.ndarray) -> np.ndarray:
    """A 64-bit finaliser (bijective, well mixed) of ``z`` (uint64, any shape)."""
    z = (z ^ (z >> np.uint64(30))) * M1
    z = (z ^ (z >> np.uint64(27))) * M2
    return z ^ (z >> np.uint64(31))


def batch_keys(seed: int, task_id: str, indices) -> np.ndarray:
    """``[B]`` uint64: the low 64 bits of each sample's key (:func:`engine.rng.sample_key`)."""
    return np.fromiter((sample_key(seed, task_id, i) & _MASK for i in indices), np.uint64)


def member_keys(seed: int, members) -> np.ndarray:
    """``[B]`` uint64 keys (as :func:`batch_keys`) of samples ``(task id, index)`` of any tasks."""
    return np.fromiter((sample_key(seed, tid, i) & _MASK for tid, i in members), np.uint64, count=len(members))


class BatchRandom:
    """Uniform draws for ``B`` samples at once. Each call draws the same number of values for
    every sample; value ``k`` of sample ``b`` is a function of ``keys[b]`` and ``k`` alone."""

    def __init__(self, keys: np.ndarray):
        self.keys = np.ascontiguousarray(keys, dtype=np.uint64)      # one layout: one compiled version
        self.drawn = 0

    def __len__(self) -> int:
        return len(self.keys)

    def random(self, *shape: int) -> np.ndarray:
        """``[B, *shape]`` float64 uniform in [0, 1): counters ``drawn + 1 ..`` of each key
        through :func:`_mix`, top 53 bits (compiled: :func:`kernels.clearance.uniforms`)."""
        n = int(np.prod(shape, dtype=np.int64)) if shape else 1
        first = self.drawn + 1
        self.drawn += n
        return uniforms(self.keys, first, n).reshape((len(self), *shape))

    def uniform(self, low, high, *shape: int) -> np.ndarray:
        """``[B, *shape]`` float64 uniform in [low, high)."""
        return low + self.random(*shape) * (high - low)

    def integers(self, low, high, *shape: int) -> np.ndarray:
        """``[B, *shape]`` int64 uniform in ``low..high-1``; ``low``/``high`` may be ``[B]``
        arrays (one range per sample)."""
        low, high = np.asarray(low), np.asarray(high)
        if low.ndim or high.ndim:                                     # per-sample bounds, before the draw axes
            low, high = np.broadcast_arrays(low, high)
            tail = (1,) * len(shape)
            low, high = low.reshape(low.shape + tail), high.reshape(high.shape + tail)
        return (low + np.floor(self.random(*shape) * (high - low))).astype(np.int64)

    def fork(self, salt: int) -> BatchRandom:
        """An independent generator per sample for sub-draws whose count may differ between
        samples (retries): keyed by each key, the count drawn so far (the same for every
        sample) and ``salt``. Reserve a draw (``drawn += 1``) before forking so that two forks
        at different points of a task never share a stream."""
        tag = np.uint64((self.drawn * 1_000_003 + salt + 1) & _MASK)
        return BatchRandom(_mix(self.keys ^ _mix(np.full(len(self), tag, np.uint64) * GOLDEN)))

    def take(self, rows: np.ndarray) -> BatchRandom:
        """The generator of the samples ``rows`` only (same keys, same count drawn)."""
        out = BatchRandom(self.keys[rows])
        out.drawn = self.drawn
        return out


def rounded(values, digits: int) -> np.ndarray:
    """``values`` (floats, any shape) rounded to ``digits`` decimals (0..15) exactly as
    Python's ``round(x, digits)`` rounds each (the double nearest the half-even decimal
    rounding of its exact value), for a whole column at once. Where float64 cannot tell on
    which side of a tie the scaled value lies (within a few ulps of one: exact ties such as
    ``0.25`` to 1 decimal, huge values, NaN), ``round`` itself decides. Returns float64 of
    ``values``' shape."""
    if not 0 <= digits <= 15:           # 10 ** digits stays exact, and so does each rounded value's scaling back
        raise ValueError(f"digits={digits}; allowed: 0..15")
    a = np.asarray(values, dtype=np.float64)
    flat = a.reshape(-1)
    scale = 10.0 ** digits
    with np.errstate(over="ignore", invalid="ignore"):
        y = flat * scale
        out = np.round(y) / scale       # an exact integer over an exact power of ten: the nearest double
        unsure = ~(np.abs(np.abs(y - np.floor(y)) - 0.5) > np.abs(y) * 2.0 ** -48) | ~(np.abs(y) < 2.0 ** 48)
    if unsure.any():
        out[unsure] = [round(x, digits) for x in flat[unsure].tolist()]
    return out.reshape(a.shape)


def scatter(rng: BatchRandom, radii: np.ndarray, valid: np.ndarray, bounds=(0.0, 0.0, 1.0, 1.0),
            gap: float = 0.02, candidates: int = 48, attempts: int = 64) -> np.ndarray:
    """Centres ``[B,K,2]`` for discs of ``radii [B,K]`` (where ``valid``) inside ``bounds``,
    any two at least ``gap`` apart, larger discs first, each taking the first fitting one of
    ``candidates`` proposals. A sample whose layout fails is redrawn from its own forked
    stream, so its layout never depends on the other samples. Raises ``PlacementError``."""
    B, K = radii.shape
    out = np.zeros((B, K, 2))
    todo = np.arange(B)
    rng.drawn += 1                                   # this call's forks are its own
    for attempt in range(attempts):
        sub = rng.take(todo).fork(attempt)
        got, ok = place_once(sub, radii[todo], valid[todo], in_box(bounds), gap, candidates)
        out[todo[ok]] = got[ok]
        todo = todo[~ok]
        if len(todo) == 0:
            return out
    raise PlacementError(f"could not place discs with gap {gap} in {bounds} after {attempts} attempts")


class Region:
    """Where :func:`place_once` proposes a disc's centre: a box ``(x0, y0, x1, y1)`` or an
    annular sector ``(cx, cy, inner, outer, a0, width)`` (degrees, counter-clockwise on
    screen), the disc kept inside. Each part is a number, ``[B]`` (per sample) or ``[B,K]``
    (per disc)."""

    def __init__(self, kind: int, *parts):
        self.kind, self.parts = kind, parts

    def params(self, B: int, K: int) -> np.ndarray:
        """``[B,K,P]`` float64: every part for every disc."""
        def full(v):
            v = np.asarray(v, dtype=np.float64)
            return np.broadcast_to(v[:, None] if v.ndim == 1 else v, (B, K))
        return np.stack([full(v) for v in self.parts], -1)


def in_box(bounds) -> Region:
    """Centres keeping a disc inside ``bounds = (x0, y0, x1, y1)``, drawn uniformly."""
    from kernels.clearance import BOX
    return Region(BOX, *bounds)


def in_sector(cx, cy, inner, outer, a0=0.0, width=360.0) -> Region:
    """Centres keeping a disc inside the annular sector ``inner .. outer`` around ``(cx, cy)``
    and angles ``a0 .. a0 + width`` (degrees, counter-clockwise on screen), its radius drawn
    for an even spread over the area, at least the disc's radius from ``inner``."""
    from kernels.clearance import SECTOR
    return Region(SECTOR, cx, cy, inner, outer, a0, width)


def place_once(rng: BatchRandom, radii, valid, region: Region, gap, candidates, fixed=None) -> tuple[np.ndarray, np.ndarray]:
    """One placement attempt for every sample: discs of ``radii [B,K]`` (where ``valid``),
    larger first, each at the first of ``candidates`` proposals in its ``region`` that keeps
    ``gap`` from the discs placed before it and from ``fixed [B,F,3]`` (``x, y, radius``; a
    negative radius is no disc). Proposals are drawn from each sample's stream (``2 * K *
    candidates`` values whatever the sample needs; a box's are ``rng.random(K, candidates,
    2)`` in placement order) but computed only as far as the first fit. Returns ``(centres
    [B,K,2], succeeded [B])``."""
    from kernels.clearance import place_regions

    B, K = radii.shape
    order = np.argsort(np.where(valid, -radii, np.inf), axis=1, kind="stable")
    rows = np.arange(B)[:, None]
    r, live = radii[rows, order], valid[rows, order]
    params = np.ascontiguousarray(region.params(B, K)[rows, order])
    placed, ok = np.zeros((B, K, 2)), np.ones(B, bool)
    fixed = np.zeros((B, 0, 3)) if fixed is None else np.ascontiguousarray(fixed, dtype=np.float64)
    place_regions(rng.keys, np.uint64(rng.drawn), region.kind, int(candidates), params,
                  np.ascontiguousarray(r, dtype=np.float64), np.ascontiguousarray(live), float(gap), fixed, placed, ok)
    rng.drawn += 2 * K * int(candidates)
    out = np.zeros((B, K, 2))
    out[rows, order] = placed
    return out, ok


@functools.lru_cache(maxsize=16)
def _prototypes(mouths: tuple = ()):
    """Per shape of :data:`engine.shapes.SHAPES` its primitive at radius 1 (``Primitive``),
    then a pac-man per mouth of ``mouths`` (degrees, opening towards angle 0), and the padded
    vertex table: ``(prims, verts [S,V,2] float32, nverts [S], bounds [S,4])``."""
    prims = []
    for name in SHAPES:
        s = Scene()
        draw_shape(s, name, (0.0, 0.0), 1.0, (0, 0, 0))
        prims.append(s.primitives[0])
    for mouth in mouths:
        prims.append(Scene().pacman((0.0, 0.0), 1.0, mouth=mouth, direction=0.0, color=(0, 0, 0)).primitives[0])
    V = max(len(p.verts) if p.verts is not None else 1 for p in prims)
    verts = np.zeros((len(prims), V, 2), np.float32)
    nverts = np.zeros(len(prims), np.int64)
    bounds = np.tile(np.array([-1, -1, 1, 1], np.float32), (len(prims), 1))
    for k, p in enumerate(prims):
        if p.verts is not None:
            n = len(p.verts)
            verts[k, :n], verts[k, n:], nverts[k] = p.verts, p.verts[-1], n
            bounds[k] = np.concatenate([p.verts.min(0), p.verts.max(0)])
    return prims, verts, nverts, bounds


def _with_zero_row(table: np.ndarray) -> np.ndarray:
    """``table`` with an all-zero row appended: what a padding slot gathers (one pass over a
    large column instead of a gather and a masking copy)."""
    return np.concatenate([table, np.zeros((1,) + table.shape[1:], table.dtype)])


@dataclass
class ShapeBatch:
    """``B`` samples of named filled shapes (:data:`engine.shapes.SHAPES`) on a plain
    background, as columns: ``shape [B,K]`` (index into ``SHAPES``), ``center [B,K,2]``,
    ``radius [B,K]`` (the disc each shape fits), ``color [B,K,3]`` ints 0..255 and ``valid
    [B,K]`` (valid slots first, in draw order), optionally ``rotation [B,K]`` (degrees,
    counter-clockwise on screen, as :func:`engine.shapes.draw_shapes` takes them) and
    ``mouth [B,K]`` (degrees: where above 0 the slot is a pac-man, :meth:`Scene.pacman`,
    whatever its shape, opening towards its rotation), plus what
    each sample asks and answers: ``question`` (one for all, or ``[B]``), ``answer [B]``,
    ``answer_type``, ``options``, ``meta(b)`` and ``caption(b)``; optionally ``meta_text(b)``:
    ``meta(b)`` with some of its values as :class:`engine.jsontext.JSONText` (the same JSON,
    made faster from the columns, for a writer that only encodes it)."""

    shape: np.ndarray
    center: np.ndarray
    radius: np.ndarray
    color: np.ndarray
    valid: np.ndarray
    question: str | list[str]
    answer: list
    answer_type: str
    options: list | None = None
    meta: Callable[[int], dict] = field(default=lambda b: {})
    background: tuple = (255, 255, 255)
    rotation: np.ndarray | None = None
    caption: Callable[[int], str] | None = None
    mouth: np.ndarray | None = None
    meta_text: Callable[[int], dict] | None = None

    def __len__(self) -> int:
        return len(self.valid)

    def scene(self, b: int) -> Scene:
        """Sample ``b`` as a :class:`Scene` whose collation equals row ``b`` of :meth:`scene_batch`."""
        kind, (prims, _, _, _) = self._kinds
        s = Scene(background=self.background)
        slots = np.nonzero(self.valid[b])[0]
        turns = [0.0] * len(slots) if self.rotation is None else (-np.radians(self.rotation[b, slots])).tolist()
        push, new = s.primitives.append, tuple.__new__
        for k, (x, y), r, turn, rgb in zip(kind[b, slots].tolist(), self.center[b, slots].tolist(),
                                           self.radius[b, slots].tolist(), turns,
                                           (self.color[b, slots] / 255.0).tolist()):
            p = prims[k]
            # ``p._replace(center=, scale=, rotation=, color=)``, built in one step
            push(new(Primitive, (p[0], p[1], (x, y), (p[3][0] * r, p[3][1] * r), turn, tuple(rgb), *p[6:])))
        return s

    def draw(self, b: int, scene: bool = True, text: bool = False) -> Draw:
        """Sample ``b`` as the :class:`engine.sample.Draw` a one-at-a-time task returns.
        ``scene=False``: its panel is an empty scene of the background, for a caller that
        renders the batch's own columns (:meth:`primitive_arrays`, :meth:`scene_batch`) and
        needs only the rest.
        ``text=True``: its meta from ``meta_text`` where the batch has one, for a caller that
        only encodes it (:func:`engine.jsontext.encode`)."""
        panel = self.scene(b) if scene else Scene(background=self.background)
        meta = self.meta_text if text and self.meta_text is not None else self.meta
        return Draw(panel, self.question_of(b), self.answer[b], self.answer_type, options=self.options,
                    meta=meta(b), caption=None if self.caption is None else self.caption(b))

    @functools.cached_property
    def _kinds(self) -> tuple:
        """Each slot's row ``[B,K]`` in the prototype table, and the table
        (:func:`_prototypes`): the named shapes, then a pac-man per mouth in use."""
        if self.mouth is None:
            return self.shape, _prototypes()
        pac = self.valid & (self.mouth > 0)
        mouths = tuple(sorted(set(self.mouth[pac].tolist())))
        if not mouths:
            return self.shape, _prototypes()
        row = len(SHAPES) + np.searchsorted(np.array(mouths), self.mouth)
        return np.where(pac, np.minimum(row, len(SHAPES) + len(mouths) - 1), self.shape), _prototypes(mouths)

    def question_of(self, b: int) -> str:
        """The question sample ``b`` asks."""
        return self.question if isinstance(self.question, str) else self.question[b]

    def primitive_arrays(self) -> Primitives:
        """All ``B`` scenes' primitives (:class:`kernels.primitives.Primitives`, ``N = K``) as
        C-ordered numpy arrays, built from the columns: float32, bool and int64 where
        :meth:`scene_batch` holds float32, bool and long tensors (the same values)."""
        kind, (prims, verts, nverts, bounds) = self._kinds
        B, K = self.valid.shape
        v = self.valid
        pscale = np.array([p.scale for p in prims])                       # [S,2] at radius 1
        geom = np.array([p.geom for p in prims])
        scale = np.where(v[..., None], pscale[kind] * self.radius[..., None], 0.0)

        def f32(a):
            return np.ascontiguousarray(a, dtype=np.float32)

        def zeros():
            return np.zeros((B, K), np.float32)
        return Primitives(
            valid=np.ascontiguousarray(v, dtype=bool), geom=np.where(v, geom[kind], ELLIPSE).astype(np.int64),
            center=f32(np.where(v[..., None], self.center, 0.0)), scale=f32(scale),
            rotation=zeros() if self.rotation is None else f32(np.where(v, -np.radians(self.rotation), 0.0)),
            color=f32(np.where(v[..., None], self.color / 255.0, 0.0)), alpha=f32(v),
            fill=np.ascontiguousarray(v, dtype=bool), stroke=f32(np.where(v, prims[0].stroke, 0.0)), shell=zeros(),
            order=zeros(), verts=f32(_with_zero_row(verts)[np.where(v, kind, len(verts))]),
            nverts=np.where(v, nverts[kind], 0).astype(np.int64), index=np.zeros((B, K), np.int64),
            bounds=f32(np.where(v[..., None], bounds[kind], np.array([-1, -1, 1, 1], np.float32))))

    def background_rgb(self) -> np.ndarray:
        """Each scene's background, ``[B, 3]`` float32 in [0, 1] (a writable array of its own)."""
        return np.tile(np.array(parse_color(self.background), np.float32), (len(self), 1))

    def scene_batch(self) -> SceneBatch:
        """All ``B`` scenes as one :class:`engine.batch.SceneBatch`, built from the columns
        (:meth:`primitive_arrays` as tensors)."""
        import torch                      # listing tasks needs no torch; drawing them does

        from .batch import SceneBatch
        cols = Primitives(*(torch.from_numpy(a) for a in self.primitive_arrays()))
        bg = torch.from_numpy(self.background_rgb())
        return SceneBatch(cols, bg, torch.zeros(0, 4, 1, 1), torch.zeros(0, 2, dtype=torch.long))
