"""Tile kernels against plain array slicing, on every available device."""
import numpy as np
import pytest
import torch

from kernels import tiles as T


def _images(B=3, C=3, H=12, W=18, seed=0):
    return torch.from_numpy(np.random.default_rng(seed).integers(0, 256, (B, C, H, W)).astype(np.uint8))


def _slice(img, rows, cols, t):
    h, w = img.shape[-2] // rows, img.shape[-1] // cols
    r, c = divmod(t, cols)
    return img[..., r * h:(r + 1) * h, c * w:(c + 1) * w]


@pytest.mark.parametrize("rows,cols", [(2, 2), (3, 3), (2, 3), (1, 6)])
def test_split_and_stitch_are_exact_inverses(rows, cols, device):
    img = _images().to(device)
    tiles = T.split(img, rows, cols)
    for b in range(img.shape[0]):
        for t in range(rows * cols):
            assert torch.equal(tiles[b, t], _slice(img[b], rows, cols, t))
    assert torch.equal(T.stitch(tiles, rows, cols), img)


def test_permute_take_rotate_mirror_and_mask_match_slicing(device):
    img = _images(H=12, W=12).to(device)
    tiles = T.split(img, 2, 2)
    perm = torch.tensor([[1, 0, 3, 2], [3, 2, 1, 0], [0, 1, 2, 3]])
    out = T.permute(tiles, perm)
    turns = torch.tensor([[0, 1, 2, 3], [3, 2, 1, 0], [1, 1, 1, 1]])
    rot = T.rotate(tiles, turns)
    mode = torch.tensor([[0, 1, 2, 0], [2, 1, 0, 1], [1, 1, 2, 2]])
    mir = T.mirror(tiles, mode)
    masked = torch.tensor([[True, False, False, True], [False] * 4, [True] * 4])
    m = T.mask(img, 2, 2, masked, value=255)
    idx = torch.tensor([[3, 0], [1, 1], [2, 0]])
    took = T.take(img, 2, 2, idx)
    for b in range(3):
        for t in range(4):
            ref = img[b].cpu().numpy()
            cell = _slice(ref, 2, 2, t)
            assert np.array_equal(out[b, t].cpu().numpy(), _slice(ref, 2, 2, int(perm[b, t])))
            assert np.array_equal(rot[b, t].cpu().numpy(), np.rot90(cell, int(turns[b, t]), axes=(-2, -1)))
            flip = {0: cell, 1: cell[..., ::-1], 2: cell[..., ::-1, :]}[int(mode[b, t])]
            assert np.array_equal(mir[b, t].cpu().numpy(), flip)
            want = np.full_like(cell, 255) if masked[b, t] else cell
            assert np.array_equal(_slice(m[b].cpu().numpy(), 2, 2, t), want)
        for j in range(2):
            assert np.array_equal(took[b, j].cpu().numpy(), _slice(img[b].cpu().numpy(), 2, 2, int(idx[b, j])))


def test_tile_ops_reject_bad_shapes():
    with pytest.raises(ValueError, match="does not split into 5x5"):
        T.split(_images(), 5, 5)
    with pytest.raises(ValueError, match="square tiles"):
        T.rotate(T.split(_images(H=12, W=18), 2, 2), torch.zeros(3, 4))
    with pytest.raises(ValueError, match="perm must be"):
        T.permute(T.split(_images(), 2, 2), torch.zeros(3, 3))
