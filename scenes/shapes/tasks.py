"""The ``shapes/...`` tasks."""
from __future__ import annotations

import numpy as np

from engine.batched import BatchRandom, ShapeBatch
from engine.batched import scatter as batched_scatter
from engine.placement import scatter
from engine.sample import Draw
from engine.scene import Scene
from engine.shapes import SHAPES, draw_shape

from .family import FAMILY

BACKGROUND = (255, 255, 255)
# Well separated named colours (RGB), all far from the white background.
COLOURS = {
    "red": (220, 20, 20), "green": (20, 150, 40), "blue": (30, 60, 220), "yellow": (235, 200, 0),
    "orange": (245, 120, 0), "purple": (130, 30, 170), "cyan": (0, 180, 200), "black": (0, 0, 0),
}


def scatter_objects(rng: np.random.Generator, shapes, colours, radii, gap=0.02) -> tuple[Scene, list[dict]]:
    """A scene with ``shapes[i]`` in colour ``colours[i]`` (a ``COLOURS`` name) of radius
    ``radii[i]``, scattered without overlap; returns it with the object list."""
    centres = scatter(rng, radii, (0.02, 0.02, 0.98, 0.98), gap=gap)
    s = Scene(background=BACKGROUND)
    objects = []
    for shape, colour, c, r in zip(shapes, colours, centres, radii):
        draw_shape(s, shape, tuple(c), float(r), COLOURS[colour])
        objects.append({"shape": shape, "colour": colour, "center": [float(c[0]), float(c[1])], "radius": float(r)})
    return s, objects


def _plural(shape: str) -> str:
    return shape + ("es" if shape.endswith("s") else "s")


COUNT_SLOTS = 13          # at most 9 targets and 4 distractors


@FAMILY.task("shapes/count/{shape}", shape=["circle", "triangle", "square", "star", "heart"], batched=True)
def count(rng: BatchRandom, shape: str) -> ShapeBatch:
    """Count one shape kind among distractors of other kinds."""
    k = rng.integers(1, 10)                                               # [B] targets
    d = rng.integers(0, 5)                                                # [B] distractors
    slot = np.arange(COUNT_SLOTS)
    others = np.array([i for i, s in enumerate(SHAPES) if s != shape])
    kinds = np.where(slot < k[:, None], SHAPES.index(shape), others[rng.integers(0, len(others), COUNT_SLOTS)])
    valid = slot < (k + d)[:, None]
    order = np.argsort(np.where(valid, rng.random(COUNT_SLOTS), 2.0), axis=1, kind="stable")   # shuffled, empty last
    kinds, valid = np.take_along_axis(kinds, order, 1), np.take_along_axis(valid, order, 1)
    radii = rng.uniform(0.035, 0.07, COUNT_SLOTS)
    colours = rng.integers(0, len(COLOURS), COUNT_SLOTS)
    centres = batched_scatter(rng, radii, valid, (0.02, 0.02, 0.98, 0.98), gap=0.02)
    names = list(COLOURS)

    def meta(b: int) -> dict:
        objects = [{"shape": SHAPES[kinds[b, j]], "colour": names[colours[b, j]],
                    "center": [float(centres[b, j, 0]), float(centres[b, j, 1])], "radius": float(radii[b, j])}
                   for j in np.nonzero(valid[b])[0]]
        return {"objects": objects, "count": int(k[b])}
    return ShapeBatch(kinds, centres, radii, np.array(list(COLOURS.values()))[colours], valid,
                      f"How many {_plural(shape)} are in the image? Answer with a number.", [str(int(x)) for x in k],
                      "single", meta=meta, background=BACKGROUND)


def _without_replacement(rng: BatchRandom, n: int, k: int) -> np.ndarray:
    """``[B, k]``: per sample, ``k`` distinct values of ``0..n-1`` in random order."""
    return np.argsort(rng.random(n), axis=1, kind="stable")[:, :k]


