"""Bongard problems: every panel follows its side's rule and breaks the other side's (checked
from the panel facts by code apart from the generators), no concept falls to a global image
statistic, collages, and the rule-based judge against the stored paraphrases."""
import math

import numpy as np
import pytest
import torch

from engine.placement import PlacementError
from engine.registry import get_task, list_tasks
from engine.rendering import render
from engine.scene import Scene
from engine.rng import sample_rng
from scenes.bongard import CATEGORIES, CONCEPTS, collage, collage_pixels, judge
from scenes.bongard.tasks import collage_from_folders

POLYGON_SIDES = {"triangle": 3, "square": 4, "pentagon": 5, "hexagon": 6}


def _figs(f):
    return f.get("figures", [])


def _inside(dot, fig) -> bool | None:
    """True inside, False outside, None too close to the outline to say."""
    d = math.dist(dot, fig["center"])
    inner = fig["radius"] * (1.0 if fig["kind"] == "circle" else math.cos(math.pi / POLYGON_SIDES[fig["kind"]]))
    return True if d < inner - 0.02 else False if d > fig["radius"] + 0.02 else None


# The rule of every concept, side 0 (left) and side 1 (right), restated from its facts.
RULES = {
    "large_vs_small": lambda f: (_figs(f)[0]["radius"] >= 0.3, _figs(f)[0]["radius"] <= 0.13),
    "three_vs_five": lambda f: (len(_figs(f)) == 3, len(_figs(f)) == 5),
    "even_vs_odd": lambda f: (len(_figs(f)) % 2 == 0, len(_figs(f)) % 2 == 1),
    "upper_vs_lower": lambda f: (_figs(f)[0]["center"][1] + _figs(f)[0]["radius"] <= 0.5,
                                 _figs(f)[0]["center"][1] - _figs(f)[0]["radius"] >= 0.5),
    "left_vs_right_half": lambda f: (_figs(f)[0]["center"][0] + _figs(f)[0]["radius"] <= 0.5,
                                     _figs(f)[0]["center"][0] - _figs(f)[0]["radius"] >= 0.5),
    "horizontal_vs_vertical": lambda f: (abs((_figs(f)[0]["rotation"] + 90) % 180 - 90) <= 15,
                                         abs(_figs(f)[0]["rotation"] % 180 - 90) <= 15),
    "circle_above_vs_below_triangle": lambda f: (
        [g["center"][1] for g in _figs(f) if g["kind"] == "circle"][0]
        < [g["center"][1] for g in _figs(f) if g["kind"] == "triangle"][0],
        [g["center"][1] for g in _figs(f) if g["kind"] == "circle"][0]
        > [g["center"][1] for g in _figs(f) if g["kind"] == "triangle"][0]),
    "dot_inside_vs_outside": lambda f: (_inside(f["dot"], _figs(f)[0]) is True, _inside(f["dot"], _figs(f)[0]) is False),
    "identical_vs_different": lambda f: (
        len({g["kind"] for g in _figs(f)}) == 1 and len({g["radius"] for g in _figs(f)}) == 1,
        len({g["kind"] for g in _figs(f)}) == len(_figs(f)) > 1),
    "same_size_vs_different_sizes": lambda f: (
        len({g["radius"] for g in _figs(f)}) == 1,
        max(g["radius"] for g in _figs(f)) / min(g["radius"] for g in _figs(f)) >= 1.5),
    "triangles_vs_quadrilaterals": lambda f: (_figs(f)[0]["kind"] == "triangle", _figs(f)[0]["kind"] == "square"),
    "convex_vs_concave": lambda f: (_figs(f)[0]["kind"] not in ("star", "cross"), _figs(f)[0]["kind"] in ("star", "cross")),
    "closed_vs_open": lambda f: (_figs(f)[0]["kind"] not in ("arc", "zigzag"), _figs(f)[0]["kind"] in ("arc", "zigzag")),
    "curved_vs_straight": lambda f: (_figs(f)[0]["kind"] in ("circle", "ellipse"),
                                     _figs(f)[0]["kind"] in POLYGON_SIDES),
    "letters_vs_digits": lambda f: (f["glyph"].isalpha(), f["glyph"].isdigit()),
    "vowels_vs_consonants": lambda f: (f["glyph"] in "AEIOU", f["glyph"].isalpha() and f["glyph"] not in "AEIOU"),
    "circle_vs_no_circle": lambda f: (any(g["kind"] == "circle" for g in _figs(f)),
                                      not any(g["kind"] == "circle" for g in _figs(f))),
    "filled_vs_none": lambda f: (sum(g["filled"] for g in _figs(f)) == 1, not any(g["filled"] for g in _figs(f))),
}


