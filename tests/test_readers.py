"""Reading users' image and object folders: every image mode becomes the right 8-bit RGB
(16-bit samples scaled, not clipped to white; transparency on white), an image over the
decoder's pixel limit is skipped and counted by the jigsaw sources and named by the Bongard
and KiVA folder checks, and two object files of one name in different sub-folders stay two
objects."""
import struct
import warnings
import zlib

import numpy as np
import pytest
import torch
from PIL import Image

from engine.errors import UserError
from kernels.images import ImageTooLarge, open_image, rgb8, rgba8
from scenes.jigsaw.sources import FolderSource, HFSource

GREY16 = np.array([[0, 257, 32896, 65535], [1000, 20000, 45000, 65280]], np.uint16)
GREY8 = np.array([[0, 1, 128, 255], [4, 78, 175, 254]], np.uint8)          # round(v / 257)


def _png16(path, arr: np.ndarray) -> None:
    """Write ``arr`` ``[H, W, C]`` uint16 (C = 2: grey + alpha, 3: RGB, 4: RGBA) as a 16-bit
    PNG, chunk by chunk (PIL writes 16-bit grey PNGs but not 48- or 64-bit colour ones)."""
    h, w, c = arr.shape
    colour_type = {2: 4, 3: 2, 4: 6}[c]
    raw = b"".join(b"\x00" + arr[y].astype(">u2").tobytes() for y in range(h))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", w, h, 16, colour_type, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw))
                     + chunk(b"IEND", b""))


def _read(path) -> np.ndarray:
    with open_image(path) as im:
        return rgb8(im)


def test_16_bit_grey_png_and_tiff_are_scaled_not_clipped(tmp_path):
    Image.fromarray(GREY16).save(tmp_path / "g.png")
    Image.fromarray(GREY16).save(tmp_path / "g.tif")
    Image.fromarray(GREY16.astype(np.int32), "I").save(tmp_path / "i.tif")
    for name, mode in (("g.png", "I;16"), ("g.tif", "I;16"), ("i.tif", "I")):
        with Image.open(tmp_path / name) as im:
            assert im.mode == mode, name
            assert (np.asarray(im.convert("RGB"))[..., 0] == 255).sum() > 4, name   # what PIL's own conversion does
        out = _read(tmp_path / name)
        assert out.shape == (2, 4, 3) and out.dtype == np.uint8, name
        assert (out == GREY8[..., None]).all(), (name, out[..., 0])
    with Image.open(tmp_path / "g.png") as im:
        assert (rgba8(im) == np.dstack([GREY8] * 3 + [np.full_like(GREY8, 255)])).all()


def test_float_images_in_0_to_1_are_scaled():
    im = Image.fromarray(np.array([[0.0, 0.5, 1.0, 0.2]], np.float32), "F")
    assert rgb8(im)[0, :, 1].tolist() == [0, 128, 255, 51]


def test_48_and_64_bit_colour_pngs(tmp_path):
    rgb = np.array([[[65535, 0, 32896], [2570, 51400, 65535]]], np.uint16)
    _png16(tmp_path / "rgb48.png", rgb)
    assert _read(tmp_path / "rgb48.png").tolist() == [[[255, 0, 128], [10, 200, 255]]]
    rgba = np.array([[[65535, 0, 0, 65535], [0, 0, 65535, 0], [0, 0, 0, 32896]]], np.uint16)
    _png16(tmp_path / "rgba64.png", rgba)
    assert _read(tmp_path / "rgba64.png").tolist() == [[[255, 0, 0], [255, 255, 255], [127, 127, 127]]]
    grey_alpha = np.array([[[25700, 65535], [0, 0]]], np.uint16)
    _png16(tmp_path / "la32.png", grey_alpha)
    assert _read(tmp_path / "la32.png").tolist() == [[[100, 100, 100], [255, 255, 255]]]


