"""Batched tile operations for jigsaw-style tasks: exact integer-indexing tensor ops that run
unchanged on any device (no resampling, so CPU and CUDA results are bit-identical).

Tiles are numbered row-major: in a ``rows x cols`` grid, tile ``t`` is at row ``t // cols``,
column ``t % cols``.
"""
from __future__ import annotations

import torch


def _check_images(images: torch.Tensor, rows: int, cols: int) -> None:
    if images.dim() != 4:
        raise ValueError(f"images must be [B,C,H,W], got shape {tuple(images.shape)}")
    if rows < 1 or cols < 1:
        raise ValueError(f"rows={rows} and cols={cols} must be positive")
    H, W = images.shape[-2:]
    if H % rows or W % cols:
        raise ValueError(f"a {H}x{W} image does not split into {rows}x{cols} equal tiles")


def split(images: torch.Tensor, rows: int, cols: int) -> torch.Tensor:
    """``[B,C,H,W]`` -> tiles ``[B, rows*cols, C, H/rows, W/cols]`` (row-major)."""
    _check_images(images, rows, cols)
    B, C, H, W = images.shape
    h, w = H // rows, W // cols
    return images.reshape(B, C, rows, h, cols, w).permute(0, 2, 4, 1, 3, 5).reshape(B, rows * cols, C, h, w)


def stitch(tiles: torch.Tensor, rows: int, cols: int) -> torch.Tensor:
    """Tiles ``[B, rows*cols, C, h, w]`` -> ``[B, C, rows*h, cols*w]`` (inverse of :func:`split`)."""
    if tiles.dim() != 5 or tiles.shape[1] != rows * cols:
        raise ValueError(f"tiles must be [B,{rows * cols},C,h,w], got shape {tuple(tiles.shape)}")
    B, _, C, h, w = tiles.shape
    return tiles.reshape(B, rows, cols, C, h, w).permute(0, 3, 1, 4, 2, 5).reshape(B, C, rows * h, cols * w)


def permute(tiles: torch.Tensor, perm: torch.Tensor) -> torch.Tensor:
    """``out[b, i] = tiles[b, perm[b, i]]`` for ``perm [B, T]`` (long). Returns ``[B,T,C,h,w]``."""
    if perm.shape != tiles.shape[:2]:
        raise ValueError(f"perm must be {list(tiles.shape[:2])}, got {list(perm.shape)}")
    idx = perm.to(tiles.device).long().view(*perm.shape, 1, 1, 1).expand_as(tiles)
    return torch.gather(tiles, 1, idx)


def rotate(tiles: torch.Tensor, quarter_turns: torch.Tensor) -> torch.Tensor:
    """Turn each square tile counter-clockwise by ``quarter_turns [B,T]`` x 90 degrees
    (values taken modulo 4). Returns ``[B,T,C,h,w]``."""
    if tiles.shape[-1] != tiles.shape[-2]:
        raise ValueError(f"rotating by quarter turns needs square tiles, got {tuple(tiles.shape[-2:])}")
    if quarter_turns.shape != tiles.shape[:2]:
        raise ValueError(f"quarter_turns must be {list(tiles.shape[:2])}, got {list(quarter_turns.shape)}")
    k = (quarter_turns.to(tiles.device).long() % 4).view(*quarter_turns.shape, 1, 1, 1)
    out = tiles
    for turns in (1, 2, 3):
        out = torch.where(k == turns, torch.rot90(tiles, turns, dims=(-2, -1)), out)
    return out


def mirror(tiles: torch.Tensor, mode: torch.Tensor) -> torch.Tensor:
    """Mirror each tile: ``mode [B,T]`` 0 = unchanged, 1 = left-right, 2 = up-down.
    Returns ``[B,T,C,h,w]``."""
    if mode.shape != tiles.shape[:2]:
        raise ValueError(f"mode must be {list(tiles.shape[:2])}, got {list(mode.shape)}")
    m = mode.to(tiles.device).long().view(*mode.shape, 1, 1, 1)
    out = torch.where(m == 1, torch.flip(tiles, dims=(-1,)), tiles)
    return torch.where(m == 2, torch.flip(tiles, dims=(-2,)), out)


def mask(images: torch.Tensor, rows: int, cols: int, masked: torch.Tensor, value: int | float = 255) -> torch.Tensor:
    """Fill the tiles flagged by ``masked [B, rows*cols]`` (bool) with ``value``.
    Returns a new ``[B,C,H,W]`` tensor."""
    tiles = split(images, rows, cols)
    if masked.shape != tiles.shape[:2]:
        raise ValueError(f"masked must be {list(tiles.shape[:2])}, got {list(masked.shape)}")
    m = masked.to(images.device).bool().view(*masked.shape, 1, 1, 1)
    filled = torch.where(m, torch.full_like(tiles, value), tiles)
    return stitch(filled, rows, cols)


def take(images: torch.Tensor, rows: int, cols: int, index: torch.Tensor) -> torch.Tensor:
    """Tile ``index[b, j]`` of image ``b`` for every ``j``: ``[B, J, C, h, w]`` (crop candidates)."""
    tiles = split(images, rows, cols)
    idx = index.to(images.device).long()
    return torch.gather(tiles, 1, idx.view(*idx.shape, 1, 1, 1).expand(*idx.shape, *tiles.shape[2:]))


TOP, RIGHT, BOTTOM, LEFT = range(4)
OPPOSITE = (BOTTOM, LEFT, TOP, RIGHT)     # the side of a neighbour that faces each side


def borders(tiles: torch.Tensor, depth: int = 2) -> torch.Tensor:
    """The outer ``depth`` pixel lines of each side of square tiles ``[..., C, h, h]``:
    ``[..., 4, depth, C, h]`` for sides top, right, bottom, left; line 0 is the outermost,
    each line read left to right (top, bottom) or top to bottom (left, right), so that the
    facing sides of two neighbours line up pixel for pixel."""
    if tiles.dim() < 3 or tiles.shape[-1] != tiles.shape[-2] or tiles.shape[-1] < depth:
        raise ValueError(f"tiles must be [..., C, h, h] with h >= {depth}, got shape {tuple(tiles.shape)}")
    top = tiles[..., :depth, :].movedim(-2, -3)
    bottom = tiles[..., -depth:, :].flip(-2).movedim(-2, -3)
    left = tiles[..., :, :depth].movedim(-1, -3)
    right = tiles[..., :, -depth:].flip(-1).movedim(-1, -3)
    return torch.stack([top, right, bottom, left], dim=-4)


def seam_cost(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """How badly two facing sides continue each other: ``a``, ``b`` ``[..., depth>=2, C, L]``
    (from :func:`borders`, ``a`` one tile's side and ``b`` its neighbour's opposite side,
    broadcastable). Each side's last two lines predict the other's first line by linear
    extrapolation; returns the mean of the absolute prediction errors and of the step between
    the two first lines (0..255 scale), ``[...]``."""
    a, b = a.float(), b.float()
    into_b = (2 * a[..., 0, :, :] - a[..., 1, :, :] - b[..., 0, :, :]).abs()
    into_a = (2 * b[..., 0, :, :] - b[..., 1, :, :] - a[..., 0, :, :]).abs()
    step = (a[..., 0, :, :] - b[..., 0, :, :]).abs()
    return (into_b + into_a + 2 * step).mean(dim=(-2, -1)) / 4
