"""Solvability of protocols: does every turn that asks for an answer carry, in the same
conversation, what it needs?

The protocol is played with gold replies (what an oracle says). A turn asked by the model
sees its own images, plus the earlier turns' images and replies when it keeps the history.
A turn that asks an earlier question again (its prompt text, about some of the same
pictures: options reshuffled, say) must see what the first asking saw, either as images,
or as pieces of one (a composite redrawn with its parts moved), or through a reply its
prompt quotes (a rule stated earlier). A re-ask in a fresh conversation without them asks
about pictures it does not show. Independent questions about other pictures (one pair of
images after another) need nothing from each other.

Pictures are compared by pixels: an image is visible when an identical one is seen, or when
its ink regions appear (all but a few pixels the same) among the seen images' regions, for
all but ``UNMATCHED`` of its regions' area (objects packed close together merge into one region in
one arrangement and not in another; a missing picture, such as the transformation a
question is about, is a far larger share).
"""
from __future__ import annotations

import numpy as np

from engine.outputs import render_samples

from .features import blobs, ink_mask

MIN_QUOTE = 20              # characters: a shorter reply ("(B)") carries no description of a picture
TOLERANCE = 0.05            # share of pixels that may differ for two regions to match (a relabelled option)
UNMATCHED = 0.05            # share of an image's ink area that may lie in regions found nowhere else


def _regions(image) -> list[np.ndarray]:
    """The pixel crops of an image's ink regions (merged across 2-pixel gaps)."""
    im = np.asarray(image)
    mask = ink_mask(im)
    grown = mask.copy()
    for axis in (0, 1):
        for shift in (-2, -1, 1, 2):
            grown |= np.roll(mask, shift, axis=axis)
    return [im[:, y0:y1, x0:x1] for _, _, area, (y0, x0, y1, x1) in blobs(grown, min_area=16)]


def _blur(a: np.ndarray) -> np.ndarray:
    """3x3 box mean of ``[3,h,w]``: a region redrawn half a pixel away still compares equal."""
    p = np.pad(a.astype(np.float32), ((0, 0), (1, 1), (1, 1)), mode="edge")
    h, w = a.shape[1:]
    return sum(p[:, dy:dy + h, dx:dx + w] for dy in range(3) for dx in range(3)) / 9


