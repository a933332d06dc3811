"""``jigsaw/...``: the six spatial tasks of the Jigsaw-Puzzles benchmark on any image source.

All tile work (split, mask, permute, rotate, mirror, take) is done by ``kernels.tiles``;
each panel is a scene holding the resulting image as a sprite, plus engine-drawn labels.
Question texts are the benchmark's templates; image ``index % len(source)`` is the photo.
The photos come from the family's settings (``images``, ``image_size``). Hard distractors
are crops, at any position, of the photo itself (away from the hole), of the photos next
to it in the collection and of other photos, chosen for how well their edges continue the
hole and how much they look like the true piece by the features the ``embedder`` setting
names, and only where their content clearly differs from it (:mod:`.compatible`);
localization and order items whose true arrangement is not strictly the most continuous
are redrawn (:mod:`.continuity`), and counted in the record's ``meta["rejected"]``.
"""
from __future__ import annotations

import itertools

import numpy as np

from engine.errors import UserError
from engine.lazy import lazy_module
from engine.sample import Draw
from engine.scene import Scene

from .family import FAMILY

# torch, the tile kernels and the image sources: loaded when the first puzzle is drawn
T = lazy_module("kernels.tiles")
torch = lazy_module("torch")
images = lazy_module("kernels.images")
sources = lazy_module("scenes.jigsaw.sources")
features = lazy_module("scenes.jigsaw.features")
continuity = lazy_module("scenes.jigsaw.continuity")
compatible = lazy_module("scenes.jigsaw.compatible")

LETTERS = "ABCD"


def source(settings: dict):
    """The image source of a task's ``settings``."""
    return sources.source_for(settings["images"], settings["image_size"])


def _image(settings: dict, index: int):
    src = source(settings)
    i = index % len(src)
    return i, src[i]


def _panel(img, labels=()) -> Scene:
    """A square panel showing ``img [3,h,w]``; ``labels`` = ((text, (x, y), height), ...)."""
    s = Scene(background=(255, 255, 255))
    s.sprite(img, (0.5, 0.5), (1.0, img.shape[1] / img.shape[2]))
    for text, pos, h in labels:
        s.text(text, pos, height=h, color=(0, 0, 0))
    return s


MIN_CHANGE = 6.0   # mean absolute difference (0..255) for two patches to count as different


def differ(a, b) -> bool:
    """Whether two patches differ visibly (an item whose answer hinges on telling two
    identical patches apart would have more than one right answer)."""
    return images.mean_difference(a, b) >= MIN_CHANGE


def _others(rng: np.random.Generator, src, i: int, k: int, cell: int | None = None) -> list[int]:
    """``k`` other images, in a seeded random order; with ``cell``, only images whose cell
    (3x3 grid) differs visibly from image ``i``'s."""
    n = len(src)
    if n < k + 1:
        raise UserError(f"the image source has {n} images; this task needs at least {k + 1}")
    out = []
    truth = T.take(src[i][None], 3, 3, torch.tensor([[cell]]))[0, 0] if cell is not None else None
    for j in rng.permutation(n):
        if j == i:
            continue
        if truth is not None and not differ(truth, T.take(src[int(j)][None], 3, 3, torch.tensor([[cell]]))[0, 0]):
            continue
        out.append(int(j))
        if len(out) == k:
            return out
    raise UserError(f"fewer than {k} images of the source differ from image {i} at cell {cell}")


def _distinct_quarters(settings: dict, index: int, one_order: bool = False):
    """``(i, img, rejected)``: the first image from ``index`` on whose four quarters all differ
    visibly (so that adjacency and order have one answer) and, with ``one_order``, whose own
    arrangement is strictly the most continuous of all 24 (:mod:`.continuity`); ``rejected``
    counts the images passed over for that last reason."""
    n = len(source(settings))
    rejected = 0
    for step in range(n):
        i, img = _image(settings, index + step)
        q = T.split(img[None], 2, 2)[0]
        if not all(differ(q[a], q[b]) for a, b in itertools.combinations(range(4), 2)):
            continue
        if one_order and not continuity.order_is_unique(settings["images"], settings["image_size"], i):
            rejected += 1
            continue
        return i, img, rejected
    raise UserError("no image of the source has four visibly different quarters"
                    + (" in an order that seams single out" if one_order else ""))


