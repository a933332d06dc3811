"""Streams: DataLoader workers and torchrun ranks cover a stream exactly once, with the
same pixels whatever the batch size or number of workers."""
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch.utils.data import DataLoader

from engine.streams import SampleStream, stream

ROOT = Path(__file__).resolve().parents[1]


def _collect(loader):
    out = {}
    for batch in loader:
        for i, sid in enumerate(batch["id"]):
            out[sid] = batch["images"][i].clone()
    return out


def test_dataloader_workers_cover_the_stream_exactly_once():
    ds = stream("shapes/*", seed=4, batch_size=3, size=40, count=23)
    serial = _collect(DataLoader(ds, batch_size=None, num_workers=0))
    parallel = _collect(DataLoader(ds, batch_size=None, num_workers=2))
    assert len(serial) == 23 and serial.keys() == parallel.keys()
    assert all(torch.equal(serial[k], parallel[k]) for k in serial)


def test_workers_draw_with_the_settings_the_stream_was_made_with(monkeypatch):
    # samples 12.. show other photos when the source holds 40 images instead of 12
    ds = stream("jigsaw/connection", seed=2, batch_size=4, size=32, count=24,
                settings={"jigsaw.images": "generated:12", "jigsaw.image_size": 48})
    serial = _collect(DataLoader(ds, batch_size=None, num_workers=0))
    monkeypatch.setenv("PROCVIS_JIGSAW_IMAGES", "generated:40")      # workers inherit it: it must not matter
    parallel = _collect(DataLoader(ds, batch_size=None, num_workers=2))
    assert serial.keys() == parallel.keys() and all(torch.equal(serial[k], parallel[k]) for k in serial)
    other = _collect(stream("jigsaw/connection", seed=2, batch_size=4, size=32, count=24,
                            settings={"jigsaw.images": "generated:40", "jigsaw.image_size": 48}))
    assert any(not torch.equal(serial[k], other[k]) for k in serial)


def test_stream_batches_do_not_depend_on_batch_size():
    small = _collect(stream("shapes/count/*", seed=1, batch_size=2, size=32, count=10))
    big = _collect(stream("shapes/count/*", seed=1, batch_size=7, size=32, count=10))
    assert small.keys() == big.keys() and all(torch.equal(small[k], big[k]) for k in small)


@pytest.mark.parametrize("pattern, j", [("elvis/*", 36), ("shapes/count/*", 0)])
def test_a_batch_drawn_by_several_calls_holds_each_samples_own_image(pattern, j):
    """A batch whose samples come from several batched draws (ELVIS principles drawn in
    consecutive rows, each rendered straight into its rows; shapes tasks in every fifth row,
    copied there) holds the images each sample's batch of one gives (the device named as
    a user may, without its index)."""
    s = stream(pattern, seed=3, batch_size=16, size=32, device="cpu:0")
    frames, _ = s._unrendered(j)
    rows = [[i for i, _ in where] for _, _, where in frames.groups]
    assert len(rows) > 1
    assert all(r == list(range(r[0], r[0] + len(r))) for r in rows) == (pattern == "elvis/*")
    one = stream(pattern, seed=3, batch_size=1, size=32)
    alone = _collect([one.batch(16 * j + k) for k in range(16)])
    together = _collect([s.batch(j)])
    assert together.keys() == alone.keys() and all(torch.equal(together[k], alone[k]) for k in alone)


def test_stream_is_endless_by_default_and_rejects_bad_settings():
    it = iter(stream("shapes/colours", batch_size=2, size=16))
    ids = [sid for _ in range(5) for sid in next(it)["id"]]
    assert len(set(ids)) == 10
    with pytest.raises(ValueError, match="batch_size=0"):
        stream("shapes/*", batch_size=0)
    with pytest.raises(ValueError, match="no registered task matches"):
        stream("nothing/*")


def test_multi_panel_samples_are_stitched():
    batch = next(iter(stream("shapes/same_shape", batch_size=2, size=32, shape="pad")))
    assert batch["images"].shape == (2, 3, 32, 2 * 32 + 8)


def test_torchrun_ranks_cover_the_stream_disjointly():
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    with socket.socket() as free:                 # a port no other run of the suite holds
        free.bind(("127.0.0.1", 0))
        port = str(free.getsockname()[1])
    r = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--master-port", port,
                        str(ROOT / "tests" / "dist_stream.py")], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "COVERAGE OK 29 batches 8 8" in r.stdout, r.stdout
    assert "UNSPLIT OK 29 29" in r.stdout, r.stdout