def test_palette_grey_alpha_and_cmyk(tmp_path):
    p = Image.new("P", (3, 1))
    p.putpalette([255, 0, 0, 0, 255, 0, 0, 0, 255])
    p.putpixel((1, 0), 1)
    p.putpixel((2, 0), 2)
    p.save(tmp_path / "p.png", transparency=0)                 # palette entry 0 is transparent
    assert _read(tmp_path / "p.png").tolist() == [[[255, 255, 255], [0, 255, 0], [0, 0, 255]]]
    p.save(tmp_path / "opaque.png")
    assert _read(tmp_path / "opaque.png").tolist() == [[[255, 0, 0], [0, 255, 0], [0, 0, 255]]]
    Image.fromarray(np.array([[[100, 255], [100, 0], [0, 51]]], np.uint8), "LA").save(tmp_path / "la.png")
    assert _read(tmp_path / "la.png")[0, :, 0].tolist() == [100, 255, 204]
    Image.new("CMYK", (2, 1), (0, 255, 0, 0)).save(tmp_path / "cmyk.tif")
    assert _read(tmp_path / "cmyk.tif").tolist() == [[[255, 0, 255], [255, 0, 255]]]


def _noise16(rng, h, w) -> np.ndarray:
    return rng.integers(0, 65536, (h, w), dtype=np.uint16)


def test_jigsaw_folder_reads_16_bit_images_scaled(tmp_path):
    rng = np.random.default_rng(1)
    grey = _noise16(rng, 288, 288)
    Image.fromarray(grey).save(tmp_path / "a_grey16.png")
    colour = rng.integers(0, 65536, (288, 288, 3), dtype=np.uint16)
    _png16(tmp_path / "b_rgb48.png", colour)
    src = FolderSource(tmp_path, size=288)
    assert [p.name for p in src.paths] == ["a_grey16.png", "b_rgb48.png"] and src.skipped == {}
    want = np.round(grey / 257.0).astype(np.uint8)
    for c in range(3):
        assert torch.equal(src[0][c], torch.from_numpy(want)), c
    assert torch.equal(src[1], torch.from_numpy((colour >> 8).astype(np.uint8)).permute(2, 0, 1))
    assert 120 < float(src[0].float().mean()) < 135                    # not clipped to white


def _folder_with_a_too_large_image(root, rng):
    """Two usable 300x300 images, one of 400x400 (over a limit of 300*300 pixels, under twice
    it: the decoder warns) and one of 700x700 (over twice it: the decoder refuses)."""
    root.mkdir()
    for name, side in (("a.png", 300), ("b.png", 300), ("c_big.png", 400), ("d_huge.png", 700)):
        Image.fromarray(rng.integers(0, 256, (side, side, 3), dtype=np.uint8)).save(root / name)


@pytest.mark.parametrize("filters", ["default", "error"])
def test_jigsaw_folder_skips_and_counts_too_large_images(tmp_path, monkeypatch, filters):
    _folder_with_a_too_large_image(tmp_path / "photos", np.random.default_rng(2))
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 300 * 300)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if filters == "error":                                     # python -W error: the warning raises
            warnings.simplefilter("error", Image.DecompressionBombWarning)
        src = FolderSource(tmp_path / "photos", size=96)
    assert [p.name for p in src.paths] == ["a.png", "b.png"]
    assert src.skipped == {"too large": 2}
    messages = [str(w.message) for w in caught]
    assert messages == [f"{str(tmp_path / 'photos')!r}: skipped 2 of 4 images (too large: 2)"], messages
    assert src[1].shape == (3, 96, 96)


def test_hf_dataset_skips_too_large_images_and_reads_16_bit(tmp_path, monkeypatch):
    datasets = pytest.importorskip("datasets")
    rng = np.random.default_rng(3)
    grey = _noise16(rng, 300, 300)
    imgs = [Image.fromarray(grey), Image.fromarray(rng.integers(0, 256, (300, 300, 3), dtype=np.uint8)),
            Image.fromarray(rng.integers(0, 256, (400, 400, 3), dtype=np.uint8))]
    datasets.Dataset.from_dict({"image": imgs}, features=datasets.Features({"image": datasets.Image()})) \
        .save_to_disk(str(tmp_path / "ds"))
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 300 * 300)
    with pytest.warns(UserWarning, match=r"skipped 1 of 3 images \(too large: 1\)"):
        src = HFSource(tmp_path / "ds", size=300)
    assert src.rows == [0, 1] and src.skipped == {"too large": 1}
    assert torch.equal(src[0][1], torch.from_numpy(np.round(grey / 257.0).astype(np.uint8)))


def test_open_image_names_the_limit(tmp_path, monkeypatch):
    Image.new("RGB", (20, 20)).save(tmp_path / "x.png")
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 300)
    with pytest.raises(ImageTooLarge, match="too large: over 300 pixels"):
        open_image(tmp_path / "x.png")
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", None)                # no limit: opens
    with open_image(tmp_path / "x.png") as im:
        assert im.size == (20, 20)