@FAMILY.task("shapes/colours", batched=True)
def colours(rng: BatchRandom) -> ShapeBatch:
    """Name the set of colours present."""
    names = list(COLOURS)
    m = rng.integers(1, 6)                                                # [B] colours present
    first = _without_replacement(rng, len(names), 5)
    n = rng.integers(m, 9)                                                # [B] objects, at least one per colour
    slot = np.arange(8)
    repeat = np.take_along_axis(first, rng.integers(0, m, 8), 1)          # a present colour per extra slot
    cols = np.where(slot < m[:, None], np.pad(first, ((0, 0), (0, 3))), repeat)
    valid = slot < n[:, None]
    radii = rng.uniform(0.04, 0.08, 8)
    kinds = rng.integers(0, len(SHAPES), 8)
    centres = batched_scatter(rng, radii, valid, (0.02, 0.02, 0.98, 0.98), gap=0.02)
    present = [sorted(names[c] for c in first[b, :m[b]]) for b in range(len(rng))]

    def meta(b: int) -> dict:
        return {"objects": [{"shape": SHAPES[kinds[b, j]], "colour": names[cols[b, j]],
                             "center": [float(centres[b, j, 0]), float(centres[b, j, 1])], "radius": float(radii[b, j])}
                            for j in np.nonzero(valid[b])[0]]}
    q = f"Which colours appear in the image? Choose from {', '.join(names)}. Answer as [colour, colour, ...]."
    return ShapeBatch(kinds, centres, radii, np.array(list(COLOURS.values()))[cols], valid, q, present, "set",
                      meta=meta, background=BACKGROUND)


@FAMILY.task("shapes/size_order", batched=True)
def size_order(rng: BatchRandom) -> ShapeBatch:
    """List the colours of the shapes from smallest to largest."""
    names = list(COLOURS)
    n = rng.integers(2, 6)                                                # [B] shapes
    slot = np.arange(5)
    valid = slot < n[:, None]
    cols = _without_replacement(rng, len(names), 5)
    steps = np.argsort(np.where(valid, rng.random(5), 2.0), axis=1, kind="stable")   # a permutation of 0..n-1
    rank = np.argsort(steps, axis=1, kind="stable")
    radii = 0.035 * 1.3 ** rank.astype(float)                            # each at least 30% larger than the next
    centres = batched_scatter(rng, radii, valid, (0.02, 0.02, 0.98, 0.98), gap=0.03)
    shape = rng.integers(0, len(SHAPES))
    kinds = np.broadcast_to(shape[:, None], valid.shape)
    answers = [[names[cols[b, j]] for j in np.argsort(np.where(valid[b], radii[b], np.inf), kind="stable")[:n[b]]]
               for b in range(len(rng))]

    def meta(b: int) -> dict:
        return {"shape": SHAPES[shape[b]], "colours": [names[c] for c in cols[b, :n[b]]],
                "radii": radii[b, :n[b]].tolist()}
    questions = [f"List the colours of the {_plural(SHAPES[k])} from the smallest to the largest. Answer as "
                 "[colour, colour, ...]." for k in shape]
    return ShapeBatch(kinds, centres, radii, np.array(list(COLOURS.values()))[cols], valid, questions, answers, "list",
                      meta=meta, background=BACKGROUND)


@FAMILY.task("shapes/same_shape")
def same_shape(rng: np.random.Generator) -> Draw:
    """Two panels: is the same kind of shape drawn in both?"""
    a = SHAPES[int(rng.integers(len(SHAPES)))]
    same = bool(rng.integers(2))
    b = a if same else SHAPES[int(rng.choice([i for i, s in enumerate(SHAPES) if s != a]))]
    panels = []
    for shape in (a, b):
        p = Scene(background=BACKGROUND)
        col = list(COLOURS)[int(rng.integers(len(COLOURS)))]
        draw_shape(p, shape, tuple(rng.uniform(0.35, 0.65, 2)), float(rng.uniform(0.15, 0.25)), COLOURS[col],
                   rotation=float(rng.uniform(-20, 20)))
        panels.append(p)
    return Draw(panels, "Do the two images show the same kind of shape? Answer yes or no.",
                "yes" if same else "no", "fixed", options=["yes", "no"], meta={"shapes": [a, b]})


def _checker_sprite(rng: np.random.Generator) -> np.ndarray:
    """A 4x4 red/blue checkerboard, ``[4, 32, 32]`` uint8 RGBA."""
    on = rng.integers(0, 2, size=(4, 4)).astype(bool).repeat(8, 0).repeat(8, 1)
    img = np.zeros((4, 32, 32), np.uint8)
    img[0][on], img[2][~on], img[3] = 255, 255, 255
    return img


