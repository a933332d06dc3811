"""Percept-V domains on grids: cell contents, labelled coordinates, paths and a maze."""
from __future__ import annotations

from collections import deque

import numpy as np

from engine.placement import PlacementError
from engine.scene import Scene

from .common import BASIC, WHITE, Form, domain, pick, shape

K = 6                                # the 6x6 grids


def _grid(s: Scene, x0: float, y0: float, cell: float, k: int = K, width: float = 0.003) -> None:
    for i in range(k + 1):
        s.line((x0, y0 + i * cell), (x0 + k * cell, y0 + i * cell), width=width, color=(0, 0, 0))
        s.line((x0 + i * cell, y0), (x0 + i * cell, y0 + k * cell), width=width, color=(0, 0, 0))


def _right_of_triangle(tri, circ) -> bool:
    return any(c in tri and c % K < K - 1 and c + 1 in circ for c in range(K * K))


def _no_pair(tri: set, circ: set) -> tuple[set, set]:
    """The layout with every triangle that has a circle on its right swapped with that
    circle, until no such pair is left (the answer NO)."""
    grid = [2 if c in tri else 0 if c in circ else 1 for c in range(K * K)]
    changed = True
    while changed:
        changed = False
        for c in range(K * K):
            if c % K < K - 1 and grid[c] == 2 and grid[c + 1] == 0:
                grid[c], grid[c + 1] = 0, 2
                changed = True
    return {c for c in range(K * K) if grid[c] == 2}, {c for c in range(K * K) if grid[c] == 0}


def _swap_one(rng, tri: set, circ: set) -> tuple[set, set]:
    """A NO layout made YES by swapping one circle with the triangle on its right: both
    answers then come from the same kind of layout, so where the shapes sit does not tell
    the answer (the minimal pair of a NO layout)."""
    pairs = [c for c in sorted(circ) if c % K < K - 1 and c + 1 in tri]
    if not pairs:
        raise PlacementError("no circle with a triangle on its right to swap")
    c = pairs[int(rng.integers(len(pairs)))]
    return (tri - {c + 1}) | {c}, (circ - {c}) | {c + 1}


@domain("circle_right_triangle", "single", "SR", 35, Form("single", item="word", case="upper", vocab=("yes", "no")),
        fixes="labels are unbalanced (at large sizes almost always YES); fixed: NO on odd instances, and on even "
              "ones the same kind of layout with one circle and triangle swapped to make YES")
def circle_right_triangle(rng, n, instance, fixed=False):
    """A 6x6 grid with n circles and min(n, 36-n) triangles: is a circle right of a triangle?"""
    t = min(n, K * K - n)
    if not fixed:
        cells = [int(c) for c in rng.permutation(K * K)]
        tri, circ = set(cells[:t]), set(cells[t:t + n])
    else:
        # a circle and a triangle side by side, in either order, and the rest at random: once
        # sorted into NO, the layout keeps a circle with a triangle on its right to swap
        c = int(rng.integers(K)) * K + int(rng.integers(K - 1))
        first, second = (c, c + 1) if rng.random() < 0.5 else (c + 1, c)
        rest = [int(x) for x in rng.permutation(K * K) if x not in (c, c + 1)]
        tri, circ = {first, *rest[:t - 1]}, {second, *rest[t - 1:t - 1 + n - 1]}
        tri, circ = _no_pair(tri, circ)
        if instance % 2 == 0:
            tri, circ = _swap_one(rng, tri, circ)
    s = Scene(background=WHITE)
    x0, cell = 0.08, 0.14
    s.text("Grid of Circles and Triangles", (0.5, 0.04), height=0.035, color=(0, 0, 0))
    _grid(s, x0, x0, cell)
    for k in range(K + 1):
        s.text(str(k), (x0 + k * cell, x0 + K * cell + 0.025), height=0.025, color=(0, 0, 0))
        s.text(str(K - k), (x0 - 0.025, x0 + k * cell), height=0.025, color=(0, 0, 0))
    for c in range(K * K):
        r, col = divmod(c, K)
        centre = (x0 + (col + 0.5) * cell, x0 + (r + 0.5) * cell)
        if c in circ:
            shape(s, "circle", centre, 0.4 * cell, (31, 119, 180), outline=(0, 0, 0), stroke=0.002)
        elif c in tri:
            shape(s, "triangle", (centre[0], centre[1] + 0.05 * cell), 0.4 * cell, (214, 39, 40), outline=(0, 0, 0),
                  stroke=0.002)
    yes = _right_of_triangle(tri, circ)
    return s, "yes" if yes else "no", {"triangles": sorted(tri), "circles": sorted(circ)}