# ---------------------------------------------------------------- missing piece
MISSING_PIECE = (
    "You will be provided with <image 1>, <image 2>, <image 3>, <image 4>, <image 5>. The first image is a large image "
    "with a missing region, represented by a white blank area. The second to fifth images are four candidate patches. "
    "Among these four candidate images, exactly one can accurately fill the white blank area in the first image, "
    "seamlessly restoring its visual appearance. Your task is: Carefully observe the large image with the missing "
    "region; Compare the contents of the four candidate images and select the one that best visually completes the "
    "missing area of the first image.\nThe option mapping is as follows: A. Candidate 1 (the second input image) "
    "B. Candidate 2 (the third input image) C. Candidate 3 (the fourth input image) D. Candidate 4 (the fifth input "
    "image)\nPlease select the option you believe is correct and output only the corresponding letter (A, B, C, or D), "
    "without providing any explanation or analysis.")
HARD_POOL = 32          # other images whose crops, at any position, are searched for hard distractors
NEAR = 4                # of them, the images next to it in the collection (other shots of a scene)


def _hard_distractors(rng, settings: dict, src, i: int, cell: int) -> list[tuple[int, tuple[int, int], torch.Tensor]]:
    """Three ``(image, (y, x), patch)`` distractors for the hole at ``cell`` of image ``i``:
    crops, at any position, of image ``i`` itself, of the images next to it in the
    collection and of other images, chosen by :func:`.compatible.choose`."""
    near = src.neighbours(i, NEAR)
    pool = [i] + near + [j for j in _others(rng, src, i, min(HARD_POOL, len(src) - 1)) if j not in near]
    pool = pool[:HARD_POOL + 1]
    stack = torch.stack([src[j] for j in pool])
    c = stack.shape[-1] // 3
    picks = compatible.choose(stack, 0, (cell // 3) * c, (cell % 3) * c, c, features.extractor(settings["embedder"]))
    if len(picks) < 3:
        raise UserError(f"image {i}: fewer than 3 crops of the source differ clearly from the missing piece")
    return [(pool[k], (y, x), stack[k, :, y:y + c, x:x + c]) for k, y, x in picks]


@FAMILY.task("jigsaw/missing_piece/{level}", level=["easy", "hard"], rank=0,
               answer_distribution={c: 0.25 for c in LETTERS})
def missing_piece(rng, level, index, settings):
    """Pick the patch that fills the white cell (3x3 grid); hard distractors fit the hole and look alike."""
    src = source(settings)
    i, img = _image(settings, index)
    cell = int(rng.integers(9))
    if level == "easy":
        others = _others(rng, src, i, 3, cell)
        picks = [(j, cell) for j in others]
        imgs = torch.stack([img] + [src[j] for j in others])
        patches = T.take(imgs, 3, 3, torch.full((4, 1), cell))[:, 0]          # true patch first
    else:
        hard = _hard_distractors(rng, settings, src, i, cell)
        picks = [(j, box) for j, box, _ in hard]
        patches = torch.stack([T.take(img[None], 3, 3, torch.tensor([[cell]]))[0, 0]] + [p for _, _, p in hard])
    slot = int(rng.integers(4))
    order = [1, 2, 3]
    rng.shuffle(order)
    shown = order[:slot] + [0] + order[slot:]
    masked = T.mask(img[None], 3, 3, torch.arange(9)[None] == cell)[0]
    panels = [_panel(masked)] + [_panel(patches[k]) for k in shown]
    meta = {"image": i, "cell": cell, "distractor_images": [j for j, _ in picks], "level": level}
    if level == "hard":
        meta["distractor_boxes"] = [list(box) for _, box in picks]
    return Draw(panels, MISSING_PIECE, LETTERS[slot], "fixed", options=list(LETTERS), meta=meta)


# ---------------------------------------------------------------- piece localization
LOCALIZATION = {
    "easy": ("<image 1> has two masked areas labeled A and B. <image 2> shows the content from one masked area. "
             "Determine if it corresponds to A or B. Answer only \u201cA\u201d or \u201cB\u201d."),
    "hard": ("<image 1> has four masked areas labeled A, B, C, and D. <image 2> shows the content from one masked "
             "area. Determine if it corresponds to A, B, C, or D. Answer only \u201cA\u201d, \u201cB\u201d, "
             "\u201cC\u201d, or \u201cD\u201d."),
}


TRIES = 100   # draws of masked cells per image before the next image is tried


@FAMILY.task("jigsaw/localization/{level}", level=["easy", "hard"], rank=2,
               answer_distribution=lambda level: {c: 1 / (2 if level == "easy" else 4)
                                                  for c in LETTERS[: 2 if level == "easy" else 4]})
def localization(rng, level, index, settings):
    """Which labelled white cell does the piece come from (2x2 with 2 masks, 3x3 with 4)?"""
    g, k = (2, 2) if level == "easy" else (3, 4)
    rejected = 0
    for step in range(len(source(settings))):
        i, img = _image(settings, index + step)
        tiles = T.split(img[None], g, g)[0]
        borders = [continuity.tile_borders(v, g) for v in continuity.views(img)]
        for _ in range(TRIES):
            cells = sorted(int(c) for c in rng.choice(g * g, size=k, replace=False))   # in reading order
            pick = int(rng.integers(k))
            # the piece must match exactly one masked area, and continue its neighbours there
            # strictly better than at any other masked area
            if not all(differ(tiles[cells[pick]], tiles[c]) for c in cells if c != cells[pick]):
                continue
            if continuity.place_is_unique(borders, g, cells, pick):
                break
            rejected += 1
        else:
            continue
        break
    else:
        raise UserError("no image of the source has masked cells that only one place fits; use images with more "
                        "structure")
    flags = torch.zeros(1, g * g, dtype=torch.bool)
    flags[0, cells] = True
    masked = T.mask(img[None], g, g, flags)[0]
    piece = T.take(img[None], g, g, torch.tensor([[cells[pick]]]))[0, 0]
    # letters go to the masked cells in a random order: in reading order the letter would tell
    # the piece's row, which its content (sky above, ground below) gives away without any matching
    names = [LETTERS[int(j)] for j in rng.permutation(k)]
    labels = [(name, ((c % g + 0.5) / g, (c // g + 0.5) / g), 0.35 / g) for name, c in zip(names, cells)]
    return Draw([_panel(masked, labels), _panel(piece)], LOCALIZATION[level], names[pick], "fixed",
                options=list(LETTERS[:k]), meta={"image": i, "masked_cells": cells, "piece_cell": cells[pick],
                                                 "labels": names, "rejected": rejected})


# ---------------------------------------------------------------- connection verification
CONNECTION = (
    "You are given <image 1>, <image 2>, each cropped from an original full image. The full image was divided into "
    "four regions: top-left, top-right, bottom-left, and bottom-right by splitting it through the center. Two regions "
    "are randomly selected. Based on the spatial relationship of these two regions in the original image, choose the "
    "most appropriate option and respond only with the corresponding letter (A, B, or C): A. The two images are "
    "adjacent horizontally (left-right relationship) B. The two images are adjacent vertically (top-bottom "
    "relationship) C. The two images are not adjacent in the original image Please respond with only \u201cA\u201d, "
    "\u201cB\u201d, or \u201cC\u201d and no additional text.")
PAIRS = list(itertools.combinations(range(4), 2))   # 2 horizontal, 2 vertical, 2 diagonal


def _relation(a: int, b: int) -> str:
    if a // 2 == b // 2:
        return "A"
    if a % 2 == b % 2:
        return "B"
    return "C"


@FAMILY.task("jigsaw/connection", rank=4, answer_distribution={"A": 1 / 3, "B": 1 / 3, "C": 1 / 3})
def connection(rng, index, settings):
    """Are two quarters of the image side by side, one above the other, or not adjacent?"""
    i, img, _ = _distinct_quarters(settings, index)
    a, b = PAIRS[int(rng.integers(len(PAIRS)))]
    if rng.integers(2):
        a, b = b, a
    pieces = T.take(img[None], 2, 2, torch.tensor([[a, b]]))[0]
    return Draw([_panel(pieces[0]), _panel(pieces[1])], CONNECTION, _relation(a, b), "fixed", options=["A", "B", "C"],
                meta={"image": i, "cells": [a, b]})


# ---------------------------------------------------------------- anomaly detection
ANOMALY = (
    "You are given an image that is created by cutting a full image into 4 sub-images and stitching them back "
    "together. The positions of the <image 1>, <image 2>, <image 3>, <image 4> in the stitched image are defined as "
    "follows: A. Top-left (the sub-image in the top-left corner) B. Top-right (the sub-image in the top-right corner) "
    "C. Bottom-left (the sub-image in the bottom-left corner) D. Bottom-right (the sub-image in the bottom-right "
    "corner) Note: These positions refer to the current stitched image you are looking at. Exactly one of the 4 "
    "sub-images may have been rotated or mirrored, or all sub-images may be completely normal. There is at most one "
    "abnormal sub-image in each stitched image. Your tasks: 1. Decide whether the stitched image is correct. Options: "
    "A. Correct B. Incorrect 2. If incorrect, answer: Which sub-image is abnormal? Options: A/B/C/D What kind of "
    "change has occurred? Options: A. Rotation, B. Mirroring Output format (exactly 3 lines): Judgment: A or B Error "
    "Position: A/B/C/D (or leave blank) Error Type: A/B (or leave blank) Do not add any explanations or extra text. "
    "Example if incorrect (error in bottom-left, rotated): Judgment: B Error Position: C Error Type: A Example if "
    "correct: Judgment: A Error Position: Error Type: .")
def anomaly_answer(position: str | None, kind: str | None) -> str:
    """Canonical three-line answer; ``position`` in A-D and ``kind`` in A (rotation) / B (mirror)."""
    if position is None:
        return "Judgment: A\nError Position:\nError Type:"
    return f"Judgment: B\nError Position: {position}\nError Type: {kind}"


ANOMALY_OPTIONS = [anomaly_answer(None, None)] + [anomaly_answer(p, t) for p in LETTERS for t in "AB"]


@FAMILY.task("jigsaw/anomaly", rank=5,
               answer_distribution={a: (0.5 if k == 0 else 1 / 16) for k, a in enumerate(ANOMALY_OPTIONS)})
def anomaly(rng, index, settings):
    """Is one quarter rotated or mirrored, which one, and how? (no change with probability 1/2)."""
    i, img = _image(settings, index)
    tiles = T.split(img[None], 2, 2)
    position = kind = None
    turns = torch.zeros(1, 4, dtype=torch.long)
    mode = torch.zeros(1, 4, dtype=torch.long)
    if rng.random() >= 0.5:
        q = int(rng.integers(4))
        kind = "A" if rng.random() < 0.5 else "B"
        # candidate transformations of the chosen type, first the drawn one; keep the first
        # that changes the quarter visibly
        if kind == "A":
            first = int(rng.integers(1, 4))
            variants = [("turns", first)] + [("turns", t) for t in (1, 2, 3) if t != first]
        else:
            variants = [("mode", 1), ("mode", 2)]
        for what, v in variants:
            t = torch.zeros(1, 4, dtype=torch.long)
            t[0, q] = v
            changed = T.rotate(tiles, t) if what == "turns" else T.mirror(tiles, t)
            if differ(changed[0, q], tiles[0, q]):
                (turns if what == "turns" else mode)[0, q] = v
                position = LETTERS[q]
                break
        else:
            raise UserError(f"image {i}: quarter {q} looks the same rotated and mirrored; use a source with more "
                             "structure")
    stitched = T.stitch(T.mirror(T.rotate(tiles, turns), mode), 2, 2)[0]
    return Draw(_panel(stitched), ANOMALY, anomaly_answer(position, kind), "fixed", options=ANOMALY_OPTIONS,
                meta={"image": i, "position": position, "type": {"A": "rotation", "B": "mirror", None: None}[kind],
                      "quarter_turns": turns[0].tolist(), "mirror": mode[0].tolist()})


# ---------------------------------------------------------------- order restoration / generation
ORDER_INTRO = (
    "You are given <image 1>, <image 2>, <image 3>, <image 4> that are cropped from an original full image. The full "
    "image was divided into four regions by splitting it through the center: top-left, top-right, bottom-left, and "
    "bottom-right. The four cropped images have been shuffled. Based on the visual content of each cropped image, "
    "determine the correct order that reconstructs the original full image. The order corresponds to the regions in "
    "the following sequence: top-left, top-right, bottom-left, bottom-right.")
RESTORATION_TAIL = (
    "\nEach number corresponds to the index of the shuffled images you received.\nPlease respond only with "
    "\u201cA\u201d, \u201cB\u201d, \u201cC\u201d, or \u201cD\u201d, without any additional explanation or description.")
GENERATION = ORDER_INTRO + (
    "\nPlease respond only with a Python-style list of four integers indicating the correct order of the shuffled "
    "images, like [2, 3, 1, 4]. Each number corresponds to the index of the shuffled images you received. Please Do "
    "not provide any explanation or description.")
PERMUTATIONS = [list(p) for p in itertools.permutations(range(4))]


def _fmt(order) -> str:
    return "[" + ", ".join(str(v) for v in order) + "]"


def _shuffle(rng, img):
    """Shown images ``tiles[perm]`` (perm not the identity) and the answer order (1-based)."""
    perm = PERMUTATIONS[1:][int(rng.integers(23))]
    shown = T.permute(T.split(img[None], 2, 2), torch.tensor([perm]))[0]
    order = [perm.index(region) + 1 for region in range(4)]
    return perm, shown, order


@FAMILY.task("jigsaw/order_restoration", rank=6, answer_distribution={c: 0.25 for c in LETTERS})
def order_restoration(rng, index, settings):
    """Choose, among four, the order that puts the shuffled quarters back."""
    i, img, rejected = _distinct_quarters(settings, index, one_order=True)
    perm, shown, order = _shuffle(rng, img)
    wrong = [p for p in itertools.permutations(range(1, 5)) if list(p) != order]
    picks = [list(wrong[int(k)]) for k in rng.choice(len(wrong), size=3, replace=False)]
    slot = int(rng.integers(4))
    options = picks[:slot] + [order] + picks[slot:]
    listing = " ".join(f"{LETTERS[k]}. {_fmt(o)}" for k, o in enumerate(options))
    q = ORDER_INTRO + " Choose the most appropriate option based on the mapping below:\n" + listing + RESTORATION_TAIL
    return Draw([_panel(t) for t in shown], q, LETTERS[slot], "fixed", options=list(LETTERS),
                meta={"image": i, "shuffle": perm, "order": order, "options": [_fmt(o) for o in options],
                      "rejected": rejected})


@FAMILY.task("jigsaw/order_generation", rank=7, overall=False,
               answer_distribution={_fmt([p.index(r) + 1 for r in range(4)]): 1 / 23 for p in PERMUTATIONS[1:]})
def order_generation(rng, index, settings):
    """Write the order that puts the shuffled quarters back, as a list."""
    i, img, rejected = _distinct_quarters(settings, index, one_order=True)
    perm, shown, order = _shuffle(rng, img)
    return Draw([_panel(t) for t in shown], GENERATION, [str(v) for v in order], "list",
                meta={"image": i, "shuffle": perm, "order": order, "rejected": rejected})
