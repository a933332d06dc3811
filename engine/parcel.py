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

from typing import NamedTuple

import torch

from kernels import ragged
from kernels.primitives import SPRITE, Primitives

from .batch import PADDED_BYTES, SceneBatch
from .canvas import memory_budget

_ALIGN = 64                              # every column starts on a 64-byte boundary
_PAD = {"bounds": (-1.0, -1.0, 1.0, 1.0)}  # what an empty slot holds (zero elsewhere), as collation pads
_OTHER = ("background", "sprites", "sprite_hw")


class Column(NamedTuple):
    name: str
    offset: int                          # bytes into the buffer
    dtype: torch.dtype
    shape: tuple


class Group(NamedTuple):
    """One packed scene batch: drawn at ``hw``, its scenes going to ``where``; ``V`` the
    vertex padding to restore; ``columns`` in the order of :class:`Primitives`, then
    background, sprites, sprite_hw (``verts`` stored unpadded as ``[P, 2]``)."""
    hw: tuple
    where: tuple
    V: int
    columns: tuple


class Parcel(NamedTuple):
    """``buffer``: ``[nbytes]`` uint8 holding every column of every group in ``groups``."""
    buffer: torch.Tensor
    groups: tuple

    def pin_memory(self) -> "Parcel":
        """The same parcel in pinned host memory (one copy)."""
        return Parcel(self.buffer.pin_memory(), self.groups)


def pack(groups: list) -> Parcel:
    """``groups`` (``[((h, w), SceneBatch, where)]`` on the CPU, as :class:`engine.frames.Frames`
    holds them) as one :class:`Parcel`, neighbouring batches merged where they can be."""
    merged: list = []                    # [hw, [SceneBatch], where, the batch whose atlas they use]
    for hw, batch, where in groups:
        if merged and _joins(merged[-1], hw, batch):
            merged[-1][1].append(batch)
            merged[-1][2].extend(where)
            if _draws_sprites(batch):
                merged[-1][3] = batch
        else:
            merged.append([hw, [batch], list(where), batch])
    plan, offset = [], 0
    for hw, batches, where, atlas in merged:
        columns = []
        for name, dtype, shape in _shapes(batches, atlas):
            columns.append(Column(name, offset, dtype, shape))
            offset += -(-_nbytes(dtype, shape) // _ALIGN) * _ALIGN
        plan.append(Group(hw, tuple(where), max(b.primitives.verts.shape[2] for b in batches), tuple(columns)))
    buffer = torch.empty(offset, dtype=torch.uint8)
    for (_, batches, _, atlas), group in zip(merged, plan):
        _fill(buffer, batches, atlas, group.columns)
    return Parcel(buffer, tuple(plan))


def _draws_sprites(batch: SceneBatch) -> bool:
    p = batch.primitives
    return bool(((p.geom == SPRITE) & p.valid).any())


def _joins(last: list, hw: tuple, batch: SceneBatch) -> bool:
    """Whether ``batch`` can join the merged group ``last``: same size, one sprite atlas for
    them all (the same one, or only one of the two draws sprites), and the padded columns of
    them all within the memory budget."""
    hw0, batches, _, atlas = last
    if hw0 != hw:
        return False
    if _draws_sprites(batch) and _draws_sprites(atlas) and not (
            atlas.sprites.shape == batch.sprites.shape and torch.equal(atlas.sprites, batch.sprites)
            and torch.equal(atlas.sprite_hw, batch.sprite_hw)):
        return False
    B = sum(len(b) for b in batches) + len(batch)
    N = max(max(b.primitives.geom.shape[1] for b in batches), batch.primitives.geom.shape[1])
    V = max(max(b.primitives.verts.shape[2] for b in batches), batch.primitives.verts.shape[2])
    return B * N * (8 * V + PADDED_BYTES) <= memory_budget()


def _shapes(batches: list, atlas: SceneBatch) -> list[tuple[str, torch.dtype, tuple]]:
    """``(name, dtype, shape)`` of each column of ``batches`` merged (sprites from ``atlas``)."""
    first = batches[0]
    B = sum(len(b) for b in batches)
    N = max(b.primitives.geom.shape[1] for b in batches)
    P = sum(int(b.primitives.nverts.sum()) for b in batches)
    out = []
    for name, t in zip(Primitives._fields, first.primitives):
        out.append((name, t.dtype, (P, 2) if name == "verts" else (B, N, *t.shape[2:])))
    out.append(("background", first.background.dtype, (B, 3)))
    out += [(name, getattr(atlas, name).dtype, tuple(getattr(atlas, name).shape)) for name in _OTHER[1:]]
    return out


def _nbytes(dtype: torch.dtype, shape: tuple) -> int:
    n = dtype.itemsize
    for s in shape:
        n *= s
    return n


def _view(buffer: torch.Tensor, column: Column) -> torch.Tensor:
    return buffer[column.offset:column.offset + _nbytes(column.dtype, column.shape)].view(column.dtype).view(
        column.shape)


def _fill(buffer: torch.Tensor, batches: list, atlas: SceneBatch, columns: tuple) -> None:
    """Write the merged columns of ``batches`` (sprites from ``atlas``) into their places in
    ``buffer``."""
    for column in columns:
        out, name = _view(buffer, column), column.name
        if name in _OTHER[1:]:
            out.copy_(getattr(atlas, name))
            continue
        a = 0
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
    it but the vertices, padded again there."""
    device = torch.device(device)
    buf = parcel.buffer
    if buf.device != device:
        buf = buf.to(device, non_blocking=buf.is_pinned())
    groups = []
    for group in parcel.groups:
        t = {c.name: _view(buf, c) for c in group.columns}
        t["verts"] = padded(t["verts"], t["nverts"], group.V)
        prims = Primitives(*(t[name] for name in Primitives._fields))
        groups.append((group.hw, SceneBatch(prims, *(t[name] for name in _OTHER)), list(group.where)))
    return groups
