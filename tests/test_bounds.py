"""Bounded memory and time, colours read by type, and the render command's formats and sprites."""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from engine import cli
from engine.canvas import memory_budget, parse_bytes
from engine.errors import UserError
from engine.rendering import render
from engine.scene import MAX_POINTS, Scene, parse_color

ROOT = Path(__file__).resolve().parents[1]


def _main(argv) -> tuple[int, str]:
    err = io.StringIO()
    out = io.StringIO()
    old = sys.stderr, sys.stdout
    sys.stderr, sys.stdout = err, out
    try:
        code = cli.main([str(a) for a in argv])
    finally:
        sys.stderr, sys.stdout = old
    return code, err.getvalue()


# ---------------------------------------------------------------- colours: the type decides the range

def test_integers_mean_0_to_255_and_floats_0_to_1():
    assert parse_color((1, 0, 0)) == (1 / 255, 0.0, 0.0)
    assert parse_color((1.0, 0, 0)) == (1.0, 0.0, 0.0)
    assert parse_color(np.array([255, 0, 0], np.uint8)) == (1.0, 0.0, 0.0)
    assert parse_color(np.array([0.5, 0, 0])) == (0.5, 0.0, 0.0)
    assert parse_color(torch.tensor([255, 0, 0])) == (1.0, 0.0, 0.0)
    assert parse_color("#ff0000") == (1.0, 0.0, 0.0)


@pytest.mark.parametrize("colour,message", [((2.0, 0, 0), "floats must lie in 0..1"),
                                            ((256, 0, 0), "integers must lie in 0..255"),
                                            ((-1, 0, 0), "integers must lie in 0..255"),
                                            ((float("nan"), 0, 0), "floats must lie in 0..1"),
                                            ((True, 0, 0), "is not '#rrggbb'"), ((1, 2), "is not '#rrggbb'")])
def test_out_of_range_colours_are_refused_naming_the_value(colour, message):
    with pytest.raises(ValueError, match=message) as e:
        Scene().circle((0.5, 0.5), 0.1, color=colour)
    assert repr(colour) in str(e.value)


def test_per_scene_background_tensors_follow_their_dtype():
    empty = Scene()
    as_bytes = render([empty], 2, background=torch.tensor([[1, 0, 0]]))
    as_floats = render([empty], 2, background=torch.tensor([[1.0, 0.0, 0.0]]))
    assert as_bytes[0, :, 0, 0].tolist() == [1, 0, 0]              # (1, 0, 0) of 255: almost black
    assert as_floats[0, :, 0, 0].tolist() == [255, 0, 0]           # (1.0, 0, 0) of 1: red
    assert render([empty], 2, background=torch.tensor([[2, 0, 0]]))[0, :, 0, 0].tolist() == [2, 0, 0]
    with pytest.raises(ValueError, match=r"holds 2\.0 .*0\.\.1 for a floating dtype"):
        render([empty], 2, background=torch.tensor([[2.0, 0.0, 0.0]]))
    with pytest.raises(ValueError, match=r"holds 300\.0 .*0\.\.255 for an integer dtype"):
        render([empty], 2, background=torch.tensor([[300, 0, 0]]))


def test_json_colours_follow_the_number_type(tmp_path):
    spec = [{"background": [1, 0, 0], "primitives": []}, {"background": [1.0, 0, 0], "primitives": []}]
    (tmp_path / "s.json").write_text(json.dumps(spec))
    assert _main(["render", tmp_path / "s.json", "--out", tmp_path / "s.png", "--size", "4"])[0] == 0
    img = Image.open(tmp_path / "s.png")
    assert img.getpixel((0, 0)) == (1, 0, 0) and img.getpixel((4 + 8, 0)) == (255, 0, 0)
    (tmp_path / "b.json").write_text(json.dumps({"background": [2.0, 0, 0], "primitives": []}))
    code, err = _main(["render", tmp_path / "b.json", "--out", tmp_path / "b.png"])
    assert code == 2 and "background: colour (2.0, 0, 0) is out of range: floats must lie in 0..1" in err


# ---------------------------------------------------------------- scene values have bounds

