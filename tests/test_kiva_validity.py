"""KiVA validity, checked from pixels and by playing the protocols: named colours land on their
hue, copies keep their size, answers sit uniformly in every stage, the chance rows hold for a
guesser and the oracle scores 100% at every stage, re-asks show what they ask about, every
object in a composite is big and distinct enough to see, and user object folders (meshes or
images, built here) go through every trial type."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from PIL import Image

from engine.errors import UserError
from engine.outputs import render_samples
from engine.registry import get_task, list_tasks
from engine.rendering import render
from scenes.kiva.presentation import NATIVE
from tests.pixels import components
from tests.selection import slow_except

HUES = {"red": 0.0, "green": 120.0, "blue": 240.0, "yellow": 60.0}


def _hue(rgb) -> float | None:
    r, g, b = (float(x) / 255 for x in rgb)
    hi, lo = max(r, g, b), min(r, g, b)
    if hi - lo < 0.03:
        return None
    h = ((g - b) / (hi - lo)) % 6 if hi == r else (b - r) / (hi - lo) + 2 if hi == g else (r - g) / (hi - lo) + 4
    return 60 * h


def _object_pixels(image) -> np.ndarray:
    """``[N, 3]`` the pixels of a rendered panel that are not its white background."""
    im = np.asarray(image).astype(np.int16)
    return im[:, (255 - im).max(0) > 24].T


def _correct_panel(s, images):
    return images[4 + s.meta["options"].index("correct")]


COLOUR_TASKS = list_tasks("kiva/colour/*") + list_tasks("kiva_adults/colour/*") + \
    list_tasks("kiva_compositional/colour+*")[::3]


@pytest.mark.parametrize("tid", COLOUR_TASKS)
def test_colour_outputs_show_the_named_hue_from_pixels(tid):
    samples = [s for s in get_task(tid).samples(0, range(6)) if not s.meta["control"]]
    for s, images in zip(samples, render_samples(samples, 384)):
        target = s.meta["parameters"][0] if "parameters" in s.meta else s.meta["parameter"]
        for panel in (images[2], _correct_panel(s, images)):          # train output, correct option
            mean = _object_pixels(panel).mean(0)
            if target == "grey":
                assert mean.max() - mean.min() < 12, (s.id, mean)
            else:
                hue = _hue(mean)
                assert hue is not None and min(abs(hue - HUES[target]), 360 - abs(hue - HUES[target])) <= 20, \
                    (s.id, target, hue)


@pytest.mark.parametrize("tid", list_tasks("kiva/number/*") + list_tasks("kiva_adults/number/*")[::2])
def test_number_keeps_each_object_the_same_size(tid):
    """Ink per object, read from the rendered given pair, is the same before and after the
    count changes (copies were once shrunk to fit their number: -2 from 3 doubled them)."""
    from scenes.kiva.adults import _count

    samples = [s for s in get_task(tid).samples(0, range(5)) if not s.meta["control"]]
    for s, images in zip(samples, render_samples(samples, 768)):
        m = s.meta
        n_in = m["start"] if "start" in m else m["starts"][0]
        n_out = _count(n_in, m["parameter"])
        inks = [((255 - np.asarray(p).astype(np.int16)).max(0) > 24).sum() for p in (images[1], images[2])]
        assert abs((inks[0] / n_in) / (inks[1] / n_out) - 1) < 0.05, (s.id, n_in, n_out, inks)


def _mask(panel) -> np.ndarray:
    return (255 - np.asarray(panel).astype(np.int16)).max(0) > 24


def _box(mask) -> tuple[int, int]:
    ys, xs = np.nonzero(mask)
    return int(np.ptp(ys)) + 1, int(np.ptp(xs)) + 1


def _iou(a, b) -> float:
    return float((a & b).sum() / max(1, (a | b).sum()))


@pytest.mark.parametrize("tid", list_tasks("kiva/size/*") + list_tasks("kiva/rotation/*") + list_tasks("kiva/reflection/*")
                         + ["kiva_adults/size/x2_x", "kiva_adults/size/x0.5_y", "kiva_adults/reflection/both"])
def test_size_rotation_and_reflection_follow_the_paper_from_pixels(tid):
    """Read from the rendered given pair with numpy alone: sizes scale both axes (or one) by
    the factor about the centre; +90 turns clockwise, -90 counterclockwise; x flips upside
    down, y sideways."""
    samples = [s for s in get_task(tid).samples(0, range(6)) if not s.meta["control"]]
    for s, images in zip(samples, render_samples(samples, 864)):
        a, b = _mask(images[1]), _mask(images[2])
        p = s.meta["parameter"]
        if s.meta["domain"] == "size":
            f = 2.0 if p.startswith("x2") else 0.5
            fy, fx = (1.0, f) if p.endswith("_x") else (f, 1.0) if p.endswith("_y") else (f, f)
            (ha, wa), (hb, wb) = _box(a), _box(b)
            assert abs(hb / ha / fy - 1) < 0.12 and abs(wb / wa / fx - 1) < 0.12, (s.id, (ha, wa), (hb, wb))
            continue
        want = {"+90": np.rot90(a, -1), "-90": np.rot90(a, 1), "180": np.rot90(a, 2), "x": a[::-1], "y": a[:, ::-1],
                "both": a[::-1, ::-1]}[p]
        assert _iou(want, b) > 0.9, (s.id, _iou(want, b))
        others = [v for k, v in {"+90": np.rot90(a, -1), "-90": np.rot90(a, 1), "180": np.rot90(a, 2)}.items()
                  if k != p] if s.meta["domain"] == "rotation" else [a[::-1] if p == "y" else a[:, ::-1]]
        assert all(_iou(o, b) < _iou(want, b) - 0.04 for o in others), s.id


VARIANTS = {"kiva": list_tasks("kiva/*"), "kiva_adults": list_tasks("kiva_adults/*"),
            "kiva_compositional": list_tasks("kiva_compositional/*")}


@pytest.mark.parametrize("variant", slow_except(list(VARIANTS), ["kiva"]))
def test_answers_are_uniform_at_every_stage_over_500_trials(variant):
    tasks = VARIANTS[variant]
    per = -(-510 // len(tasks))
    where = {"extrapolation": np.zeros(3), "what": np.zeros(3), "how": np.zeros(2)}
    for tid in tasks:
        for s in get_task(tid).samples(7, range(per)):
            where["extrapolation"]["ABC".index(s.answer_text[1])] += 1
            if s.meta["control"]:
                assert s.meta["what"]["options"][s.meta["what"]["gold"] - 1] == "No change between pictures"
                assert s.meta["how"]["options"][s.meta["how"]["gold"] - 1] == "No change between pictures"
                continue
            for stage in ("what", "how"):
                opts = s.meta[stage]["options"]
                assert opts[-2:] == ["No change between pictures", "Doesn't apply"]
                assert len(opts) == (5 if stage == "what" else 4)
                where[stage][s.meta[stage]["gold"] - 1] += 1
    for stage, counts in where.items():
        expected = counts.sum() / len(counts)
        chi2 = float(((counts - expected) ** 2 / expected).sum())
        assert chi2 < (13.8 if len(counts) == 3 else 10.8), (variant, stage, counts)    # p = 0.001


def test_option_numbers_of_any_length_are_read():
    from scenes.kiva.protocol import first_number

    assert first_number("(10) Both changed", 12) == 10
    assert first_number("I pick ( 2 ) because", 5) == 2
    assert first_number("(7) then (3)", 5) == 3               # the first *valid* option
    assert first_number("no parentheses here 2", 5) is None


def test_random_runner_lands_on_chance_and_oracle_scores_everything(tmp_path):
    from evals.harness import evaluate
    from evals.runners import OracleRunner, RandomRunner

    pattern = "kiva*/*"
    evaluate(pattern, OracleRunner(), str(tmp_path / "oracle"), count=2, size=96, progress=False, protocol="kiva")
    rows = json.loads((tmp_path / "oracle" / "results.json").read_text())
    assert all(r["what_correct"] and r["how_correct"] and r["correct"] and all(r["extrapolation_runs"])
               for r in rows)
    evaluate(pattern, RandomRunner(3), str(tmp_path / "random"), count=4, size=96, progress=False, protocol="kiva")
    rows = json.loads((tmp_path / "random" / "results.json").read_text())
    n = len(rows)
    for key, chance_key in (("what_correct", "what_chance"), ("how_correct", "how_chance"), ("correct", None)):
        hit = sum(bool(r[key]) for r in rows) / n
        p = sum(r[chance_key] for r in rows) / n if chance_key else 1 / 3
        assert abs(hit - p) <= 3 * (p * (1 - p) / n) ** 0.5, (key, hit, p, n)
    runs = [x for r in rows for x in r["extrapolation_runs"]]
    assert abs(sum(runs) / len(runs) - 1 / 3) <= 3 * (2 / 9 / len(runs)) ** 0.5
    summary = (tmp_path / "random" / "summary.md").read_text()
    for title in ("### KiVA (kids)", "### KiVA-adults", "### KiVA-compositional"):
        assert title in summary
    assert "proprietary model, separate images" in summary and "| chance | | 25.0 | 33.3 | 33.3 | 33.3 |" in summary


@pytest.mark.parametrize("tid", ["kiva/rotation/+90", "kiva_adults/number/x3", "kiva_compositional/colour+size/red+x2"])
def test_every_protocol_turn_shows_what_it_asks_about(tid):
    from evals.audit.solvability import audit_protocol
    from scenes.kiva.protocol import Kiva, KivaStitched

    samples = get_task(tid).samples(0, range(3))
    for proto in (Kiva(), KivaStitched()):
        out = audit_protocol(proto, samples, 384)
        assert out["unsolvable"] == 0, out["examples"]


def _drawn(scene, k: int, hw) -> np.ndarray:
    """The pixels that sprite primitive ``k`` of ``scene`` changes: ``[H, W]`` bool."""
    from dataclasses import replace

    without = replace(scene, primitives=[p for j, p in enumerate(scene.primitives) if j != k])
    a, b = (np.asarray(x).astype(np.int16) for x in render([scene, without], hw))
    return np.abs(a - b).max(0) > 24


@pytest.mark.parametrize("tid", ["kiva/size/x0.5", "kiva_adults/size/x0.5_y", "kiva_adults/number/x3",
                                 "kiva_compositional/size+rotation/x0.5+180"])
def test_every_object_in_a_composite_is_at_least_24_px_and_stands_out(tid):
    s = get_task(tid).sample(0, 1)
    scene = s.panels[0]
    hw = s.panel_hw(0, (NATIVE, NATIVE))                      # the family's native size
    for k, p in enumerate(scene.primitives):
        if p.kind not in ("sprite", "arrow"):
            continue
        drawn = _drawn(scene, k, hw)
        if p.kind == "arrow":
            ys, xs = np.nonzero(drawn)
            assert max(np.ptp(ys), np.ptp(xs)) + 1 >= 24, (s.id, k)
            continue
        sprite = scene.sprites[p.index]
        pieces = [c for c in components(drawn) if len(c) >= 12]
        assert pieces, (s.id, k)
        for c in pieces:
            ys, xs = zip(*c)
            assert max(max(ys) - min(ys), max(xs) - min(xs)) + 1 >= 24 or len(pieces) > 9, (s.id, k)
        # what can be seen of it is most of what it covers
        cover = (sprite[3] > 127).sum().item() * (2 * p.scale[0] * hw[1]) ** 2 / sprite.shape[-1] ** 2
        assert drawn.sum() >= 0.5 * cover, (s.id, k, drawn.sum(), cover)


def test_sprites_have_no_dark_fringe():
    """A white object on white shows no darker pixel anywhere once resized, copied, fitted
    or drawn into a scene (premultiplied alpha throughout)."""
    from engine.scene import Scene
    from kernels import sprites as T

    img = torch.zeros(1, 4, 64, 64, dtype=torch.uint8)
    img[0, :3, 10:50, 20:44] = 255
    img[0, 3, 10:50, 20:44] = 255
    img[0, 3, 10, 20:44] = 90                                 # a soft edge
    for out in (T.scale(img, 0.37), T.rotate(img, 30), T.fit(img), T.copies(img[0], 5)[None]):
        assert T.over(out).min() >= 250
    scene = Scene(background=(255, 255, 255)).sprite(img[0], (0.5, 0.5), (0.33, 0.33))
    assert render([scene], (77, 77))[0].min() >= 250


# ---------------------------------------------------------------- user objects

def _l_shape(colour) -> "object":
    import open3d as o3d

    parts = [o3d.geometry.TriangleMesh.create_box(1.0, 0.3, 0.3), o3d.geometry.TriangleMesh.create_box(0.3, 1.4, 0.3)]
    parts[1].translate((0, 0.3, 0))
    mesh = parts[0] + parts[1]
    mesh.paint_uniform_color(colour)
    return mesh


def _trials_of_every_type(settings):

    out = []
    for tid in ("kiva/colour/red", "kiva/size/x2", "kiva/number/+1", "kiva/rotation/+90", "kiva/reflection/y",
                "kiva_adults/rotation/+45", "kiva_compositional/size+reflection/x0.5+x"):
        out += get_task(tid, settings).samples(0, range(2))
    return out


def test_a_folder_of_meshes_with_their_own_colours_is_used_in_every_trial_type(tmp_path):
    import open3d as o3d

    from scenes.kiva.library import sprite

    for name, colour in (("lblock", (0.55, 0.55, 0.6)), ("hook", (0.7, 0.68, 0.6)), ("rusty", (0.8, 0.2, 0.1))):
        o3d.io.write_triangle_mesh(str(tmp_path / f"{name}.ply"), _l_shape(colour))
    ball = o3d.geometry.TriangleMesh.create_sphere(0.5, resolution=24)
    ball.paint_uniform_color((0.5, 0.5, 0.55))
    o3d.io.write_triangle_mesh(str(tmp_path / "ball.ply"), ball)
    import trimesh

    mixed = trimesh.Scene([trimesh.creation.box((1.0, 0.3, 0.3)), trimesh.PointCloud(np.random.default_rng(0).random((20, 3)))])
    mixed.export(str(tmp_path / "stick.glb"))                 # points beside the triangles: left out
    settings = {"kiva.objects": str(tmp_path)}
    assert (sprite("user:stick", 64, {"objects": str(tmp_path)})[3] > 127).any()
    red = sprite("user:rusty", 128, {"objects": str(tmp_path)})
    r, g, b = (red[c][red[3] > 127].float().mean() for c in range(3))
    assert r > 1.5 * g and r > 1.5 * b                         # its own colour, not forced grey
    for s in _trials_of_every_type(settings):
        assert all(o.startswith("user:") for o in s.meta["objects"]), s.id
    for s in get_task("kiva/reflection/y", settings).samples(0, range(8)):
        assert "user:ball" not in s.meta["objects"]               # measured: a sphere looks the same mirrored


def test_a_folder_of_object_images_is_keyed_and_used(tmp_path):
    from PIL import ImageDraw

    from scenes.kiva.library import sprite

    rgba = Image.new("RGBA", (120, 90), (0, 0, 0, 0))
    ImageDraw.Draw(rgba).polygon([(10, 10), (60, 10), (60, 30), (30, 30), (30, 80), (10, 80)], fill=(90, 90, 120, 255))
    rgba.save(tmp_path / "ell.png")
    plain = Image.new("RGB", (100, 100), (250, 250, 250))
    ImageDraw.Draw(plain).polygon([(20, 15), (80, 15), (80, 35), (40, 35), (40, 60), (20, 85)], fill=(120, 110, 95))
    plain.save(tmp_path / "flag.jpg", quality=95)
    from scenes.kiva.library import _load_image

    keyed = _load_image(tmp_path / "flag.jpg")                 # [H, W, 4], the picture's own frame
    assert keyed[50, 90, 3] == 0 and keyed[5, 5, 3] == 0 and keyed[50, 60, 3] == 0      # background, the notch
    assert keyed[25, 50, 3] == 255 and keyed[70, 30, 3] == 255                         # the shape
    assert (sprite("user:flag", 128, {"objects": str(tmp_path)})[3] > 127).any()
    settings = {"kiva.objects": str(tmp_path)}
    for s in _trials_of_every_type(settings):
        assert sorted(s.meta["objects"]) == ["user:ell", "user:flag"], s.id


def test_bad_object_folders_name_the_file(tmp_path):

    (tmp_path / "a").mkdir()
    Image.new("RGBA", (20, 20), (0, 0, 0, 0)).save(tmp_path / "a" / "empty.png")
    Image.new("RGBA", (20, 20), (200, 0, 0, 255)).save(tmp_path / "a" / "ok.png")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "broken.ply").write_bytes(b"ply\nformat nonsense\n\x00\x01")
    (tmp_path / "b" / "x.obj").write_text("v 0 0 0\n")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "notes.txt").write_text("hi")
    for folder, name in (("a", "empty.png"), ("b", "broken.ply"), ("c", "notes.txt")):
        with pytest.raises(UserError) as e:
            get_task("kiva/size/x2", {"kiva.objects": str(tmp_path / folder)}).sample(0, 0)
        assert name in str(e.value) and "\n" not in str(e.value), str(e.value)
    (tmp_path / "d").mkdir()
    for suffix in (".png", ".jpg"):
        Image.new("RGB", (20, 20), (200, 0, 0)).save(tmp_path / "d" / f"cup{suffix}")
    with pytest.raises(UserError, match="both object 'user:cup'"):
        get_task("kiva/size/x2", {"kiva.objects": str(tmp_path / "d")})
    with pytest.raises(UserError, match="not a folder"):
        get_task("kiva/size/x2", {"kiva.objects": str(tmp_path / "nowhere")})