def _objs(f, kind=None):
    return [o for o in f.get("objects", []) if kind is None or o["kind"] == kind]


def _lane_side(f) -> set:
    """For every car: 'left' or 'right' of the road's centre line as seen from the driver."""
    out = set()
    x = f["road"]["position"]
    for o in _objs(f, "car"):
        a = math.radians(o["heading"])
        fwd = (math.cos(a), -math.sin(a))
        off = (o["center"][0] - x, 0.0) if f["road"]["vertical"] else (0.0, o["center"][1] - x)
        cross = fwd[0] * off[1] - fwd[1] * off[0]       # screen y points down: negative = driver's left
        out.add("left" if cross < 0 else "right")
    return out


RULES.update({
    "square_vs_circular_roofs": lambda f: (all(o["roof"] == "square" for o in _objs(f)),
                                           all(o["roof"] == "circle" for o in _objs(f))),
    "island_vs_peninsula": lambda f: (f["land"]["neck_to"] is None, f["land"]["neck_to"] is not None),
    "left_vs_right_hand_traffic": lambda f: (_lane_side(f) == {"left"}, _lane_side(f) == {"right"}),
    "field_rows_horizontal_vs_vertical": lambda f: (all(o["rows"] == "horizontal" for o in _objs(f)),
                                                    all(o["rows"] == "vertical" for o in _objs(f))),
    "house_above_vs_below_road": lambda f: (_objs(f)[0]["center"][1] + _objs(f)[0]["size"] / 2 < f["road"]["y"] - 0.05,
                                            _objs(f)[0]["center"][1] - _objs(f)[0]["size"] / 2 > f["road"]["y"] + 0.05),
    "clouds_vs_clear": lambda f: (bool(_objs(f, "cloud")), not _objs(f, "cloud")),
    "roundabout_vs_crossroads": lambda f: (f["junction"]["roundabout"], not f["junction"]["roundabout"]),
    "cars_vs_empty_road": lambda f: (bool(_objs(f, "car")), not _objs(f, "car")),
    "boats_vs_planes": lambda f: (bool(_objs(f)) and all(o["kind"] == "boat" for o in _objs(f)),
                                  bool(_objs(f)) and all(o["kind"] == "plane" for o in _objs(f))),
    "trees_vs_houses": lambda f: (bool(_objs(f)) and all(o["kind"] == "tree" for o in _objs(f)),
                                  bool(_objs(f)) and all(o["kind"] == "building" for o in _objs(f))),
    "two_vs_six_buildings": lambda f: (len(_objs(f, "building")) == 2, len(_objs(f, "building")) == 6),
    "small_vs_large_buildings": lambda f: (max(o["size"] for o in _objs(f)) <= 0.09, min(o["size"] for o in _objs(f)) >= 0.2),
    "same_vs_mixed_roof_colours": lambda f: (len({o["colour"] for o in _objs(f)}) == 1,
                                             len({o["colour"] for o in _objs(f)}) == len(_objs(f)) > 1),
})


def test_concepts_cover_every_category_with_paraphrases():
    assert {c.category for c in CONCEPTS.values()} == set(CATEGORIES)
    assert set(RULES) == {c.name for c in CONCEPTS.values()}
    assert sorted(list_tasks("bongard/*")) == sorted(CONCEPTS)
    for c in CONCEPTS.values():
        assert len(c.correct) >= 2 and len(c.incorrect) >= 2 and c.left and c.right
    assert len(CONCEPTS) >= 30 and {c.style for c in CONCEPTS.values()} == {"classic", "aerial"}
    for style in ("classic", "aerial"):
        assert len({c.category for c in CONCEPTS.values() if c.style == style}) == len(CATEGORIES)


@pytest.mark.parametrize("tid", sorted(CONCEPTS))
def test_every_panel_follows_its_side_and_breaks_the_other(tid):
    rule = RULES[CONCEPTS[tid].name]
    for index in range(4):
        s = get_task(tid).sample(0, index)
        for side, name in ((0, "left"), (1, "right")):
            for f in s.meta["panels"][name] + s.meta["held_out"][name]:
                holds = rule(f)
                assert holds[side] and not holds[1 - side], (name, f)
                for g in _figs(f):
                    x, y = g["center"]
                    assert g["radius"] - 0.001 <= x <= 1 - g["radius"] + 0.001, g   # inside the panel
                    assert g["radius"] - 0.001 <= y <= 1 - g["radius"] + 0.001, g