def test_panels_keep_their_own_shape_in_a_stream():
    # a square render would cut the legend under a Percept-V scene and the rows past the first
    from engine.outputs import render_samples
    from engine.registry import get_task

    batch = next(iter(stream("perceptv/colours_present", seed=2, batch_size=2, size=96, count=2, shape="pad")))
    assert batch["images"].shape == (2, 3, 128, 96)
    first = get_task("perceptv/colours_present").sample(2, 0)
    assert torch.equal(batch["images"][0], render_samples([first], 96)[0][0])
    tall = next(iter(stream("perceptv/match_shadow", seed=0, batch_size=1, size=64, count=1, offset=40, shape="pad")))
    assert tall["images"].shape[2:] == (16 * 6, 2 * 16 + 8)        # 5 rows: 6 rows of 16 px, two panels
    mixed = next(iter(stream("bongard/classic/number/three_vs_five", batch_size=1, size=24, count=1, shape="pad")))
    assert mixed["images"].shape[2] > 24                              # the wide collage, its panels padded below


def test_fit_gives_every_batch_of_a_mixed_panel_pattern_one_shape():
    # shapes/same_shape has two panels: padded, a batch holding one is 40 x 88, the first is 40 x 40
    fit = list(stream("shapes/*", seed=3, batch_size=7, size=40, count=20))
    assert {tuple(b["images"].shape[1:]) for b in fit} == {(3, 40, 40)}
    wide = list(stream("shapes/*", seed=3, batch_size=7, size=40, count=20, shape="pad"))
    assert [tuple(b["images"].shape[1:]) for b in wide] == [(3, 40, 40), (3, 40, 88), (3, 40, 88)]
    for f, p in zip(fit, wide):
        for k, task in enumerate(f["task"]):
            if task == "shapes/same_shape":          # scaled onto the canvas, centred, white above and below
                img = f["images"][k]
                assert (img[:, :10] == 255).all() and (img[:, -10:] == 255).all() and (img[:, 12:28] < 255).any()
            else:                                    # a square one-panel image is left as rendered
                assert torch.equal(f["images"][k], p["images"][k][:, :40, :40])
    rect = next(iter(stream("shapes/same_shape", batch_size=2, size=(30, 50), count=2)))
    assert rect["images"].shape == (2, 3, 30, 50)


def test_fitted_batches_do_not_depend_on_batch_size():
    small = _collect(stream("shapes/*", seed=5, batch_size=3, size=36, count=20))
    big = _collect(stream("shapes/*", seed=5, batch_size=20, size=36, count=20))
    assert small.keys() == big.keys() and all(torch.equal(small[k], big[k]) for k in small)


def test_labels_index_the_label_map():
    ds = stream("shapes/*", seed=6, batch_size=10, size=16, count=40)
    label_map = ds.label_map
    assert label_map["shapes/same_shape"] == ["yes", "no"] and len(label_map["shapes/gallery"]) == 21
    assert label_map["shapes/count/star"] == [] and label_map["shapes/colours"] == []
    assert stream("shapes/*", seed=99, offset=500).label_map == label_map      # one map for every seed and offset
    seen = set()
    for b in ds:
        assert b["label"].dtype == torch.long and b["label"].shape == (len(b["id"]),)
        for task, label, answer in zip(b["task"], b["label"].tolist(), b["answer"]):
            if label_map[task]:
                assert label_map[task][label] == answer
                seen.add(task)
            else:
                assert label == -1
    assert seen == {"shapes/same_shape", "shapes/gallery"}
    jig = stream("jigsaw/connection", batch_size=4, size=32, count=4, settings={"jigsaw.images": "generated:12"})
    assert jig.label_map == {"jigsaw/connection": ["A", "B", "C"]}


def _rank_ids(monkeypatch, world, workers=0, **kw):
    """Per simulated rank of ``world``: the list of batches (each a list of sample ids)."""
    out = []
    for rank in range(world):
        monkeypatch.setattr("engine.streams._rank_world", lambda rank=rank: (rank, world))
        ds = stream("shapes/*", seed=7, batch_size=2, size=16, count=9, **kw)       # 5 batches
        out.append([b["id"] for b in DataLoader(ds, batch_size=None, num_workers=workers)])
    return out


