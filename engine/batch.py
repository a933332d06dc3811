"""Collation of scenes into the padded batch the rasterizer consumes."""
from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from kernels.primitives import Primitives
from kernels.transfer import to_device

from .canvas import BUDGET_ENV, gib, memory_budget
from .errors import UserError
from .scene import Primitive, Scene, parse_color


@dataclass
class SceneBatch:
    """``B`` scenes as padded tensors (in the spirit of a padded mesh batch).

    Attributes:
        primitives: :class:`kernels.primitives.Primitives`, ``[B, N, ...]`` with a validity mask.
        background: ``[B, 3]`` float colours in [0, 1].
        atlas: the :class:`SpriteAtlas` behind :attr:`sprites` (shared by slices and by the
            panel groups of one batch); a float tensor or ``None`` may be given instead (``None``
            with ``sprites8``: the floats are made from it when first asked for).
        sprite_hw: ``[S, 2]`` long, each sprite's own ``(h, w)``.
        sprites8: ``[S, 4, h, w]`` uint8 straight RGBA that ``sprites`` is made from
            (``premultiplied(sprites8)`` equals it), or ``None`` when a sprite was not 8-bit: a
            quarter of the bytes, so it is what travels to another process or a device.
    """

    primitives: Primitives
    background: torch.Tensor
    atlas: "SpriteAtlas | torch.Tensor | None"
    sprite_hw: torch.Tensor
    sprites8: torch.Tensor | None = None

    def __post_init__(self):
        if not isinstance(self.atlas, SpriteAtlas):
            self.atlas = SpriteAtlas(self.atlas, self.sprites8, self.sprite_hw)

    @property
    def sprites(self) -> torch.Tensor:
        """``[S, 4, h, w]`` float premultiplied RGBA, zero-padded to the largest sprite; made
        from :attr:`sprites8` on first use (a batch rendered on a GPU or in another process
        never needs it here)."""
        return self.atlas.floats()

    def __len__(self) -> int:
        return self.background.shape[0]

    def slice(self, a: int, b: int) -> "SceneBatch":
        """Scenes ``a..b-1`` of the batch (views, sharing the sprite atlas)."""
        return SceneBatch(self.primitives.rows(a, b), self.background[a:b], self.atlas,
                          self.sprite_hw, self.sprites8)

    @classmethod
    def from_scenes(cls, scenes: Sequence[Scene], atlases: dict | None = None) -> "SceneBatch":
        """``scenes`` collated. ``atlases``: a dict shared by the calls collating one batch's
        panel groups, so that groups drawing the same sprites (a KiVA trial's large and small
        panels) share one atlas instead of building and shipping it twice; it holds the
        sprite images it was keyed on, so drop it with the batch."""
        scenes = list(scenes)
        for i, s in enumerate(scenes):
            if not isinstance(s, Scene):
                raise TypeError(f"scenes[{i}] is a {type(s).__name__}, not an engine.Scene")
        B = len(scenes)
        counts = np.fromiter((len(s.primitives) for s in scenes), np.int64, B)
        N = int(counts.max()) if B else 0
        prims = [p for s in scenes for p in s.primitives]
        P = len(prims)
        bi = np.repeat(np.arange(B), counts)
        ni = np.arange(P) - np.repeat(np.cumsum(counts) - counts, counts)
        cols = list(zip(*prims)) if P else [()] * len(Primitive._fields)
        F = {name: i for i, name in enumerate(Primitive._fields)}

        def column(name, dtype, width=1):
            out = np.zeros((B, N, width), dtype)
            if P:
                flat = cols[F[name]] if width == 1 else itertools.chain.from_iterable(cols[F[name]])
                out[bi, ni] = np.fromiter(flat, dtype, P * width).reshape(P, width)
            return out if width > 1 else out[..., 0]

        valid = np.zeros((B, N), bool)
        valid[bi, ni] = True
        index = column("index", np.int64)
        sprites_flat = _unique_sprites(scenes)
        if sprites_flat:
            index = _sprite_indices(scenes, index, sprites_flat)

        # Most primitives share a cached template array: fill each distinct array in one go.
        vcol = cols[F["verts"]]
        keys = np.fromiter(map(id, vcol), np.int64, P)
        _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        groups = [(vcol[f], np.nonzero(inverse == g)[0]) for g, f in enumerate(first) if vcol[f] is not None]
        V = max((len(v) for v, _ in groups), default=1)
        _check_padding(B, N, V)
        verts = np.zeros((B, N, V, 2), np.float32)
        nverts = np.zeros((B, N), np.int64)
        bounds = np.tile(np.array([-1, -1, 1, 1], np.float32), (B, N, 1))
        for v, members in groups:
            k = len(v)
            gb, gn = bi[members], ni[members]
            verts[gb, gn, :k] = v
            verts[gb, gn, k:] = v[-1]
            nverts[gb, gn] = k
            bounds[gb, gn] = np.concatenate([v.min(0), v.max(0)])
        arrays = (valid, column("geom", np.int64), column("center", np.float32, 2), column("scale", np.float32, 2),
                  column("rotation", np.float32), column("color", np.float32, 3), column("alpha", np.float32),
                  column("fill", bool), column("stroke", np.float32), column("shell", np.float32),
                  column("order", np.float32), verts, nverts, index, bounds)
        prims_t = Primitives(*(torch.from_numpy(a) for a in arrays))
        background = torch.tensor([parse_color(s.background) for s in scenes], dtype=torch.float32).reshape(B, 3)
        return cls(prims_t, background, *_atlas(sprites_flat, atlases))