@pytest.mark.parametrize("make,message", [
    (lambda s: s.circle((0.5, 0.5), 1e20), "radius=1e+20 must be finite and within 0..1e+06"),
    (lambda s: s.circle((1e7, 0.5), 0.1), "center.x=10000000.0 must be finite"),
    (lambda s: s.polygon((0.5, 0.5), 0.1, 10 ** 9), "sides=1000000000 must be an integer in 3..10000"),
    (lambda s: s.spline([(0, 0), (1, 1)] * 500, samples_per_segment=100), "more than 10000 vertices"),
    (lambda s: s.text("x" * 20_000, (0.5, 0.5)), "text of 20000 characters"),
])
def test_scene_values_beyond_their_bounds_are_refused(make, message):
    with pytest.raises(ValueError, match=message.replace("+", r"\+").replace("(", r"\(")):
        make(Scene())


def test_a_million_point_polyline_is_refused_at_once():
    points = np.random.default_rng(0).uniform(0, 1, (1_000_000, 2))
    t = time.perf_counter()
    with pytest.raises(ValueError, match=f"1000000 points; allowed: 2..{MAX_POINTS}"):
        Scene().polyline(points)
    assert time.perf_counter() - t < 1.0


# ---------------------------------------------------------------- memory budget

def test_the_budget_defaults_to_a_quarter_of_memory_and_reads_the_environment(monkeypatch):
    monkeypatch.delenv("PROCVIS_MEMORY_BUDGET", raising=False)
    assert memory_budget() == os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 4
    monkeypatch.setenv("PROCVIS_MEMORY_BUDGET", "3M")
    assert memory_budget() == 3 << 20
    assert parse_bytes("6GiB") == 6 << 30 and parse_bytes("1000") == 1000
    for bad in ("", "lots", "-1G", "nan"):
        with pytest.raises(UserError, match="PROCVIS_MEMORY_BUDGET"):
            parse_bytes(bad)


def _circles(n):
    return [Scene(background=(255, 255, 255)).circle((0.5, 0.5), 0.3, color=(10 * i, 0, 0)) for i in range(n)]


def test_a_batch_over_the_budget_is_split_and_draws_the_same(monkeypatch):
    from engine import rendering

    scenes = _circles(8)
    whole = render(scenes, 64, backend="torch")
    calls = []
    real = rendering._render_batch
    monkeypatch.setattr(rendering, "_render_batch", lambda b, *a: calls.append(len(b)) or real(b, *a))
    # the result is 8 x 12 KB; each image on the torch backend needs ~460 KB of work
    monkeypatch.setenv("PROCVIS_MEMORY_BUDGET", str(8 * 3 * 64 * 64 + 2 * 112 * 64 * 64 + 100))
    split = render(scenes, 64, backend="torch")
    assert calls == [2, 2, 2, 2] and torch.equal(split, whole)


def test_a_result_over_the_budget_is_refused_before_drawing(monkeypatch):
    monkeypatch.setenv("PROCVIS_MEMORY_BUDGET", "100K")
    with pytest.raises(UserError, match=r"rendering 8 images of 256x256 px returns 1.6 MB, over the memory budget"):
        render(_circles(8), 256)


def test_render_command_splits_to_fit_the_budget(tmp_path, monkeypatch):
    from engine import rendering

    (tmp_path / "s.json").write_text(json.dumps([{"primitives": [{"kind": "circle", "center": [0.5, 0.5],
                                                                  "radius": 0.3, "color": [i, 0, 0]}]}
                                                 for i in range(8)]))
    assert _main(["render", tmp_path / "s.json", "--out", tmp_path / "a.png", "--size", "256"])[0] == 0
    calls = []
    real = rendering.render
    monkeypatch.setattr(rendering, "render", lambda s, *a, **k: calls.append(len(s)) or real(s, *a, **k))
    picture = 256 * (8 * 256 + 7 * 8) * 3
    monkeypatch.setenv("PROCVIS_MEMORY_BUDGET", str(picture + 3 * 3 * 256 * 256))
    assert _main(["render", tmp_path / "s.json", "--out", tmp_path / "b.png", "--size", "256"])[0] == 0
    assert calls == [3, 3, 2]
    assert np.array_equal(np.asarray(Image.open(tmp_path / "a.png")), np.asarray(Image.open(tmp_path / "b.png")))
    monkeypatch.setenv("PROCVIS_MEMORY_BUDGET", str(picture))
    code, err = _main(["render", tmp_path / "s.json", "--out", tmp_path / "c.png", "--size", "256"])
    assert code == 2 and "8 scenes of 256x256 px make a 256x2104 px PNG image" in err and "memory budget" in err
    assert not (tmp_path / "c.png").exists()


