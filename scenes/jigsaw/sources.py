"""Where jigsaw images come from: a folder of photographs, a local Hugging Face dataset, or
the built-in photographs that the engine draws (:mod:`.photos`; offline, deterministic).

Every source yields square RGB ``uint8`` tensors ``[3, S, S]`` (centre crop, then resize),
with ``S`` divisible by 2, 3 and 4 so that every grid has square cells. :func:`source_for`
builds the source that the family's ``images`` and ``image_size`` settings name.
"""
from __future__ import annotations

import collections
import functools
import warnings
from pathlib import Path

import numpy as np
import torch

from engine.errors import UserError
from kernels.images import ImageTooLarge, open_image, rgb8, square, structure, to_tensor

from . import photo_cache, photos

SIZE = 384
GENERATED = 1100                 # images in the built-in set
CACHE_BYTES = 512 * 2 ** 20      # drawn built-in photos kept per process
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


def decoder() -> str:
    """What else decides how a photo file decodes: Pillow's limits and truncated-file setting
    (changeable at run time), its version and its codecs' versions."""
    from PIL import Image, ImageFile, PngImagePlugin

    return (f"{Image.MAX_IMAGE_PIXELS} {ImageFile.LOAD_TRUNCATED_IMAGES} {PngImagePlugin.MAX_TEXT_CHUNK} "
            f"{PngImagePlugin.MAX_TEXT_MEMORY} {_codecs()}")


@functools.lru_cache(maxsize=1)
def _codecs() -> str:
    import PIL
    from PIL import features

    return " ".join([PIL.__version__] + [f"{c}={features.version(c)}" for c in ("jpg", "zlib", "libtiff", "webp", "jpg_2000")])


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

    def neighbours(self, i: int, k: int) -> list[int]:
        """Up to ``k`` images nearest to ``i`` in the collection's order (``i+1``, ``i-1``,
        ``i+2``, ...): where bursts of one scene sit in a photo collection."""
        out = []
        for d in range(1, len(self)):
            out += [j for j in (i + d, i - d) if 0 <= j < len(self)]
            if len(out) >= k:
                break
        return out[:k]


class GeneratedSource(ImageSource):
    """Photographs drawn by the engine (:mod:`.photos`): :data:`photos.SHOTS` shots of each
    place, in order, like bursts in a photo collection. Image ``i`` is shot ``i % SHOTS``
    of place ``i // SHOTS``, the same everywhere; ``n`` images in all. Each is drawn once
    per machine and then read from the disk cache (:mod:`.photo_cache`)."""

    def __init__(self, n: int = GENERATED, size: int = SIZE):
        self.n, self.size = n, size
        # drawn photos are kept up to CACHE_BYTES: a hard item reads two dozen of them, and
        # at the default size the whole set fits
        self._kept: collections.OrderedDict[int, torch.Tensor] = collections.OrderedDict()
        self._room = max(64, CACHE_BYTES // (3 * size * size))

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> torch.Tensor:
        if not 0 <= i < self.n:
            raise IndexError(i)
        if i in self._kept:
            self._kept.move_to_end(i)
            return self._kept[i]
        img = self._kept[i] = photo_cache.photo(i // photos.SHOTS, i % photos.SHOTS, self.size)
        if len(self._kept) > self._room:
            self._kept.popitem(last=False)
        return img

    def neighbours(self, i: int, k: int) -> list[int]:
        """The other shots of image ``i``'s place first, then the images nearest in order."""
        p = i // photos.SHOTS
        same = [j for j in range(p * photos.SHOTS, min((p + 1) * photos.SHOTS, self.n)) if j != i]
        return (same + [j for j in super().neighbours(i, k + len(same)) if j not in same])[:k]


class FolderSource(ImageSource):
    """Every image file under ``root`` (recursive, sorted by path) that decodes, holds at most
    ``PIL.Image.MAX_IMAGE_PIXELS`` pixels, has a short side of at least ``min_side``, an
    aspect ratio of at most ``max_aspect`` and a :func:`structure` of at least
    ``min_structure``. Skipped files are counted in ``skipped`` (reason -> count) and reported
    in one warning. Any image mode is read as 8-bit RGB (:func:`kernels.images.rgb8`).
    Verdicts and squared photos are kept in the photo cache (:mod:`.photo_cache`, under each
    file's identity and times and the decoder's settings), so the next process that opens
    the folder reads them instead of decoding every file."""

    def __init__(self, root: str | Path, size: int = SIZE, min_side: int = 256, max_aspect: float = 2.0,
                 min_structure: float = 2.0):
        root = Path(root)
        if not root.is_dir():
            raise SourceError(f"image folder {str(root)!r} does not exist or is not a folder")
        self.size = size
        self.paths: list[Path] = []
        self.skipped: dict[str, int] = {}
        files = sorted(p for p in root.rglob("*") if p.suffix.lower() in EXTENSIONS and p.is_file())
        settings = f"{min_side!r} {max_aspect!r} {min_structure!r} {decoder()}"
        for p in files:
            why = photo_cache.file_verdict(
                p, settings, lambda: self._file_rejection(p, min_side, max_aspect, min_structure))
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
        return photo_cache.file_photo(self.paths[i], self.size, decoder(), lambda: self._read(self.paths[i]))

    def _read(self, path: Path) -> torch.Tensor:
        with open_image(path) as im:
            return square(to_tensor(rgb8(im)), self.size)

    @staticmethod
    def _file_rejection(path: Path, min_side: int, max_aspect: float, min_structure: float) -> str | None:
        """Why the image file ``path`` is not used (``"unreadable"``, ``"too large"`` or a
        :func:`rejection`), or ``None``; a reduced copy is decoded only when its size passes."""
        from PIL import UnidentifiedImageError

        try:
            with open_image(path) as im:
                w, h = im.size
                why = rejection(w, h, None, min_side, max_aspect, min_structure)
                if why is None:
                    im.draft("RGB", (128, 128))
                    why = rejection(w, h, to_tensor(rgb8(im)), min_side, max_aspect, min_structure)
        except ImageTooLarge:
            return "too large"
        except (OSError, UnidentifiedImageError, ValueError):
            return "unreadable"
        return why


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
            why = self._row_rejection(ds, r, column, min_side, max_aspect, min_structure)
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
        return square(to_tensor(rgb8(img)), self.size)

    @staticmethod
    def _row_rejection(ds, r: int, column: str, min_side: int, max_aspect: float, min_structure: float) -> str | None:
        """Why row ``r`` of dataset ``ds`` is not used (``"unreadable"``, ``"too large"``: more
        pixels than ``PIL.Image.MAX_IMAGE_PIXELS``, or a :func:`rejection`), or ``None``. The row's
        image is decoded (by the dataset) with the decoder's size warning turned into an error."""
        from PIL import Image

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", Image.DecompressionBombWarning)
                img = ds[r][column]
            small = Image.fromarray(rgb8(img))
            small.thumbnail((128, 128))
            return rejection(img.width, img.height, to_tensor(np.asarray(small)), min_side, max_aspect, min_structure)
        except (Image.DecompressionBombError, Image.DecompressionBombWarning):
            return "too large"
        except (OSError, ValueError, AttributeError):
            return "unreadable"
