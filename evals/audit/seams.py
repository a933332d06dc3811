"""A non-learned jigsaw solver that reads only rendered pixels: pick the piece, hole or
arrangement whose borders best continue the pixels they meet.

It is the audit's shortcut measure for puzzles built from image tiles. It is a simple
reference, written apart from any generator: plain absolute differences between facing
pixel lines, on the panels as rendered (any size), never the generator's own seam code.

A family states a sample's question structure (what a solver sees, not which answer is
right) as a *puzzle*, one of:

- ``{"kind": "fill", "image": i, "grid": g, "options": {answer: panel}}``: panel ``i`` is a
  ``g x g`` picture with one white cell; each option names the panel that would fill it.
- ``{"kind": "place", "image": i, "piece": p, "grid": g, "options": [answer, ...]}``: panel
  ``i`` has white cells, named by the options in reading order; panel ``p`` is a piece.
- ``{"kind": "arrange", "tiles": [panel, ...], "grid": g, "options": {answer: order}}``:
  the panels are shuffled cells of a ``g x g`` picture; ``order[r]`` is the (1-based)
  position among ``tiles`` of the panel that belongs at cell ``r`` (row-major).

:func:`solve` returns the answer the seams choose.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

WHITE = 250        # a channel value at or above this counts as the white fill of a hole
HOLE_FILL = 0.5    # share of white pixels in a cell (inset) that makes it a hole (labels cover some)
GAP = 1            # pixels skipped on each side of a hole's edge, where rendering blends the white in
KINDS = ("fill", "place", "arrange")


def _f(img: torch.Tensor) -> torch.Tensor:
    return img.float()


def edge_cost(a: torch.Tensor, b: torch.Tensor, side: str) -> float:
    """Mean absolute difference (0..255) between tile ``a``'s last pixel line and tile
    ``b``'s first, with ``b`` to the ``right`` of ``a`` or ``below`` it; ``a``, ``b``:
    ``[3,h,w]`` of equal size."""
    a, b = _f(a), _f(b)
    if side == "right":
        return float((a[:, :, -1] - b[:, :, 0]).abs().mean())
    if side == "below":
        return float((a[:, -1, :] - b[:, 0, :]).abs().mean())
    raise ValueError(f"side={side!r}: allowed 'right' or 'below'")


def _box(hw: tuple[int, int], grid: int, cell: int) -> tuple[int, int, int, int]:
    """Pixel box ``(y0, y1, x0, x1)`` of ``cell`` in a ``grid x grid`` picture of size ``hw``."""
    H, W = hw
    r, c = divmod(cell, grid)
    return round(r * H / grid), round((r + 1) * H / grid), round(c * W / grid), round((c + 1) * W / grid)


def holes(image: torch.Tensor, grid: int) -> list[int]:
    """The cells (row-major, reading order) of ``image [3,H,W]`` seen as a ``grid x grid``
    picture that are white fills."""
    white = (image >= WHITE).all(0)
    out = []
    for cell in range(grid * grid):
        y0, y1, x0, x1 = _box(image.shape[-2:], grid, cell)
        iy, ix = max(1, (y1 - y0) // 10), max(1, (x1 - x0) // 10)
        if float(white[y0 + iy:y1 - iy, x0 + ix:x1 - ix].float().mean()) >= HOLE_FILL:
            out.append(cell)
    return out


def hole_cost(image: torch.Tensor, grid: int, cell: int, piece: torch.Tensor, skip=()) -> float:
    """How badly ``piece [3,h,w]`` (any size; resized to the cell) continues the pixels
    around ``cell`` of ``image [3,H,W]``: the mean absolute difference between the piece's
    outer lines and the lines of the picture facing them, over every side whose neighbour
    is in the picture and not in ``skip`` (other holes). ``inf`` when no side has one."""
    y0, y1, x0, x1 = _box(image.shape[-2:], grid, cell)
    p = F.interpolate(_f(piece)[None], size=(y1 - y0, x1 - x0), mode="bilinear", antialias=True,
                      align_corners=False)[0]
    img = _f(image)
    H, W = image.shape[-2:]
    r, c = divmod(cell, grid)
    g = GAP
    costs = []
    if r > 0 and cell - grid not in skip:
        costs.append((img[:, y0 - 1 - g, x0:x1] - p[:, g, :]).abs().mean())
    if r < grid - 1 and cell + grid not in skip:
        costs.append((img[:, y1 + g, x0:x1] - p[:, -1 - g, :]).abs().mean())
    if c > 0 and cell - 1 not in skip:
        costs.append((img[:, y0:y1, x0 - 1 - g] - p[:, :, g]).abs().mean())
    if c < grid - 1 and cell + 1 not in skip:
        costs.append((img[:, y0:y1, x1 + g] - p[:, :, -1 - g]).abs().mean())
    return float(torch.stack(costs).mean()) if costs else math.inf


def best_candidate(image: torch.Tensor, grid: int, candidates: list[torch.Tensor]) -> int | None:
    """Index of the candidate that best continues the one white cell of ``image``, or
    ``None`` when the picture does not show exactly one hole."""
    found = holes(image, grid)
    if len(found) != 1:
        return None
    costs = [hole_cost(image, grid, found[0], c) for c in candidates]
    return min(range(len(costs)), key=costs.__getitem__)


def best_hole(image: torch.Tensor, grid: int, piece: torch.Tensor) -> tuple[int | None, list[int]]:
    """``(k, holes)``: the white cells of ``image`` in reading order and the position ``k``
    among them of the one ``piece`` continues best (``None`` if no hole has a visible
    neighbour)."""
    found = holes(image, grid)
    costs = [hole_cost(image, grid, h, piece, skip=set(found)) for h in found]
    if not costs or all(math.isinf(c) for c in costs):
        return None, found
    return min(range(len(costs)), key=costs.__getitem__), found


def arrangement_cost(tiles: list[torch.Tensor], grid: int, order: list[int]) -> float:
    """Sum of :func:`edge_cost` over the inner edges of the picture that puts ``tiles[order[r] - 1]``
    at cell ``r``; tiles are resized to the first one's size."""
    hw = tiles[0].shape[-2:]
    placed = [tiles[o - 1] if tiles[o - 1].shape[-2:] == hw else
              F.interpolate(_f(tiles[o - 1])[None], size=tuple(hw), mode="bilinear", antialias=True)[0]
              for o in order]
    total = 0.0
    for cell in range(grid * grid):
        r, c = divmod(cell, grid)
        if c < grid - 1:
            total += edge_cost(placed[cell], placed[cell + 1], "right")
        if r < grid - 1:
            total += edge_cost(placed[cell], placed[cell + grid], "below")
    return total


