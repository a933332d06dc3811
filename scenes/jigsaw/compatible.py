"""Hard missing-piece distractors that fit the hole: real crops of other pictures, or of
the same picture away from the hole, searched at every position for the ones whose outer
pixel lines best continue the lines around the hole, the generator's own measure of how a
piece fits (:func:`rim_costs`). A crop counts as a distractor only when its content
clearly differs from the true piece's (:func:`content_difference`, which forgives small
shifts, sensor grain and fine texture), so each item keeps one right answer.

All the work is tensor operations over whole stacks of pictures; no per-pixel Python.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

GAP = 1           # pixel lines skipped on each side of the hole's edge (rendering blends them)
WORK = 192        # pictures are searched at most at this size (area-averaged down), positions every STEP
STEP = 2
CLEAR = 10.0      # content difference (0..255) a distractor needs from the true piece
DISTINCT = 6.0    # content difference two distractors need from each other
REACH = 8         # shifts, in pixels at the working size, that content_difference forgives
SHORTLIST = 10    # pictures searched at the working size (the best by a quarter-size search)
OVERLAP = 0.25    # share of the hole a crop of the hole's own picture may cover
CANDIDATES = 24   # best-fitting clear crops among which likeness to the true piece also counts
LIKENESS = 2.0    # weight of the likeness rank against the fit rank
SEARCHED = 4096   # clear crops, best first, looked through for CANDIDATES from different places
CHUNK = 2         # pictures brought to the working size at a time


def working(stack: torch.Tensor, c: int) -> tuple[torch.Tensor, int]:
    """``(pictures, cw)``: ``stack [N,3,S,S]`` uint8 as float at the working size, where a
    ``c x c`` cell of the 3 x 3 grid is ``cw = c // factor`` pixels (``factor`` the smallest
    integer that brings ``S`` to :data:`WORK` or below): ``[N,3,S',S']``, area-averaged,
    ``S' = round(S * cw / c)``, so every cell keeps its exact place and size (map positions
    with :func:`to_work` and :func:`from_work`)."""
    S = stack.shape[-1]
    cw = c // max(1, -(-S // WORK))
    side = round(S * cw / c)
    if side == S:
        return stack.float(), cw

    def pool(x):      # an integer factor pools as before (adaptive pooling can differ in the last bit)
        return F.avg_pool2d(x, S // side) if S % side == 0 else F.adaptive_avg_pool2d(x, side)
    # a few pictures at a time: their float copy stays in the processor's cache
    return torch.cat([pool(stack[k:k + CHUNK].float()) for k in range(0, len(stack), CHUNK)]), cw


def to_work(v: int, c: int, cw: int) -> int:
    """A position ``v`` in pixels of the stack, in pixels of :func:`working` (cells ``c`` ->
    ``cw`` pixels): an ``int``, exact on the grid's cell corners."""
    return round(v * cw / c)


def from_work(v: int, c: int, cw: int) -> int:
    """A position ``v`` in pixels of :func:`working` (cells ``cw`` pixels), in pixels of the
    stack (cells ``c``): an ``int``, the inverse of :func:`to_work` on the grid."""
    return round(v * c / cw)


def rim(img: torch.Tensor, y: int, x: int, c: int) -> dict[str, torch.Tensor]:
    """The pixel lines facing the ``c x c`` hole at ``(y, x)`` of ``img [3,S,S]`` (float), one
    per side that has a neighbour, :data:`GAP` lines out: ``{"top"|"bottom"|"left"|"right":
    [3, c]}``."""
    S = img.shape[-1]
    out = {}
    if y - 1 - GAP >= 0:
        out["top"] = img[:, y - 1 - GAP, x:x + c]
    if y + c + GAP < S:
        out["bottom"] = img[:, y + c + GAP, x:x + c]
    if x - 1 - GAP >= 0:
        out["left"] = img[:, y:y + c, x - 1 - GAP]
    if x + c + GAP < S:
        out["right"] = img[:, y:y + c, x + c + GAP]
    return out