@pytest.mark.slow
def test_eight_images_at_8192_px_stay_within_the_budget(tmp_path):
    """The measured case: 8 scenes at 8192 px once took 6.9 GB and 99 s; now about 2.7 GB and
    23 s on 2 cores (the 1.6 GB picture, a few images in flight and the interpreter)."""
    (tmp_path / "s.json").write_text(json.dumps([{"primitives": [{"kind": "circle", "center": [0.5, 0.5],
                                                                  "radius": 0.3, "color": [255, 0, 0]}]}] * 8))
    budget = 3 << 30
    code = ("import resource, sys\nfrom engine.cli import main\nrc = main(sys.argv[1:])\n"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)\nsys.exit(rc)")
    r = subprocess.run([sys.executable, "-c", code, "render", str(tmp_path / "s.json"), "--out",
                        str(tmp_path / "s.png"), "--size", "8192"], capture_output=True, text=True, cwd=ROOT,
                       env={**os.environ, "PROCVIS_MEMORY_BUDGET": str(budget)})
    assert r.returncode == 0, r.stderr[-2000:]
    assert int(r.stdout.split()[-1]) < budget
    Image.MAX_IMAGE_PIXELS = None
    assert Image.open(tmp_path / "s.png").size == (8 * 8192 + 7 * 8, 8192)


def test_workers_are_capped_by_cores_with_a_note(tmp_path, capsys):
    from engine.outputs import generate

    generate("shapes/colours", str(tmp_path / "d"), count=1, size=16, workers=1000, progress=False)
    err = capsys.readouterr().err
    assert f"--workers 1000 capped at {os.cpu_count()}" in err and err.count("\n") == 1


def test_workers_are_capped_by_memory(monkeypatch):
    from engine.outputs import worker_cap

    monkeypatch.setenv("PROCVIS_MEMORY_BUDGET", "1300M")
    n, note = worker_cap(64, 224)
    assert n == min(2, os.cpu_count()) and "capped at" in note


def test_shards_are_listed_lazily():
    from engine.outputs import Layout, RunConfig

    tasks = [f"a/b{i}" for i in range(1000)]
    for fmt in ("parquet", "imagefolder"):
        cfg = RunConfig(pattern="x", seed=0, count=10 ** 8, size=16, format=fmt, shard_size=3)
        t = time.perf_counter()
        layout = Layout(cfg, tasks)
        first = next(iter(layout.shards()))
        assert first.members() == [("a/b0", 0), ("a/b0", 1), ("a/b0", 2)] and time.perf_counter() - t < 0.1
    last = 1000 * 10 ** 8 // 3                        # parquet: the family's rows in files of 3
    packed = Layout(RunConfig(pattern="x", seed=0, count=10 ** 8, size=16, format="parquet", shard_size=3), tasks)
    assert packed.shard_number(f"data/a/shard-{last:05d}.parquet") == last
    assert packed.shard_number(f"data/a/shard-{last + 1:05d}.parquet") is None
    assert packed.shard_number("data/a/shard-7.parquet") is None and packed.shard_number("data/b/shard-00007.parquet") is None
    assert packed.shard_number("data/a/shard-00007.parquet") == 7
    # sample 10**8 - 1 of a/b1 is row 2 * 10**8 - 1 of the family: file (2 * 10**8 - 1) // 3
    assert packed.shard_of("a/b1", 10 ** 8 - 1).rel == f"data/a/shard-{(2 * 10 ** 8 - 1) // 3:05d}.parquet"
    assert packed.shard_of("a/b1", 0).segments == (("a/b0", range(10 ** 8 - 1, 10 ** 8)), ("a/b1", range(0, 2)))
    for layout in (packed, Layout(RunConfig(pattern="x", seed=0, count=10 ** 8, size=16, format="imagefolder",
                                            shard_size=3), tasks)):
        for t, i in (("a/b0", 0), ("a/b1", 10 ** 8 - 1), ("a/b999", 12345)):
            assert layout.rel_of(t, i) == layout.shard_of(t, i).rel and (t, i) in layout.shard_of(t, i).members()


def test_huge_counts_are_refused_before_work():
    code, err = _main(["generate", "shapes/colours", "--out", "/nonexistent/x", "--count", str(10 ** 12)])
    assert code == 2 and "'1000000000000'; allowed: 1..100000000" in err


