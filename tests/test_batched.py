"""Batched sampling: a batched task's samples do not depend on the batch they are drawn in,
a sample drawn alone is its row of any batch, placements keep their constraints, and a
stream of batched tasks gives the pixels of rendering its samples one at a time."""
import json
import math

import numpy as np
import pytest
import torch

from engine.batch import SceneBatch
from engine.batched import BatchRandom, _mix, batch_keys, in_box, in_sector, place_once, rounded, scatter
from engine.outputs import _row, render_samples
from engine.registry import get_task, list_tasks
from engine.scene import Scene
from engine.streams import _fit, _side_by_side, stream
from engine.task import draw_together
from kernels import clearance

BATCHED = [t for t in list_tasks() if get_task(t).batched]
GROUPS: dict = {}                               # batch key -> its tasks (a group's tasks share one call)
for _t in BATCHED:
    GROUPS.setdefault(get_task(_t).batch_key, []).append(_t)
ONE_PER_GROUP = [ids[0] for ids in GROUPS.values()]


def _slots(sb: SceneBatch, b: int) -> list[torch.Tensor]:
    """Scene ``b``'s valid slots of every column (padding differs between batches)."""
    n = int(sb.primitives.valid[b].sum())
    v = int(sb.primitives.nverts[b, :n].max()) if n else 0
    return [t[b, :n, :v] if name == "verts" else t[b, :n] for name, t in zip(sb.primitives._fields, sb.primitives)] \
        + [sb.background[b]]


def test_some_tasks_are_batched():
    assert {"shapes/count/circle", "shapes/count/heart"} <= set(BATCHED)


def test_draws_depend_on_the_sample_alone():
    keys = batch_keys(3, "x/y", range(10))
    a, b = BatchRandom(keys), BatchRandom(keys[4:7])
    for shape in ((), (5,), (2, 3)):
        x, y = a.random(*shape), b.random(*shape)
        assert np.array_equal(x[4:7], y) and ((x >= 0) & (x < 1)).all()
    ints = BatchRandom(keys).integers(np.arange(10), np.arange(10) + 3, 1000)
    assert ((ints >= np.arange(10)[:, None]) & (ints < np.arange(10)[:, None] + 3)).all()
    assert set(np.unique(ints[0])) == {0, 1, 2}
    ints = BatchRandom(keys).integers(np.arange(10), 12, 500)           # per-sample low, one high
    assert ((ints >= np.arange(10)[:, None]) & (ints < 12)).all() and ints[9].min() == 9
    f, g = BatchRandom(keys).fork(0), BatchRandom(keys).fork(1)
    assert not np.array_equal(f.random(4), g.random(4))


def _numpy_random(keys: np.ndarray, drawn: int, n: int) -> np.ndarray:
    """The draws' definition in numpy (the sampler's before they were compiled)."""
    ctr = np.arange(drawn + 1, drawn + n + 1, dtype=np.uint64)
    z = _mix(keys[:, None] + ctr[None, :] * np.uint64(0x9E3779B97F4A7C15))
    return (z >> np.uint64(11)).astype(np.float64) * 2.0 ** -53


def test_compiled_draws_equal_the_numpy_definition_bit_for_bit():
    rng = np.random.default_rng(5)
    keys = np.concatenate([np.array([0, 1, 2 ** 63, 2 ** 64 - 1], np.uint64),
                           rng.integers(0, 2 ** 64 - 1, 60, dtype=np.uint64, endpoint=True),
                           batch_keys(0, "elvis/x", range(40))])
    for drawn, n in ((0, 1), (0, 300), (7, 13), (2 ** 40 + 3, 50), (123_456, 0)):
        r = BatchRandom(keys[::-1])                     # a strided view: copied to one layout
        r.drawn = drawn
        got = r.random(n)
        assert got.shape == (len(keys), n) and r.drawn == drawn + n
        assert np.array_equal(got, _numpy_random(np.ascontiguousarray(keys[::-1]), drawn, n))
    # the placement kernel's single draw is the same stream
    assert all(clearance.uniform(k, np.uint64(9)) == _numpy_random(np.array([k]), 8, 1)[0, 0] for k in keys[:8])


def test_scattered_discs_stay_inside_and_apart():
    rng = BatchRandom(batch_keys(0, "scatter", range(200)))
    radii = rng.uniform(0.03, 0.08, 12)
    valid = rng.random(12) < 0.8
    c = scatter(rng, radii, valid, (0.1, 0.0, 0.9, 1.0), gap=0.03)
    for b in range(200):
        idx = np.nonzero(valid[b])[0]
        for i in idx:
            assert 0.1 + radii[b, i] <= c[b, i, 0] <= 0.9 - radii[b, i] and radii[b, i] <= c[b, i, 1] <= 1 - radii[b, i]
            for j in idx[idx > i]:
                assert math.dist(c[b, i], c[b, j]) >= radii[b, i] + radii[b, j] + 0.03 - 1e-12