def _matches(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether regions ``a`` and ``b`` show the same thing, up to a pixel of placement."""
    if abs(a.shape[1] - b.shape[1]) > 2 or abs(a.shape[2] - b.shape[2]) > 2:
        return False
    fa, fb = _blur(a), _blur(b)
    h, w = min(a.shape[1], b.shape[1]) - 2, min(a.shape[2], b.shape[2]) - 2
    if h <= 0 or w <= 0:                          # a hairline: compare it whole
        return a.shape == b.shape and bool((np.abs(fa - fb).max(0) <= 48).mean() >= 1 - TOLERANCE)
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            pa = fa[:, 1 + dy:1 + dy + h, 1 + dx:1 + dx + w]
            diff = np.abs(pa - fb[:, 1:1 + h, 1:1 + w]).max(0) > 48
            if float(diff.mean()) <= TOLERANCE:
                return True
    return False


def visible(image, seen: list, pieces: list | None = None) -> bool:
    """Whether ``image`` ``[3,H,W]`` is among ``seen`` or made of the same pieces as them
    (``pieces``: the seen images' regions, when the caller already has them)."""
    im = np.asarray(image)
    for s in seen:
        s = np.asarray(s)
        if s.shape == im.shape and np.array_equal(s, im):
            return True
    if pieces is None:
        pieces = [r for s in seen for r in _regions(s)]
    regions = _regions(im)
    area = [float(r.shape[1] * r.shape[2]) for r in regions]      # bounding-box area
    lost = sum(a for r, a in zip(regions, area) if not any(_matches(r, p) for p in pieces))
    return lost <= UNMATCHED * sum(area)


def play(protocol, sample, images) -> list:
    """The turns of ``protocol`` on ``sample`` with every reply the turn's gold."""
    turns = [protocol.first(sample, images)]
    while True:
        if turns[-1].reply is None:
            turns[-1].reply = turns[-1].gold or sample.reply_text
        nxt = protocol.next(sample, images, turns)
        if nxt is None:
            return turns
        turns.append(nxt)


def _context(turns, t: int) -> list:
    """The images turn ``t`` sees: its own, and the earlier turns' when it keeps the history."""
    seen = list(turns[t].images)
    if turns[t].history:
        seen += [im for u in turns[:t] for im in u.images]
    return seen


SAME_LEVEL = 16            # channel levels (3x3 mean) within which a redrawn pixel counts as unchanged


def _same_picture(x, y) -> bool:
    """Whether ``x`` and ``y`` are one picture: identical, or redrawn with nine tenths of
    their ink pixels unchanged (a composite with a few parts moved). Unchanged parts of a
    redrawn composite come out within a level or two; two photographs of like ground (grass
    beside grass) differ by tens of levels nearly everywhere, so the level is tight."""
    x, y = np.asarray(x), np.asarray(y)
    if x.shape != y.shape:
        return False
    ink = ink_mask(x) | ink_mask(y)
    if not ink.any():
        return np.array_equal(x, y)
    same = np.abs(_blur(x) - _blur(y)).max(0) <= SAME_LEVEL
    return float(same[ink].mean()) >= 0.9


def _about_the_same(a: list, b: list) -> bool:
    """Whether every picture of ``a`` is one of ``b``'s (:func:`_same_picture`): a turn
    about other pictures, even with one alike, is another question, not a re-ask."""
    return bool(a) and all(any(_same_picture(x, y) for y in b) for x in a)


def unsolvable_turns(turns) -> list[dict]:
    """The turns that re-ask an earlier question (its prompt text again, about some of the
    same pictures) without what the earlier asking saw: ``[{"turn", "missing"}]``, where
    ``missing`` lists those earlier turns. What the earlier turn saw may reach the re-ask as
    images or through a reply its prompt quotes. A turn asked with no picture at all, where
    the first turn showed some, is unsolvable too (``missing``: ``[0]``)."""
    out = []
    for t, turn in enumerate(turns):
        if t == 0 or turn.reply is None:
            continue
        seen = _context(turns, t)
        if not seen and turns[0].images and not _quotes(turn, turns[:t]):
            out.append({"turn": t, "missing": [0]})
            continue
        missing, pieces = [], None
        for u in range(t):
            earlier = turns[u]
            asked_again = earlier.prompt.strip() in turn.prompt or turn.prompt.strip() in earlier.prompt
            if not asked_again or turn.history or not _about_the_same(turn.images, earlier.images):
                continue
            if _quotes(turn, turns[:t]):
                continue
            if pieces is None:
                pieces = [r for im in seen for r in _regions(im)]
            # the picture asked about again is the re-ask's own (a near twin of it is another
            # picture, not a missing one); what else the earlier asking saw must be seen too
            needed = [im for im in _context(turns, u) if not any(_same_picture(im, x) for x in turn.images)]
            if not all(visible(im, seen, pieces) for im in needed):
                missing.append(u)
        if missing:
            out.append({"turn": t, "missing": missing})
    return out


def _quotes(turn, earlier) -> bool:
    """Whether ``turn``'s prompt quotes a reply of an ``earlier`` turn."""
    for u in earlier:
        said = (u.reply or "").strip().rstrip(".")
        if len(said) >= MIN_QUOTE and said in turn.prompt:
            return True
    return False


def audit_protocol(protocol, samples, size: int, images=None) -> dict:
    """Play ``protocol`` on ``samples`` rendered at ``size`` (``images``: their panels, when
    already rendered). Returns ``{"samples", "turns", "unsolvable", "examples"}``: turns
    asked, turns that fail, and up to 3 failing cases."""
    if images is None:
        images = render_samples(samples, size)
    asked, bad, examples = 0, 0, []
    for s, ims in zip(samples, images):
        turns = play(protocol, s, ims)
        asked += len(turns)
        found = unsolvable_turns(turns)
        bad += len(found)
        if found and len(examples) < 3:
            examples.append({"sample": s.id, **found[0], "prompt": turns[found[0]["turn"]].prompt[:200]})
    return {"samples": len(samples), "turns": asked, "unsolvable": bad, "examples": examples}
