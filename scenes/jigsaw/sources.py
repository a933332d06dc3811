"""Where jigsaw images come from: a folder of photographs, a local Hugging Face dataset, or
the default set of structured images that the engine generates (offline, deterministic).

Every source yields square RGB ``uint8`` tensors ``[3, S, S]`` (centre crop, then resize),
with ``S`` divisible by 2, 3 and 4 so that every grid has square cells. :func:`source_for`
builds the source that the family's ``images`` and ``image_size`` settings name.
"""
from __future__ import annotations

import functools
import warnings
from pathlib import Path

import numpy as np
import torch

from engine.errors import UserError
from engine.rendering import render
from engine.rng import sample_rng
from engine.scene import Scene
from kernels.images import square, structure

SIZE = 384
GENERATED = 1100                 # images in the built-in set
EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff", ".gif")


class SourceError(UserError):
    """A source that yields no usable image."""


@functools.lru_cache(maxsize=8)
def source_for(images: str, size: int) -> ImageSource:
    """The source a (checked) ``images`` setting names, at ``size`` pixels: ``generated``,
    ``generated:N``, ``hf:PATH`` (a local Hugging Face dataset) or a folder. Built once per
    process and setting."""
    if images == "generated" or images.startswith("generated:"):
        return GeneratedSource(int(images.partition(":")[2] or GENERATED), size)
    if images.startswith("hf:"):
        return HFSource(images[3:], size=size)
    return FolderSource(images, size=size)


def rejection(w: int, h: int, small: torch.Tensor | None, min_side: int, max_aspect: float,
              min_structure: float) -> str | None:
    """Why an image of ``w x h`` (``small``: a reduced ``[3,h',w']`` copy) is not used, or ``None``."""
    if min(w, h) < min_side:
        return "too small"
    if max(w, h) / min(w, h) > max_aspect:
        return "aspect ratio"
    if small is not None and structure(small) < min_structure:
        return "low structure"
    return None


def _report(where: str, skipped: dict[str, int], total: int) -> None:
    if skipped:
        warnings.warn(f"{where}: skipped {sum(skipped.values())} of {total} images "
                      f"({', '.join(f'{k}: {v}' for k, v in sorted(skipped.items()))})", stacklevel=3)


class ImageSource:
    """A fixed, ordered list of images; ``source[i]`` is a ``[3,S,S]`` uint8 tensor."""

    size = SIZE

    def __len__(self) -> int:
        raise NotImplementedError

    def __getitem__(self, i: int) -> torch.Tensor:
        raise NotImplementedError


class GeneratedSource(ImageSource):
    """Structured, asymmetric scenes drawn by the engine: a horizon with sky and ground
    gradients, buildings with windows, a sun, roads, trees and signs. Image ``i`` is the
    same everywhere; ``n`` images in all."""

    def __init__(self, n: int = GENERATED, size: int = SIZE):
        self.n, self.size = n, size

    def __len__(self) -> int:
        return self.n

    @functools.lru_cache(maxsize=256)
    def __getitem__(self, i: int) -> torch.Tensor:
        if not 0 <= i < self.n:
            raise IndexError(i)
        rng = sample_rng(0, "jigsaw/generated-images", i)
        return _generated(rng, self.size)


def _generated(rng: np.random.Generator, size: int) -> torch.Tensor:
    rgb = lambda lo=0, hi=256: tuple(int(v) for v in rng.integers(lo, hi, 3))  # noqa: E731
    horizon = float(rng.uniform(0.35, 0.7))
    s = Scene(background=rgb(120, 230))
    # sky and ground as stacked translucent bands: a gradient drawn by the engine
    for k in range(8):
        y = horizon * k / 8
        s.rectangle((0.5, y + horizon / 16), (1.02, horizon / 8 + 0.002), color=rgb(90, 255), alpha=0.35)
    ground = rgb(30, 160)
    for k in range(6):
        y = horizon + (1 - horizon) * k / 6
        s.rectangle((0.5, y + (1 - horizon) / 12), (1.02, (1 - horizon) / 6 + 0.002), color=ground, alpha=0.8 - 0.1 * k)
    s.circle((float(rng.uniform(0.1, 0.9)), float(rng.uniform(0.05, horizon - 0.1))), float(rng.uniform(0.04, 0.09)),
             color=rgb(200, 256))
    for _ in range(int(rng.integers(3, 8))):          # buildings with windows
        w, h = float(rng.uniform(0.06, 0.2)), float(rng.uniform(0.1, horizon * 0.9))
        x = float(rng.uniform(0.0, 1.0))
        wall = rgb(20, 230)
        s.rectangle((x, horizon - h / 2), (w, h), color=wall)
        win = rgb(150, 256)
        for r in range(int(h / 0.05)):
            for c in range(int(w / 0.04)):
                if rng.random() < 0.7:
                    s.square((x - w / 2 + 0.02 + 0.04 * c, horizon - h + 0.025 + 0.05 * r), 0.018, color=win)
        s.triangle((x - w / 2, horizon - h), (x + w / 2, horizon - h), (x + float(rng.uniform(-w / 2, w / 2)),
                   horizon - h - float(rng.uniform(0.02, 0.08))), color=rgb(0, 200))
    pts = [(float(rng.uniform(0.3, 0.7)), 1.02)] + [(float(rng.uniform(0, 1)), float(rng.uniform(horizon, 1)))
                                                     for _ in range(2)] + [(float(rng.uniform(0, 1)), horizon)]
    s.spline(pts, width=float(rng.uniform(0.03, 0.07)), color=rgb(40, 120))
    for _ in range(int(rng.integers(3, 9))):          # trees
        x, y = float(rng.uniform(0, 1)), float(rng.uniform(horizon + 0.03, 1.0))
        r = float(rng.uniform(0.03, 0.07))
        s.rectangle((x, y + r * 0.9), (r * 0.35, r * 1.4), color=(90, 60, 30))
        s.circle((x, y), r, color=rgb(0, 140))
    s.arrow((float(rng.uniform(0.05, 0.45)), float(rng.uniform(horizon + 0.05, 0.95))),
            (float(rng.uniform(0.55, 0.95)), float(rng.uniform(horizon + 0.05, 0.95))), width=0.015, color=rgb(200, 256))
    s.text(str(rng.choice(["EXIT", "CAFE", "BUS 12", "NORTH", "P", "HOTEL"])),
           (float(rng.uniform(0.2, 0.8)), float(rng.uniform(0.1, horizon - 0.05))), height=0.07, color=rgb(0, 80))
    return render([s], size)[0]


