"""``elvis/<principle>/<category>/...``: the 3,388 ELVIS tasks.

One sample is one image. Even indices are positives, odd ones negatives. A negative either
breaks the principle and keeps the attributes, or keeps the principle and breaks an
attribute rule; the family setting ``principle_share`` (default 2/3) says how many break the
principle, spread evenly over the negatives (:func:`negative_kind`: the k-th negative breaks
the principle when ``floor((k+1)s) > floor(ks)``; with 2/3 the kinds run attribute,
principle, principle, ...). With ``N`` images per class the train split is indices
``0 .. 2N-1`` and the test split ``2N .. 4N-1`` (:func:`split_indices`); the default is
``N = 3``, 12 images per task, and then each split holds 2 principle negatives and 1
attribute negative, so the principle decides two test negatives in three. With the default
share, both splits hold both kinds and the test split at least half principle negatives for
every ``N >= 2``.
"""
from __future__ import annotations

import functools
from fractions import Fraction

import numpy as np

from engine import jsontext
from engine.batched import BatchRandom, ShapeBatch, rounded
from engine.shapes import SHAPES as ENGINE_SHAPES

from . import batched, continuity, cutouts
from .attributes import BACKGROUND
from .factors import CATEGORIES, Factors, enumerate_factors
from .family import FAMILY, PRINCIPLE_SHARE

SHAPE_INDEX = {**{name: k for k, name in enumerate(ENGINE_SHAPES)}, "pacman": 0}    # a pac-man: its mouth decides
QUESTION = "Classify this image as Positive or Negative. Only answer with positive or negative."
LABELS = ("positive", "negative")
PER_CLASS = 3


def split_indices(per_class: int = PER_CLASS) -> dict[str, list[int]]:
    """Sample indices of the train and test splits with ``per_class`` images per class."""
    if per_class < 1:
        raise ValueError(f"per_class={per_class!r} must be >= 1")
    return {"train": list(range(2 * per_class)), "test": list(range(2 * per_class, 4 * per_class))}


def negative_kind(index: int, share: str | Fraction = PRINCIPLE_SHARE) -> str | None:
    """``None`` for a positive (even ``index``); for a negative, ``"principle"`` or
    ``"attribute"``, with ``share`` of the negatives breaking the principle, evenly spread."""
    if index % 2 == 0:
        return None
    k, s = index // 2, Fraction(share)
    return "principle" if int((k + 1) * s) > int(k * s) else "attribute"


# ---------------------------------------------------------------- rules in words

_PLURAL = {"cross": "crosses", "plus": "plus signs", "pacman": "pac-men"}


def _describe(f: Factors, plural: bool = True) -> str:
    vals = CATEGORIES[f.category].values
    words = []
    if "size" in f.rel:
        words.append(" or ".join({"medium": "medium-sized"}.get(v, v) for v in vals["size"]))
    if "color" in f.rel and CATEGORIES[f.category].principle != "similarity":
        words.append(" or ".join(vals["color"]))
    if "shape" in f.rel:
        shapes = [(_PLURAL.get(s, s + "s") if plural else s) for s in vals["shape"]]
        words.append(" or ".join(shapes))
    elif not plural:
        words.append("object")
    return " ".join(words)


def _principle_sentence(f: Factors) -> str:
    G, c = f.groups, f.category
    n = "s" if G > 1 else ""
    are = "are" if G > 1 else "is"
    return {
        "red_triangle": f"the objects form {G} groups by proximity",
        "grid": "the objects form a grid split by an empty row and an empty column into 4 groups",
        "fixed_props": f"the objects form {G} groups by proximity",
        "circle_features": f"the objects form {G} groups on a ring over a dark disc",
        "fixed_number": f"the objects form {G} groups, each of one colour",
        "pacman": f"the pac-men form {G} groups, each facing one direction",
        "palette": f"the ring is divided into {G} sectors, each holding objects of one colour",
        "feature_triangle": f"{G} illusory triangle{n} {are} induced by pac-men facing the centre",
        "feature_square": f"{G} illusory square{n} {are} induced by pac-men facing the centre",
        "feature_circle": f"{G} illusory circle{n} {are} cut out of four shapes at the corners of a square",
        "big_triangle": f"the objects lie along the outline{n} of {G} large triangle{n}",
        "big_square": f"the objects lie along the outline{n} of {G} large square{n}",
        "big_circle": f"the objects lie along the outline{n} of {G} large circle{n}",
        "one_split_n": f"the objects form one evenly spaced line that splits into {G} branches",
        "intersected_splines": f"the objects form {G} smooth, evenly spaced curves crossing at the centre",
        "non_intersected_splines": f"the objects form {G} smooth, evenly spaced curve{n} that do not touch",
        "overlap_splines": f"the objects form {G} crossing smooth curves, one repeated with a small offset",
        "axis_symmetry": "the objects are mirror-symmetric about an axis through the centre",
        "axis_symmetry_with_bkg": "the objects are mirror-symmetric about an axis through the central disc",
        "radial_symmetry": f"the objects form {G} identical arms at equal angles around the centre",
    }[c]


