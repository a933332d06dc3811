"""The renderer: both fast paths against the reference, pixel properties users rely on."""
import gc

import numpy as np
import pytest
import torch

import kernels.raster_torch as raster_torch
from engine import KINDS, Scene, SceneBatch, render
from tests.conftest import random_scene, sprite_image
from tests.reference import gather_cells, inside_fraction, render_reference


def _ref_uint8(scenes, H, W):
    return torch.from_numpy(np.stack([np.round(np.clip(render_reference(s, H, W), 0, 1) * 255) for s in scenes])).to(torch.uint8)


def _maxdiff(a, b):
    return int((a.int() - b.int()).abs().max())


@pytest.mark.parametrize("size", [(96, 96), (64, 80)])
def test_backends_match_reference_on_every_kind(size, device):
    rng = np.random.default_rng(7)
    scenes = [random_scene(rng, n=4) for _ in range(6)]
    assert all(set(KINDS) <= set(s.kinds()) for s in scenes)
    H, W = size
    ref = _ref_uint8(scenes, H, W)
    fast = render(scenes, size, backend="numba")
    tiled = render(scenes, size, device=device, backend="torch").cpu()
    assert _maxdiff(fast, ref) <= 2
    assert _maxdiff(tiled, ref) <= 2
    assert _maxdiff(fast, tiled) <= 2


def test_chunked_paths_match(monkeypatch):
    # Small budgets force the torch path through its chunking loops.
    rng = np.random.default_rng(3)
    scenes = [random_scene(rng, n=30) for _ in range(5)]
    full = render(scenes, 72, backend="torch")
    monkeypatch.setattr(raster_torch, "ENTRY_BUDGET", 7)
    monkeypatch.setattr(raster_torch, "ELEMENT_BUDGET", 5000)
    assert _maxdiff(render(scenes, 72, backend="torch"), full) == 0
    assert _maxdiff(render(scenes, 72, backend="numba"), full) <= 2


@pytest.mark.parametrize("kind", ["circle", "ellipse", "polygon", "star", "heart", "club", "pacman", "cross"])
def test_coverage_agrees_with_supersampled_inside_tests(kind):
    # Independent of any distance formula: 8x8 point-in-shape sub-samples per pixel.
    rng = np.random.default_rng(11)
    s = Scene(background=(0, 0, 0))
    kw = dict(color=(255, 255, 255), rotation=float(rng.uniform(0, 90)))
    if kind == "ellipse":
        s.ellipse((0.5, 0.5), (0.3, 0.17), **kw)
    elif kind == "polygon":
        s.polygon((0.5, 0.5), 0.3, 7, **kw)
    elif kind == "pacman":
        s.pacman((0.5, 0.5), 0.3, mouth=70, direction=20, **kw)
    else:
        getattr(s, kind)((0.5, 0.5), 0.3, **kw)
    cov = render([s], 64, dtype=torch.float32)[0, 0].numpy()
    frac = inside_fraction(s, 0, 64, 64)
    assert np.abs(cov - frac).mean() < 0.01
    assert np.abs(cov - frac).max() < 0.35                      # edge pixels: one-pixel filter vs box
    solid = (frac == 1) | (frac == 0)
    interior = solid & (np.abs(cov - frac) > 0)
    assert interior.sum() <= 0.02 * solid.sum()


def test_draw_order_and_ties_keep_insertion_order():
    a = Scene(background=(255, 255, 255))
    a.square((0.5, 0.5), 0.5, color=(255, 0, 0), order=1)
    a.square((0.5, 0.5), 0.5, color=(0, 0, 255), order=0)
    a.circle((0.2, 0.2), 0.1, color=(0, 255, 0))
    a.circle((0.2, 0.2), 0.1, color=(0, 0, 0))
    img = render([a], 100)[0]
    assert img[:, 50, 50].tolist() == [255, 0, 0]                # higher order on top
    assert img[:, 20, 20].tolist() == [0, 0, 0]                  # tie: later insertion on top


def test_alpha_blends_over_background():
    s = Scene(background=(255, 255, 255))
    s.square((0.5, 0.5), 0.6, color=(255, 0, 0), alpha=0.5)
    assert render([s], 50)[0][:, 25, 25].tolist() == [255, 128, 128]


