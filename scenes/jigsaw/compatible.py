"""Hard missing-piece distractors that fit the hole: real crops of other pictures, or of
the same picture away from the hole, searched at every position for the ones whose outer
pixel lines best continue the lines around the hole, the generator's own measure of how a
piece fits (:func:`rim_costs`). A crop counts as a distractor only when its content
clearly differs from the true piece's (:func:`content_difference`, which forgives small
shifts, sensor grain and fine texture), so each item keeps one right answer.

How well a piece continues the hole must not single out the true piece (:func:`ranked`):
neither the best fit, nor any fixed rank, nor the fit nearest to how much the picture itself
varies around the hole. The true piece's rim cost is, relative to that variation
(:func:`natural`), one draw of how a real continuation relates to its surroundings; the
other cells of the same picture give more such draws (:func:`ratios`), and each
distractor, a clearly different crop, is seamlessly cloned into the hole (the harmonic
correction of Poisson image editing, :func:`seam_field`) just enough to land at the hole's
variation times another of them (:func:`targets`), so the four costs are exchangeable
(costs are judged :func:`soft`, as lines look once resampled for display).

All the work is tensor operations over whole stacks of pictures; no per-pixel Python.
"""
from __future__ import annotations

import functools

import torch
import torch.nn.functional as F

GAP = 1           # pixel lines skipped on each side of the hole's edge (rendering blends them)
WORK = 192        # 3 x 3 pictures are searched at most at this size (area-averaged down), positions every STEP
STEP = 2
CLEAR = 10.0      # content difference (0..255) a distractor needs from the true piece
DISTINCT = 6.0    # content difference two distractors need from each other
REACH = 8         # shifts, in pixels at the working size, that content_difference forgives
SHORTLIST = 10    # pictures searched at the working size (the best by a quarter-size search)
OVERLAP = 0.25    # share of the hole a crop of the hole's own picture may cover
CANDIDATES = 24   # best-fitting clear crops among which likeness to the true piece also counts
LIKENESS = 2.0    # weight of the likeness rank against the fit rank
SEARCHED = 4096   # clear crops, best first, looked through for CANDIDATES from different places
NATURAL = 3       # pixels between the two lines outside a cell whose difference is how much the picture itself varies
FLOOR = 0.5       # least natural variation (0..255) a cost is divided by
JITTER = 0.05     # the largest change of a drawn cost ratio, on a log scale
TOLERANCE = (0.5, 0.08)  # how far (0..255, or this share of it, the larger) a dialled cost may miss its target
DIAL = 10         # steps of the seamless-cloning share tried, coarse then fine
SOFT = 0.7        # pixels of smoothing under which distractors are dialled (display resampling)


