"""How well pieces continue the picture around them, for the generator: ranking hard
distractors by how they fit a hole, and keeping only localization and order items whose
true arrangement is strictly the most continuous (so no item has a second defensible
answer). Costs are :func:`kernels.tiles.seam_cost` on the tiles' outer pixel lines.
"""
from __future__ import annotations

import functools
import itertools
import math

import torch

from kernels import tiles as T

from . import sources

STRICT = 0.8   # the true arrangement's cost must be below this share of every alternative's
PERMUTATIONS = [list(p) for p in itertools.permutations(range(4))]


SCALES = (1, 2, 4)   # the picture as given, at half and at quarter size: an item must have one answer at each


def views(img: torch.Tensor) -> list[torch.Tensor]:
    """``img [3,S,S]`` at each of :data:`SCALES` (area-averaged), uint8: a placement judged
    at one pixel scale can tie at another (a thin line along a seam), and a puzzle is shown
    at any size."""
    return [img if s == 1 else torch.nn.functional.avg_pool2d(img[None].float(), s)[0].round().to(torch.uint8)
            for s in SCALES]


def tile_borders(img: torch.Tensor, grid: int) -> torch.Tensor:
    """Borders of the ``grid x grid`` cells of ``img [3,S,S]``: ``[grid*grid, 4, 2, 3, S/grid]``
    int16 (see :func:`kernels.tiles.borders`)."""
    return T.borders(T.split(img[None], grid, grid)[0]).to(torch.int16)


@functools.lru_cache(maxsize=8192)
def cell_borders(images_setting: str, size: int, i: int) -> torch.Tensor:
    """:func:`tile_borders` of the 3x3 cells of image ``i`` of a source, computed once per
    image and process (small: two pixel lines per side)."""
    return tile_borders(sources.source_for(images_setting, size)[i], 3)


def facing(borders: torch.Tensor, grid: int, cell: int, skip=()) -> list[tuple[int, torch.Tensor]]:
    """``(side, neighbour's facing border [2,3,L])`` for each side of ``cell`` whose neighbour
    is inside the grid and not in ``skip``; ``borders``: ``[grid*grid, 4, 2, 3, L]``."""
    r, c = divmod(cell, grid)
    out = []
    for side, (dr, dc) in zip((T.TOP, T.RIGHT, T.BOTTOM, T.LEFT), ((-1, 0), (0, 1), (1, 0), (0, -1))):
        rr, cc = r + dr, c + dc
        n = rr * grid + cc
        if 0 <= rr < grid and 0 <= cc < grid and n not in skip:
            out.append((side, borders[n, T.OPPOSITE[side]]))
    return out


def fit_cost(pieces: torch.Tensor, sides: list[tuple[int, torch.Tensor]]) -> torch.Tensor:
    """Mean seam cost of each piece in a hole with neighbours ``sides`` (from :func:`facing`):
    ``pieces`` ``[N, 4, 2, 3, L]`` borders -> ``[N]`` (``inf`` when the hole has no neighbour)."""
    if not sides:
        return torch.full((pieces.shape[0],), math.inf)
    return torch.stack([T.seam_cost(pieces[:, s], b) for s, b in sides]).mean(0)


def placement_costs(borders: torch.Tensor, grid: int, holes: list[int], piece: torch.Tensor) -> torch.Tensor:
    """Cost of putting ``piece`` (borders ``[4,2,3,L]``) in each of ``holes`` of a picture whose
    cells have ``borders``, against the neighbours that are not holes: ``[len(holes)]``."""
    return torch.cat([fit_cost(piece[None], facing(borders, grid, h, skip=set(holes))) for h in holes])


def arrangement_costs(borders: torch.Tensor) -> torch.Tensor:
    """Total seam cost of each of the 24 ways of placing 2x2 tiles (``borders [4,4,2,3,L]``):
    ``[24]``, entry ``k`` for tile ``PERMUTATIONS[k][r]`` at cell ``r`` (entry 0: the picture)."""
    ab = torch.stack([T.seam_cost(borders[a, T.RIGHT], borders[:, T.LEFT]) for a in range(4)])   # a left of b
    tb = torch.stack([T.seam_cost(borders[a, T.BOTTOM], borders[:, T.TOP]) for a in range(4)])   # a above b
    return torch.tensor([float(ab[p[0], p[1]] + ab[p[2], p[3]] + tb[p[0], p[2]] + tb[p[1], p[3]])
                         for p in PERMUTATIONS])


def strictly_best(costs: torch.Tensor, true: int) -> bool:
    """Whether entry ``true`` of ``costs`` is finite and below :data:`STRICT` times every other."""
    others = torch.cat([costs[:true], costs[true + 1:]])
    return bool(math.isfinite(float(costs[true]))) and bool((costs[true] < STRICT * others).all())


@functools.lru_cache(maxsize=8192)
def order_is_unique(images_setting: str, size: int, i: int) -> bool:
    """Whether image ``i``'s own arrangement of its quarters is strictly the most continuous
    of all 24 at every scale (so an order item on it has one defensible answer)."""
    img = sources.source_for(images_setting, size)[i]
    return all(strictly_best(arrangement_costs(tile_borders(v, 2)), 0) for v in views(img))


def place_is_unique(borders: list[torch.Tensor], grid: int, holes: list[int], pick: int) -> bool:
    """Whether the piece from ``holes[pick]`` continues its neighbours there strictly better
    than in any other hole, at every scale (``borders``: :func:`tile_borders` of each of
    :func:`views`)."""
    return all(strictly_best(placement_costs(b, grid, holes, b[holes[pick]]), pick) for b in borders)