@functools.lru_cache(maxsize=None)
def rule_text(f: Factors) -> str:
    """The task's rule as one readable sentence."""
    cat = CATEGORIES[f.category]
    parts = [_principle_sentence(f)]
    attrs = [p for p in f.rel if p in ("shape", "color", "size")]
    if cat.principle == "similarity" and "color" in f.rel:
        names = cat.values["color"][:f.groups]
        parts.append("the groups are " + ", ".join(names[:-1]) + " and " + names[-1])
    if f.category == "red_triangle":
        parts.append(("every" if f.qualifier == "all" else "at least one") + " group contains a "
                     + _describe(f, plural=False))
    elif [p for p in attrs if not (p == "color" and cat.principle == "similarity")]:
        parts.append("all objects are " + _describe(f))
    if "count" in f.rel:
        parts.append("each group has exactly the same number of objects")
    if "axis" in f.rel:
        parts.append("the axis is vertical" if f.category != "radial_symmetry" else "one arm points straight up")
    text = parts[0] + "".join(", and " + p for p in parts[1:])
    return text[0].upper() + text[1:] + "."


def rule_structure(f: Factors) -> dict:
    """The task's rule as data: principle, group count and each relevant property's values."""
    cat = CATEGORIES[f.category]
    rel = {}
    for p in f.rel:
        if p == "count":
            rel[p] = "equal"
        elif p == "color" and cat.principle == "similarity":
            rel[p] = list(cat.values[p][:f.groups])
        else:
            rel[p] = list(cat.values[p])
    return {"principle": cat.principle, "category": f.category, "groups": f.groups, "quantity": f.quantity,
            "qualifier": f.qualifier, "relevant": rel, "irrelevant": list(f.irr)}


# ---------------------------------------------------------------- the task function

def _cases(categories) -> dict[str, dict]:
    """Task id -> factors of every ELVIS task of ``categories``, category by category."""
    return {f.task_id: {"category": f.category, "rel": list(f.rel), "irr": list(f.irr), "groups": f.groups,
                        "quantity": f.quantity, "qualifier": f.qualifier}
            for name in categories for f in enumerate_factors(name)}


def _about(category, **_) -> str:
    return f"ELVIS {CATEGORIES[category].principle}/{category}: {CATEGORIES[category].description}"


BATCHED = {**{name: getattr(batched, name) for name in ("radial_symmetry", "axis_symmetry", "axis_symmetry_with_bkg",
                                                       "palette", "fixed_number", "red_triangle", "fixed_props",
                                                       "circle_features", "grid", "big_triangle", "big_square",
                                                       "big_circle")},
           **{name: getattr(continuity, name) for name in ("one_split_n", "intersected_splines",
                                                          "non_intersected_splines", "overlap_splines")},
           **{name: getattr(cutouts, name) for name in ("pacman", "feature_triangle", "feature_square",
                                                       "feature_circle")}}
# ^ every category's layout, drawn a batch at a time


def record(f: Factors, kind: str | None, broken: tuple, objects: list[dict] | str, groups: list[int], behind: list,
           front: list, info: dict, text: bool = False) -> tuple[dict, str, str]:
    """``(meta, answer, caption)`` of an image of task ``f`` holding ``objects`` (their
    records, or those as :meth:`engine.jsontext.Rows.text`), of ``groups`` (each object's), a
    positive when ``kind`` is ``None``, else a negative breaking the principle or the relevant
    properties ``broken``. ``text=True``: the task's own fields (``factors``, ``rule``) as
    :class:`engine.jsontext.JSONText` made once per task, for a caller that only encodes the meta."""
    constraints = ["principle"] + list(f.rel)
    if kind == "principle":
        broken = ("principle",)
    label = kind is None
    count_rule = None
    if "count" in f.rel:
        count_rule = [groups.count(g) for g in range(f.groups)]
    factors, rule = _task_text(f) if text else _task_fields(f)
    meta = {"label": int(label), "principle": f.principle, "category": f.category, "factors": factors,
            "negative": kind, "rule": rule,
            "constraints": {"kept": [c for c in constraints if c not in broken], "broken": list(broken)},
            "objects": objects, "background": behind, "occluders": front,
            "structure": info, "group_sizes": count_rule}
    return meta, LABELS[0] if label else LABELS[1], caption(rule_text(f), kind, broken)


