"""KiVA foundations: the procedural 3D object library rendered headless into sprites, the
sprite cache, clear errors, and the batched transforms."""
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from engine.errors import UserError
from kernels import sprites as T
from kernels.mesh_render import HeadlessGLError, render_parts
from scenes.kiva import OBJECTS, build
from scenes.kiva.trials import tint
from scenes.kiva.views import sprite
from tests.runners import Recorder


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PROCVIS_CACHE", str(tmp_path))
    sprite.cache_clear()
    yield tmp_path
    sprite.cache_clear()


def test_library_has_forty_objects_that_render_to_visible_sprites(cache):
    assert len(OBJECTS) >= 40
    for name in OBJECTS:
        s = sprite(name, "front", 64)
        assert s.shape == (4, 64, 64) and s.dtype == torch.uint8
        cover = (s[3] > 0).float().mean().item()
        assert 0.05 < cover < 0.85, (name, cover)
        assert s[3, 0].max() == 0 and s[3, -1].max() == 0          # transparent border: nothing cut off
    with pytest.raises(ValueError, match="unknown object 'spaceship'"):
        build("spaceship")


def test_sprites_are_cached_on_disk_and_identical(cache):
    a = sprite("duck", "front", 48)
    files = list((cache / "kiva").glob("duck-front-48-*.png"))
    assert len(files) == 1
    sprite.cache_clear()
    b = sprite("duck", "front", 48)                                  # read back from disk
    assert torch.equal(a, b)
    assert not torch.equal(sprite("duck", "side", 48), a)


def test_missing_headless_gl_names_the_library(monkeypatch):
    import ctypes.util

    from kernels import mesh_render

    mesh_render._renderer_module.cache_clear()
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: None if name == "EGL" else "lib" + name)
    with pytest.raises(HeadlessGLError, match="libEGL.*apt-get install libegl1"):
        mesh_render._renderer_module()
    mesh_render._renderer_module.cache_clear()


@pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="needs triton installed")
def test_a_process_that_rendered_sprites_can_still_load_triton(tmp_path):
    # Mesa's software GL brings its own LLVM; triton loaded after it crashed the process
    # (a model or the fused GPU pass loading after fresh sprites)
    code = "from scenes.kiva.views import sprite; sprite('duck', 'front', 32); import triton.language; print('ok')"
    run = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PROCVIS_CACHE": str(tmp_path)},
                         cwd=Path(__file__).resolve().parents[1], capture_output=True, text=True, timeout=300)
    assert (run.returncode, run.stdout.strip()) == (0, "ok"), run.stderr[-2000:]
    assert list((tmp_path / "kiva").glob("duck-front-32-*.png"))                  # it did render, not read a cache


def _sprites():
    return torch.stack([sprite(n, "front", 64) for n in ("letter_F", "duck", "car")])


def test_recolour_follows_the_blend_rule():
    s = _sprites()
    out = T.recolour(s, (255, 0, 0))
    vis = s[:, 3] > 0
    expect = (s[:, :3].int() + torch.tensor([255, 0, 0]).view(1, 3, 1, 1)) // 2
    assert torch.equal(out[:, :3].int()[vis.unsqueeze(1).expand(-1, 3, -1, -1)],
                       expect[vis.unsqueeze(1).expand(-1, 3, -1, -1)])
    assert torch.equal(out[:, 3], s[:, 3]) and torch.equal(out[:, :3][~vis.unsqueeze(1).expand(-1, 3, -1, -1)],
                                                           s[:, :3][~vis.unsqueeze(1).expand(-1, 3, -1, -1)])
    grey = T.recolour(s, "grey")
    assert torch.equal(grey[:, 0][vis], grey[:, 1][vis]) and torch.equal(grey[:, 1][vis], grey[:, 2][vis])


def _iou(a, b):
    ma, mb = a[:, 3] > 127, b[:, 3] > 127
    return ((ma & mb).sum() / (ma | mb).sum()).item()


def test_rotations_reflections_and_scaling():
    s = T.fit_for_rotation(_sprites())
    assert torch.equal(T.rotate(T.rotate(T.rotate(T.rotate(s, 90), 90), 90), 90), s)
    assert torch.equal(T.rotate(s, 180), T.reflect(s, "both"))
    assert _iou(T.rotate(T.rotate(s, 45), 45), T.rotate(s, 90)) > 0.9
    assert _iou(T.rotate(s, -90), T.rotate(s, 270)) == 1.0
    # clockwise: the top edge goes to the right edge
    marker = torch.zeros(1, 4, 32, 32, dtype=torch.uint8)
    marker[0, :, 2:6, 14:18] = 255
    assert T.rotate(marker, 90)[0, 3, 14:18, 26:30].float().mean() > 200
    assert torch.equal(T.reflect(T.reflect(s, "x"), "x"), s)
    for im in T.rotate(s, 135):
        assert im[3, 0].max() == 0 and im[3, :, 0].max() == 0               # nothing cropped
    big, small = T.scale(s, 2.0), T.scale(s, 0.5)
    area = (s[:, 3] > 127).sum((1, 2)).float()
    assert ((small[:, 3] > 127).sum((1, 2)).float() / area).sub(0.25).abs().max() < 0.05
    stretched = T.scale(s, 0.5, 1.0)
    assert ((stretched[:, 3] > 127).sum((1, 2)).float() / area).sub(0.5).abs().max() < 0.06
    assert big.shape == s.shape
    with pytest.raises(ValueError, match="axis='z'"):
        T.reflect(s, "z")


