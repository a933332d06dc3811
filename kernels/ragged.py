"""Outline vertices with and without padding, on the CPU.

A scene batch pads every slot's vertices to the longest outline's count by repeating the
slot's last vertex (a slot without vertices holds zeros); a packed batch
(:mod:`engine.parcel`) keeps only each slot's own, one slot after another. These loops touch
only the vertices they move, where a boolean mask or a gather over the padded array reads or
writes all of it.
"""
from __future__ import annotations

import math

import numpy as np
import torch

from .jit import exact


@exact
def _unpad(verts, nverts, out):
    k = 0
    for s in range(verts.shape[0]):
        for j in range(nverts[s]):
            out[k, 0] = verts[s, j, 0]
            out[k, 1] = verts[s, j, 1]
            k += 1


@exact
def _pad(ragged, nverts, out):
    k = 0
    for s in range(out.shape[0]):
        n = nverts[s]
        for j in range(out.shape[1]):
            if n == 0:
                out[s, j, 0] = 0.0
                out[s, j, 1] = 0.0
            else:
                i = k + min(j, n - 1)
                out[s, j, 0] = ragged[i, 0]
                out[s, j, 1] = ragged[i, 1]
        k += n


def _counts(nverts: torch.Tensor, slots: int, most: int | None) -> np.ndarray:
    """``nverts`` as a flat int64 array, checked: one count per slot, none negative or (with
    ``most``) above it. The loops trust these counts, and a wrong one reads or writes outside
    the arrays."""
    n = np.ascontiguousarray(nverts.reshape(-1).numpy().astype(np.int64, copy=False))
    if n.size != slots:
        raise ValueError(f"nverts holds {n.size} counts for {slots} slots")
    if n.size and (n.min() < 0 or (most is not None and n.max() > most)):
        raise ValueError(f"vertex counts must lie in 0..{most if most is not None else 'P'}; "
                         f"got {int(n.min())}..{int(n.max())}")
    return n


def unpadded(verts: torch.Tensor, nverts: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    """``[P, 2]``: each slot's first ``nverts`` vertices, slot after slot (``verts [..., V, 2]``,
    ``nverts [...]`` on the CPU; P = ``nverts.sum()``), written into ``out`` when given
    (a ``[P, 2]`` tensor of ``verts``' dtype)."""
    V = verts.shape[-2]
    n = _counts(nverts, math.prod(verts.shape[:-2]), V)
    P = int(n.sum())
    if out is None:
        out = torch.empty((P, 2), dtype=verts.dtype)
    if tuple(out.shape) != (P, 2) or out.dtype != verts.dtype or not out.is_contiguous():
        raise ValueError(f"out must be a contiguous [{P}, 2] {verts.dtype} tensor; got {tuple(out.shape)} {out.dtype}")
    if P:
        _unpad(np.ascontiguousarray(verts.reshape(-1, V, 2).numpy()), n, out.numpy())
    return out


def padded(ragged: torch.Tensor, nverts: torch.Tensor, V: int) -> torch.Tensor:
    """``[*nverts.shape, V, 2]`` from :func:`unpadded`'s ``ragged [P, 2]``: each slot's own
    vertices, then its last one repeated; zeros for a slot without vertices."""
    n = _counts(nverts, nverts.numel(), None)
    r = np.ascontiguousarray(ragged.numpy())
    if r.shape != (int(n.sum()), 2):
        raise ValueError(f"ragged vertices {tuple(r.shape)} do not hold the {int(n.sum())} that nverts counts")
    out = np.empty((len(n), V, 2), r.dtype)
    _pad(r, n, out)
    return torch.from_numpy(out).reshape(*nverts.shape, V, 2)