@domain("cross_and_knots", "fixed", "SR", 36, Form("fixed", item="cell"))
def cross_and_knots(rng, n, instance):
    """A labelled 6x6 grid with n X's; any cell with no X in it or next to it (or None)."""
    xs = set(int(c) for c in rng.choice(K * K, n, replace=False))
    s = Scene(background=WHITE)
    x0, cell = 0.05, 0.15
    _grid(s, x0, x0, cell)
    safe = []
    for c in range(K * K):
        r, col = divmod(c, K)
        centre = (x0 + (col + 0.5) * cell, x0 + (r + 0.5) * cell)
        if c in xs:
            s.text("X", centre, height=0.09, color=(0, 0, 0))
            continue
        s.text(f"({r},{col})", centre, height=0.03, color=(0, 0, 255))
        near = [(r + dr, col + dc) for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1))]
        if not any(0 <= a < K and 0 <= b < K and a * K + b in xs for a, b in near):
            safe.append(f"({r},{col})")
    return s, safe[0] if safe else "None", {"crosses": sorted(xs), "accepted": safe or ["None"]}


GRID_SHAPES = ("circle", "square", "triangle")
ARROWS = {(0, 1): "→", (1, 0): "↓", (0, -1): "←", (-1, 0): "↑"}


@domain("grid_path", "list", "SM", 36, Form("list", ("SHAPES",), item="word", sep=" , ", vocab=GRID_SHAPES, space=True))
def grid_path(rng, n, instance):
    """A 6x6 grid of shapes with a drawn path of length n from S to E: the shapes along it."""
    kinds = [[pick(rng, GRID_SHAPES) for _ in range(K)] for _ in range(K)]
    cols = [[pick(rng, ["red", "green", "blue", "purple"]) for _ in range(K)] for _ in range(K)]
    path = [(int(rng.integers(K)), int(rng.integers(K)))]
    while len(path) < n:
        r, c = path[-1]
        nxt = [(r + dr, c + dc) for dr, dc in ARROWS if 0 <= r + dr < K and 0 <= c + dc < K and (r + dr, c + dc) not in path]
        if not nxt:
            break
        path.append(nxt[int(rng.integers(len(nxt)))])
    s = Scene(background=WHITE)
    x0, cell = 0.02, 0.96 / K
    _grid(s, x0, x0, cell)
    ctr = lambda rc: (x0 + (rc[1] + 0.5) * cell, x0 + (rc[0] + 0.5) * cell)  # noqa: E731
    for r in range(K):
        for c in range(K):
            shape(s, kinds[r][c], ctr((r, c)), 0.38 * cell, BASIC[cols[r][c]], flip=kinds[r][c] == "triangle")
    for a, b in zip(path, path[1:]):
        s.line(ctr(a), ctr(b), width=0.006, color=(0, 0, 0))
        mid = ((ctr(a)[0] + ctr(b)[0]) / 2, (ctr(a)[1] + ctr(b)[1]) / 2 - 0.045 * cell)
        s.text(ARROWS[(b[0] - a[0], b[1] - a[1])], mid, height=0.55 * cell, color=(0, 0, 0))   # the reference: cell / 2
    s.text("S", ctr(path[0]), height=0.35 * cell, color=(0, 0, 0))
    s.text("E", ctr(path[-1]), height=0.35 * cell, color=(0, 0, 0))
    return s, [kinds[r][c] for r, c in path], {"path": [list(p) for p in path]}