def test_outline_leaves_the_inside_empty():
    s = Scene(background=(255, 255, 255))
    s.circle((0.5, 0.5), 0.3, color=(0, 0, 0), fill=False, stroke=0.02)
    img = render([s], 100)[0, 0]
    assert img[50, 50] == 255 and img[50, 20] == 0 and img[50, 79] == 0
    ring = Scene(background=(255, 255, 255))
    ring.ring((0.5, 0.5), 0.3, 0.2, color=(0, 0, 0))
    r = render([ring], 100)[0, 0]
    assert r[50, 50] == 255 and r[50, 25] == 0 and r[50, 10] == 255


def test_rotation_turns_counter_clockwise_on_screen():
    s = Scene(background=(255, 255, 255))
    s.rectangle((0.5, 0.5), (0.6, 0.1), color=(0, 0, 0), rotation=90)
    t = Scene(background=(255, 255, 255))
    t.rectangle((0.5, 0.5), (0.1, 0.6), color=(0, 0, 0))
    assert _maxdiff(render([s], 80), render([t], 80)) <= 1
    tri = Scene(background=(255, 255, 255))
    tri.arrow((0.2, 0.5), (0.8, 0.5), width=0.05, color=(0, 0, 0), rotation=90)   # now points up
    img = render([tri], 100)[0, 0]
    assert img[22, 50] == 0 and img[78, 50] == 0 and img[50, 20] == 255


def test_same_scene_at_two_resolutions_agrees():
    rng = np.random.default_rng(5)
    scenes = [random_scene(rng, kinds=["circle", "star", "heart", "rectangle", "text"], n=0) for _ in range(3)]
    small = render(scenes, 64, dtype=torch.float32)
    big = render(scenes, 256, dtype=torch.float32)
    down = torch.nn.functional.avg_pool2d(big, 4)
    assert (small - down).abs().mean() < 0.01


def test_empty_scene_and_background_choices():
    empty = Scene(background="#102030")
    img = render([empty], (5, 7))
    assert img.shape == (1, 3, 5, 7) and img[0, :, 0, 0].tolist() == [16, 32, 48]
    assert render([empty], 4, background=(1, 2, 3))[0, :, 0, 0].tolist() == [1, 2, 3]
    bg = torch.randint(0, 256, (2, 3, 9, 9), dtype=torch.uint8)
    assert torch.equal(render([empty, empty], 9, background=bg), bg)
    f = render([empty], 4, dtype=torch.float32)
    assert f.dtype == torch.float32 and abs(float(f[0, 0, 0, 0]) - 16 / 255) < 1e-6


def test_sprite_aligned_to_pixels_is_copied_exactly():
    rng = np.random.default_rng(0)
    img = sprite_image(rng, 16, 16)
    img[3] = 255
    s = Scene(background=(0, 0, 0))
    s.sprite(img, (0.5, 0.5), (0.5, 0.5))                       # 16 px on a 32 px canvas
    for backend in ("numba", "torch"):
        out = render([s], 32, backend=backend)[0]
        assert torch.equal(out[:, 8:24, 8:24], img[:3]), backend


def test_text_draws_ink_and_rejects_unknown_characters():
    s = Scene(background=(255, 255, 255))
    s.text("W→", (0.5, 0.5), height=0.4, color=(0, 0, 0))
    t = Scene(background=(255, 255, 255))
    t.text("i", (0.5, 0.5), height=0.4, color=(0, 0, 0))
    ink = lambda sc: int((render([sc], 100)[0, 0] < 128).sum())  # noqa: E731
    assert ink(s) > 3 * ink(t) > 0
    with pytest.raises(ValueError, match="not in the glyph atlas"):
        Scene().text("snow☃", (0.5, 0.5))


def test_many_primitives_visit_only_their_boxes():
    # 2,000 tiny discs: the tiled path must bin, not evaluate every disc everywhere.
    rng = np.random.default_rng(1)
    s = Scene(background=(255, 255, 255))
    for c in rng.uniform(0.02, 0.98, size=(2000, 2)):
        s.circle(tuple(c), 0.004, color=(0, 0, 0))
    batch = SceneBatch.from_scenes([s])
    from kernels.raster import prepare

    prep = prepare(batch.primitives, 256, 256)
    area = ((prep.bbox[..., 2] - prep.bbox[..., 0]) * (prep.bbox[..., 3] - prep.bbox[..., 1])).sum()
    assert area < 2000 * 256 * 256 / 500
    assert _maxdiff(render([s], 256, backend="torch"), render([s], 256, backend="numba")) <= 2


@pytest.mark.parametrize("bad", [0, -3, float("nan"), float("inf"), 2.5, 10 ** 6, "big"])
def test_bad_sizes_are_rejected(bad):
    with pytest.raises(ValueError, match="size="):
        render([Scene()], bad)