def _bongard_problem(root, write_left):
    """A problem folder ``root/p`` whose left images are written by ``write_left(path, k)``."""
    d = root / "p"
    for side in ("left", "right"):
        (d / side).mkdir(parents=True)
        for k in range(6):
            if side == "left":
                write_left(d / side / f"{k}.png", k)
            else:
                Image.new("RGB", (24, 24), (20, 30, 200)).save(d / side / f"{k}.png")
    (d / "rule.txt").write_text("Every figure is grey.\nEvery figure is blue.\n")
    return d


def test_bongard_folder_reads_16_bit_grey_scaled(tmp_path):
    from scenes.bongard.folders import check_problems, read_image

    level = [257 * 10, 257 * 60, 257 * 110, 257 * 160, 257 * 210, 65535]
    _bongard_problem(tmp_path / "problems", lambda path, k: Image.fromarray(np.full((30, 40), level[k], np.uint16))
                     .save(path))
    check_problems(str(tmp_path / "problems"))
    for k, want in enumerate((10, 60, 110, 160, 210, 255)):
        img = read_image(tmp_path / "problems" / "p" / "left" / f"{k}.png")
        assert img.shape == (3, 30, 30) and img.dtype == np.uint8
        assert (img == want).all(), (k, np.unique(img))


@pytest.mark.parametrize("side", [400, 700])                 # the decoder warns / refuses
def test_bongard_folder_names_a_too_large_image(tmp_path, monkeypatch, side):
    from scenes.bongard.folders import check_problems

    def write(path, k):
        n = side if k == 3 else 24
        Image.new("RGB", (n, n), (128, 128, 128)).save(path)

    _bongard_problem(tmp_path / "problems", write)
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 300 * 300)
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        with pytest.raises(UserError, match=r"cannot read image '.*p/left/3\.png' \(too large: over 90000 pixels"
                           ) as e:
            check_problems(str(tmp_path / "problems"))
    assert "\n" not in str(e.value)


def test_kiva_objects_of_one_name_in_two_subfolders_are_two_objects(tmp_path):
    from scenes.kiva.library import names, sprite

    for folder, rgb in (("red", (200, 20, 20)), ("blue", (20, 20, 200))):
        (tmp_path / folder).mkdir()
        img = Image.new("RGBA", (40, 40), (0, 0, 0, 0))
        img.paste(Image.new("RGBA", (20, 30), (*rgb, 255)), (10, 5))
        img.save(tmp_path / folder / "cup.png")
    settings = {"objects": str(tmp_path)}
    assert names(settings) == ("user:blue/cup", "user:red/cup")
    means = {}
    for name in names(settings):
        s = sprite(name, 64, settings)
        means[name] = [float(s[c][s[3] > 127].float().mean()) for c in range(3)]
    assert means["user:red/cup"][0] > 150 > means["user:red/cup"][2]
    assert means["user:blue/cup"][2] > 150 > means["user:blue/cup"][0]


def test_kiva_same_name_in_one_subfolder_is_refused_naming_both(tmp_path):
    from scenes.kiva.library import check_objects

    (tmp_path / "a").mkdir()
    for suffix in (".png", ".bmp"):
        Image.new("RGB", (20, 20), (200, 0, 0)).save(tmp_path / "a" / f"cup{suffix}")
    Image.new("RGB", (20, 20), (0, 0, 200)).save(tmp_path / "cup.png")
    with pytest.raises(UserError, match=r"a/cup\.(bmp|png) and .*a/cup\.(bmp|png) are both object 'user:a/cup'"
                       ) as e:
        check_objects(str(tmp_path))
    assert "\n" not in str(e.value)


def test_kiva_16_bit_object_image_is_keyed_not_white(tmp_path):
    from scenes.kiva.library import _load_image

    grey = np.full((40, 40), 65535, np.uint16)                  # a white background
    grey[10:30, 8:32] = 257 * 60                                # a dark grey object
    Image.fromarray(grey).save(tmp_path / "thing.png")
    a = _load_image(tmp_path / "thing.png")
    assert a[0, 0, 3] == 0 and a[20, 20, 3] == 255
    assert a[20, 20, :3].tolist() == [60, 60, 60]