class FolderSource(ImageSource):
    """Every image file under ``root`` (recursive, sorted by path) that decodes, has a short
    side of at least ``min_side``, an aspect ratio of at most ``max_aspect`` and a
    :func:`structure` of at least ``min_structure``. Skipped files are counted in
    ``skipped`` (reason -> count) and reported in one warning."""

    def __init__(self, root: str | Path, size: int = SIZE, min_side: int = 256, max_aspect: float = 2.0,
                 min_structure: float = 2.0):
        from PIL import Image, UnidentifiedImageError

        root = Path(root)
        if not root.is_dir():
            raise SourceError(f"image folder {str(root)!r} does not exist or is not a folder")
        self.size = size
        self.paths: list[Path] = []
        self.skipped: dict[str, int] = {}
        files = sorted(p for p in root.rglob("*") if p.suffix.lower() in EXTENSIONS and p.is_file())
        for p in files:
            try:
                with Image.open(p) as im:
                    w, h = im.size
                    why = rejection(w, h, None, min_side, max_aspect, min_structure)
                    if why is None:
                        im.draft("RGB", (128, 128))
                        small = torch.from_numpy(np.asarray(im.convert("RGB"))).permute(2, 0, 1)
                        why = rejection(w, h, small, min_side, max_aspect, min_structure)
            except (OSError, UnidentifiedImageError, ValueError):
                why = "unreadable"
            if why:
                self._skip(why)
            else:
                self.paths.append(p)
        _report(repr(str(root)), self.skipped, len(files))
        if not self.paths:
            raise SourceError(f"image folder {str(root)!r} holds no usable image ({len(files)} image files found; "
                              f"need a short side >= {min_side}, aspect <= {max_aspect}, some structure)")

    def _skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    def __len__(self) -> int:
        return len(self.paths)

    @functools.lru_cache(maxsize=256)
    def __getitem__(self, i: int) -> torch.Tensor:
        from PIL import Image

        with Image.open(self.paths[i]) as im:
            arr = np.asarray(im.convert("RGB"))
        return square(torch.from_numpy(arr.copy()).permute(2, 0, 1), self.size)


class HFSource(ImageSource):
    """Images of column ``column`` of a Hugging Face dataset saved on disk
    (``save_to_disk``) or loadable from a local folder, split ``split``, filtered like
    :class:`FolderSource` (rejected rows counted in ``skipped`` and reported once)."""

    def __init__(self, path: str | Path, split: str = "train", column: str = "image", size: int = SIZE,
                 min_side: int = 256, max_aspect: float = 2.0, min_structure: float = 2.0):
        import datasets

        path = str(path)
        if not Path(path).exists():
            raise SourceError(f"dataset path {path!r} does not exist")
        try:
            ds = datasets.load_from_disk(path)
        except (FileNotFoundError, ValueError):
            ds = datasets.load_dataset(path)
        if isinstance(ds, datasets.DatasetDict):
            if split not in ds:
                raise SourceError(f"dataset {path!r} has no split {split!r}; splits: {', '.join(ds)}")
            ds = ds[split]
        if column not in ds.column_names:
            raise SourceError(f"dataset {path!r} has no column {column!r}; columns: {', '.join(ds.column_names)}")
        self.ds, self.column, self.size = ds, column, size
        self.rows: list[int] = []
        self.skipped: dict[str, int] = {}
        for r in range(len(ds)):
            try:
                img = ds[r][column]
                small = img.convert("RGB")
                small.thumbnail((128, 128))
                why = rejection(img.width, img.height, torch.from_numpy(np.asarray(small).copy()).permute(2, 0, 1),
                                min_side, max_aspect, min_structure)
            except (OSError, ValueError, AttributeError):
                why = "unreadable"
            if why:
                self.skipped[why] = self.skipped.get(why, 0) + 1
            else:
                self.rows.append(r)
        _report(f"dataset {path!r}", self.skipped, len(ds))
        if not self.rows:
            raise SourceError(f"dataset {path!r} split {split!r} holds no usable image ({len(ds)} rows)")

    def __len__(self) -> int:
        return len(self.rows)

    @functools.lru_cache(maxsize=256)
    def __getitem__(self, i: int) -> torch.Tensor:
        img = self.ds[self.rows[i]][self.column]
        arr = np.asarray(img.convert("RGB"))
        return square(torch.from_numpy(arr.copy()).permute(2, 0, 1), self.size)