def test_baselines_time_grows_at_most_linearly_in_n():
    from engine.stats import critical_accuracy, critical_count

    critical_count.cache_clear()
    t = time.perf_counter()
    assert 0.25 < critical_accuracy(10 ** 7, 0.25) < 0.2503
    assert time.perf_counter() - t < 5
    code, err = _main(["baselines", "shapes/colours", "--n", "1e8"])
    assert code == 2 and "'1e8'" in err


def test_preview_sizes_are_checked_before_any_sample(tmp_path):
    code, err = _main(["preview", "shapes/*", "--out", tmp_path / "p.png", "--size", "3000"])
    assert code == 2 and "--size 3000 with --count 8 makes a contact sheet of at least" in err
    assert "allowed: --size up to 2040" in err and not (tmp_path / "p.png").exists()


# ---------------------------------------------------------------- formats and sprites

def _scene_file(tmp_path, primitives):
    (tmp_path / "s.json").write_text(json.dumps({"background": [255, 255, 255], "primitives": primitives}))
    return tmp_path / "s.json"


@pytest.mark.parametrize("ext,fmt", [(".png", "PNG"), (".jpg", "JPEG"), (".JPEG", "JPEG"), (".webp", "WEBP")])
def test_render_writes_the_format_its_extension_names(tmp_path, ext, fmt):
    scene = _scene_file(tmp_path, [{"kind": "square", "center": [0.5, 0.5], "side": 1.0, "color": [255, 0, 0]}])
    assert _main(["render", scene, "--out", tmp_path / f"x{ext}", "--size", "32"])[0] == 0
    img = Image.open(tmp_path / f"x{ext}")
    assert img.format == fmt and img.size == (32, 32)
    r, g, b = img.convert("RGB").getpixel((16, 16))
    assert r > 240 and g < 15 and b < 15


def test_render_refuses_a_picture_too_wide_for_its_format(tmp_path):
    scene = _scene_file(tmp_path, [])
    code, err = _main(["render", scene, "--out", tmp_path / "x.webp", "--size", "1x16384"])
    assert code == 2 and "too large for WEBP (at most 16383 px a side)" in err


def test_sprites_load_from_a_scene_file(tmp_path):
    Image.fromarray(np.full((4, 6, 3), (0, 0, 255), np.uint8)).save(tmp_path / "blue tile.png")
    nested = np.zeros((3, 2, 2), np.uint8)
    nested[1] = 255                                                   # green
    scene = _scene_file(tmp_path, [
        {"kind": "sprite", "image": "blue tile.png", "center": [0.25, 0.5], "size": [0.5, 1.0]},
        {"kind": "sprite", "image": nested.tolist(), "center": [0.75, 0.5], "size": [0.5, 1.0]}])
    assert _main(["render", scene, "--out", tmp_path / "s.png", "--size", "40"])[0] == 0
    img = Image.open(tmp_path / "s.png")
    assert img.getpixel((10, 20)) == (0, 0, 255) and img.getpixel((30, 20)) == (0, 255, 0)


@pytest.mark.parametrize("image,message", [
    ("missing.png", "cannot read sprite image 'missing.png'"),
    ([[[1, 2]]], "sprite image must be an image file path or nested lists [3 or 4][h][w]"),
    ([[[300]], [[0]], [[0]]], "sprite image values must be integers 0..255"),
    ([[[2.0]], [[0.0]], [[0.0]]], "sprite image values must be floats 0..1"),
])
def test_bad_sprites_in_a_scene_file_are_one_line_errors(tmp_path, image, message):
    scene = _scene_file(tmp_path, [{"kind": "sprite", "image": image, "center": [0.5, 0.5], "size": [1, 1]}])
    code, err = _main(["render", scene, "--out", tmp_path / "s.png"])
    assert code == 2 and err.count("\n") == 1 and "scene 0 primitive 0: " + message in err


def test_a_batch_whose_padding_exceeds_the_budget_is_refused(monkeypatch):
    s = Scene()
    for _ in range(50):
        s.polyline(np.random.default_rng(0).uniform(0, 1, (5000, 2)))
    monkeypatch.setenv("PROCVIS_MEMORY_BUDGET", "10M")
    with pytest.raises(UserError, match="a batch of 64 scenes with up to 50 primitives and 5000 vertices"):
        render([s] * 64, 16)