def _labelled(rng, n, others):
    s = Scene(background=WHITE)
    x0, cell = 0.06, 0.92 / K
    _grid(s, x0, x0, cell)
    for k in range(K):
        s.text(str(k + 1), (x0 + (k + 0.5) * cell, x0 / 2), height=0.035, color=(0, 0, 0))
        s.text(str(k + 1), (x0 / 2, x0 + (k + 0.5) * cell), height=0.035, color=(0, 0, 0))
    green = set(int(c) for c in rng.choice(K * K, n, replace=False))
    for c in range(K * K):
        r, col = divmod(c, K)
        centre = (x0 + (col + 0.5) * cell, x0 + (r + 0.5) * cell)
        if c in green:
            shape(s, "circle", centre, 0.42 * cell, BASIC["green"])
        else:
            kind, colour = others()
            shape(s, kind, centre, 0.42 * cell, BASIC[colour], flip=kind == "triangle")
    return s, sorted(f"({c // K + 1} {c % K + 1})" for c in green), {"green": sorted(green)}


CELLS = Form("set", item="cell", sep=" ")


@domain("locate_circles_colour", "set", "D,FG", 36, CELLS)
def locate_circles_colour(rng, n, instance):
    """A numbered 6x6 grid of circles; the cells of the n green ones."""
    return _labelled(rng, n, lambda: ("circle", pick(rng, ["red", "blue", "purple", "yellow"])))


@domain("locate_circles_shape", "set", "D,FG", 36, CELLS)
def locate_circles_shape(rng, n, instance):
    """A numbered 6x6 grid of green shapes; the cells of the n circles."""
    return _labelled(rng, n, lambda: (pick(rng, ["square", "triangle"]), "green"))


MAZE = 11


@domain("maze_solving", "list", "SR", 49, Form("list", item="label"),
        fixes="cells are numbered in the order the maze was dug, so the path is usually S, 2, ..., n-1, E; "
              "fixed: the same mazes with the open cells numbered at random")
def maze_solving(rng, n, instance, fixed=False):
    """An 11x11 maze with numbered open cells; the path from S to the cell numbered n (E)."""
    open_ = {}
    start = (2 * int(rng.integers(5)) + 1, 2 * int(rng.integers(5)) + 1)
    open_[start] = 1
    stack = [start]
    while stack:
        r, c = stack[-1]
        dirs = [(0, 2), (2, 0), (0, -2), (-2, 0)]
        rng.shuffle(dirs)
        for dr, dc in dirs:
            nr, nc = r + dr, c + dc
            if 1 <= nr < MAZE - 1 and 1 <= nc < MAZE - 1 and (nr, nc) not in open_:
                open_[(r + dr // 2, c + dc // 2)] = len(open_) + 1
                open_[(nr, nc)] = len(open_) + 1
                stack.append((nr, nc))
                break
        else:
            stack.pop()
    end = next(p for p, k in open_.items() if k == n)
    shown = dict(open_)
    if fixed:                      # the dug order stays (it sets E), the numbers shown do not follow it
        others = [p for p in open_ if p != start]
        shown.update(zip(others, (int(v) for v in rng.permutation(np.arange(2, len(open_) + 1)))))
    labels = {p: ("S" if p == start else "E" if p == end else str(shown[p])) for p in open_}
    prev = {start: None}
    q = deque([start])
    while q:
        p = q.popleft()
        for dr, dc in ((0, 1), (1, 0), (0, -1), (-1, 0)):
            nb = (p[0] + dr, p[1] + dc)
            if nb in open_ and nb not in prev:
                prev[nb] = p
                q.append(nb)
    path, p = [], end
    while p is not None:
        path.append(labels[p])
        p = prev[p]
    path = path[::-1] if end != start else ["S"]
    s = Scene(background=(0, 0, 0))
    cell = 1.0 / MAZE
    for (r, c), k in open_.items():
        centre = ((c + 0.5) * cell, (r + 0.5) * cell)
        s.square(centre, cell * 0.98, color=WHITE)
        lab = labels[(r, c)]
        s.text(lab, centre, height=cell * (0.55 if lab in ("S", "E") else 0.45),
               color=(0, 0, 0) if lab in ("S", "E") else (0, 0, 255))
    return s, path, {"start": list(start), "end": list(end), "open": len(open_)}