def rim_costs(stack: torch.Tensor, lines: dict[str, torch.Tensor], c: int, step: int = STEP) -> torch.Tensor:
    """How badly the ``c x c`` crop at each position continues ``lines`` (from :func:`rim`):
    the mean absolute difference (0..255) between each side's line and the crop's own line
    :data:`GAP` in, averaged over sides. ``stack [N,3,S,S]`` float -> ``[N, ny, nx]`` for
    crops at ``(k * step, l * step)``."""
    S = stack.shape[-1]
    pos = torch.arange(0, S - c + 1, step)
    inner = {"top": GAP, "bottom": c - 1 - GAP, "left": GAP, "right": c - 1 - GAP}
    total = torch.zeros(stack.shape[0], len(pos), len(pos))
    for side, line in lines.items():
        if side in ("top", "bottom"):
            own = stack[:, :, pos + inner[side], :].unfold(3, c, step)      # [N,3,ny,nx,c]
        else:
            own = stack[:, :, :, pos + inner[side]].unfold(2, c, step)      # [N,3,ny,nx,c]
        total += (own - line[None, :, None, None, :]).abs_().mean((1, 4))
    return total / max(1, len(lines))


def _smooth(patches: torch.Tensor) -> torch.Tensor:
    """``patches [K,3,c,c]`` float averaged over 4 x 4 blocks: what content looks like
    without grain and fine texture."""
    return F.avg_pool2d(patches, 4)


