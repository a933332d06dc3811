"""Collation of scenes into the padded batch the rasterizer consumes."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from kernels.raster import Primitives

from .scene import Scene, parse_color


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
        N = max((len(s.primitives) for s in scenes), default=0)
        V = max((len(p.verts) for s in scenes for p in s.primitives if p.verts is not None), default=1)

        valid = np.zeros((B, N), bool)
        geom = np.zeros((B, N), np.int64)
        center = np.zeros((B, N, 2), np.float32)
        scale = np.zeros((B, N, 2), np.float32)
        rotation = np.zeros((B, N), np.float32)
        color = np.zeros((B, N, 3), np.float32)
        alpha = np.zeros((B, N), np.float32)
        fill = np.zeros((B, N), bool)
        stroke = np.zeros((B, N), np.float32)
        shell = np.zeros((B, N), np.float32)
        order = np.zeros((B, N), np.float32)
        verts = np.zeros((B, N, V, 2), np.float32)
        nverts = np.zeros((B, N), np.int64)
        index = np.zeros((B, N), np.int64)

        sprite_list: list[torch.Tensor] = []
        sprite_ids: dict[int, int] = {}
        for b, s in enumerate(scenes):
            local = []
            for img in s.sprites:
                key = id(img)
                if key not in sprite_ids:
                    sprite_ids[key] = len(sprite_list)
                    sprite_list.append(img)
                local.append(sprite_ids[key])
            for n, p in enumerate(s.primitives):
                valid[b, n] = True
                geom[b, n] = p.geom
                center[b, n] = p.center
                scale[b, n] = p.scale
                rotation[b, n] = p.rotation
                color[b, n] = p.color
                alpha[b, n] = p.alpha
                fill[b, n] = p.fill
                stroke[b, n] = p.stroke
                shell[b, n] = p.shell
                order[b, n] = p.order
                index[b, n] = local[p.index] if p.kind == "sprite" else p.index
                if p.verts is not None:
                    k = len(p.verts)
                    verts[b, n, :k] = p.verts
                    verts[b, n, k:] = p.verts[-1]
                    nverts[b, n] = k
        prims = Primitives(*(torch.from_numpy(a) for a in (
            valid, geom, center, scale, rotation, color, alpha, fill, stroke, shell, order, verts, nverts, index)))
        background = torch.tensor([parse_color(s.background) for s in scenes], dtype=torch.float32).reshape(B, 3)
        sprites, hw = _pack_sprites(sprite_list)
        return cls(prims, background, sprites, hw, [s.kinds() for s in scenes])


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
