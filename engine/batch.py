"""Collation of scenes into the padded batch the rasterizer consumes."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from kernels.raster import Primitives

from .scene import Primitive, Scene, parse_color


@dataclass
class SceneBatch:
    """``B`` scenes as padded tensors (in the spirit of a padded mesh batch).

    Attributes:
        primitives: :class:`kernels.raster.Primitives`, ``[B, N, ...]`` with a validity mask.
        background: ``[B, 3]`` float colours in [0, 1].
        sprites: ``[S, 4, h, w]`` float premultiplied RGBA, zero-padded to the largest sprite.
        sprite_hw: ``[S, 2]`` long, each sprite's own ``(h, w)``.
        kinds: per scene, the kind name of every primitive (for checks and metadata).
    """

    primitives: Primitives
    background: torch.Tensor
    sprites: torch.Tensor
    sprite_hw: torch.Tensor
    kinds: list[list[str]]

    def __len__(self) -> int:
        return self.background.shape[0]

    @classmethod
    def from_scenes(cls, scenes: Sequence[Scene]) -> "SceneBatch":
        scenes = list(scenes)
        for i, s in enumerate(scenes):
            if not isinstance(s, Scene):
                raise TypeError(f"scenes[{i}] is a {type(s).__name__}, not an engine.Scene")
        B = len(scenes)
        counts = [len(s.primitives) for s in scenes]
        N = max(counts, default=0)
        prims = [p for s in scenes for p in s.primitives]
        P = len(prims)
        V = max((len(p.verts) for p in prims if p.verts is not None), default=1)
        bi = np.repeat(np.arange(B), counts)
        ni = np.concatenate([np.arange(c) for c in counts]) if P else np.zeros(0, np.int64)

        cols = list(zip(*prims)) if P else [()] * len(Primitive._fields)
        F = {name: i for i, name in enumerate(Primitive._fields)}

        def column(name, dtype, width=None):
            shape = (B, N) if width is None else (B, N, width)
            out = np.zeros(shape, dtype)
            if P:
                out[bi, ni] = np.array(cols[F[name]], dtype)
            return out

        valid = np.zeros((B, N), bool)
        valid[bi, ni] = True
        # Sprites are numbered per scene; map them to one deduplicated batch list.
        sprite_list: list[torch.Tensor] = []
        sprite_ids: dict[int, int] = {}
        local_maps = []
        for s in scenes:
            local = []
            for img in s.sprites:
                if id(img) not in sprite_ids:
                    sprite_ids[id(img)] = len(sprite_list)
                    sprite_list.append(img)
                local.append(sprite_ids[id(img)])
            local_maps.append(local)
        index = column("index", np.int64)
        for b, s in enumerate(scenes):
            if s.sprites:
                for n, p in enumerate(s.primitives):
                    if p.kind == "sprite":
                        index[b, n] = local_maps[b][p.index]

        verts = np.zeros((B, N, V, 2), np.float32)
        nverts = np.zeros((B, N), np.int64)
        bounds = np.tile(np.array([-1, -1, 1, 1], np.float32), (B, N, 1))
        # Most primitives share a cached template array: fill each distinct array in one go.
        groups: dict[int, tuple[np.ndarray, list[int]]] = {}
        for i, v in enumerate(cols[F["verts"]]):
            if v is not None:
                groups.setdefault(id(v), (v, []))[1].append(i)
        for v, members in groups.values():
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
        sprites, hw = _pack_sprites(sprite_list)
        return cls(prims_t, background, sprites, hw, [s.kinds() for s in scenes])


def _pack_sprites(images: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    if not images:
        return torch.zeros(1, 4, 1, 1), torch.ones(1, 2, dtype=torch.long)
    h = max(int(i.shape[1]) for i in images)
    w = max(int(i.shape[2]) for i in images)
    out = torch.zeros(len(images), 4, h, w)
    hw = torch.zeros(len(images), 2, dtype=torch.long)
    for k, img in enumerate(images):
        t = img.detach().to("cpu")
        t = t.float() / 255.0 if not t.is_floating_point() else t.float()
        if t.shape[0] == 3:
            t = torch.cat([t, torch.ones_like(t[:1])])
        t = t.clamp(0, 1)
        t = torch.cat([t[:3] * t[3:], t[3:]])  # premultiplied: no dark fringes when filtered
        out[k, :, : t.shape[1], : t.shape[2]] = t
        hw[k] = torch.tensor(t.shape[1:])
    return out, hw