def test_bad_primitives_are_rejected():
    with pytest.raises(ValueError, match="unknown primitive kind 'blob'; allowed: circle"):
        Scene().add("blob", center=(0.5, 0.5))
    with pytest.raises(ValueError, match="radius=-1"):
        Scene().circle((0.5, 0.5), -1)
    with pytest.raises(ValueError, match="colour"):
        Scene().circle((0.5, 0.5), 0.1, color=(300, 0, 0))
    with pytest.raises(ValueError, match="center.x"):
        Scene().circle((float("nan"), 0.5), 0.1)
    with pytest.raises(ValueError, match="backend="):
        render([Scene()], 8, backend="opengl")
    s = Scene().add("star", center=(0.5, 0.5), radius=0.2, points=6)
    assert s.kinds() == ["star"]


@pytest.mark.slow
def test_backends_match_reference_over_many_random_batches():
    for seed in range(40):
        rng = np.random.default_rng(1000 + seed)
        scenes = [random_scene(rng, n=int(rng.integers(0, 12))) for _ in range(4)]
        size = (int(rng.integers(24, 120)), int(rng.integers(24, 120)))
        ref = _ref_uint8(scenes, *size)
        assert _maxdiff(render(scenes, size, backend="numba"), ref) <= 2, seed
        assert _maxdiff(render(scenes, size, backend="torch"), ref) <= 2, seed


def test_numba_preparation_matches_the_torch_one():
    from kernels import raster_numba
    from kernels.raster import prepare

    rng = np.random.default_rng(21)
    batch = SceneBatch.from_scenes([random_scene(rng, n=5) for _ in range(5)] + [Scene()])
    a, b = prepare(batch.primitives, 70, 90), raster_numba.prepare(batch.primitives, 70, 90)
    assert torch.equal(a.count, b.count) and torch.equal(a.perm, b.perm)
    assert (a.bbox - b.bbox).abs().max() <= 1
    for name in ("center", "half", "cs", "stroke", "shell"):
        assert torch.allclose(getattr(a, name), getattr(b, name), atol=1e-4), name


def test_recycled_output_memory_never_overwrites_a_live_result():
    from kernels import raster_numba

    a = Scene(background=(255, 0, 0))
    b = Scene(background=(0, 0, 255))
    first = render([a], 16, backend="numba")
    address = first.data_ptr()
    view = first[0, 0]
    kept = first.clone()
    del first
    second = render([b], 16, backend="numba")            # same shape: must not reuse the live array
    assert torch.equal(view, kept[0, 0]) and second[0, 2, 0, 0] == 255
    del view, kept
    gc.collect()
    third = render([b], 16, backend="numba")             # the first result is gone: its memory is reused
    assert torch.equal(second, third) and third.data_ptr() == address
    assert len(raster_numba._POOL.free) <= raster_numba._POOL.max_free


def test_cell_sampling_agrees_with_the_hand_written_gather():
    """grid_sample (kernels.raster_torch.sample_cells) computes the same bilinear samples as
    the gather it replaced: padded sprites with their own sizes (zeros outside) and glyph
    cells (edge values outside), at random points in and around them."""
    g = torch.Generator().manual_seed(5)
    images = torch.rand(7, 4, 19, 23, generator=g)
    own = torch.tensor([[19, 23], [12, 9], [19, 4], [1, 1], [7, 23], [18, 22], [3, 17]])
    for k, (h, w) in enumerate(own.tolist()):
        images[k, :, h:], images[k, :, :, w:] = 0, 0             # zero padding past each sprite
    u, v = torch.rand(2, 7, 300, generator=g) * 2.6 - 1.3
    for hw, zero in ((own, True), (None, False), (None, True)):
        new = raster_torch.sample_cells(images, u, v, hw, zero_outside=zero)
        assert (new - gather_cells(images, u, v, hw, zero_outside=zero)).abs().max() < 1e-5


def test_renders_with_grid_sample_match_the_gather_within_one_level(monkeypatch):
    rng = np.random.default_rng(8)
    scenes = [random_scene(rng, kinds=["text", "sprite"], n=6) for _ in range(6)]
    new = render(scenes, (77, 91), backend="torch")
    monkeypatch.setattr(raster_torch, "sample_cells", gather_cells)
    old = render(scenes, (77, 91), backend="torch")
    assert (new.int() - old.int()).abs().max() <= 1