@FAMILY.task("shapes/gallery")
def gallery(rng: np.random.Generator) -> Draw:
    """Every primitive kind in one scene; which kind is drawn in red?"""
    s = Scene(background=(235, 235, 235))
    kinds = ["circle", "ellipse", "triangle", "rectangle", "square", "polygon", "star", "diamond", "cross",
             "plus", "heart", "spade", "club", "sector", "pacman", "ring", "line", "polyline", "spline",
             "arrow", "text", "sprite"]
    # The sprite keeps its own colours, so the red one is always a drawn kind.
    target = kinds[int(rng.integers(len(kinds) - 1))]
    slots = rng.permutation(25)[: len(kinds)]
    others = [c for n, c in COLOURS.items() if n != "red"]
    for kind, slot in zip(kinds, slots):
        cx, cy = 0.1 + 0.2 * (slot % 5), 0.1 + 0.2 * (slot // 5)
        col = COLOURS["red"] if kind == target else others[int(rng.integers(len(others)))]
        r = float(rng.uniform(0.06, 0.08))
        rot = float(rng.uniform(-30, 30))
        style = dict(color=col, rotation=rot)
        if kind in ("circle",):
            s.circle((cx, cy), r, color=col)
        elif kind == "ellipse":
            s.ellipse((cx, cy), (r, r * 0.55), **style)
        elif kind == "triangle":
            p = rng.uniform(-r, r, size=(3, 2)) * 0.4 + np.array([[0, -r], [r, r], [-r, r]]) * 0.8
            s.triangle(*[(cx + x, cy + y) for x, y in p], color=col)
        elif kind == "rectangle":
            s.rectangle((cx, cy), (1.6 * r, r), **style)
        elif kind == "polygon":
            s.polygon((cx, cy), r, int(rng.integers(5, 9)), **style)
        elif kind in ("sector", "pacman"):
            if kind == "sector":
                a0 = float(rng.uniform(0, 360))
                s.sector((cx, cy), r, a0, a0 + float(rng.uniform(90, 300)), color=col)
            else:
                s.pacman((cx, cy), r, mouth=float(rng.uniform(40, 100)), direction=float(rng.uniform(0, 360)), color=col)
        elif kind == "ring":
            s.ring((cx, cy), r, r * 0.6, color=col)
        elif kind == "line":
            s.line((cx - r, cy + r * 0.5), (cx + r, cy - r * 0.5), width=0.012, color=col)
        elif kind in ("polyline", "spline"):
            pts = [(cx - r + 2 * r * i / 3, cy + float(rng.uniform(-r, r))) for i in range(4)]
            getattr(s, kind)(pts, width=0.01, color=col)
        elif kind == "arrow":
            s.arrow((cx - r, cy), (cx + r, cy), width=0.015, color=col, rotation=rot)
        elif kind == "text":
            s.text(str(rng.choice(["A7", "x=3", "→", "?!"])), (cx, cy), height=0.08, color=col)
        elif kind == "sprite":
            s.sprite(_checker_sprite(rng), (cx, cy), (1.4 * r, 1.4 * r), rotation=rot)
        elif kind == "square":
            s.square((cx, cy), 1.4 * r, **style)
        else:
            getattr(s, kind)((cx, cy), r, **style, fill=bool(rng.integers(2)), stroke=0.008)
    options = [k for k in kinds if k != "sprite"]
    return Draw(s, f"Which kind of primitive is drawn in red? Choose from: {', '.join(options)}.", target, "fixed",
                options=options, meta={"kinds": kinds})


WORDS = ("cat", "tree", "river", "seven", "blue", "north", "glass", "piano", "orbit", "lemon", "quartz", "jigsaw")


@FAMILY.task("shapes/read_text")
def read_text(rng: np.random.Generator) -> Draw:
    """Read a word written at a random angle."""
    word = str(rng.choice(WORDS))
    if rng.integers(2):
        word = word.upper()
    s = Scene(background=BACKGROUND)
    col = list(COLOURS.values())[int(rng.integers(len(COLOURS)))]
    s.text(word, tuple(rng.uniform(0.4, 0.6, 2)), height=float(rng.uniform(0.12, 0.2)), color=col,
           rotation=float(rng.uniform(-30, 30)))
    return Draw(s, "What word is written in the image? Answer with the word only.", word, "single",
                meta={"word": word})