def working(stack: torch.Tensor, c: int) -> tuple[torch.Tensor, int]:
    """``(pictures, cw)``: ``stack [N,3,S,S]`` uint8 as float at the working size, where a
    ``c x c`` cell is ``cw = min(c, WORK // 3)`` pixels: ``[N,3,S',S']``, area-averaged,
    ``S' = round(S * cw / c)``, so that the cells of a 3 x 3 grid keep their exact places."""
    cw = min(c, WORK // 3)
    x = stack.float()
    return (x, c) if cw == c else (F.adaptive_avg_pool2d(x, round(stack.shape[-1] * cw / c)), cw)


def shrink(pieces: torch.Tensor, cw: int) -> torch.Tensor:
    """``pieces [K,3,C,C]`` (float) area-averaged to ``[K,3,cw,cw]``, as :func:`working`
    shrinks their pictures."""
    return pieces if pieces.shape[-1] == cw else F.adaptive_avg_pool2d(pieces, cw)


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
        total += (own - line[None, :, None, None, :]).abs().mean((1, 4))
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
    return (shifted - b[:, :, None, None]).abs().nanmean((1, 4, 5)).flatten(1).amin(1)


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
        maps.append((win[:, :n, :n] - t[:, None, None]).abs().mean((0, 3, 4)))
    k = reach // STEP
    return -F.max_pool2d(-torch.stack(maps)[:, None], 2 * k + 1, 1, k)[:, 0]


def clear_costs(work: torch.Tensor, truth: int, y: int, x: int, c: int) -> tuple[list[int], torch.Tensor]:
    """``(ids, costs)``: the :func:`shortlist` of ``work [N,3,S,S]`` (float, working size) for
    the ``c x c`` hole at ``(y, x)`` of picture ``truth`` and the :func:`rim_costs` of their
    crops ``[len(ids), n, n]`` (pictures :func:`soft`), ``inf`` where the content does not clearly differ from the
    true piece (:func:`difference_map` under :data:`CLEAR`) and where a crop of the picture
    itself covers over :data:`OVERLAP` of the hole."""
    ids = shortlist(work, truth, y, x, c)
    costs = rim_costs(soft(work[ids]), rim(soft(work[truth][None])[0], y, x, c), c)
    n = costs.shape[-1]
    costs[difference_map(work[ids], work[truth, :, y:y + c, x:x + c]) < CLEAR] = float("inf")
    if truth in ids:
        costs[ids.index(truth)][overlap(n, y, x, c) > OVERLAP] = float("inf")
    return ids, costs


def places(ids: list[int], costs: torch.Tensor, c: int, want: int, floor: float = 0.0) -> list[tuple[int, int, int]]:
    """Up to ``want`` crops ``(picture, y, x)`` in order of ``costs`` (from :func:`clear_costs`),
    none under ``floor``, no two from nearly the same place of one picture."""
    n = costs.shape[-1]
    costs = costs.masked_fill(costs < floor, float("inf"))
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


def candidates(work: torch.Tensor, truth: int, y: int, x: int, c: int, want: int) -> list[tuple[int, int, int]]:
    """Up to ``want`` crops ``(picture, y, x)`` of ``work [N,3,S,S]`` (float, working size), in
    order of how well they continue the ``c x c`` hole at ``(y, x)`` of picture ``truth``
    (:func:`rim_costs`), whose content clearly differs from the true piece
    (:func:`difference_map` at least :data:`CLEAR`); crops of the picture itself leave most
    of the hole uncovered (:data:`OVERLAP`), and no two come from nearly the same place of
    one picture. Searched on the :func:`shortlist`."""
    return places(*clear_costs(work, truth, y, x, c), c, want)


def _ordered(stack: torch.Tensor, found: list[tuple[int, int, int]], truth: int, y: int, x: int, c: int,
             up, features=None) -> list[tuple[int, int, int]]:
    """``found`` (working-size ``(picture, y, x)``, best fit first) reordered by the sum of their
    ranks by fit and by likeness to the true piece of ``stack [N,3,S,S]`` uint8 (``features``:
    ``[K,3,h,w]`` uint8 -> ``[K,D]`` unit vectors; fit alone without it, likeness weighted
    :data:`LIKENESS`); ``up`` maps a working-size position to pixels of ``stack``."""
    rank = torch.arange(len(found), dtype=torch.float32)
    if features is not None and found:
        full = torch.stack([stack[j, :, py:py + c, px:px + c] for j, py, px in map(up, found)])
        sim = features(full) @ features(stack[truth, :, y:y + c, x:x + c][None])[0]
        rank = rank + LIKENESS * torch.argsort(torch.argsort(-sim, stable=True), stable=True).float()
    return [found[m] for m in torch.argsort(rank, stable=True).tolist()]


@functools.lru_cache(maxsize=8)
def _sines(m: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``(S, lam)``: the orthonormal sine transform ``[m, m]`` (its own inverse) and the
    eigenvalues ``[m]`` of the 1-D second difference with zero ends."""
    k = torch.arange(1, m + 1, dtype=torch.float64)
    S = (2 / (m + 1)) ** 0.5 * torch.sin(torch.pi * k[:, None] * k[None, :] / (m + 1))
    return S.float(), (2 - 2 * torch.cos(torch.pi * k / (m + 1))).float()


def harmonic(ring: torch.Tensor, w: int) -> torch.Tensor:
    """``ring [K,3,c,c]`` (float) kept in its outer ``w`` pixels, the inside replaced by the
    harmonic function (discrete Laplace equation) that meets it there, solved exactly with
    sine transforms: ``[K,3,c,c]``. What seamless cloning adds to a pasted patch."""
    c = ring.shape[-1]
    m = c - 2 * w
    out = ring.clone()
    if m <= 0:
        return out
    S, lam = _sines(m)
    b = torch.zeros(*ring.shape[:2], m, m)
    b[..., 0, :] += ring[..., w - 1, w:c - w]
    b[..., -1, :] += ring[..., c - w, w:c - w]
    b[..., :, 0] += ring[..., w:c - w, w - 1]
    b[..., :, -1] += ring[..., w:c - w, c - w]
    out[..., w:c - w, w:c - w] = S @ ((S @ b @ S) / (lam[:, None] + lam[None, :])) @ S
    return out


def seam_field(piece: torch.Tensor, lines: dict[str, torch.Tensor], cw: int) -> torch.Tensor:
    """The correction that makes ``piece [3,C,C]`` (float) continue ``lines`` (from :func:`rim`
    at the working size, cells ``cw`` pixels) by :func:`rim_costs`: each side's difference
    between its line and the piece's own line :data:`GAP` in (at the working size, stretched
    along the side to ``C``) fills the outer ``(GAP + 1) * C / cw`` pixels of that side
    (averaged where two sides meet, nothing where a side has no neighbour), and the inside is
    its :func:`harmonic` extension: ``[3,C,C]``. At the working size, adding ``a`` times it
    scales the (unsmoothed) cost by ``1 - a``."""
    C = piece.shape[-1]
    small = shrink(piece[None], cw)[0]
    inner = {"top": GAP, "bottom": cw - 1 - GAP, "left": GAP, "right": cw - 1 - GAP}
    w = -(-(GAP + 1) * C // cw)
    total = torch.zeros(3, C, C)
    count = torch.zeros(1, C, C)
    for side, line in lines.items():
        own = small[:, inner[side], :] if side in ("top", "bottom") else small[:, :, inner[side]]
        d = F.interpolate((line - own)[None], size=C, mode="nearest")[0]              # [3, C]
        rows = {"top": slice(0, w), "bottom": slice(C - w, C)}.get(side)
        cols = {"left": slice(0, w), "right": slice(C - w, C)}.get(side)
        if rows is not None:
            total[:, rows, :] += d[:, None, :]
            count[:, rows, :] += 1
        else:
            total[:, :, cols] += d[:, :, None]
            count[:, :, cols] += 1
    return harmonic((total / count.clamp(min=1))[None], w)[0]


def soft(x: torch.Tensor) -> torch.Tensor:
    """``x [K,3,h,w]`` (float) smoothed by a Gaussian of :data:`SOFT` pixels (edges
    repeated): how lines look once a picture is resampled for display."""
    k = torch.arange(-2, 3, dtype=torch.float32)
    g = torch.exp(-k ** 2 / (2 * SOFT ** 2))
    g = (g / g.sum()).repeat(3, 1)
    x = F.pad(x, (2, 2, 2, 2), mode="replicate")
    x = F.conv2d(x, g.view(3, 1, 1, 5), groups=3)
    return F.conv2d(x, g.view(3, 1, 5, 1), groups=3)


def piece_costs(pieces: torch.Tensor, lines: dict[str, torch.Tensor], cw: int) -> torch.Tensor:
    """:func:`rim_costs` of each of ``pieces [K,3,C,C]`` (float) in the hole, judged at the
    working size (:func:`shrink` to ``cw``) and :func:`soft` (``lines`` from the :func:`soft`
    picture): ``[K]``."""
    return rim_costs(soft(shrink(pieces, cw)), lines, cw, step=cw)[:, 0, 0]


def dial(crop: torch.Tensor, field: torch.Tensor, lines: dict[str, torch.Tensor], cw: int,
         target: float) -> tuple[torch.Tensor, float]:
    """``(piece, cost)``: ``crop [3,C,C]`` (float) plus the share ``a`` in ``0..1`` of ``field``
    whose :func:`piece_costs` (rounded to uint8) comes nearest ``target``, found on a coarse
    grid of :data:`DIAL` steps and then a grid as fine around the best: ``piece`` is
    ``[3,C,C]`` uint8."""
    best = 0.5
    for width in (0.5, 1 / DIAL):
        a = (best + torch.linspace(-width, width, DIAL + 1)).clamp(0, 1)
        pieces = (crop[None] + a[:, None, None, None] * field[None]).round().clamp(0, 255)
        costs = piece_costs(pieces, lines, cw)
        k = int((costs - target).abs().argmin())
        best = float(a[k])
    return pieces[k].to(torch.uint8), float(costs[k])


def natural(img: torch.Tensor, y: int, x: int, c: int) -> float:
    """How much ``img [3,S,S]`` (float) itself changes just outside the ``c x c`` cell at
    ``(y, x)``: the mean absolute difference (0..255) between each side's :func:`rim` line and
    the line :data:`NATURAL` pixels further out, averaged over the sides that have both (0
    when none has)."""
    S, g, d = img.shape[-1], GAP, NATURAL
    v = []
    if y - 1 - g - d >= 0:
        v.append((img[:, y - 1 - g, x:x + c] - img[:, y - 1 - g - d, x:x + c]).abs().mean())
    if y + c + g + d < S:
        v.append((img[:, y + c + g, x:x + c] - img[:, y + c + g + d, x:x + c]).abs().mean())
    if x - 1 - g - d >= 0:
        v.append((img[:, y:y + c, x - 1 - g] - img[:, y:y + c, x - 1 - g - d]).abs().mean())
    if x + c + g + d < S:
        v.append((img[:, y:y + c, x + c + g] - img[:, y:y + c, x + c + g + d]).abs().mean())
    return float(torch.stack(v).mean()) if v else 0.0


def ratios(picture: torch.Tensor, y: int, x: int, c: int) -> torch.Tensor:
    """How a true continuation's rim cost relates to how much the picture varies around it:
    for each cell of the 3 x 3 ``picture [3,S,S]`` (float, working size, cells ``c`` pixels)
    other than the hole at ``(y, x)``, its own :func:`piece_costs` in its place over its
    :func:`natural` variation (both on the :func:`soft` picture, the variation at least
    :data:`FLOOR`): ``[8]``."""
    sp = soft(picture[None])[0]
    out = []
    for cell in range(9):
        cy, cx = (cell // 3) * c, (cell % 3) * c
        if (cy, cx) != (y, x):
            cost = float(piece_costs(picture[None, :, cy:cy + c, cx:cx + c], rim(sp, cy, cx, c), c)[0])
            out.append(cost / max(natural(sp, cy, cx, c), FLOOR))
    return torch.tensor(out)


def targets(variation: float, samples: torch.Tensor, draws: list[float]) -> list[float]:
    """The rim costs the three distractors are dialled to: ``variation`` (the hole's
    :func:`natural` variation) times three different ``samples [K]`` (:func:`ratios` of the
    other cells), picked by the order of ``draws[:K]``, each times a jitter of up to
    :data:`JITTER` (log scale) at ``draws[K:K + 3]`` (numbers in ``0..1``). The true piece's
    cost is the hole's variation times its own ratio, one more draw of the same kind, so
    the four costs are exchangeable: no rule on them (the lowest, any fixed rank, the one
    nearest the picture's own variation) singles out the true piece."""
    k = samples.shape[0]
    picked = torch.tensor(draws[:k]).argsort()[:3].tolist()
    base = max(variation, FLOOR)
    return [base * float(samples[m]) * float(torch.exp(torch.tensor(JITTER * (2 * u - 1))))
            for m, u in zip(picked, draws[k:k + 3])]


def near(cost: float, target: float) -> bool:
    """Whether a dialled ``cost`` is within :data:`TOLERANCE` of its ``target``."""
    return abs(cost - target) <= max(TOLERANCE[0], TOLERANCE[1] * target)


def _fill(stack: torch.Tensor, found: list, up, hole: dict, want: list, out: list) -> None:
    """Seamlessly clone the crops ``found`` (working-size ``(picture, y, x)``; ``up`` maps them
    to pixels of ``stack``) into the hole to the rim costs ``want`` still open (``None`` once
    filled), appending ``(slot, (picture, y, x, piece), look)`` to ``out`` for each crop that
    lands :func:`near` its slot's target and clearly differs from the true piece and the
    crops taken (``look``: its working-size copy). ``hole``: ``lines``, ``c`` (working size),
    ``C`` (in pixels of ``stack``) and ``look`` of the true piece."""
    lines, cw = hole["lines"], hole["c"]
    for p in found:
        j, py, px = up(p)
        crop = stack[j, :, py:py + hole["C"], px:px + hole["C"]].float()
        raw = float(piece_costs(crop[None], lines, cw)[0])
        slots = [k for k in range(3) if want[k] is not None and want[k] <= raw]
        field = seam_field(crop, lines, cw) if slots else None
        for k in slots:
            piece, cost = dial(crop, field, lines, cw, want[k])
            if not near(cost, want[k]):
                continue
            look = shrink(piece.float()[None], cw)[0]
            d = content_difference(torch.stack([hole["look"]] + [o[2] for o in out]), look)
            if float(d[0]) < CLEAR or float(d.min()) < DISTINCT:
                continue
            out.append((k, (j, py, px, piece), look))
            want[k] = None
            break
        if len(out) == 3:
            return


def ranked(stack: torch.Tensor, truth: int, y: int, x: int, c: int, draws: list[float],
           features=None) -> list[tuple[int, int, int, torch.Tensor]]:
    """Three hard distractors for the ``c x c`` hole at ``(y, x)`` of picture ``truth`` of
    ``stack [N,3,S,S]`` uint8 whose rim costs (:func:`piece_costs`) are drawn as the true
    piece's is (:func:`targets` at ``draws``, 11 numbers in ``0..1``, from the :func:`ratios`
    of the picture's other cells and the hole's :func:`natural` variation), each clearly
    differing from the true piece and from the others: the best-fitting crops
    (:func:`clear_costs`, :func:`places`; then, for targets still open, those fitting no
    better than the highest), in the order of :func:`_ordered`, each seamlessly cloned into
    the hole (:func:`seam_field`, :func:`dial`) to its target (:func:`_fill`). Returns
    ``(picture, y, x, piece)``, position in pixels of ``stack`` and ``piece [3,c,c]`` uint8,
    or ``[]`` when the stack cannot supply them."""
    work, cw = working(stack, c)
    yw, xw = round(y * cw / c), round(x * cw / c)
    H, W = stack.shape[-2:]

    def up(p):                  # a working-size position in pixels of ``stack``, the crop kept inside
        j, py, px = p
        return j, min(round(py * c / cw), H - c), min(round(px * c / cw), W - c)
    sp = soft(work[truth][None])[0]
    lines = rim(sp, yw, xw, cw)
    true_piece = stack[truth, :, y:y + c, x:x + c].float()
    hole = {"lines": lines, "c": cw, "C": c, "look": shrink(true_piece[None], cw)[0]}
    want = targets(natural(sp, yw, xw, cw), ratios(work[truth], yw, xw, cw), draws)
    ids, costs = clear_costs(work, truth, yw, xw, cw)
    out: list = []
    _fill(stack, _ordered(stack, places(ids, costs, cw, CANDIDATES), truth, y, x, c, up, features), up, hole, want, out)
    still = [w for w in want if w is not None]
    if still and len(out) < 3:
        found = places(ids, costs, cw, CANDIDATES, floor=max(still))
        _fill(stack, _ordered(stack, found, truth, y, x, c, up, features), up, hole, want, out)
    return [v for _, v, _ in sorted(out, key=lambda o: o[0])] if len(out) == 3 else []
