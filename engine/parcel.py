"""Collated scenes packed into one byte buffer, to move between processes and onto a device.

A stream batch's frames (:class:`engine.frames.Frames`) hold a dozen tensors per panel size,
and most of their bytes are padding: a scene batch pads every outline to the longest one's
vertices (ELVIS: 7% of the vertex slots used). Handed from a DataLoader worker as they are,
each tensor travels through its own shared-memory segment and file descriptor; on a 16-core
GPU machine the main process received about 10 batches of 1,024 ELVIS frames a second that
way, under what its GPU renders. Packed, a batch is one buffer of about a fifth of the bytes
(vertices without padding), received in one piece, pinned in one piece and copied to a GPU in
one transfer, where the padding is restored by one gather.

Packing also merges the groups of one panel size that use no sprites into one scene batch
(slots padded as :meth:`engine.batch.SceneBatch.from_scenes` pads them), so a device renders a
batch of several ELVIS batch keys in one call instead of one per key. Every scene's pixels
are the same either way.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from kernels import ragged
from kernels.primitives import Primitives

from .batch import SceneBatch

_ALIGN = 64                              # every column starts on a 64-byte boundary
_PAD = {"bounds": (-1.0, -1.0, 1.0, 1.0)}  # what an empty slot holds (zero elsewhere), as collation pads


@dataclass(frozen=True)
class Parcel:
    """``buffer``: ``[nbytes]`` uint8 holding every column; ``layout``: per group
    ``(hw, where, B, N, V, columns)`` with ``columns`` a tuple of ``(name, offset, dtype,
    shape)`` (``verts`` stored without padding as ``[P, 2]``, P = the sum of ``nverts``)."""

    buffer: torch.Tensor
    layout: tuple

    def pin_memory(self) -> "Parcel":
        """The same parcel in pinned host memory (one copy)."""
        return Parcel(self.buffer.pin_memory(), self.layout)


def pack(groups: list) -> Parcel:
    """``groups`` (``[((h, w), SceneBatch, where)]``, as :class:`engine.frames.Frames` holds
    them) as one :class:`Parcel`; groups of one size without sprites are merged, in order."""
    merged: list = []
    for hw, batch, where in groups:
        last = merged[-1] if merged else None
        if last and last[0] == hw and not len(batch.sprites) and not len(last[1][0].sprites):
            last[1].append(batch)
            last[2].extend(where)
        else:
            merged.append((hw, [batch], list(where)))
    plan, offset = [], 0
    for hw, batches, where in merged:
        B = sum(len(b) for b in batches)
        N = max(b.primitives.geom.shape[1] for b in batches)
        V = max(b.primitives.verts.shape[2] for b in batches)
        P = sum(int(b.primitives.nverts.sum()) for b in batches)
        cols = []
        first = batches[0]
        for name, t in list(zip(Primitives._fields, first.primitives)) + [
                ("background", first.background), ("sprites", first.sprites), ("sprite_hw", first.sprite_hw)]:
            shape = ((P, 2) if name == "verts" else (B, N) + tuple(t.shape[2:]) if name in Primitives._fields
                     else (B,) + tuple(t.shape[1:]) if name == "background" else tuple(t.shape))
            cols.append((name, offset, t.dtype, shape))
            offset += -(-_nbytes(t.dtype, shape) // _ALIGN) * _ALIGN
        plan.append((hw, tuple(where), B, N, V, tuple(cols)))
    buffer = torch.empty(offset, dtype=torch.uint8)
    for (hw, batches, _), (_, _, B, N, V, cols) in zip(merged, plan):
        _fill(buffer, batches, cols)
    return Parcel(buffer, tuple(plan))


def _nbytes(dtype: torch.dtype, shape: tuple) -> int:
    n = torch.empty((), dtype=dtype).element_size()
    for s in shape:
        n *= s
    return n


def _view(buffer: torch.Tensor, offset: int, dtype: torch.dtype, shape: tuple) -> torch.Tensor:
    return buffer[offset:offset + _nbytes(dtype, shape)].view(dtype).view(shape)


def _fill(buffer: torch.Tensor, batches: list, cols: tuple) -> None:
    """Write the merged columns of ``batches`` into their places in ``buffer``."""
    for name, offset, dtype, shape in cols:
        out = _view(buffer, offset, dtype, shape)
        if name == "verts":
            parts = [ragged.unpadded(b.primitives.verts, b.primitives.nverts) for b in batches]
            torch.cat(parts, out=out) if len(parts) > 1 else out.copy_(parts[0])
        elif name in ("sprites", "sprite_hw"):
            out.copy_(getattr(batches[0], name))
        elif name == "background":
            torch.cat([b.background for b in batches], out=out)
        else:
            a = 0
            for b in batches:
                t = getattr(b.primitives, name)
                n = t.shape[1]
                out[a:a + len(b), :n] = t
                if n < shape[1]:
                    out[a:a + len(b), n:] = torch.tensor(_PAD.get(name, 0), dtype=dtype)
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
    for hw, where, B, N, V, cols in parcel.layout:
        t = {name: _view(buf, offset, dtype, shape) for name, offset, dtype, shape in cols}
        t["verts"] = padded(t["verts"], t["nverts"], V)
        prims = Primitives(*(t[name] for name in Primitives._fields))
        groups.append((hw, SceneBatch(prims, t["background"], t["sprites"], t["sprite_hw"]), list(where)))
    return groups