def _task_fields(f: Factors) -> tuple[dict, dict]:
    """The ``factors`` and ``rule`` fields every record of task ``f`` holds (new dicts)."""
    return ({"rel": list(f.rel), "irr": list(f.irr), "groups": f.groups, "quantity": f.quantity,
             "qualifier": f.qualifier}, {"text": rule_text(f), "structure": rule_structure(f)})


@functools.lru_cache(maxsize=None)
def _task_text(f: Factors) -> tuple[jsontext.JSONText, jsontext.JSONText]:
    """:func:`_task_fields` as the JSON text :func:`engine.jsontext.encode` writes for them."""
    return tuple(jsontext.JSONText(jsontext.encode(v)) for v in _task_fields(f))


def caption(rule: str, kind: str | None, broken: tuple) -> str:
    """The caption of an image of a task with rule text ``rule`` (see :func:`record`)."""
    if kind == "principle":
        broken = ("principle",)
    return "Rule: " + rule + ("" if kind is None else f" Broken: {', '.join(broken)}.")


@FAMILY.task(cases=_cases(list(CATEGORIES)), description=_about, answer_distribution={"positive": 0.5, "negative": 0.5},
             options=LABELS, batched=True, group="category")
def sample_elvis_batch(rng: BatchRandom, index: np.ndarray, category: list, rel: list, irr: list, groups: list,
                       quantity: list, qualifier: list, settings: dict) -> ShapeBatch:
    """ELVIS images of tasks of one category, drawn at once (the category's layout in
    :data:`BATCHED`): sample ``b`` is image ``index[b]`` of the task with factors
    ``category[b], rel[b], ...``; a positive at even indices, a negative at odd ones."""
    cat = category[0]
    share = settings.get("principle_share", PRINCIPLE_SHARE)
    kinds = [negative_kind(int(i), share) for i in index]
    fs = [Factors(cat, tuple(r), tuple(i), g, q, ql) for r, i, g, q, ql in zip(rel, irr, groups, quantity, qualifier)]
    broken = batched.broken_props(rng, cat, rel, np.array([k == "attribute" for k in kinds]))
    factors = batched.Batch(cat, {p: np.array([f.mode(p) for f in fs]) for p in CATEGORIES[cat].props},
                            np.array(groups), np.array(quantity), np.array([k != "principle" for k in kinds]), broken,
                            np.array(qualifier))
    return _columns(fs, kinds, broken, BATCHED[cat](rng, factors))