@pytest.mark.parametrize("task_id", ONE_PER_GROUP)
def test_a_batched_task_draws_the_same_samples_whatever_the_batch(task_id):
    task = get_task(task_id)
    whole = task.batch(7, range(20))
    parts = [task.batch(7, range(0, 6)), task.batch(7, range(6, 20))]
    rows = [(p, b) for p in parts for b in range(len(p))]
    ws = whole.scene_batch()
    for i, (p, b) in enumerate(rows):
        assert whole.answer[i] == p.answer[b] and whole.meta(i) == p.meta(b)
        assert all(torch.equal(x, y) for x, y in zip(_slots(ws, i), _slots(p.scene_batch(), b)))
    for i in (0, 13, 19):                              # a sample drawn alone is its row
        s = task.sample(7, i)
        assert s.answer == whole.answer[i] and s.meta == {"params": task.params, **whole.meta(i)}
        alone = SceneBatch.from_scenes(s.panels)
        assert all(torch.equal(x, y) for x, y in zip(_slots(alone, 0), _slots(ws, i)))


def test_rounded_columns_round_as_python_rounds_each_value():
    # decimal ties that float64 cannot hold exactly are where scaling, rounding and scaling
    # back goes wrong (thousands of these values for 1, 3 and 5 decimals)
    rng = np.random.default_rng(0)
    for digits in (0, 1, 3, 5):
        x = np.concatenate([rng.normal(0, 300, 20000), rng.random(20000) * 1e-3,
                            (rng.integers(-10**6, 10**6, 20000) + 0.5) / 10**digits,
                            rng.integers(-2**20, 2**20, 20000) / 2.0 ** rng.integers(1, 12, 20000),   # exact ties
                            [0.25, -0.25, 2.5, -0.0, -1e-9, 1e300, -np.inf, np.nan, 5e-324, 0.015625, 2.0**60]])
        got, want = rounded(x, digits), np.array([round(v, digits) for v in x.tolist()])
        assert np.array_equal(got, want, equal_nan=True) and np.array_equal(np.signbit(got), np.signbit(want)), digits
    assert rounded(np.float32([[0.1, 0.2], [0.3, 0.4]]), 3).shape == (2, 2)
    assert rounded(0.25, 1) == round(0.25, 1) and rounded(0.25, 1).shape == ()
    with pytest.raises(ValueError, match="digits=16; allowed: 0..15"):
        rounded([0.5], 16)


@pytest.mark.parametrize("task_id", ONE_PER_GROUP)
def test_a_sample_built_without_its_scene_has_the_same_record(task_id):
    # what generate builds when it renders the batch's columns instead of each scene, and
    # writes from the metadata's JSON text made from the columns (engine.jsontext)
    task = get_task(task_id)
    drawn = task.batch(4, range(8))                 # positives and each kind of negative
    for b in range(8):
        full, bare = task.build(drawn.draw(b), 4, b), task.build(drawn.draw(b, scene=False), 4, b)
        assert bare.record() == full.record() and bare.panels[0].primitives == []
        text = task.build(drawn.draw(b, scene=False, text=True), 4, b)
        assert _row(text) == _row(full)
        assert _row(text)["meta"] == json.dumps(full.record()["meta"], sort_keys=True)


@pytest.mark.parametrize("task_id", ONE_PER_GROUP)
def test_images_written_from_the_columns_are_the_samples_own_scenes(task_id):
    # generate renders a batch from its numpy columns without torch; the oracle renders each
    # sample's own Scene (built another way: engine.shapes' primitives) on the torch path
    import io

    from PIL import Image

    from engine.outputs import _encoded_rows, encode_png
    from engine.rendering import render
    from kernels import raster_numba
    drawn = get_task(task_id).batch(3, range(12))
    scenes = render([drawn.scene(b) for b in range(12)], size=72)
    kernels = (raster_numba._prepare, raster_numba._render)
    compiled = [set(k.signatures) for k in kernels]
    got = _encoded_rows(drawn, 72)
    assert [g for [g] in got] == [encode_png(im) for im in scenes]
    for [png], want in zip(got, scenes):
        assert np.array_equal(np.asarray(Image.open(io.BytesIO(png)).convert("RGB")), want.permute(1, 2, 0).numpy())
    one = get_task(task_id).batch(3, [5])                # a batch of one (its slices: C-ordered views)
    assert _encoded_rows(one, 72) == [[encode_png(scenes[5])]]
    # the torch path's kernels: one disk cache serves both (a new signature compiles in every fresh process)
    assert [set(k.signatures) for k in kernels] == compiled