PADDED_BYTES = 96             # per primitive slot besides its vertices: the other columns and prepared data


def _check_padding(B: int, N: int, V: int) -> None:
    """Refuse a batch whose padded columns (``B`` scenes x ``N`` slots x ``V`` vertices of 8
    bytes, every slot padded to the longest outline) would exceed the memory budget."""
    need = B * N * (8 * V + PADDED_BYTES)
    budget = memory_budget()
    if need > budget:
        raise UserError(f"a batch of {B} scenes with up to {N} primitives and {V} vertices per outline needs "
                        f"{gib(need)} once padded, over the memory budget of {gib(budget)}; render fewer scenes at "
                        f"a time or set {BUDGET_ENV} if the machine has the memory")


def _unique_sprites(scenes) -> list:
    """Every distinct sprite image of the batch, in first-use order."""
    seen: dict[int, object] = {}
    for s in scenes:
        for img in s.sprites:
            seen.setdefault(id(img), img)
    return list(seen.values())


def _sprite_indices(scenes, index: np.ndarray, batch_sprites: list) -> np.ndarray:
    """Map each sprite primitive's per-scene sprite number to its place in ``batch_sprites``."""
    order = {id(img): i for i, img in enumerate(batch_sprites)}
    for b, s in enumerate(scenes):
        if s.sprites:
            local = [order[id(img)] for img in s.sprites]
            for n, p in enumerate(s.primitives):
                if p.kind == "sprite":
                    index[b, n] = local[p.index]
    return index


class SpriteAtlas:
    """A batch's float sprite atlas, made from its 8-bit source (``[S,4,h,w]`` uint8, each
    sprite's own size in ``hw [S,2]``) when first asked for, then kept: a batch collated in a
    worker and rendered on a GPU or in another process only ships the source, and the floats
    (4x its bytes: 333 MB for a batch of 64 KiVA trials at 224 px) are never made there."""

    __slots__ = ("made", "source", "hw")

    def __init__(self, made: torch.Tensor | None, source: torch.Tensor | None, hw: torch.Tensor):
        if made is None and source is None:
            raise ValueError("a sprite atlas needs its floats or its 8-bit source")
        self.made, self.source, self.hw = made, source, hw

    def floats(self) -> torch.Tensor:
        """The ``[S,4,h,w]`` float premultiplied atlas (:func:`premultiplied` of the source;
        where sprite sizes differ, only each sprite's own pixels are computed)."""
        if self.made is None:
            src, hw = self.source, self.hw
            if bool((hw == hw[:1]).all()):
                self.made = premultiplied(src)
            else:
                out = torch.zeros(src.shape, dtype=torch.float32, device=src.device)
                for k, (sh, sw) in enumerate(hw.tolist()):
                    out[k:k + 1, :, :sh, :sw] = premultiplied(src[k:k + 1, :, :sh, :sw])
                self.made = out
        return self.made

    def __getstate__(self):
        return self.made if self.source is None else None, self.source, self.hw   # floats are made again

    def __setstate__(self, state):
        self.made, self.source, self.hw = state


def _atlas(images: list, shared: dict | None) -> tuple:
    """:func:`_pack_sprites` of ``images``, built once per ``shared`` dict for the same image
    objects (the dict holds the images, so their ids stay theirs while it lives)."""
    if shared is None:
        return _pack_sprites(images)
    key = tuple(map(id, images))
    if key not in shared:
        shared[key] = (images, _pack_sprites(images))
    return shared[key][1]