def test_copies_lay_out_n_objects():
    from tests.pixels import components

    one = T.fit_for_rotation(sprite("ball", "front", 96)[None])[0]
    for n in (1, 2, 3, 4, 6, 9):
        canvas = T.copies(one, n, 192)
        blobs = [c for c in components((canvas[3] > 127).numpy()) if len(c) > 20]
        assert len(blobs) == n, n
    with pytest.raises(ValueError, match="n=0"):
        T.copies(one, 0)


def test_transforms_are_batch_invariant():
    s = _sprites()
    for fn in (lambda x: T.recolour(x, (0, 0, 255)), lambda x: T.rotate(x, 45), lambda x: T.scale(x, 0.5, 2.0)):
        together = fn(s)
        alone = torch.cat([fn(s[i:i + 1]) for i in range(len(s))])
        assert torch.equal(together, alone)


# ---------------------------------------------------------------- trials

from engine.registry import get_task, list_tasks  # noqa: E402

KIDS_TASKS = list_tasks("kiva/*")


def _option_sprites(s):
    return [p.sprites[0] for p in s.panels[4:7]]


def _iou_mask(a, b):
    ma, mb = a[3] > 127, b[3] > 127
    return ((ma & mb).sum() / (ma | mb).sum().clamp_min(1)).item()


def _base(name):
    """An object's fitted trial sprite: its render, cropped to what is visible, 90% of 256 px."""
    return T.fit(sprite(name, "front", 256)[None])[0]


def _expected(s, test_in=None):
    """The correct option rebuilt from the metadata with the transforms, apart from the generator."""
    m = s.meta
    base = _base(m["objects"][1])[None]
    d, p = m["domain"], m["parameter"]
    if d == "colour":
        return tint(base, p)[0]                 # the target blends into the original object
    if d == "size":
        return T.scale(T.scale(base, 0.5), 2.0 if p == "x2" else 0.5)[0]
    if d == "number":
        return T.copies(base[0], m["start"] + int(p))
    if d == "rotation":
        return T.rotate(T.fit_for_rotation(base), {"+90": 90, "-90": -90, "180": 180}[p])[0]
    return T.reflect(T.fit_for_rotation(base), p)[0]


def _check_answer(s, expected):
    """The answer's option is ``expected(s, test input)`` rebuilt from the metadata (the test
    input itself for a no-change control); returns the three option sprites."""
    opts = _option_sprites(s)
    test_in = s.panels[3].sprites[0]
    assert torch.equal(opts["ABC".index(s.answer[1])], test_in if s.meta["control"] else expected(s, test_in))
    return opts


def test_fourteen_kids_subdomains():
    assert len(KIDS_TASKS) == 14


@pytest.mark.parametrize("tid", KIDS_TASKS)
def test_trials_answer_options_and_controls(tid):
    for s in get_task(tid).samples(0, range(10)):
        opts = _check_answer(s, _expected)
        train_in, train_out, test_in = (p.sprites[0] for p in s.panels[1:4])
        assert torch.equal(train_in, train_out) == s.meta["control"]
        assert sorted(s.meta["options"]) == ["correct", "unchanged", "wrong"]
        assert torch.equal(opts[s.meta["options"].index("unchanged")], test_in)
        for i in range(3):                       # every option looks different from the others
            for j in range(i + 1, 3):
                assert not torch.equal(opts[i], opts[j])
                if s.meta["domain"] in ("rotation", "reflection"):
                    assert _iou_mask(opts[i], opts[j]) < 0.985, (s.id, i, j)
        assert s.meta["objects"][0] != s.meta["objects"][1]
        assert s.meta["what"]["options"][s.meta["what"]["gold"] - 1] in (
            "No change between pictures", "Color of objects", "Size of objects", "Number of objects",
            "Orientation of objects")


def test_symmetric_objects_are_never_used_for_rotation_or_reflection():
    used = set()
    for tid in list_tasks("kiva/rotation/*") + list_tasks("kiva/reflection/*"):
        for s in get_task(tid).samples(1, range(12)):
            used.add(s.meta["objects"][1])
    assert "ball" not in used and "bowl" not in used and len(used) > 10
    from scenes.kiva.trials import differ

    ball = T.fit_for_rotation(sprite("ball", "front", 128)[None])
    assert not differ(ball[0], T.reflect(ball, "y")[0], shape_only=True)     # measured, not listed


