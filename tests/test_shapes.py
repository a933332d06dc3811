"""The demo family's answers re-derived from pixels alone (connected components, colour masks)."""
import numpy as np
import pytest

from engine.registry import get_task
from engine.rendering import render
from scenes.shapes.tasks import COLOURS
from tests.pixels import colour_mask, components

SIZE = 192


def _check_count(s, img):
    ink = np.any(img != 255, axis=0)
    comps = components(ink)
    objects = s.meta["objects"]
    assert len(comps) == len(objects)                       # nothing merged, hidden or lost
    centres = np.array([o["center"] for o in objects]) * SIZE
    target = s.task.split("/")[-1]
    hits = 0
    for comp in comps:
        cy, cx = comp.mean(0)
        k = int(np.argmin(np.hypot(centres[:, 0] - cx, centres[:, 1] - cy)))
        assert len(comp) >= 16                              # visible, at least 4x4 px
        hits += objects[k]["shape"] == target
    assert str(hits) == s.answer


def _check_colours(s, img):
    present = sorted(n for n, rgb in COLOURS.items() if colour_mask(img, rgb).sum() >= 9)
    assert present == s.answer


def _check_size_order(s, img):
    areas = {n: int(colour_mask(img, COLOURS[n]).sum()) for n in s.meta["colours"]}
    assert sorted(areas, key=areas.get) == s.answer


CHECKS = {"shapes/count": _check_count, "shapes/colours": _check_colours, "shapes/size_order": _check_size_order}


def _verify(task_id, seeds, n):
    check = CHECKS[task_id.rsplit("/", 1)[0] if task_id.startswith("shapes/count") else task_id]
    for seed in seeds:
        samples = get_task(task_id).samples(seed, range(n))
        imgs = render([s.panels[0] for s in samples], SIZE).numpy()
        for s, img in zip(samples, imgs):
            check(s, img)


@pytest.mark.parametrize("task_id", ["shapes/count/circle", "shapes/count/star", "shapes/colours", "shapes/size_order"])
def test_answers_are_recoverable_from_pixels(task_id):
    _verify(task_id, [0], 12)


@pytest.mark.slow
@pytest.mark.parametrize("task_id", ["shapes/count/circle", "shapes/count/triangle", "shapes/count/square",
                                     "shapes/count/star", "shapes/count/heart", "shapes/colours", "shapes/size_order"])
def test_answers_are_recoverable_from_pixels_many_seeds(task_id):
    _verify(task_id, range(20), 25)


def test_same_shape_answer_matches_its_panels():
    for s in get_task("shapes/same_shape").samples(0, range(20)):
        a, b = s.meta["shapes"]
        assert (a == b) == (s.answer == "yes")
        assert [p.kinds()[0] for p in s.panels] != [] and len(s.panels) == 2


def test_gallery_draws_every_kind_and_the_answer_is_red():
    for s in get_task("shapes/gallery").samples(0, range(10)):
        scene = s.panels[0]
        from engine.scene import KINDS

        assert set(scene.kinds()) == set(KINDS)
        red = [p.kind for p in scene.primitives if p.color == tuple(c / 255 for c in COLOURS["red"])]
        assert set(red) == {s.answer}
