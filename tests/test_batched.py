"""Batched sampling: a batched task's samples do not depend on the batch they are drawn in,
a sample drawn alone is its row of any batch, placements keep their constraints, and a
stream of batched tasks gives the pixels of rendering its samples one at a time."""
import math

import numpy as np
import pytest
import torch

from engine.batch import SceneBatch
from engine.batched import BatchRandom, batch_keys, scatter
from engine.outputs import render_samples
from engine.registry import get_task, list_tasks
from engine.scene import Scene
from engine.streams import _fit, _side_by_side, stream

BATCHED = [t for t in list_tasks() if get_task(t).batched]


def _row(sb: SceneBatch, b: int) -> list[torch.Tensor]:
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


@pytest.mark.parametrize("task_id", BATCHED)
def test_a_batched_task_draws_the_same_samples_whatever_the_batch(task_id):
    task = get_task(task_id)
    whole = task.batch(7, range(20))
    parts = [task.batch(7, range(0, 6)), task.batch(7, range(6, 20))]
    rows = [(p, b) for p in parts for b in range(len(p))]
    ws = whole.scene_batch()
    for i, (p, b) in enumerate(rows):
        assert whole.answer[i] == p.answer[b] and whole.meta(i) == p.meta(b)
        assert all(torch.equal(x, y) for x, y in zip(_row(ws, i), _row(p.scene_batch(), b)))
    for i in (0, 13, 19):                              # a sample drawn alone is its row
        s = task.sample(7, i)
        assert s.answer == whole.answer[i] and s.meta == {"params": task.params, **whole.meta(i)}
        alone = SceneBatch.from_scenes(s.panels)
        assert all(torch.equal(x, y) for x, y in zip(_row(alone, 0), _row(ws, i)))


@pytest.mark.parametrize("pattern", ["shapes/count/*", "shapes/*"])      # all batched; mixed with one-at-a-time tasks
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
