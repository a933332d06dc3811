"""The sprite kernels (kernels/sprites.py) on synthetic RGBA sprites: kornia's warps agree
with the reference warp within one level, flips and quarter turns are exact, and resizing
for copies keeps an object's colour up to its soft edge (premultiplied alpha)."""
import math

import numpy as np
import pytest
import torch

from kernels import sprites as T
from tests.reference import warp_reference


def _blobs(n=3, size=64, seed=0) -> torch.Tensor:
    """Soft-edged random blobs in random colours with some texture, ``[n, 4, size, size]``."""
    g = np.random.default_rng(seed)
    y, x = np.mgrid[0:size, 0:size] / size
    out = np.zeros((n, 4, size, size), np.uint8)
    for k in range(n):
        cx, cy, r = g.uniform(0.35, 0.65), g.uniform(0.35, 0.65), g.uniform(0.15, 0.3)
        d = np.hypot((x - cx) / 1.3, y - cy) - r + 0.05 * np.sin(9 * x + 5 * y)
        out[k, 3] = np.clip(0.5 - d * size / 1.5, 0, 1) * 255
        out[k, :3] = (g.integers(30, 230, (3, 1, 1)) + 20 * np.sin(13 * x + k)).clip(0, 255)
    return torch.from_numpy(out)


def _theta(a, b, c, d, n):
    return torch.tensor([[a, b, 0.0], [c, d, 0.0]]).expand(n, 2, 3)


def _visible_difference(a, b) -> int:
    """Largest difference in alpha or in the sprites composited over grey (hidden colour
    under zero alpha does not count)."""
    return max((a[:, 3].int() - b[:, 3].int()).abs().max().item(),
               (T.over(a, (128, 128, 128)).int() - T.over(b, (128, 128, 128)).int()).abs().max().item())


@pytest.mark.parametrize("fx,fy", [(0.45, 0.45), (2.0, 2.0), (0.5, 1.0), (1.0, 2.0), (1 / math.sqrt(2),) * 2])
def test_scaling_agrees_with_the_reference_warp(fx, fy):
    s = _blobs()
    ref = warp_reference(s, _theta(1 / fx, 0, 0, 1 / fy, len(s)))
    out = T.scale(s, fx, fy)
    assert _visible_difference(out, ref) <= 1
    assert not out[:, :3][(out[:, 3:] == 0).expand(-1, 3, -1, -1)].any()        # transparent pixels are black


@pytest.mark.parametrize("degrees", [45, -45, 135, -135, 30])
def test_rotation_agrees_with_the_reference_warp(degrees):
    s = _blobs()
    a = math.radians(degrees)
    ref = warp_reference(s, _theta(math.cos(a), math.sin(a), -math.sin(a), math.cos(a), len(s)))
    assert _visible_difference(T.rotate(s, degrees), ref) <= 1


def test_flips_and_quarter_turns_are_exact_permutations():
    s = _blobs()
    assert torch.equal(T.reflect(s, "y"), s.flip(3)) and torch.equal(T.reflect(s, "x"), s.flip(2))
    assert torch.equal(T.reflect(s, "both"), s.flip(2, 3)) and torch.equal(T.rotate(s, 180), s.flip(2, 3))
    assert torch.equal(T.rotate(s, 90), torch.rot90(s, -1, (2, 3))) and torch.equal(T.rotate(s, -90), T.rotate(s, 270))


def test_copies_keep_the_colour_up_to_the_soft_edge():
    """A flat-coloured object shrunk into copies keeps its colour wherever it shows: resizing
    straight alpha would darken every edge pixel towards the transparent black around it."""
    s = _blobs(1, 96)[0]
    s[:3] = torch.tensor([171, 89, 79], dtype=torch.uint8).view(3, 1, 1)
    for n in (1, 2, 4, 9):
        out = T.copies(s, n, 96)
        seen = out[3] > 0
        assert seen.sum() > 0
        assert (out[:3].int() - torch.tensor([171, 89, 79]).view(3, 1, 1)).abs()[:, seen].max() <= 1, n


def test_bad_input_is_refused():
    s = _blobs()
    with pytest.raises(ValueError, match="sprites must be \\[B, 4, H, W\\] uint8"):
        T.scale(s.float(), 2.0)
    with pytest.raises(ValueError, match="axis='z'"):
        T.reflect(s, "z")
