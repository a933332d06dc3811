"""The built-in Jigsaw photographs, read from their pixels: deterministic, textured in every
cell of a 3x3 grid, shots of one place framed alike and different in detail, every kind of
place present."""
import torch
import torch.nn.functional as F

from kernels import tiles as T
from scenes.jigsaw import photos
from scenes.jigsaw.sources import source_for

SIZE = 192


def _grey(img: torch.Tensor, pool: int) -> torch.Tensor:
    return F.avg_pool2d(img.float().mean(0)[None], pool)[0]


def test_a_photo_is_the_same_whatever_was_drawn_before():
    a = photos.photo(7, 2, SIZE)
    for p in range(3):
        photos.photo(p, 0, SIZE)
    b = photos.photo(7, 2, SIZE)
    assert a.dtype == torch.uint8 and a.shape == (3, SIZE, SIZE)
    assert torch.equal(a, b)


def test_every_cell_of_a_3x3_grid_holds_structure():
    """No cell is a flat band: grey spread at 1/4 resolution and colour variety in every cell."""
    for i in range(40):
        img = photos.photo(i // photos.SHOTS, i % photos.SHOTS, SIZE)
        for c, cell in enumerate(T.split(img[None], 3, 3)[0]):
            coarse = float(_grey(cell, 4).std())
            colours = len(torch.unique(cell.reshape(3, -1).T // 8, dim=0))
            assert coarse >= 5.0 and colours >= 20, (i, c, coarse, colours)


def test_shots_of_a_place_share_the_framing_and_differ_in_detail():
    within, between, changed = [], [], []
    for p in range(12):
        a, b = photos.photo(p, 0, SIZE), photos.photo(p, 1, SIZE)
        other = photos.photo(p + 12, 0, SIZE)
        within.append(float((_grey(a, 16) - _grey(b, 16)).abs().mean()))
        between.append(float((_grey(a, 16) - _grey(other, 16)).abs().mean()))
        changed.append(float((a.float() - b.float()).abs().mean()))
    assert sum(within) / 12 < 0.4 * sum(between) / 12, (within, between)
    assert min(changed) >= 2.0, changed                                   # no two shots are the same picture


def test_the_built_in_set_covers_every_kind_of_place_and_orders_shots_as_bursts():
    assert {photos.place(p).kind for p in range(40)} == set(photos.KINDS)
    src = source_for("generated:20", SIZE)
    assert torch.equal(src[6], photos.photo(1, 1, SIZE))
    assert src.neighbours(6, 4) == [5, 7, 8, 9]                           # the other shots of place 1 first
    assert src.neighbours(0, 6) == [1, 2, 3, 4, 5, 6]


def test_photos_draw_at_any_size_with_the_same_content():
    small, large = photos.photo(3, 0, 96), photos.photo(3, 0, 384)
    down = F.interpolate(large[None].float(), size=(96, 96), mode="area")[0]
    assert large.shape == (3, 384, 384)
    assert float((_grey(small, 8) - _grey(down, 8)).abs().mean()) < 12.0
