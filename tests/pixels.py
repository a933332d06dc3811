"""Pixel helpers for tests that re-derive answers from rendered images."""
import numpy as np


def components(mask: np.ndarray) -> list[np.ndarray]:
    """8-connected components of a boolean mask, as arrays of (y, x) (8-connected: the
    anti-aliased pixel at a sharp tip may touch its shape only diagonally)."""
    seen = np.zeros_like(mask, bool)
    out = []
    for y, x in zip(*np.nonzero(mask)):
        if seen[y, x]:
            continue
        stack, pix = [(y, x)], []
        seen[y, x] = True
        while stack:
            cy, cx = stack.pop()
            pix.append((cy, cx))
            for ny, nx in ((cy + dy, cx + dx) for dy in (-1, 0, 1) for dx in (-1, 0, 1)):
                if 0 <= ny < mask.shape[0] and 0 <= nx < mask.shape[1] and mask[ny, nx] and not seen[ny, nx]:
                    seen[ny, nx] = True
                    stack.append((ny, nx))
        out.append(np.array(pix))
    return out


def colour_mask(img: np.ndarray, rgb) -> np.ndarray:
    return np.all(img == np.array(rgb)[:, None, None], axis=0)
