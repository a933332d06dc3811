"""A stream batch before rendering, and how panels become one image per sample.

:class:`Frames` holds every panel of a batch's samples collated into padded scene tensors
(one :class:`engine.batch.SceneBatch` per panel size), so DataLoader workers can sample and
collate on the CPU while the main process renders the batch on a GPU; its :meth:`Frames.render`
gives exactly the images a stream renders itself.
"""
from __future__ import annotations

import numpy as np
import torch

from kernels import raster_numba
from kernels.layout import stitch

from .parcel import Parcel, pack, unpack
from .rendering import render


class Frames:
    """The panels of ``B`` samples, unrendered.

    ``groups``: ``[((h, w), scenes, [(sample, panel), ...])]``, collated scene batches
    (:class:`engine.batch.SceneBatch`; one per panel size, or per batch key of the tasks
    drawn a batch at a time) and where each of their scenes goes; ``panels``: how
    many panels each sample shows; ``shape`` (``"fit"`` or ``"pad"``) and ``size`` (the
    canvas ``(H, W)``): how a sample's panels, side by side, become its image (see
    :func:`engine.streams.stream`). Pickled (as a DataLoader worker hands a batch over) it
    travels packed into one buffer (:mod:`engine.parcel`), is pinned in one piece
    (:meth:`pin_memory`) and goes to a GPU in one transfer; ``groups`` unpacks it on the CPU
    when asked for (groups of one size then come merged).
    """

    def __init__(self, groups: list, panels: list, shape: str, size: tuple):
        self._groups, self._parcel = groups, None
        self.panels, self.shape, self.size = panels, shape, size

    @classmethod
    def packed(cls, parcel: Parcel, panels: list, shape: str, size: tuple) -> "Frames":
        """Frames held as a :class:`engine.parcel.Parcel` (how they arrive from another process)."""
        frames = cls(None, panels, shape, size)
        frames._parcel = parcel
        return frames

    @property
    def groups(self) -> list:
        if self._groups is None:
            self._groups = unpack(self._parcel, "cpu")
        return self._groups

    def __len__(self) -> int:
        return len(self.panels)

    def __repr__(self) -> str:
        return (f"Frames({len(self)} samples, {len(self._parcel.groups) if self._groups is None else len(self._groups)} "
                f"scene batches{', packed' if self._parcel is not None else ''}, shape={self.shape!r}, "
                f"size={self.size})")

    def __reduce__(self):
        return Frames.packed, (self._packed(), self.panels, self.shape, self.size)

    def _packed(self) -> Parcel:
        if self._parcel is None:
            self._parcel = pack(self._groups)
        return self._parcel

    def make_sprite_floats(self) -> None:
        """Make the float sprite atlases a CPU render reads (:class:`engine.batch.SpriteAtlas`)
        now, on this thread, instead of in the render."""
        for _, batch, _ in self.groups:
            batch.atlas.floats()

    def pin_memory(self) -> "Frames":
        """These frames packed in pinned host memory (a DataLoader with ``pin_memory=True``
        calls it), so that rendering on a GPU copies them without waiting."""
        return Frames.packed(self._packed().pin_memory(), self.panels, self.shape, self.size)

    def _groups_on(self, device: torch.device) -> list:
        """The groups, their tensors on ``device`` where it is a GPU (one transfer)."""
        if device.type == "cpu":
            return self.groups
        return unpack(self._packed(), device)

    def render(self, device="cpu") -> torch.Tensor:
        """``[B,3,H,W]`` uint8 on ``device``: each panel size's scenes rendered there at once,
        a sample's panels side by side, then every image fitted to ``size`` (``"fit"``) or the
        batch padded to its largest image in white (``"pad"``)."""
        device = torch.device(device)
        groups = self._groups_on(device)
        whole = self._rows_at_once(groups, device)
        if whole is not None:
            return whole
        out: list[list] = [[None] * n for n in self.panels]
        for hw, scenes, where in groups:
            for (i, k), image in zip(where, render(scenes, hw, device=device)):
                out[i][k] = image
        images = [ims[0] if len(ims) == 1 else side_by_side(ims) for ims in out]
        if self.shape == "fit":
            images = fit(images, self.size)
        elif any(im.shape != images[0].shape for im in images):
            H, W = max(im.shape[1] for im in images), max(im.shape[2] for im in images)
            images = [torch.nn.functional.pad(im, (0, W - im.shape[2], 0, H - im.shape[1]), value=255)
                      for im in images]
        return stack(images)

    def _rows_at_once(self, groups: list, device: torch.device) -> torch.Tensor | None:
        """Where every sample is one panel drawn at the canvas size (ELVIS, shapes): the
        batch's images with each group's render written to its rows at once; else ``None``."""
        if any(n != 1 for n in self.panels) or any(tuple(hw) != tuple(self.size) for hw, _, _ in groups):
            return None
        if len(groups) == 1 and [i for i, _ in groups[0][2]] == list(range(len(self.panels))):
            return render(groups[0][1], groups[0][0], device=device)
        shape = (len(self.panels), 3, *self.size)
        out = (torch.from_numpy(raster_numba.pooled_images(shape)) if device.type == "cpu"
               else torch.empty(shape, dtype=torch.uint8, device=device))
        for hw, scenes, where in groups:
            rows = [i for i, _ in where]
            if rows == list(range(rows[0], rows[0] + len(rows))):     # consecutive: drawn in place, no copy
                render(scenes, hw, device=device, out=out[rows[0]:rows[0] + len(rows)])
                continue
            images = render(scenes, hw, device=device)
            if device.type == "cpu":          # numpy: torch's thread pool would wake against numba's (see stack)
                out.numpy()[rows] = images.numpy()
            else:
                out[torch.tensor(rows, device=device)] = images
        return out