def _panel(c, rng, side):
    for _ in range(50):
        try:
            return c.panel(rng, side)[0]
        except PlacementError:
            continue
    raise AssertionError("no panel")


def _statistics(img: torch.Tensor) -> list[float]:
    g = img.float().mean(0) / 255
    edges = (g[:, 1:] - g[:, :-1]).abs().mean() + (g[1:] - g[:-1]).abs().mean()
    return [(g < 0.5).float().mean().item(), g.mean().item(), edges.item()]


@pytest.mark.parametrize("tid", sorted(t for t, c in CONCEPTS.items() if not c.ink_is_the_concept))
def test_no_concept_is_solved_by_a_global_image_statistic(tid):
    c = CONCEPTS[tid]
    rng = sample_rng(0, tid, 0)
    X, Y = [], []
    for side in (0, 1):
        X += [_statistics(im) for im in render([_panel(c, rng, side) for _ in range(60)], 64)]
        Y += [side] * 60
    X, Y = np.array(X), np.array(Y)
    idx = np.random.default_rng(0).permutation(len(Y))
    tr, te = idx[:60], idx[60:]
    best = 0.0
    for f in range(X.shape[1]):                 # the best single-threshold classifier, fitted on half
        acc, t, sign = max((((sg * (X[tr, f] - t) > 0) == Y[tr]).mean(), t, sg)
                           for t in np.sort(X[tr, f]) for sg in (1, -1))
        best = max(best, ((sign * (X[te, f] - t) > 0) == Y[te]).mean())
    assert best <= 0.78, (tid, best)


def _mean(xs):
    return float(np.mean(xs)) if len(xs) else 0.0


# a second answer a solver could name, as a number per panel: it must not tell the sides apart
CONFOUNDS = {
    "bongard/classic/number/three_vs_five": ("figure size", lambda f: _mean([g["radius"] for g in f["figures"]])),
    "bongard/aerial/number/two_vs_six_buildings": [
        ("building size", lambda f: _mean([o["size"] for o in f["objects"] if o["kind"] == "building"])),
        ("trees", lambda f: sum(o["kind"] == "tree" for o in f["objects"]))],
    "bongard/aerial/presence/cars_vs_empty_road": ("trees", lambda f: sum(o["kind"] == "tree" for o in f["objects"])),
    "bongard/aerial/presence/clouds_vs_clear": ("white roofs", lambda f: sum(o.get("colour") == "white"
                                                                             for o in f["objects"])),
    "bongard/aerial/semantic/boats_vs_planes": ("on water", lambda f: _mean([o["on"] == "water"
                                                                             for o in f["objects"]])),
}


@pytest.mark.parametrize("tid", sorted(CONFOUNDS))
def test_a_named_confound_does_not_separate_the_sides(tid):
    """Over 30 problems (360 panels), the best threshold on the confound classifies at most
    65% of panels by side: a solver naming it is wrong on many panels, not graded wrong while
    right."""
    checks = CONFOUNDS[tid] if isinstance(CONFOUNDS[tid], list) else [CONFOUNDS[tid]]
    samples = get_task(tid).samples(0, range(30))
    for name, value in checks:
        x = np.array([value(f) for s in samples for side in ("left", "right") for f in s.meta["panels"][side]], float)
        y = np.array([side for s in samples for side in (0, 1) for _ in range(6)])
        best = max(((sg * (x - t) > 0) == y).mean() for t in np.unique(x) for sg in (1, -1))
        best = max(best, ((x >= x.min()) == y).mean())
        assert best <= 0.65, (tid, name, best)


