"""Compiling ahead (engine.warm) and the registry groups it draws from."""
from engine.registry import list_tasks, representatives
from engine.warm import warm


def test_representatives_are_the_first_task_of_each_group():
    ids = list_tasks()
    families = sorted({t.split("/")[0] for t in ids})
    one = representatives(1)
    assert [t.split("/")[0] for t in one] == families
    assert one == [min(t for t in ids if t.split("/")[0] == f) for f in families]
    kinds = representatives(2, "elvis/*")
    assert len(kinds) == len({tuple(t.split("/")[:2]) for t in list_tasks("elvis/*")}) == 5
    assert representatives(9, "shapes/*") == list_tasks("shapes/*")     # groups of one: every task


def test_warm_draws_what_it_names_and_leaves_the_renderer_compiled_on_disk():
    from kernels import raster_numba

    assert warm("shapes/colours") == ["shapes/colours"]
    assert raster_numba.compiled_on_disk() is True