def _pack_sprites(images: list) -> tuple:
    """``(atlas, sprite_hw, sprites8)`` of :class:`SceneBatch` for ``images`` (each ``[3|4,
    h, w]``, tensor or array): 8-bit images are stacked as they are (their floats made when
    first used, :class:`SpriteAtlas`); any other makes a float atlas image by image
    (:func:`_premultiplied_one`) and no ``sprites8``."""
    if not images:
        return torch.zeros(1, 4, 1, 1), torch.ones(1, 2, dtype=torch.long), None
    ts = [i.detach().to("cpu") if isinstance(i, torch.Tensor) else torch.tensor(np.asarray(i)) for i in images]
    h, w = max(int(t.shape[1]) for t in ts), max(int(t.shape[2]) for t in ts)
    hw = torch.tensor([t.shape[1:] for t in ts], dtype=torch.long).reshape(len(ts), 2)
    if all(t.dtype == torch.uint8 for t in ts):
        out8 = torch.zeros(len(ts), 4, h, w, dtype=torch.uint8)
        for k, t in enumerate(ts):
            out8[k, :t.shape[0], :t.shape[1], :t.shape[2]] = t
            if t.shape[0] == 3:
                out8[k, 3, :t.shape[1], :t.shape[2]] = 255
        return SpriteAtlas(None, out8, hw), hw, out8        # floats made when first used
    out = torch.zeros(len(ts), 4, h, w)
    for k, t in enumerate(ts):
        out[k, :, :t.shape[1], :t.shape[2]] = _premultiplied_one(t)
    return out, hw, None


def _premultiplied_one(t: torch.Tensor) -> torch.Tensor:
    """One sprite ``[3|4,h,w]`` (integers 0..255 or floats 0..1) as ``[4,h,w]`` float
    premultiplied RGBA (no dark fringes when filtered)."""
    t = t.float() / 255.0 if not t.is_floating_point() else t.float()
    if t.shape[0] == 3:
        t = torch.cat([t, torch.ones_like(t[:1])])
    t = t.clamp(0, 1)
    return torch.cat([t[:3] * t[3:], t[3:]])


def premultiplied(rgba8: torch.Tensor) -> torch.Tensor:
    """``[S,4,h,w]`` float32 premultiplied RGBA from ``rgba8 [S,4,h,w]`` uint8 straight RGBA,
    on its device: each value ``k / 255`` as the CPU divides it (elsewhere read from a table of
    those 256 quotients, since a GPU may divide by a constant through its reciprocal), the
    colour then times the alpha, so every device gets the CPU's bits."""
    if rgba8.dtype != torch.uint8 or rgba8.dim() != 4 or rgba8.shape[1] != 4:
        raise ValueError(f"rgba8 must be [S,4,h,w] uint8, got {tuple(rgba8.shape)} {rgba8.dtype}")
    t = rgba8.float().div_(255.0) if rgba8.device.type == "cpu" else _by_table(rgba8)
    t[:, :3].mul_(t[:, 3:])                  # in place: one float atlas alive, not three
    return t


def sprites_on(batch: SceneBatch, device) -> tuple[torch.Tensor, torch.Tensor]:
    """``(sprites, sprite_hw)`` of ``batch`` on ``device``. Bound for another device, an 8-bit
    source crosses instead of the floats where the batch has one (a quarter of the bytes)
    and is premultiplied there (:func:`premultiplied`: the same bits)."""
    device = torch.device(device)
    made = batch.atlas.made
    if batch.sprites8 is None or device.type == "cpu" or (made is not None and made.device.type == device.type):
        return tuple(to_device([batch.sprites, batch.sprite_hw], device))
    sprites8, hw = to_device([batch.sprites8, batch.sprite_hw], device)
    return premultiplied(sprites8), hw


def _by_table(rgba8: torch.Tensor) -> torch.Tensor:
    """``rgba8`` as floats ``k / 255`` read from the CPU's 256 quotients (any device)."""
    return _quotients(rgba8.device).index_select(0, rgba8.reshape(-1).int()).reshape(rgba8.shape)


@functools.lru_cache(maxsize=8)
def _quotients(device: torch.device) -> torch.Tensor:
    # once per device: copying it there from pageable memory waits for the device each time
    return (torch.arange(256, dtype=torch.float32) / 255.0).to(device)