def test_choice_reader():
    tid = KIDS_TASKS[0]
    s = get_task(tid).sample(0, 0)
    read = get_task(tid).reader
    assert read("(B)", s).value == "(B)" and read("(B)", s).strict
    assert read("I think (c) because the colour...", s).value == "(C)"
    assert read("The answer is A.", s).value == "(A)"
    assert read("", s).format_error and read("none of them", s).format_error


@pytest.mark.parametrize("protocol, images", [("kiva", [2, 2, 4, 6, 6]), ("kiva-stitched", [1, 1, 1, 1, 1])])
def test_three_stage_protocol(tmp_path, protocol, images):
    import json

    from evals.harness import evaluate

    runner = Recorder()
    rows = evaluate("kiva/rotation/*", runner, str(tmp_path), count=10, size=64, progress=False, protocol=protocol)
    assert all(r["accuracy"] == 1.0 for r in rows.values())
    results = json.loads((tmp_path / "results.json").read_text())
    assert all(r["what_correct"] and r["how_correct"] and r["extrapolation_runs"] == [True] * 3 for r in results)
    reruns = [q for q in runner.requests if q.id.endswith("#3") or q.id.endswith("#4")]
    assert reruns and all(q.history == [] for q in reruns)
    golds = {q.gold for q in runner.requests if q.id.endswith("#4")}
    assert len(golds) > 1                                      # the reshuffles move the right answer
    t = json.loads((tmp_path / "transcripts.jsonl").read_text().splitlines()[0])
    assert [u["images"] for u in t["turns"]] == images
    assert t["turns"][0]["prompt"].startswith("You are an excellent visual puzzle solver!")
    assert "(4) No change between pictures (5) Doesn't apply" in t["turns"][0]["prompt"]
    summary = (tmp_path / "summary.md").read_text()
    assert "## KiVA" in summary and "| rotation | 30 | 100.0 | 100.0 | 100.0 | 100.0 |" in summary
    assert "| chance | | 25.0 | 33.3 | 33.3 | 33.3 |" in summary


ADULT_TASKS = list_tasks("kiva_adults/*")


def _adult_expected(s, test_in):
    from scenes.kiva.adults import ANGLE, _count, _size

    m = s.meta
    d, p = m["domain"], m["parameter"]
    x = test_in[None]
    if d == "colour":
        return tint(_base(m["objects"][1])[None], p)[0]
    if d == "size":
        return _size(x, p)[0]
    if d == "number":
        return T.copies(_base(m["objects"][1]), _count(m["starts"][1], p))
    if d == "rotation":
        return T.rotate(x, ANGLE[p])[0]
    return T.reflect(x, p)[0]


def test_twenty_nine_adult_subdomains():
    assert len(ADULT_TASKS) == 29


@pytest.mark.parametrize("tid", ADULT_TASKS)
def test_adult_trials(tid):
    for s in get_task(tid).samples(0, range(10)):
        opts = _check_answer(s, _adult_expected)
        if s.meta["control"]:
            assert torch.equal(s.panels[1].sprites[0], s.panels[2].sprites[0])
        for i in range(3):
            for j in range(i + 1, 3):
                assert not torch.equal(opts[i], opts[j])
        if s.meta["domain"] == "colour":
            assert len({*s.meta["tints"], s.meta["parameter"]}) == 3          # train, test and target differ
        if s.meta["domain"] == "number":
            assert s.meta["starts"][0] != s.meta["starts"][1]


COMPOSITIONAL = list_tasks("kiva_compositional/*")


def _chain_expected(s, test_in=None):
    m = s.meta
    x = T.scale(_base(m["objects"][1])[None], 0.5)
    for d, p in zip(m["domains"], m["parameters"]):
        if d == "colour":
            x = tint(x, p)
        elif d == "size":
            x = T.scale(x, 2.0 if p == "x2" else 0.5)
        elif d == "rotation":
            x = T.rotate(x, {"+90": 90, "-90": -90, "180": 180}[p])
        else:
            x = T.reflect(x, p)
    return x[0]


def test_compositional_trials_chain_two_domains():
    assert len(COMPOSITIONAL) == 31
    for tid in COMPOSITIONAL[::3]:
        for s in get_task(tid).samples(0, range(10)):
            opts = _check_answer(s, _chain_expected)
            assert len({o.numpy().tobytes() for o in opts}) == 3


@pytest.mark.slow
@pytest.mark.parametrize("tid", KIDS_TASKS + ADULT_TASKS + COMPOSITIONAL)
def test_every_kiva_task_over_many_trials(tid):
    expected = {"kiva": _expected, "kiva_adults": _adult_expected, "kiva_compositional": _chain_expected}
    for seed in (0, 1):
        for s in get_task(tid).samples(seed, range(30)):
            opts = _check_answer(s, expected[tid.split("/")[0]])
            assert len({o.numpy().tobytes() for o in opts}) == 3
            if s.meta.get("domain") in ("rotation", "reflection"):
                assert all(_iou_mask(opts[i], opts[j]) < 0.985 for i in range(3) for j in range(i + 1, 3))
