"""The built-in Jigsaw photos kept on disk: what is read back is what drawing gives, bit for
bit; the folder is named for the code that draws; damaged files are drawn again; an
unwritable cache still gives the right photos; folders of other code are cleared."""
import os
import time

import numpy as np
import pytest
import torch

from scenes.jigsaw import photo_cache, photos
from scenes.jigsaw.sources import GeneratedSource


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PROCVIS_CACHE", str(tmp_path))
    return tmp_path / "jigsaw" / photo_cache.code_digest()


def _no_drawing(monkeypatch):
    def refuse(*a):
        raise AssertionError(f"drew photo {a} instead of reading it")
    monkeypatch.setattr(photos, "photo", refuse)


def test_a_kept_photo_reads_back_as_drawn_without_drawing(cache, monkeypatch):
    drawn = photos.photo(4, 2, 96)
    first = photo_cache.photo(4, 2, 96)
    assert torch.equal(first, drawn)
    assert (cache / "96" / "4-2.npy").is_file()
    _no_drawing(monkeypatch)
    again = photo_cache.photo(4, 2, 96)
    assert torch.equal(again, drawn) and again.dtype == torch.uint8 and again.shape == (3, 96, 96)


def test_the_built_in_source_reads_through_the_cache(cache, monkeypatch):
    drawn = [photos.photo(i // photos.SHOTS, i % photos.SHOTS, 72) for i in range(7)]
    assert all(torch.equal(GeneratedSource(7, 72)[i], d) for i, d in enumerate(drawn))
    _no_drawing(monkeypatch)
    fresh = GeneratedSource(7, 72)                       # a new process's source: nothing in memory
    assert all(torch.equal(fresh[i], d) for i, d in enumerate(drawn))


@pytest.mark.parametrize("damage", ["truncated", "wrong shape", "not an array"])
def test_a_damaged_file_is_drawn_again_and_replaced(cache, damage):
    path = cache / "96" / "1-0.npy"
    drawn = photo_cache.photo(1, 0, 96)
    if damage == "truncated":
        path.write_bytes(path.read_bytes()[:1000])
    elif damage == "wrong shape":
        np.save(path, np.zeros((3, 48, 48), np.uint8))
    else:
        path.write_bytes(b"not a photo")
    assert torch.equal(photo_cache.photo(1, 0, 96), drawn)
    assert np.array_equal(np.load(path), drawn.numpy())


def test_an_unwritable_cache_still_gives_the_photo(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder should be")
    monkeypatch.setenv("PROCVIS_CACHE", str(blocker))
    assert torch.equal(photo_cache.photo(2, 1, 96), photos.photo(2, 1, 96))


def test_the_folder_is_named_for_the_code_that_draws(tmp_path, monkeypatch):
    before = photo_cache.code_digest()
    changed = tmp_path / "photos.py"
    changed.write_bytes(open(photos.__file__, "rb").read() + b"\n# another way of drawing\n")
    monkeypatch.setattr(photos, "__file__", str(changed))
    photo_cache.code_digest.cache_clear()
    try:
        assert photo_cache.code_digest() != before
    finally:
        monkeypatch.undo()
        photo_cache.code_digest.cache_clear()
    assert photo_cache.code_digest() == before


def test_folders_of_other_code_are_cleared_once_nobody_fills_them(cache):
    root = cache.parent
    old, busy = root / "0123456789abcdef" / "96", root / "fedcba9876543210" / "96"
    for d in (old, busy):
        d.mkdir(parents=True)
        (d / "0-0.npy").write_bytes(b"x")
    long_ago = time.time() - 2 * photo_cache.STALE_S
    for p in (old, old.parent):
        os.utime(p, (long_ago, long_ago))
    photo_cache.photo(0, 0, 96)                          # the first write into this code's folder
    assert not old.parent.exists() and busy.is_dir() and (cache / "96" / "0-0.npy").is_file()