def test_a_slice_of_a_result_keeps_its_memory():
    """Any array derived from a result (here a numpy slice of the kernel's own output) keeps
    the pooled buffer out of reuse until it is gone."""
    from kernels import raster_numba
    from kernels.glyphs import load_atlas

    def raw(colour):
        batch = SceneBatch.from_scenes([Scene(background=colour)])
        prep = raster_numba.prepare(batch.primitives, 16, 16)
        return raster_numba.rasterize(prep, 16, 16, batch.background.numpy(), None, load_atlas().sdf,
                                      batch.sprites.numpy(), batch.sprite_hw.numpy())

    kept = raw((255, 0, 0))[0]                           # the whole result is dropped, a slice lives on
    gc.collect()
    assert raw((0, 0, 255))[0, 2, 0, 0] == 255
    assert kept[0, 0, 0] == 255 and kept[2, 0, 0] == 0


def test_a_fused_pass_that_cannot_be_built_warns_once_and_the_tiled_path_draws(monkeypatch):
    """Where Triton is installed but cannot build its kernel (no C compiler for its launcher,
    an unsupported GPU), the first render warns and draws with the tiled path; later renders
    do not try again."""
    calls = []

    class Unbuildable:
        @staticmethod
        def composite(*args):
            calls.append(1)
            raise RuntimeError("Failed to find C compiler. Please specify via CC environment variable.")

    s = Scene(background=(240, 240, 240))
    s.circle((0.4, 0.4), 0.2, color=(200, 0, 0))
    s.star((0.6, 0.6), 0.3, color=(0, 0, 200), fill=False, stroke=0.02)
    expected = render([s, s], 48, backend="torch")                     # the tiled path
    monkeypatch.setattr(raster_torch, "_FUSED_STATE", {})
    monkeypatch.setattr(raster_torch, "_fused", lambda dev: None if "failed" in raster_torch._FUSED_STATE
                        else Unbuildable)
    with pytest.warns(RuntimeWarning, match="C compiler"):
        got = render([s, s], 48, backend="torch")
    assert torch.equal(got, expected) and len(calls) == 1
    assert torch.equal(render([s], 48, backend="torch"), expected[:1]) and len(calls) == 1


@pytest.mark.parametrize("backend", ["numba", "torch"])
def test_rendering_into_rows_of_a_larger_batch_gives_the_same_images(backend, monkeypatch):
    """``render(..., out=rows)`` writes exactly the images ``render`` returns into the rows
    given (drawn there directly by the numba path), leaves the other rows alone, and refuses
    an ``out`` of the wrong shape, dtype or device, naming what it needs; the memory budget's
    split into smaller batches writes into ``out`` as well."""
    from engine import rendering

    batch_of = rendering._render_batch
    rng = np.random.default_rng(11)
    scenes = SceneBatch.from_scenes([random_scene(rng, n=5) for _ in range(5)])   # collated within any budget
    alone = render(scenes, (40, 56), backend=backend)
    whole = torch.full((9, 3, 40, 56), 7, dtype=torch.uint8)
    got = render(scenes, (40, 56), backend=backend, out=whole[2:7])
    assert torch.equal(whole[2:7], alone) and got.data_ptr() == whole[2:7].data_ptr()
    assert (whole[:2] == 7).all() and (whole[7:] == 7).all()
    from engine.canvas import image_bytes
    extra = image_bytes((40, 56), "numba-float") + (image_bytes((40, 56), "torch") if backend == "torch" else 0)
    monkeypatch.setenv("PROCVIS_MEMORY_BUDGET", str(5 * 3 * 40 * 56 + 2 * extra))   # two images at a time
    calls = []
    monkeypatch.setattr(rendering, "_render_batch", lambda *a: calls.append(len(a[0])) or batch_of(*a))
    split = torch.zeros_like(alone)
    render(scenes, (40, 56), backend=backend, out=split, background=torch.zeros(5, 3, 40, 56))
    assert calls == [2, 2, 1]
    assert torch.equal(split, render(scenes, (40, 56), backend=backend, background=torch.zeros(5, 3, 40, 56)))
    for bad in (torch.zeros(4, 3, 40, 56, dtype=torch.uint8), torch.zeros(5, 3, 40, 56),
                np.zeros((5, 3, 40, 56), np.uint8)):
        with pytest.raises(ValueError, match=r"out must be a torch.uint8 tensor of shape \[5, 3, 40, 56\]"):
            render(scenes, (40, 56), backend=backend, out=bad)
    # a device named without its index is the one a tensor made there reports
    named = torch.zeros_like(alone)
    assert torch.equal(render(scenes, (40, 56), device="cpu:0", backend=backend, out=named), alone)