def _columns(fs: list[Factors], kinds: list, broken: dict, lay: dict) -> ShapeBatch:
    """A batched layout (:func:`scenes.elvis.batched.redrawn`: slot arrays ``[B, G, N]``, slot
    ``(g, n)`` an object of group ``g``, its ``extra`` fields, an optional ``under`` backdrop
    disc, optional ``over`` discs of the background colour drawn last (occluders) and
    per-sample ``structure`` fields) as a :class:`engine.batched.ShapeBatch`: the backdrop
    first, then the valid slots group by group, then the occluders."""
    B = len(fs)
    valid = lay["valid"].reshape(B, -1)
    order = np.argsort(~valid, axis=1, kind="stable")
    rows = np.arange(B)[:, None]

    def flat(a, tail=()):
        return a.reshape((B, -1) + tail)[rows, order]
    shape, colour, size, radius = flat(lay["shape"]), flat(lay["color"]), flat(lay["size"]), flat(lay["radius"])
    centre, rotation, valid = flat(lay["center"], (2,)), flat(lay["rotation"]), valid[rows, order]
    group = flat(lay["group"] if "group" in lay else
                 np.broadcast_to(np.arange(lay["valid"].shape[1])[None, :, None], lay["valid"].shape))
    rgb = flat(lay["rgb"], (3,)) if "rgb" in lay else batched.named_rgb(colour)
    extra = {k: flat(v) for k, v in lay.get("extra", {}).items()}
    mouth = extra.get("mouth")                              # pac-men: drawn turned to face their direction
    turn = rotation if mouth is None else rotation + np.where(mouth > 0, extra["direction"], 0.0)
    structure = [k for k, v in lay.items() if isinstance(v, np.ndarray) and v.ndim == 1]
    constants, lists = lay.get("constants", {}), lay.get("lists", {})
    under, over = lay.get("under"), lay.get("over")
    first = 0 if under is None else 1                       # the backdrop disc takes slot 0

    counts = valid.sum(1)

    @functools.cache
    def object_columns() -> dict:                           # each object's record fields, for every sample at once
        r5, c5, t3 = rounded(radius, 5), rounded(centre, 5), rounded(rotation, 3)
        return {"shape": shape, "color": colour, "rgb": rgb, "size": size, "radius": r5, "center": c5,
                "rotation": t3, "group": group, "prim": first + np.broadcast_to(np.arange(group.shape[1]), group.shape),
                **extra}

    @functools.cache
    def object_rows() -> jsontext.Rows:                     # the same records as JSON text
        return jsontext.Rows(object_columns(), counts)

    def meta(b: int, text: bool = False) -> dict:
        n = int(counts[b])
        if text:
            objects = object_rows().text(b)
        else:
            cols = object_columns()
            objects = [dict(zip(cols, vals)) for vals in zip(*(c[b, :n].tolist() for c in cols.values()))]
        behind = [] if under is None else [{"kind": "disc", "center": under["center"][b].tolist(),
                                            "radius": float(under["radius"][b]), "rgb": under["rgb"][b].tolist()}]
        info = {**constants, **{k: [int(v) for v in a[b] if v >= 0] for k, a in lists.items()},
                **{k: lay[k][b].item() for k in structure}, **(lay["describe"](b) if "describe" in lay else {})}
        front = [] if over is None else _occluders(over, b)
        return record(fs[b], kinds[b], broken_of(b), objects, group[b, :n].tolist(), behind, front, info, text)[0]

    def broken_of(b: int) -> tuple:
        return tuple(p for p in fs[b].rel if p in broken and broken[p][b])

    def caption_of(b: int) -> str:                          # the caption alone: no metadata built
        return caption(rule_text(fs[b]), kinds[b], broken_of(b))
    cols = dict(shape=batched.looked_up(shape, SHAPE_INDEX.__getitem__, np.int64), center=centre, radius=radius,
                color=rgb, valid=valid, rotation=turn, mouth=np.zeros_like(radius) if mouth is None else mouth)
    parts = [cols]
    if under is not None:                                   # a circle under everything
        parts.insert(0, _discs(under["center"][:, None], under["radius"][:, None], under["rgb"][:, None],
                               np.ones((B, 1), bool)))
    if over is not None:                                    # discs over everything, then valid slots first again
        parts.append(_discs(over["center"], over["radius"], np.broadcast_to(BACKGROUND, over["radius"].shape + (3,)),
                            over["valid"]))
    cols = {k: np.concatenate([p[k] for p in parts], 1) for k in cols}
    if over is not None:
        order = np.argsort(~cols["valid"], axis=1, kind="stable")
        cols = {k: v[rows, order] for k, v in cols.items()}
    answers = [LABELS[0] if k is None else LABELS[1] for k in kinds]
    return ShapeBatch(**cols, question=QUESTION, answer=answers, answer_type="fixed", options=list(LABELS), meta=meta,
                      background=BACKGROUND, caption=caption_of, meta_text=functools.partial(meta, text=True))


def _discs(centre: np.ndarray, radius: np.ndarray, rgb: np.ndarray, valid: np.ndarray) -> dict:
    """ShapeBatch columns of discs ``[B, D]`` (``centre [B,D,2]``, ``rgb [B,D,3]``)."""
    return dict(shape=np.full(radius.shape, SHAPE_INDEX["circle"]), center=centre, radius=radius, color=rgb,
                valid=valid, rotation=np.zeros(radius.shape), mouth=np.zeros(radius.shape))


def _occluders(over: dict, b: int) -> list[dict]:
    """Sample ``b``'s occluding discs (``over`` slots) as meta records; a notch names the
    object it bites."""
    out = []
    for k in np.nonzero(over["valid"][b])[0]:
        o = {"kind": "disc", "center": over["center"][b, k].tolist(), "radius": float(over["radius"][b, k]),
             "rgb": list(BACKGROUND)}
        if over["notch"][b, k] >= 0:
            o["notch"] = int(over["notch"][b, k])
        out.append(o)
    return out