@pytest.mark.parametrize("first", [ids[0] for ids in GROUPS.values() if len(ids) > 1])
def test_tasks_of_a_group_drawn_together_each_get_their_own_samples(first):
    ids = next(ids for ids in GROUPS.values() if ids[0] == first)
    tasks = [get_task(t) for t in ids[:: max(1, len(ids) // 40)]]
    members = [(t, i) for i in (0, 1, 5) for t in tasks]
    together = draw_together(2, members)
    shuffled = [members[k] for k in np.random.default_rng(0).permutation(len(members))]
    again = draw_together(2, shuffled)
    tb, ab = together.scene_batch(), again.scene_batch()
    for b, (task, i) in enumerate(members):
        alone = task.sample(2, i)
        k = shuffled.index((task, i))
        assert alone.answer == together.answer[b] == again.answer[k]
        assert alone.meta == {"params": task.params, **together.meta(b)} and together.meta(b) == again.meta(k)
        assert all(torch.equal(x, y) for x, y in zip(_slots(tb, b), _slots(ab, k)))
        assert all(torch.equal(x, y) for x, y in zip(_slots(SceneBatch.from_scenes(alone.panels), 0), _slots(tb, b)))
    assert len({str(together.meta(b)["objects"]) for b in range(len(members))}) == len(members)


def test_tasks_that_do_not_share_a_batch_key_are_refused_together():
    a, b = get_task(ONE_PER_GROUP[0]), get_task(ONE_PER_GROUP[-1])
    with pytest.raises(ValueError, match="cannot be drawn in one batch"):
        draw_together(0, [(a, 0), (b, 0)])
    with pytest.raises(ValueError, match="no samples to draw"):
        draw_together(0, [])
    with pytest.raises(TypeError, match="one sample at a time"):
        draw_together(0, [(get_task(next(t for t in list_tasks() if t not in BATCHED)), 0)])


@pytest.mark.parametrize("kind", ["box", "sector"])
def test_placement_matches_a_plain_reference(kind):
    # the compiled first-fit with proposals drawn on demand, against every proposal computed
    # up front in numpy from the same stream and the same rule written out disc by disc
    B, K, M = 30, 9, 16
    gen = np.random.default_rng(5)
    radii = gen.uniform(0.05, 0.2, (B, K)) * (1.0 if kind == "box" else 0.35)
    live = gen.random((B, K)) < 0.8
    fixed = np.concatenate([gen.uniform(0, 1, (B, 2, 2)), gen.uniform(-0.1, 0.2, (B, 2, 1))], -1)  # r < 0: none
    keys = batch_keys(9, "placement", range(B))
    if kind == "box":
        region = in_box((0.1, 0.0, 0.9, 1.0))
    else:
        region = in_sector(0.5, 0.45, 0.05, np.linspace(0.3, 0.5, B), gen.uniform(0, 360, (B, K)), 150.0)
    got, ok = place_once(BatchRandom(keys), radii, live, region, 0.01, M, fixed)
    ref = BatchRandom(keys)
    order = np.argsort(np.where(live, -radii, np.inf), axis=1, kind="stable")
    rows = np.arange(B)[:, None]
    r, p = radii[rows, order], region.params(B, K)[rows, order]
    if kind == "box":
        lo, hi = p[..., None, :2] + r[..., None, None], p[..., None, 2:] - r[..., None, None]
        cand = lo + ref.random(K, M, 2) * (hi - lo)
    else:
        u1, u2 = ref.random(K, M), ref.random(K, M)
        rr = r[..., None]
        lo, hi = p[..., 2:3] + rr, np.maximum(p[..., 3:4] - rr, p[..., 2:3] + rr)
        rho = np.sqrt(lo ** 2 + u1 * (hi ** 2 - lo ** 2))
        pad = np.degrees(np.arcsin(np.clip(rr / np.maximum(rho, 1e-9), 0, 1)))
        ang = np.radians(p[..., 4:5] + pad + u2 * np.maximum(p[..., 5:6] - 2 * pad, 0))
        cand = np.stack([p[..., 0:1] + rho * np.cos(ang), p[..., 1:2] - rho * np.sin(ang)], -1)
    for b in range(B):
        placed, fine = [(f[:2], f[2]) for f in fixed[b] if f[2] >= 0], True
        for k in range(K):
            slot = order[b, k]
            if not live[b, slot]:
                assert (got[b, slot] == 0).all()
                continue
            d = [np.hypot(*(cand[b, k] - q).T) >= rq + r[b, k] + 0.01 for q, rq in placed]
            fits = np.logical_and.reduce(d) if d else np.ones(M, bool)
            fine &= bool(fits.any())
            np.testing.assert_allclose(got[b, slot], cand[b, k, int(np.argmax(fits))], rtol=0, atol=1e-12)
            placed.append((got[b, slot], r[b, k]))
        assert ok[b] == fine
    assert 0 < ok.sum() < B                        # both outcomes were exercised
    if kind == "box":                              # the same floats as the numpy expression
        assert all((got[b, order[b, k]] == cand[b, k, :].reshape(-1, 2)).all(1).any()
                   for b in range(B) for k in range(K) if live[b, order[b, k]] and ok[b])


@pytest.mark.parametrize("pattern", ["shapes/count/*", "shapes/*", "elvis/symmetry/*"])  # all batched; mixed
def test_a_stream_of_batched_tasks_gives_the_pixels_of_one_at_a_time(pattern):
    s = stream(pattern, seed=4, batch_size=12, size=80, count=24)
    for j, batch in enumerate(s):
        samples = [s.item(i) for i in range(12 * j, 12 * j + 12)]
        assert batch["id"] == [x.id for x in samples] and batch["answer"] == [x.answer_text for x in samples]
        assert batch["question"] == [x.question for x in samples]
        alone = [ims[0] if len(ims) == 1 else _side_by_side(ims) for ims in render_samples(samples, 80)]
        assert torch.equal(batch["images"], torch.stack(_fit(alone, (80, 80))))


def test_count_answers_match_the_shapes_drawn():
    # the answer read back from the drawn outlines (a star's vertex template), not the metadata
    ref = Scene()
    ref.star((0.5, 0.5), 0.1)
    star = ref.primitives[0].verts
    drawn = get_task("shapes/count/star").batch(1, range(50))
    for b in range(50):
        prims = drawn.scene(b).primitives
        n = sum(p.verts is not None and p.verts.shape == star.shape and np.allclose(p.verts, star) for p in prims)
        assert str(n) == drawn.answer[b] and len(prims) >= n


def test_pacmen_in_a_batch_are_the_pacmen_of_a_scene():
    """A slot with a mouth draws the pac-man :meth:`Scene.pacman` draws (turned to face its
    rotation), in the collated batch and in the sample's own scene; other slots keep
    their shape."""
    from engine.batched import ShapeBatch
    from engine.rendering import render
    rng = np.random.default_rng(3)
    B, K = 4, 6
    centre = rng.uniform(0.2, 0.8, (B, K, 2))
    radius = rng.uniform(0.05, 0.1, (B, K))
    direction = 45.0 * rng.integers(0, 8, (B, K))
    mouth = np.where(rng.random((B, K)) < 0.7, rng.choice([60.0, 70.0, 90.0], (B, K)), 0.0)
    colour = rng.integers(0, 200, (B, K, 3))
    shape = rng.integers(0, 12, (B, K))
    sb = ShapeBatch(shape, centre, radius, colour, np.ones((B, K), bool), "q", ["a"] * B, "single",
                    rotation=np.where(mouth > 0, direction, 0.0), mouth=mouth)
    from engine.shapes import SHAPES, draw_shape
    want = []
    for b in range(B):
        s = Scene(background=(255, 255, 255))
        for k in range(K):
            c, rgb = tuple(centre[b, k]), tuple(int(v) for v in colour[b, k])
            if mouth[b, k] > 0:
                s.pacman(c, radius[b, k], mouth=mouth[b, k], direction=direction[b, k], color=rgb)
            else:
                draw_shape(s, SHAPES[shape[b, k]], c, radius[b, k], rgb)
        want.append(s)
    ref = render(want, size=96).float()
    for got in (render(sb.scene_batch(), size=96).float(), render([sb.scene(b) for b in range(B)], size=96).float()):
        differ = (got - ref).abs().amax(1) > 64                      # [B,H,W] pixels clearly different
        assert differ.float().mean() < 0.002, differ.float().mean()
    assert render(sb.scene_batch(), size=96).equal(render([sb.scene(b) for b in range(B)], size=96))
    plain = ShapeBatch(shape, centre, radius, colour, np.ones((B, K), bool), "q", ["a"] * B, "single")
    drawn = render(plain.scene_batch(), size=96).float()
    assert ((drawn - ref).abs().amax(1) > 64).float().mean() > 0.01      # the mouths are seen
