"""Aerial Bongard panels in an orthophoto look: textures are deterministic, every car shows
its heading from pixels whatever its colour, shadows fall down-right of what casts them,
every concept's deciding cue is at least 6 px on a 224 px panel, facts list every drawn
object, no object is hidden, and the panels of one problem differ."""
import math

import numpy as np
import pytest
import torch

from engine.registry import get_task
from engine.rendering import render
from engine.scene import Scene
from evals.audit.legibility import MIN_EXTENT, panel_legibility
from kernels import terrain as tex
from scenes.bongard import CONCEPTS
from scenes.bongard import aerial

PX = 224                       # the default panel size
CUE = 6 / PX                   # 6 px in panel units
AERIAL = sorted(t for t, c in CONCEPTS.items() if c.style == "aerial")


def _panels(tid, index=0):
    s = get_task(tid).sample(0, index)
    return s, [f for side in ("left", "right") for f in s.meta["panels"][side]]


def test_textures_are_deterministic_for_a_seed_and_differ_between_seeds():
    for make in (lambda k: tex.ground(k, "grass"), lambda k: tex.water(k), lambda k: tex.crowns(k, 2),
                 lambda k: tex.roof(k, "square", "pitched"), lambda k: tex.cloud(k)[0], lambda k: tex.asphalt(k),
                 lambda k: tex.crop_rows(k, (190, 170, 100), 9, True)):
        a, b, c = make(3), make(3), make(4)
        assert a.dtype == torch.uint8 and a.shape[-3] in (3, 4)
        assert torch.equal(a, b)
        assert not torch.equal(a, c)
    assert tex.fbm([1, 2], (16, 24)).shape == (2, 16, 24)


@pytest.mark.parametrize("tid", AERIAL)
def test_same_task_seed_and_index_give_the_same_pixels(tid):
    a, b = get_task(tid).sample(0, 1), get_task(tid).sample(0, 1)
    ims = render([a.panels[1], b.panels[1], a.panels[8], b.panels[8]], 96)
    assert torch.equal(ims[0], ims[1]) and torch.equal(ims[2], ims[3])


def _car_glass(colour, heading):
    """A car of ``colour`` on plain asphalt at the centre of a 224 px panel, heading
    ``heading``: ``[H, W]`` bool, the pixels showing its glass (within 40 of its glass colour)."""
    p = aerial.Panel(np.random.default_rng(0))
    p.ground = Scene(background=aerial.ASPHALT)
    p.car((0.5, 0.5), heading, colour)
    p.shadows = Scene()
    s, _ = p.done()
    s.primitives = [q for q in s.primitives if q.kind != "sprite"]          # no textures: clean pixels
    s.sprites = []
    img = render([s], PX)[0].numpy().astype(int)
    return np.abs(img - np.array(_glass(colour))[:, None, None]).max(0) < 40


def _glass(colour):
    body = aerial.CARS[colour]
    return aerial.GLASS_DARK if 0.299 * body[0] + 0.587 * body[1] + 0.114 * body[2] > 100 else aerial.GLASS_LIGHT


@pytest.mark.parametrize("colour", sorted(aerial.CARS))
def test_a_car_shows_its_heading_on_every_colour(colour):
    """Glass differs from every body paint by a clear contrast; heading right, the
    windscreen ahead of the centre spans at least 6 px across the car and there is at least
    1.5 times as much glass ahead of the centre as behind it (the rear window)."""
    body = np.array(aerial.CARS[colour])
    assert np.abs(body - np.array(_glass(colour))).max() >= 100
    g = _car_glass(colour, 0.0)
    cy, cx = PX // 2, PX // 2
    cols = g[cy - 12:cy + 12, cx - 14:cx + 14].sum(0)       # glass pixels per column along the axis
    front, rear = cols[14:].sum(), cols[:14].sum()
    assert cols.max() >= 6, (colour, cols)
    assert front >= 1.5 * rear > 0, (colour, front, rear)
    for h in (90.0, 200.0):                                 # any heading: the glass shows
        assert _car_glass(colour, h).sum() >= 12


