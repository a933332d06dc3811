"""Collated scenes packed into one byte buffer, to move between processes and onto a device.

A stream batch's frames (:class:`engine.frames.Frames`) hold 18 tensors per scene batch,
and most of their bytes are padding: a scene batch pads every outline to the longest one's
vertices (ELVIS: 7% of the vertex slots used, the padding 83% of a batch's bytes). Handed
from a DataLoader worker as they are, each tensor travels through its own shared-memory
segment and file descriptor; on a 16-core GPU machine the main process received about 10
batches of 1,024 ELVIS frames a second that way, under what its GPU renders. Packed, a batch
is one buffer of about a fifth of the bytes (vertices without padding), received in one
piece, pinned in one piece and copied to a GPU in one transfer, where one gather restores the
padding.

Packing also merges neighbouring scene batches of one panel size (ELVIS and shapes draw one
per batch key, all at the canvas size) into one, where at most one sprite atlas is in use
and the padded columns stay within the memory budget, so that a device renders them in one
call. Every scene's pixels are the same either way.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import torch

from kernels import ragged
from kernels.primitives import SPRITE, Primitives

from .batch import PADDED_BYTES, SceneBatch, premultiplied
from .canvas import memory_budget

_ALIGN = 64                              # every column starts on a 64-byte boundary
_PAD = {"bounds": (-1.0, -1.0, 1.0, 1.0)}  # what an empty slot holds (zero elsewhere), as collation pads


class Column(NamedTuple):
    name: str
    offset: int                          # bytes into the buffer
    dtype: torch.dtype
    shape: tuple


class Group(NamedTuple):
    """One packed scene batch: drawn at ``hw``, its scenes going to ``where``; ``V`` the
    vertex padding to restore; ``columns`` in the order of :class:`Primitives`, then
    background (``verts`` stored unpadded as ``[P, 2]``); its sprite atlas kept as the
    tensors it was (hundreds of megabytes for a batch of KiVA trials or photographs, often
    shared by several groups: copying it into the buffer would copy it twice on its way):
    ``sprites8`` the 8-bit source (:attr:`SceneBatch.sprites8`, a quarter of the float
    atlas's bytes) and ``sprites`` ``None``, or where there is none ``sprites`` the floats;
    ``sprite_hw`` each sprite's size."""
    hw: tuple
    where: tuple
    V: int
    columns: tuple
    sprites: torch.Tensor | None
    sprite_hw: torch.Tensor
    sprites8: torch.Tensor | None = None


class Parcel(NamedTuple):
    """``buffer``: ``[nbytes]`` uint8 holding every column of every group in ``groups``."""
    buffer: torch.Tensor
    groups: tuple

    def pin_memory(self) -> "Parcel":
        """The same parcel in pinned host memory (one copy of the buffer, one of each atlas)."""
        pinned: dict = {}

        def pin(t: torch.Tensor | None) -> torch.Tensor | None:     # an atlas shared by groups: pinned once
            if t is not None and id(t) not in pinned:
                pinned[id(t)] = t.pin_memory()
            return None if t is None else pinned[id(t)]
        return Parcel(self.buffer.pin_memory(), tuple(
            g._replace(sprites=pin(g.sprites), sprite_hw=pin(g.sprite_hw), sprites8=pin(g.sprites8)) for g in self.groups))


@dataclass
class _Merged:
    """Neighbouring scene batches becoming one group: their sizes so far (scenes, slots,
    vertices, unpadded vertices) and the batch whose sprite atlas they use."""
    hw: tuple
    batches: list
    where: list
    atlas: SceneBatch
    sprites: bool                        # whether any of them draws sprites
    B: int = 0
    N: int = 0
    V: int = 0
    P: int = 0

    def add(self, batch: SceneBatch, where, sprites: bool) -> None:
        p = batch.primitives
        self.batches.append(batch)
        self.where.extend(where)
        if sprites:
            self.atlas, self.sprites = batch, True
        self.B, self.N, self.V = self.B + len(batch), max(self.N, p.geom.shape[1]), max(self.V, p.verts.shape[2])
        self.P += int(p.nverts.sum())

    def takes(self, hw: tuple, batch: SceneBatch, sprites: bool) -> bool:
        """Whether ``batch`` can join: same size, one sprite atlas for them all (the same one,
        or only one side draws sprites), and the padded columns of them all within the
        memory budget."""
        if hw != self.hw:
            return False
        if sprites and self.sprites and not _same_atlas(self.atlas, batch):
            return False
        N, V = max(self.N, batch.primitives.geom.shape[1]), max(self.V, batch.primitives.verts.shape[2])
        return (self.B + len(batch)) * N * (8 * V + PADDED_BYTES) <= memory_budget()

    def columns(self) -> list[tuple[str, torch.dtype, tuple]]:
        """``(name, dtype, shape)`` of each merged column."""
        first = self.batches[0]
        out = [(name, t.dtype, (self.P, 2) if name == "verts" else (self.B, self.N, *t.shape[2:]))
               for name, t in zip(Primitives._fields, first.primitives)]
        return out + [("background", first.background.dtype, (self.B, 3))]


def _same_atlas(a: SceneBatch, b: SceneBatch) -> bool:
    """Whether ``a`` and ``b`` draw from the same sprites: one atlas, or equal ones (compared
    in 8 bits where both have them, so that no floats are made for it)."""
    if a.atlas is b.atlas:
        return True
    if not torch.equal(a.sprite_hw, b.sprite_hw):
        return False
    x, y = (a.sprites8, b.sprites8) if a.sprites8 is not None and b.sprites8 is not None else (a.sprites, b.sprites)
    return x.shape == y.shape and torch.equal(x, y)


def pack(groups: list) -> Parcel:
    """``groups`` (``[((h, w), SceneBatch, where)]`` on the CPU, as :class:`engine.frames.Frames`
    holds them) as one :class:`Parcel`, neighbouring batches merged where they can be."""
    merged: list[_Merged] = []
    for hw, batch, where in groups:
        p = batch.primitives
        sprites = bool(((p.geom == SPRITE) & p.valid).any())
        if not (merged and merged[-1].takes(hw, batch, sprites)):
            merged.append(_Merged(hw, [], [], batch, False))
        merged[-1].add(batch, where, sprites)
    plan, offset = [], 0
    for m in merged:
        columns = []
        for name, dtype, shape in m.columns():
            columns.append(Column(name, offset, dtype, shape))
            offset += -(-_nbytes(dtype, shape) // _ALIGN) * _ALIGN
        eight = m.atlas.sprites8
        plan.append(Group(m.hw, tuple(m.where), m.V, tuple(columns), m.atlas.sprites if eight is None else None,
                          m.atlas.sprite_hw, eight))
    buffer = torch.empty(offset, dtype=torch.uint8)
    for m, group in zip(merged, plan):
        _fill(buffer, m.batches, group.columns)
    return Parcel(buffer, tuple(plan))


def _nbytes(dtype: torch.dtype, shape: tuple) -> int:
    return dtype.itemsize * math.prod(shape)


def _view(buffer: torch.Tensor, column: Column) -> torch.Tensor:
    return buffer[column.offset:column.offset + _nbytes(column.dtype, column.shape)].view(column.dtype).view(
        column.shape)


def _fill(buffer: torch.Tensor, batches: list, columns: tuple) -> None:
    """Write the merged columns of ``batches`` into their places in ``buffer``."""
    for column in columns:
        out, name, a = _view(buffer, column), column.name, 0
        for b in batches:
            if name == "verts":
                n = int(b.primitives.nverts.sum())
                ragged.unpadded(b.primitives.verts, b.primitives.nverts, out=out[a:a + n])
                a += n
                continue
            t = b.background if name == "background" else getattr(b.primitives, name)
            out[a:a + len(b), :t.shape[1]] = t
            if name != "background" and t.shape[1] < out.shape[1]:
                out[a:a + len(b), t.shape[1]:] = torch.tensor(_PAD.get(name, 0), dtype=column.dtype)
            a += len(b)


def padded(verts: torch.Tensor, nverts: torch.Tensor, V: int) -> torch.Tensor:
    """``[B,N,V,2]`` from ``verts [P,2]`` (slots' vertices one after another, as
    :func:`pack` stores them) and ``nverts [B,N]``: padding repeats a slot's last vertex, a
    slot without vertices is zeros (as collation pads). On the CPU a compiled loop
    (:func:`kernels.ragged.padded`), elsewhere :func:`padded_by_gather` on ``verts``' device."""
    return ragged.padded(verts, nverts, V) if verts.device.type == "cpu" else padded_by_gather(verts, nverts, V)


def padded_by_gather(verts: torch.Tensor, nverts: torch.Tensor, V: int) -> torch.Tensor:
    """:func:`padded` as one gather of tensor operations (any device, no host reads)."""
    B, N = nverts.shape
    if verts.shape[0] == 0 or V == 0:
        return torch.zeros((B, N, V, 2), dtype=verts.dtype, device=verts.device)
    n = nverts.reshape(-1)
    start = torch.cumsum(n, 0) - n
    j = torch.minimum(torch.arange(V, device=n.device)[None, :], (n - 1).clamp_min(0)[:, None])
    out = verts[(start[:, None] + j).clamp_max(verts.shape[0] - 1)]
    return torch.where((n > 0)[:, None, None], out, 0.0).reshape(B, N, V, 2)


def unpack(parcel: Parcel, device="cpu") -> list:
    """The groups of ``parcel`` on ``device`` (``[((h, w), SceneBatch, where)]``): the buffer
    copied there in one transfer (without blocking when it is pinned), every column a view of
    it but the vertices, padded again there; each sprite atlas copied there once, an 8-bit
    one premultiplied there."""
    device = torch.device(device)
    buf = parcel.buffer
    if buf.device != device:
        buf = buf.to(device, non_blocking=buf.is_pinned())
    groups, atlases = [], {}
    for group in parcel.groups:
        t = {c.name: _view(buf, c) for c in group.columns}
        t["verts"] = padded(t["verts"], t["nverts"], group.V)
        prims = Primitives(*(t[name] for name in Primitives._fields))
        atlas = group.sprites if group.sprites8 is None else group.sprites8
        if id(atlas) not in atlases:                            # groups sharing an atlas: moved (and made float) once
            moved = atlas.to(device, non_blocking=atlas.is_pinned())
            # (off the CPU the floats alone are kept: the renderer reads them there)
            atlases[id(atlas)] = (moved, None) if group.sprites8 is None else \
                (premultiplied(moved), moved if device.type == "cpu" else None)
        sprites, sprites8 = atlases[id(atlas)]
        sprite_hw = group.sprite_hw.to(device, non_blocking=group.sprite_hw.is_pinned())
        groups.append((group.hw, SceneBatch(prims, t["background"], sprites, sprite_hw, sprites8), list(group.where)))
    return groups