def panel_groups(samples, hw: tuple[int, int], first: bool = False) -> dict[tuple[int, int], list]:
    """Every panel of ``samples`` (``first``: only each one's first) grouped by the size it is
    drawn at on the canvas ``hw`` (``hw`` itself, or the panel's own extent):
    ``{(h, w): [((sample, panel), scene), ...]}``, in sample and panel order."""
    groups: dict[tuple[int, int], list] = {}
    for i, s in enumerate(samples):
        for k, scene in enumerate(s.panels[:1] if first else s.panels):
            groups.setdefault(s.panel_hw(k, hw), []).append(((i, k), scene))
    return groups


def stack(images: list[torch.Tensor]) -> torch.Tensor:
    """``[B,3,H,W]`` of equally shaped images. On the CPU through numpy: right after a numba
    render, torch's own thread pool wakes up against numba's threads and a 19 MB stack took
    0.3 to 1 s on 2 cores (numpy: under 40 ms)."""
    if images and images[0].device.type == "cpu":
        return torch.from_numpy(np.stack([im.numpy() for im in images]))
    return torch.stack(images)


def fit(images: list[torch.Tensor], hw: tuple[int, int]) -> list[torch.Tensor]:
    """Each ``[3,h,w]`` uint8 image on a white ``[3,H,W]`` canvas ``hw``: scaled (aspect kept,
    antialiased) to fit and centred; an image already ``H x W`` is returned unchanged. Images
    of one shape are scaled together (a few tensor operations per batch, not per image: each
    one costs a thread-pool wake-up right after rendering); each result is the same as alone."""
    H, W = hw
    out = list(images)
    groups: dict[tuple[int, int], list[int]] = {}
    for i, im in enumerate(images):
        if tuple(im.shape[1:]) != (H, W):
            groups.setdefault(tuple(im.shape[1:]), []).append(i)
    for (h, w), idx in groups.items():
        s = min(H / h, W / w)
        nh, nw = max(1, min(H, round(h * s))), max(1, min(W, round(w * s)))
        x = torch.stack([images[i] for i in idx])
        if (nh, nw) != (h, w):
            x = torch.nn.functional.interpolate(x.float(), size=(nh, nw), mode="bilinear", antialias=True,
                                                align_corners=False).round_().clamp_(0, 255).to(torch.uint8)
        top, left = (H - nh) // 2, (W - nw) // 2
        x = torch.nn.functional.pad(x, (left, W - nw - left, top, H - nh - top), value=255)
        for i, im in zip(idx, x):
            out[i] = im
    return out


def side_by_side(images: list[torch.Tensor], gap: int = 8) -> torch.Tensor:
    """Panels ``[3,h,w]`` of one sample in a row, as :func:`kernels.layout.stitch` lays out
    panels of one shape; panels of other shapes (a collage and its panels) are padded below
    to the tallest, in white. Returns ``[3, max h, sum w + gaps]``."""
    if all(im.shape == images[0].shape for im in images):
        return stitch(torch.stack(images), gap=gap)
    H = max(im.shape[1] for im in images)
    parts = []
    for j, im in enumerate(images):
        if j:
            parts.append(torch.full((3, H, gap), 255, dtype=im.dtype, device=im.device))
        parts.append(torch.nn.functional.pad(im, (0, 0, 0, H - im.shape[1]), value=255))
    return torch.cat(parts, dim=2)