def content_difference(patches: torch.Tensor, other: torch.Tensor, reach: int = REACH) -> torch.Tensor:
    """How clearly each of ``patches [K,3,c,c]`` differs in content from ``other [3,c,c]``:
    the smallest mean absolute difference (0..255) of their block-averaged copies over
    shifts of up to ``reach`` pixels (compared where they overlap): ``[K]``."""
    a, b = _smooth(patches.float()), _smooth(other.float()[None])
    n, r = a.shape[-1], max(0, reach // 4)
    if a.shape[0] == 0:
        return torch.zeros(0)
    shifted = F.pad(a, (r, r, r, r), value=float("nan")).unfold(2, n, 1).unfold(3, n, 1)   # [K,3,s,s,n,n]
    return (shifted - b[:, :, None, None]).abs_().nanmean((1, 4, 5)).flatten(1).amin(1)


def _crops(pictures: torch.Tensor, picks: list[tuple[int, int, int]], c: int) -> torch.Tensor:
    """The ``c x c`` crops ``[K,3,c,c]`` of ``pictures`` at ``picks`` = ``(picture, y, x)``."""
    return torch.stack([pictures[j, :, y:y + c, x:x + c] for j, y, x in picks])


def overlap(n: int, y: int, x: int, c: int) -> torch.Tensor:
    """Share of the ``c x c`` hole at ``(y, x)`` that the crop at each of ``n x n`` search
    positions (every :data:`STEP` pixels) covers: ``[n, n]``."""
    pos = torch.arange(n) * STEP
    rows = (c - (pos - y).abs()).clamp(min=0) / c
    cols = (c - (pos - x).abs()).clamp(min=0) / c
    return rows[:, None] * cols[None, :]


def shortlist(work: torch.Tensor, truth: int, y: int, x: int, c: int, keep: int = SHORTLIST) -> list[int]:
    """The ``keep`` pictures of ``work [N,3,S,S]`` (float, working size) holding the crops that
    best continue the hole, judged at a quarter of the size: indices, best first."""
    small = F.avg_pool2d(work, 4)
    q = c // 4
    best = rim_costs(small, rim(small[truth], y // 4, x // 4, q), q, step=1).flatten(1).amin(1)
    return best.argsort(stable=True)[:keep].tolist()


def difference_map(work: torch.Tensor, true_piece: torch.Tensor, reach: int = REACH) -> torch.Tensor:
    """How clearly the crop at each search position of ``work [N,3,S,S]`` (float) differs in
    content from ``true_piece [3,c,c]``: the smallest mean absolute difference (0..255) of
    4 x 4 block averages between the true piece and any crop within ``reach`` pixels of it
    (so a copy shifted a little, or with other grain, counts as the same): ``[N, n, n]``,
    positions every :data:`STEP` pixels."""
    c = true_piece.shape[-1]
    n = (work.shape[-1] - c) // STEP + 1
    t = F.avg_pool2d(true_piece[None], 4)[0]                      # [3, m, m]
    span, m = 4 // STEP, t.shape[-1]
    maps = []
    for picture in F.avg_pool2d(work, 4, stride=STEP):              # block at (STEP*u, STEP*v) -> [3, u, v]
        win = picture.unfold(1, span * (m - 1) + 1, 1).unfold(2, span * (m - 1) + 1, 1)[..., ::span, ::span]
        maps.append((win[:, :n, :n] - t[:, None, None]).abs_().mean((0, 3, 4)))
    k = reach // STEP
    return -F.max_pool2d(-torch.stack(maps)[:, None], 2 * k + 1, 1, k)[:, 0]


def candidates(work: torch.Tensor, truth: int, y: int, x: int, c: int, want: int) -> list[tuple[int, int, int]]:
    """Up to ``want`` crops ``(picture, y, x)`` of ``work [N,3,S,S]`` (float, working size), in
    order of how well they continue the ``c x c`` hole at ``(y, x)`` of picture ``truth``
    (:func:`rim_costs`), whose content clearly differs from the true piece
    (:func:`difference_map` at least :data:`CLEAR`); crops of the picture itself leave most
    of the hole uncovered (:data:`OVERLAP`), and no two come from nearly the same place of
    one picture. Searched on the :func:`shortlist`."""
    ids = shortlist(work, truth, y, x, c)
    costs = rim_costs(work[ids], rim(work[truth], y, x, c), c)
    n = costs.shape[-1]
    costs[difference_map(work[ids], work[truth, :, y:y + c, x:x + c]) < CLEAR] = float("inf")
    if truth in ids:
        costs[ids.index(truth)][overlap(n, y, x, c) > OVERLAP] = float("inf")
    order = costs.flatten().argsort(stable=True)[:int(costs.isfinite().sum())]
    out: list[tuple[int, int, int]] = []
    for v in order[:SEARCHED].tolist():
        j, r = divmod(v, n * n)
        j, py, px = ids[j], (r // n) * STEP, (r % n) * STEP
        if not any(j == a and abs(py - ay) < c // 2 and abs(px - ax) < c // 2 for a, ay, ax in out):
            out.append((j, py, px))
            if len(out) == want:
                break
    return out


def choose(stack: torch.Tensor, truth: int, y: int, x: int, c: int, features=None,
           k: int = 3) -> list[tuple[int, int, int]]:
    """The ``k`` hard distractors for the ``c x c`` hole at ``(y, x)`` of picture ``truth`` of
    ``stack [N,3,S,S]`` uint8: of the :data:`CANDIDATES` best :func:`candidates`, those first
    whose ranks by fit and by likeness to the true piece (``features``: ``[K,3,h,w]`` uint8
    -> ``[K,D]`` unit vectors; fit alone without it, likeness weighted :data:`LIKENESS`) sum
    lowest, each differing from those taken before (:data:`DISTINCT`). Returns ``(picture,
    y, x)`` in pixels of ``stack``; fewer than ``k`` when the stack holds no more."""
    work, cw = working(stack, c)
    yw, xw = to_work(y, c, cw), to_work(x, c, cw)
    found = candidates(work, truth, yw, xw, cw, CANDIDATES)
    if not found:
        return []
    H, W = stack.shape[-2:]

    def up(p):                  # a working-size position in pixels of ``stack``, the crop kept inside
        j, py, px = p
        return j, min(from_work(py, c, cw), H - c), min(from_work(px, c, cw), W - c)
    rank = torch.arange(len(found), dtype=torch.float32)
    if features is not None:
        full = torch.stack([stack[j, :, py:py + c, px:px + c] for j, py, px in map(up, found)])
        sim = features(full) @ features(stack[truth, :, y:y + c, x:x + c][None])[0]
        rank = rank + LIKENESS * torch.argsort(torch.argsort(-sim, stable=True), stable=True).float()
    out: list[tuple[int, int, int]] = []
    for m in torch.argsort(rank, stable=True).tolist():
        patch = _crops(work, [found[m]], cw)[0]
        if out and float(content_difference(_crops(work, out, cw), patch).min()) < DISTINCT:
            continue
        out.append(found[m])
        if len(out) == k:
            break
    return [up(p) for p in out]