def test_collage_layout_and_sizes():
    c = CONCEPTS["bongard/classic/shape/triangles_vs_quadrilaterals"]
    s = get_task(c.task_id).sample(0, 0)
    assert len(s.panels) == 15 and s.prompt_panels == [0]
    for panel_px in (32, 100):
        H, W = collage_pixels(panel_px)
        img = render([s.panels[0]], (H, W))[0]
        assert int(img[:, H // 2, W // 2].max()) <= 30                   # the black separator
        assert int(img[:, 1, 1].min()) == 235                            # the collage's grey margin
    with pytest.raises(ValueError, match="needs 6 left and 6 right panels, got 5 and 6"):
        collage(s.panels[1:6], s.panels[7:13])


COLOURS = [(40 + 17 * k, 200 - 13 * k, (90 * k) % 256) for k in range(12)]


def _panel_sizes(img, colours) -> list[tuple[int, int]]:
    """``(height, width)`` of the box each colour fills in a rendered collage ``[3,H,W]``."""
    a = np.asarray(img).astype(np.int16)
    out = []
    for c in colours:
        ys, xs = np.nonzero((np.abs(a - np.array(c).reshape(3, 1, 1)) <= 2).all(0))
        out.append((int(np.ptp(ys)) + 1, int(np.ptp(xs)) + 1) if len(ys) else (0, 0))
    return out


def _assert_whole_and_alike(sizes, panel_px):
    """Every panel shows whole (up to its 1-2 px frame) and all twelve at one size."""
    hs, ws = zip(*sizes)
    assert min(hs + ws) >= panel_px - 3 and max(hs + ws) <= panel_px, sizes
    assert max(ws[:6]) == max(ws[6:]) and min(ws[:6]) == min(ws[6:]), sizes        # left and right alike


@pytest.mark.parametrize("panel_px", [40, 100, 157])
def test_collage_panels_show_whole_and_alike_on_both_sides(panel_px):
    """Each of the 12 panels a flat colour to its edges: read back from pixels, every one is
    a full panel, the right side's as wide as the left's (they lost 8% of their left edge)."""
    panels = []
    for c in COLOURS:
        sc = Scene(background=c)
        sc.rectangle((0.5, 0.5), (1.0, 1.0), color=c)
        panels.append(sc)
    H, W = collage_pixels(panel_px)
    img = render([collage(panels[:6], panels[6:])], (H, W))[0]
    _assert_whole_and_alike(_panel_sizes(img, COLOURS), panel_px)


def test_collage_from_folders_of_real_images(tmp_path):
    from PIL import Image

    for side, colour in (("left", (200, 30, 30)), ("right", (30, 30, 200))):
        (tmp_path / side).mkdir()
        for k in range(6):
            Image.new("RGB", (80 + 10 * k, 60), colour).save(tmp_path / side / f"{k}.png")
    sc = collage_from_folders(tmp_path)
    H, W = collage_pixels(40)
    img = render([sc], (H, W))[0]
    assert img[0, H // 2, int(W * 0.2)] > 150 and img[2, H // 2, int(W * 0.8)] > 150        # red left, blue right
    for k, c in enumerate(COLOURS):                          # photos of one colour each: every one whole
        Image.new("RGB", (90 + 7 * k, 70), c).save(tmp_path / ("left" if k < 6 else "right") / f"{k % 6}.png")
    _assert_whole_and_alike(_panel_sizes(render([collage_from_folders(tmp_path)], collage_pixels(100))[0], COLOURS),
                            100)
    (tmp_path / "right" / "5.png").unlink()
    with pytest.raises(ValueError, match="holds 5 images; a collage needs exactly 6 per side"):
        collage_from_folders(tmp_path)
    with pytest.raises(ValueError, match="needs left/ and right/"):
        collage_from_folders(tmp_path / "left")


@pytest.mark.parametrize("tid", sorted(CONCEPTS))
def test_rule_judge_agrees_with_the_stored_paraphrases(tid):
    c = CONCEPTS[tid]
    assert judge(tid, f"{c.left} {c.right}")
    assert not judge(tid, f"{c.right} {c.left}")               # sides swapped
    assert not judge(tid, c.left) and not judge(tid, "")
    for left, right in c.correct:
        assert judge(tid, f"{left} {right}"), (left, right)
    for left, right in c.incorrect:
        assert not judge(tid, f"{left} {right}"), (left, right)


def test_replies_are_read_through_the_judge():
    tid = "bongard/classic/number/three_vs_five"
    s = get_task(tid).sample(0, 0)
    reader = get_task(tid).reader
    assert reader("Each left image has 3 figures. Each right image has 5 figures.", s).value == s.answer_text
    assert reader("Left has five. Right has three.", s).value != s.answer_text
    assert reader("   ", s).format_error


@pytest.mark.slow
@pytest.mark.parametrize("tid", sorted(CONCEPTS))
def test_every_panel_follows_its_rule_over_many_problems(tid):
    rule = RULES[CONCEPTS[tid].name]
    for seed in range(3):
        for s in get_task(tid).samples(seed, range(20)):
            for side, name in ((0, "left"), (1, "right")):
                for f in s.meta["panels"][name] + s.meta["held_out"][name]:
                    holds = rule(f)
                    assert holds[side] and not holds[1 - side], (seed, s.index, name, f)
