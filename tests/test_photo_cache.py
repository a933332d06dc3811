"""The built-in Jigsaw photos kept on disk: what is read back is what drawing gives, bit for
bit; the folder is named for everything that draws; damaged files are drawn again; an
unwritable, turned-off or outdated cache still gives the right photos; folders of other
code are cleared once unused."""
import ast
import os
import time

import numpy as np
import pytest
import torch

from scenes.jigsaw import photo_cache, photos
from scenes.jigsaw.sources import GeneratedSource


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A fresh photo cache at the default place under a temporary ``$PROCVIS_CACHE``."""
    monkeypatch.setenv("PROCVIS_CACHE", str(tmp_path))
    monkeypatch.delenv(photo_cache.ENV, raising=False)
    monkeypatch.setattr(photo_cache, "_marked", {})
    return tmp_path / "jigsaw" / photo_cache.code_digest()


def _no_drawing(monkeypatch):
    def refuse(*a):
        raise AssertionError(f"drew photo {a} instead of reading it")
    monkeypatch.setattr(photos, "photo", refuse)


def _files(where):
    return sorted(p.relative_to(where).as_posix() for p in where.rglob("*") if p.is_file()) if where.exists() else []


def test_a_kept_photo_reads_back_as_drawn_without_drawing(cache, monkeypatch):
    drawn = photos.photo(4, 2, 96)
    assert torch.equal(photo_cache.photo(4, 2, 96), drawn)
    assert _files(cache) == ["96/4-2.rgb"]
    _no_drawing(monkeypatch)
    again = photo_cache.photo(4, 2, 96)
    assert torch.equal(again, drawn) and again.dtype == torch.uint8 and again.shape == (3, 96, 96)
    again[0, 0, 0] = 1 - again[0, 0, 0]                   # the caller owns what it gets
    assert torch.equal(photo_cache.photo(4, 2, 96), drawn)


def test_the_built_in_source_reads_through_the_cache(cache, monkeypatch):
    drawn = [photos.photo(i // photos.SHOTS, i % photos.SHOTS, 72) for i in range(7)]
    assert all(torch.equal(GeneratedSource(7, 72)[i], d) for i, d in enumerate(drawn))
    _no_drawing(monkeypatch)
    fresh = GeneratedSource(7, 72)                        # a new process's source: nothing in memory
    assert all(torch.equal(fresh[i], d) for i, d in enumerate(drawn))


@pytest.mark.parametrize("damage", ["truncated", "one byte changed", "empty", "longer", "another format"])
def test_a_damaged_file_is_drawn_again_and_replaced(cache, damage):
    path = cache / "96" / "1-0.rgb"
    drawn = photo_cache.photo(1, 0, 96)
    good = path.read_bytes()
    bad = {"truncated": good[:1000], "one byte changed": good[:500] + bytes([good[500] ^ 4]) + good[501:],
           "empty": b"", "longer": good + b"\0", "another format": b"\x93NUMPY" + good[6:]}[damage]
    path.write_bytes(bad)
    assert torch.equal(photo_cache.photo(1, 0, 96), drawn)
    assert path.read_bytes() == good and _files(cache) == ["96/1-0.rgb"]     # no temporary file left


def test_an_unwritable_cache_still_gives_the_photo(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder should be")
    monkeypatch.setenv(photo_cache.ENV, str(blocker))
    assert torch.equal(photo_cache.photo(2, 1, 96), photos.photo(2, 1, 96))


def test_off_large_photos_and_changed_code_draw_without_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv(photo_cache.ENV, str(tmp_path))
    monkeypatch.setattr(photo_cache, "MAX_SIZE", 48)
    assert torch.equal(photo_cache.photo(2, 1, 96), photos.photo(2, 1, 96))
    assert _files(tmp_path) == []                          # larger than MAX_SIZE: drawn, not kept
    monkeypatch.setenv(photo_cache.ENV, "off")
    assert photo_cache.folder() is None and torch.equal(photo_cache.photo(2, 1, 48), photos.photo(2, 1, 48))
    # a source file changed after the drawing code was imported: this process keeps no photos
    monkeypatch.setenv(photo_cache.ENV, str(tmp_path))
    stamps = list(photo_cache._LOADED)
    stamps[3] = (stamps[3][0], stamps[3][1] - 1, stamps[3][2])
    monkeypatch.setattr(photo_cache, "_LOADED", tuple(stamps))
    monkeypatch.setattr(photo_cache, "_digest", [])
    assert photo_cache.code_digest() is None
    assert torch.equal(photo_cache.photo(2, 1, 48), photos.photo(2, 1, 48)) and _files(tmp_path) == []


def test_the_drawing_code_is_all_in_what_the_digest_reads():
    # photos.py may import only engine, kernels and libraries: every module of those two
    # packages is read by the digest, so no change to the code that draws goes unnoticed
    tree = ast.parse(open(photos.__file__).read())
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {(n.module or "").split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and not n.level}
    assert imported <= {"__future__", "dataclasses", "numpy", "engine", "kernels", "math", "functools", "typing"}, imported
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level], "photos.py imports scenes code"
    root = os.path.dirname(os.path.dirname(os.path.dirname(photos.__file__)))
    read = {str(f) for f in photo_cache._FILES}
    for pkg in ("engine", "kernels"):
        for name in os.listdir(os.path.join(root, pkg)):
            if name.endswith(".py"):
                assert os.path.join(root, pkg, name) in read, name


def test_the_digest_changes_with_any_file_it_reads_the_libraries_and_the_processor(tmp_path, monkeypatch):
    before = photo_cache.code_digest()
    copies = []
    for f in photo_cache._FILES:
        c = tmp_path / f"{len(copies)}-{f.name}"
        c.write_bytes(f.read_bytes())
        copies.append(c)

    def digest_of(files, versions=None):
        monkeypatch.setattr(photo_cache, "_FILES", files)
        monkeypatch.setattr(photo_cache, "_LOADED", photo_cache._stamp(files))
        monkeypatch.setattr(photo_cache, "_digest", [])
        if versions:
            monkeypatch.setattr(photo_cache.metadata, "version", lambda d: versions.get(d, "1.0"))
        return photo_cache.code_digest()
    same = digest_of(copies)
    assert same is not None
    raster = next(c for c in copies if c.name.endswith("-raster_numba.py"))
    raster.write_bytes(raster.read_bytes() + b"\n")
    assert digest_of(copies) not in (same, None)
    assert digest_of(copies, {"numba": "0.1"}) != digest_of(copies, {"numba": "0.2"})
    monkeypatch.setattr(photo_cache, "_processor", lambda: "x86_64 one AVX2")
    other_machine = digest_of(copies)
    monkeypatch.setattr(photo_cache, "_processor", lambda: "x86_64 one AVX2,AVX512F")
    assert digest_of(copies) != other_machine
    monkeypatch.undo()
    assert photo_cache.code_digest() == before


def test_folders_of_other_code_are_cleared_once_unused(cache):
    old, used = cache.parent / "0123456789abcdef", cache.parent / "fedcba9876543210"
    for d in (old, used):
        (d / "96").mkdir(parents=True)
        (d / "96" / "0-0.rgb").write_bytes(b"x")
    long_ago = time.time() - 2 * photo_cache.STALE_S
    os.utime(old, (long_ago, long_ago))
    os.utime(cache.parent, (long_ago, long_ago))
    photo_cache.photo(0, 0, 96)
    assert not old.exists() and used.is_dir() and _files(cache) == ["96/0-0.rgb"]
    assert time.time() - cache.stat().st_mtime < 60           # this code's folder marked as used


# ------------------------------------------------------------------ a folder of the user's photos
def _structured(seed: int, side: int = 288) -> np.ndarray:
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:side, 0:side] / side
    img = np.stack([120 + 80 * np.sin(xx * rng.uniform(3, 12) + yy * rng.uniform(3, 12) + c) for c in range(3)], -1)
    return np.clip(img + rng.normal(0, 6, img.shape), 0, 255).astype(np.uint8)


def _folder_of_photos(where, n=4, ext="png"):
    from PIL import Image
    where.mkdir()
    for k in range(n):
        Image.fromarray(_structured(k)).save(where / f"p{k}.{ext}")
    Image.fromarray(np.full((64, 64, 3), 90, np.uint8)).save(where / "small.png")      # too small: skipped
    (where / "broken.jpg").write_bytes(b"not a jpeg")                                   # unreadable: skipped


@pytest.fixture
def folders(cache, tmp_path, monkeypatch):
    """``(sources module, a list that records every file the source opens)``; files count as
    settled at once (``RACY_S = 0``)."""
    from scenes.jigsaw import sources
    monkeypatch.setattr(photo_cache, "RACY_S", 0.0)
    opened = []
    real_open = sources.open_image
    monkeypatch.setattr(sources, "open_image", lambda p: opened.append(os.path.basename(p)) or real_open(p))
    return sources, opened


def _source(sources, where, size=96):
    with pytest.warns(UserWarning, match="skipped"):
        return sources.FolderSource(where, size=size)


def test_a_folders_verdicts_and_photos_are_read_back_without_decoding(folders, tmp_path):
    sources, opened = folders
    _folder_of_photos(tmp_path / "photos")
    first = _source(sources, tmp_path / "photos")
    made = [first[i] for i in range(len(first))]
    assert len(first) == 4 and first.skipped == {"too small": 1, "unreadable": 1}
    with sources.open_image(first.paths[2]) as im:                                  # as the source reads a file
        assert torch.equal(made[2], sources.square(sources.to_tensor(sources.rgb8(im)), 96))
    opened.clear()
    again = _source(sources, tmp_path / "photos")                                   # a new process's source
    assert again.paths == first.paths and again.skipped == first.skipped
    assert all(torch.equal(again[i], m) for i, m in enumerate(made))
    assert opened == ["broken.jpg"]                  # an unreadable verdict is not kept: the file may be mended


def test_a_file_replaced_with_its_size_and_times_kept_is_read_afresh(folders, tmp_path):
    from PIL import Image
    sources, opened = folders
    _folder_of_photos(tmp_path / "photos", ext="bmp")                              # BMP: same size for any picture
    first = _source(sources, tmp_path / "photos")
    made = [first[i] for i in range(len(first))]
    target = tmp_path / "photos" / "p1.bmp"
    st = target.stat()
    Image.fromarray(np.full((288, 288, 3), 128, np.uint8)).save(target)             # flat: low structure
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))                           # as cp -p or tar would
    assert target.stat().st_size == st.st_size and target.stat().st_mtime_ns == st.st_mtime_ns
    again = _source(sources, tmp_path / "photos")
    assert again.skipped == {"too small": 1, "unreadable": 1, "low structure": 1} and len(again) == 3
    Image.fromarray(_structured(9)).save(target)
    third = _source(sources, tmp_path / "photos")
    fresh = third[third.paths.index(target)]
    with sources.open_image(target) as im:
        assert torch.equal(fresh, sources.square(sources.to_tensor(sources.rgb8(im)), 96))
    assert not torch.equal(fresh, made[1])


def test_files_changed_just_now_are_not_kept(cache, tmp_path, monkeypatch):
    from scenes.jigsaw import sources
    _folder_of_photos(tmp_path / "photos")
    src = _source(sources, tmp_path / "photos")                                     # RACY_S as shipped
    src[0]
    assert _files(cache) == []


def test_damaged_or_foreign_verdicts_are_judged_again(folders, tmp_path):
    sources, opened = folders
    _folder_of_photos(tmp_path / "photos")
    first = _source(sources, tmp_path / "photos")
    kept = sorted((cache_dir := photo_cache.folder() / "verdicts").glob("*.txt"))
    assert len(kept) == 5                                                           # every verdict but unreadable
    for k, f in enumerate(kept):
        f.write_bytes([b"procvis verdict:", b"procvis verdict:low structure", b"procvis verdict:odd\n",
                       b"procvis verdict:\r", b"procvis verdict:too small\nmore"][k])
    opened.clear()
    again = _source(sources, tmp_path / "photos")
    assert again.paths == first.paths and again.skipped == first.skipped
    assert len(opened) == 6 and len(list(cache_dir.glob("*.txt"))) == 5


def test_the_decoders_settings_are_part_of_what_is_kept(folders, tmp_path, monkeypatch):
    from PIL import Image, ImageFile
    sources, opened = folders
    _folder_of_photos(tmp_path / "photos")
    whole = tmp_path / "photos" / "cut.jpg"
    Image.fromarray(_structured(5, 400)).save(whole, quality=95)
    whole.write_bytes(whole.read_bytes()[:-4000])                                  # a truncated JPEG
    monkeypatch.setattr(ImageFile, "LOAD_TRUNCATED_IMAGES", True)
    lenient = _source(sources, tmp_path / "photos")
    assert whole in lenient.paths
    monkeypatch.setattr(ImageFile, "LOAD_TRUNCATED_IMAGES", False)
    strict = _source(sources, tmp_path / "photos")
    assert whole not in strict.paths and strict.skipped["unreadable"] == 2


@pytest.mark.parametrize("cached", [True, False])
def test_file_names_that_are_not_utf8_are_read(folders, tmp_path, monkeypatch, cached):
    sources, _ = folders
    if not cached:
        monkeypatch.setenv(photo_cache.ENV, "off")
    _folder_of_photos(tmp_path / "photos", n=1)
    odd = tmp_path / "photos" / os.fsdecode(b"caf\xe9.png")
    (tmp_path / "photos" / "p0.png").rename(odd)
    src = _source(sources, tmp_path / "photos")
    assert src.paths == [odd] and src[0].shape == (3, 96, 96)
    assert bool(_files(tmp_path / "jigsaw")) == cached                              # the cache fixture's root


def test_a_file_changed_while_it_is_read_is_not_kept(folders, tmp_path, monkeypatch):
    from PIL import Image
    sources, opened = folders
    _folder_of_photos(tmp_path / "photos", ext="bmp")
    target = tmp_path / "photos" / "p1.bmp"
    real_read = sources.FolderSource._read

    def read_then_replace(self, path):
        img = real_read(self, path)
        if path == target and not getattr(read_then_replace, "done", False):
            read_then_replace.done = True
            st = target.stat()
            Image.fromarray(_structured(7)).save(target)              # another picture, same size...
            os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))     # ...and the old times
        return img
    monkeypatch.setattr(sources.FolderSource, "_read", read_then_replace)
    first = _source(sources, tmp_path / "photos")
    k = first.paths.index(target)
    old = first[k]
    assert len(_files(photo_cache.folder() / "files")) == 0                 # not kept: it changed meanwhile
    again = _source(sources, tmp_path / "photos")
    with sources.open_image(target) as im:
        now = sources.square(sources.to_tensor(sources.rgb8(im)), 96)
    assert torch.equal(again[k], now) and not torch.equal(now, old)


def test_verdicts_are_kept_per_filter_and_pixel_limit(folders, tmp_path, monkeypatch):
    from PIL import Image
    sources, _ = folders
    _folder_of_photos(tmp_path / "photos")
    assert len(_source(sources, tmp_path / "photos")) == 4
    with pytest.raises(sources.SourceError), pytest.warns(UserWarning, match="too small: 5"):
        sources.FolderSource(tmp_path / "photos", size=96, min_side=300)     # the kept verdicts were for 256
    assert len(_source(sources, tmp_path / "photos")) == 4
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1000)
    with pytest.raises(sources.SourceError):                                # every photo now too large
        with pytest.warns(UserWarning, match="too large"):
            sources.FolderSource(tmp_path / "photos", size=96)


def test_entries_of_folder_files_unused_for_a_day_are_removed(folders, tmp_path, monkeypatch):
    sources, _ = folders
    _folder_of_photos(tmp_path / "photos", n=2)
    src = _source(sources, tmp_path / "photos")
    src[0], src[1]
    where = photo_cache.folder()
    entries = sorted(where.glob("files/*/*")) + sorted(where.glob("verdicts/*"))
    assert len(entries) == 2 + 3
    long_ago = time.time() - 2 * photo_cache.STALE_S
    for f in entries[:1] + entries[2:3]:
        os.utime(f, (long_ago, long_ago))
    monkeypatch.setattr(photo_cache, "_marked", {})                         # a later process
    photo_cache.photo(0, 0, 48)
    assert sorted(where.glob("files/*/*")) + sorted(where.glob("verdicts/*")) == entries[1:2] + entries[3:]
