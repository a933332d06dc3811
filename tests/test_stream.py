"""Streams: DataLoader workers and torchrun ranks cover a stream exactly once, with the
same pixels whatever the batch size or number of workers."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch.utils.data import DataLoader

from engine.streams import stream

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


def test_stream_is_endless_by_default_and_rejects_bad_settings():
    it = iter(stream("shapes/colours", batch_size=2, size=16))
    ids = [sid for _ in range(5) for sid in next(it)["id"]]
    assert len(set(ids)) == 10
    with pytest.raises(ValueError, match="batch_size=0"):
        stream("shapes/*", batch_size=0)
    with pytest.raises(ValueError, match="no registered task matches"):
        stream("nothing/*")


def test_multi_panel_samples_are_stitched():
    batch = next(iter(stream("shapes/same_shape", batch_size=2, size=32)))
    assert batch["images"].shape == (2, 3, 32, 2 * 32 + 8)


def test_torchrun_ranks_cover_the_stream_disjointly():
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    r = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--master-port", "29533",
                        str(ROOT / "tests" / "dist_stream.py")], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "COVERAGE OK 29" in r.stdout


def test_panels_keep_their_own_shape_in_a_stream():
    # a square render would cut the legend under a Percept-V scene and the rows past the first
    from engine.outputs import render_samples
    from engine.registry import get_task

    batch = next(iter(stream("perceptv/colours_present", seed=2, batch_size=2, size=96, count=2)))
    assert batch["images"].shape == (2, 3, 128, 96)
    first = get_task("perceptv/colours_present").sample(2, 0)
    assert torch.equal(batch["images"][0], render_samples([first], 96)[0][0])
    tall = next(iter(stream("perceptv/match_shadow", seed=0, batch_size=1, size=64, count=1, offset=40)))
    assert tall["images"].shape[2:] == (16 * 6, 2 * 16 + 8)        # 5 rows: 6 rows of 16 px, two panels
    mixed = next(iter(stream("bongard/classic/number/three_vs_five", batch_size=1, size=24, count=1)))
    assert mixed["images"].shape[2] > 24                              # the wide collage, its panels padded below