@pytest.mark.parametrize("world", [2, 3])
def test_bounded_streams_give_every_rank_the_same_number_of_batches(monkeypatch, world):
    whole = [b["id"] for b in stream("shapes/*", seed=7, batch_size=2, size=16, count=9)]
    assert len(whole) == 5
    shares = _rank_ids(monkeypatch, world)
    assert [len(s) for s in shares] == [-(-5 // world)] * world
    flat = [b for s in shares for b in s]
    assert sorted(map(tuple, flat)) == sorted(map(tuple, whole + whole[:len(flat) - 5]))   # wrapped to the start
    assert shares == _rank_ids(monkeypatch, world, workers=2)          # a rank's share ignores its worker count
    dropped = _rank_ids(monkeypatch, world, drop_last=True)
    assert [len(s) for s in dropped] == [5 // world] * world
    flat = [tuple(b) for s in dropped for b in s]
    assert len(set(flat)) == len(flat) == 5 // world * world
    ds = stream("shapes/*", batch_size=2, count=9, drop_last=True)
    assert ds.num_batches() == 5 and ds.batches_per_rank(world) == 5 // world


def test_unsplit_streams_read_everything_on_every_rank(monkeypatch):
    whole = [s for b in stream("shapes/*", seed=7, batch_size=2, size=16, count=9) for s in b["id"]]
    for rank in range(3):
        monkeypatch.setattr("engine.streams._rank_world", lambda rank=rank: (rank, 3))
        mine = [s for b in stream("shapes/*", seed=7, batch_size=2, size=16, count=9) for s in b["id"]]
        assert len(mine) < len(whole)                                  # split by default under a process group
        ds = stream("shapes/*", seed=7, batch_size=2, size=16, count=9, split=False)
        assert [s for b in DataLoader(ds, batch_size=None, num_workers=2) for s in b["id"]] == whole


class _Threads(SampleStream):
    """Reports, as its ``threads``, the torch and numba threads a batch is rendered under
    instead of drawing it."""

    class _Report:
        def make_sprite_floats(self):
            pass

        def render(self, device):
            import numba
            return torch.get_num_threads(), numba.get_num_threads()

    def _unrendered(self, j):
        return self._Report(), {}

    def __iter__(self):
        for b in super().__iter__():
            yield {"threads": b["images"]}


def test_workers_set_their_own_torch_and_render_threads():
    import numba
    two = min(2, numba.config.NUMBA_NUM_THREADS)
    ds = _Threads("shapes/colours", count=4, batch_size=1)
    assert {tuple(b["threads"]) for b in DataLoader(ds, batch_size=None, num_workers=2)} == {(1, 1)}
    ds = _Threads("shapes/colours", count=4, batch_size=1, threads=2)
    assert {tuple(b["threads"]) for b in DataLoader(ds, batch_size=None, num_workers=2)} == {(2, two)}
    before = (torch.get_num_threads(), numba.get_num_threads())
    try:
        assert [tuple(b["threads"]) for b in _Threads("shapes/colours", count=1, batch_size=1)] == [before]
        assert [tuple(b["threads"]) for b in _Threads("shapes/colours", count=1, batch_size=1, threads=1)] == [(1, 1)]
    finally:
        torch.set_num_threads(before[0])
        numba.set_num_threads(before[1])


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a build without CUDA")
@pytest.mark.parametrize("device", ["cuda", "cuda:1", "gpu", "mps", "xla"])
def test_an_unavailable_device_is_a_one_line_user_error(device):
    from engine.errors import UserError

    with pytest.raises(UserError) as err:
        stream("shapes/colours", device=device)
    msg = str(err.value)
    assert "\n" not in msg and repr(device) in msg and "available: cpu" in msg
    for bad in ({"shape": "square"}, {"threads": 0}, {"ahead": "False"}, {"defer": 1}, {"split": None},
                {"drop_last": "yes"}):
        with pytest.raises(UserError, match=next(iter(bad))):
            stream("shapes/colours", **bad)


def test_torch_threads_sleep_between_renders_unless_the_user_chose_otherwise():
    code = "import os, engine, torch; print(os.environ.get('OMP_WAIT_POLICY'))"
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    run = lambda code, **extra: subprocess.run([sys.executable, "-c", code], env={**env, **extra}, capture_output=True,
                                               text=True, check=True).stdout.strip()
    assert run(code) == "PASSIVE"
    assert run(code, OMP_WAIT_POLICY="ACTIVE") == "ACTIVE"
    assert run("import os, torch, engine; print(os.environ.get('OMP_WAIT_POLICY'))") == "None"   # too late to choose


@pytest.mark.parametrize("pattern,shape,panels", [
    ("shapes/*", "fit", "stitch"),                         # batched tasks beside a two-panel one
    ("perceptv/*", "pad", "stitch"),                       # panels of their own extents
    ("bongard/classic/number/*", "fit", "stitch"),         # a collage beside its panels
    ("bongard/classic/number/*", "pad", "first")])
def test_deferred_batches_render_to_the_images_of_the_stream_even_after_crossing_workers(pattern, shape, panels):
    deferred_matches_stream(pattern, seed=6, batch_size=5, size=48, count=12, shape=shape, panels=panels)


def test_a_workers_deferred_batches_are_packed_before_the_queue_pickles_them(monkeypatch):
    # pickled in the queue's feeder thread, packing ran compiled code beside the worker's
    # drawing; a forked worker once hung there, inside the compiler
    import types

    import numba

    import engine.streams as streams
    here = list(stream("perceptv/*", seed=2, batch_size=4, size=48, count=8, defer=True))   # not in a worker
    assert all(b["frames"]._parcel is None for b in here)
    monkeypatch.setattr(streams, "get_worker_info", lambda: types.SimpleNamespace(id=0, num_workers=1))
    threads = torch.get_num_threads(), numba.get_num_threads()
    try:                                                   # as a worker, the stream sets one thread
        batches = list(stream("perceptv/*", seed=2, batch_size=4, size=48, count=8, defer=True))
    finally:
        torch.set_num_threads(threads[0])
        numba.set_num_threads(threads[1])
    assert len(batches) == 2 and all(b["frames"]._parcel is not None for b in batches)
    assert all(torch.equal(a["frames"].render("cpu"), b["frames"].render("cpu")) for a, b in zip(batches, here))


@pytest.mark.slow
@pytest.mark.parametrize("pattern", ["shapes/*", "elvis/*", "perceptv/*", "perceptv_fixed/*", "kiva/*", "kiva_adults/*",
                                     "kiva_compositional/*", "bongard/*", "jigsaw/*"])
@pytest.mark.parametrize("shape,panels", [("fit", "stitch"), ("pad", "stitch"), ("fit", "first")])
def test_every_family_crosses_workers_deferred_and_renders_its_stream_images(pattern, shape, panels):
    deferred_matches_stream(pattern, seed=11, batch_size=24, size=64, count=72, shape=shape, panels=panels)


def deferred_matches_stream(pattern: str, **kw) -> None:
    """Three deferred batches of ``pattern`` handed over by 2 DataLoader workers (packed, see
    engine.parcel) render the images of the same stream drawn in this process."""
    drawn = list(stream(pattern, **kw))
    deferred = list(DataLoader(stream(pattern, defer=True, **kw), batch_size=None, num_workers=2))
    assert len(drawn) == len(deferred) == 3
    for a, b in zip(drawn, deferred):
        assert "images" not in b and len(b["frames"]) == len(a["id"])
        assert b["frames"]._groups is None                       # it travelled packed
        assert b["id"] == a["id"] and torch.equal(b["label"], a["label"]) and b["answer"] == a["answer"]
        assert torch.equal(b["frames"].render("cpu"), a["images"])


def test_iterating_renders_ahead_yet_gives_the_batches_of_batch():
    import threading

    ds = stream("shapes/*", seed=3, batch_size=5, size=40, count=23)
    got = list(ds)
    assert len(got) == 5 and not [t for t in threading.enumerate() if t.name.startswith("procvis-render")]
    for j, b in enumerate(got):
        alone = ds.batch(j)
        assert torch.equal(b["images"], alone["images"]) and b.keys() == alone.keys()
        assert all(torch.equal(b[k], alone[k]) if torch.is_tensor(b[k]) else b[k] == alone[k] for k in b)

def test_rendering_ahead_keeps_at_most_two_batches_of_images_and_stops_with_the_loop(monkeypatch):
    import threading

    from engine.frames import Frames

    started, render = [], Frames.render

    def counted(self, device="cpu"):
        started.append(len(self))
        return render(self, device)
    monkeypatch.setattr(Frames, "render", counted)
    it = iter(stream("shapes/*", seed=3, batch_size=5, size=40, count=23))
    first = next(it)
    assert len(started) == 1                     # the next batch is drawn, not rendered, while the caller holds this one
    second = next(it)
    assert len(started) == 2 and not torch.equal(first["images"], second["images"])
    it.close()                                   # leaving early: nothing renders on, no thread is left
    assert len(started) == 2 and not [t for t in threading.enumerate() if t.name.startswith("procvis-render")]


def test_a_failure_while_rendering_ahead_surfaces_from_the_loop(monkeypatch):
    from engine.frames import Frames

    def broken(self, device="cpu"):
        raise RuntimeError("renderer broke")
    monkeypatch.setattr(Frames, "render", broken)
    with pytest.raises(RuntimeError, match="renderer broke"):
        list(stream("shapes/colours", batch_size=2, size=32, count=6))


def test_ahead_false_renders_in_the_iterating_thread(monkeypatch):
    import threading

    from engine.frames import Frames

    where, render = [], Frames.render

    def spied(self, device="cpu"):
        where.append(threading.current_thread().name)
        return render(self, device)
    monkeypatch.setattr(Frames, "render", spied)
    list(stream("shapes/colours", batch_size=2, size=32, count=4, ahead=False))
    list(stream("shapes/colours", batch_size=2, size=32, count=4))
    assert where[:2] == [threading.current_thread().name] * 2 and all(w.startswith("procvis-render") for w in where[2:])