def best_arrangement(tiles: list[torch.Tensor], grid: int, orders: list[list[int]]) -> int:
    """Index of the order in ``orders`` whose picture has the smallest :func:`arrangement_cost`."""
    costs = [arrangement_cost(tiles, grid, o) for o in orders]
    return min(range(len(costs)), key=costs.__getitem__)


def solve(puzzle: dict, panels: list[torch.Tensor]) -> str | None:
    """The answer the seams choose for ``puzzle`` (see the module docstring) shown as
    ``panels`` (``[3,H,W]`` each, as rendered), or ``None`` when the pixels do not show the
    stated structure (e.g. no single hole)."""
    kind = puzzle.get("kind")
    grid = int(puzzle["grid"])
    if kind == "fill":
        answers = list(puzzle["options"])
        k = best_candidate(panels[puzzle["image"]], grid, [panels[puzzle["options"][a]] for a in answers])
        return None if k is None else answers[k]
    if kind == "place":
        answers = list(puzzle["options"])
        k, found = best_hole(panels[puzzle["image"]], grid, panels[puzzle["piece"]])
        return None if k is None or len(found) != len(answers) else answers[k]
    if kind == "arrange":
        answers = list(puzzle["options"])
        tiles = [panels[t] for t in puzzle["tiles"]]
        return answers[best_arrangement(tiles, grid, [list(puzzle["options"][a]) for a in answers])]
    raise ValueError(f"puzzle kind {kind!r}: allowed {', '.join(KINDS)}")