def test_shadows_fall_down_right_of_what_casts_them():
    """In every panel of a problem of each concept, every shadow (a black primitive drawn
    translucent) is displaced down-right, by as much on x as on y, from its caster: a
    primitive of the same kind, size and turn, or, for a shadow image, an object of the
    facts."""
    for tid in AERIAL:
        s = get_task(tid).sample(0, 0)
        for k in range(1, 13):
            facts = s.meta["panels"]["left" if k <= 6 else "right"][(k - 1) % 6]
            prims = s.panels[k].primitives
            for q in prims:
                if q.kind == "sprite":
                    img = s.panels[k].sprites[q.index]
                    if not (q.alpha < 1 and int(np.asarray(img[:3]).max()) == 0):
                        continue
                    casters = [o["center"] for o in facts["objects"]]
                else:
                    if not (q.alpha < 1 and q.color == (0.0, 0.0, 0.0)):
                        continue
                    casters = [o.center for o in prims if o.alpha == 1 and o.kind == q.kind
                               and o.scale == q.scale and o.rotation == q.rotation]
                assert any(q.center[0] - c[0] > 0 and abs((q.center[0] - c[0]) - (q.center[1] - c[1])) < 1e-3
                           for c in casters), (tid, k, q.kind, q.center)


@pytest.mark.parametrize("tid", AERIAL)
def test_facts_list_every_object_with_kind_centre_size_colour_and_terrain(tid):
    _, panels = _panels(tid)
    for f in panels:
        assert f["terrain"] in aerial.GROUND_KINDS or f["terrain"] == "water", f
        for o in f["objects"]:
            assert {"kind", "center", "size", "colour"} <= set(o), o
            assert o["size"] >= CUE, o                     # every object >= 6 px at 224 px


@pytest.mark.parametrize("tid", AERIAL)
def test_the_deciding_cue_is_at_least_6_px(tid):
    name = CONCEPTS[tid].name
    _, panels = _panels(tid)
    for f in panels:
        if name in ("left_vs_right_hand_traffic", "cars_vs_empty_road"):
            for o in f["objects"]:
                if o["kind"] == "car":                      # lane side: the car's offset from the centre line
                    axis = 0 if f["road"]["vertical"] else 1
                    assert abs(o["center"][axis] - f["road"]["position"]) >= CUE
        elif name == "field_rows_horizontal_vs_vertical":                  # one row and furrow
            for o in f["objects"]:
                assert (o["height"] if o["rows"] == "horizontal" else o["width"]) / o["row_count"] >= CUE
        elif name == "roundabout_vs_crossroads":
            assert 0.16 >= CUE                                   # the central island's diameter
        elif name == "small_vs_large_buildings":
            assert 0.2 - 0.09 >= CUE
    if name == "island_vs_peninsula":                   # water between land and frame, or a wide neck
        s = get_task(tid).sample(0, 0)
        for k in range(1, 13):
            land = [im for im in s.panels[k].sprites if im.shape[0] == 4 and im.shape[1] == 128][0]
            a = np.asarray(land[3]) > 127
            band = math.ceil(6 / PX * 128)
            edge = np.concatenate([a[:band].ravel(), a[-band:].ravel(), a[:, :band].ravel(), a[:, -band:].ravel()])
            if k <= 6:
                assert not edge.any(), k
            else:
                touching = np.concatenate([a[0], a[-1], a[:, 0], a[:, -1]])
                assert touching.sum() >= 6 / PX * 128, k


@pytest.mark.parametrize("tid", AERIAL)
def test_no_object_is_hidden_or_too_small_at_224_px(tid):
    s = get_task(tid).sample(0, 2)
    for k in (1, 2, 7, 8):
        r = panel_legibility(s.panels[k], (PX, PX))
        assert r["hidden"] == 0 and (r["min_extent"] or MIN_EXTENT) >= MIN_EXTENT, (k, r)


@pytest.mark.parametrize("tid", AERIAL)
def test_the_panels_of_a_problem_differ(tid):
    s = get_task(tid).sample(0, 0)
    ims = render(s.panels[1:13], 64).float()
    d = (ims[:, None] - ims[None]).abs().mean((2, 3, 4))
    off = d[~torch.eye(12, dtype=torch.bool)]
    assert off.min() > 4.0, off.min()
