"""Contact sheets: samples with their task, question and answer, drawn by the engine itself
(each sample's image becomes a sprite, captions are glyph text)."""
from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import torch

from kernels.glyphs import load_atlas
from kernels.layout import stitch

from .canvas import MAX_SIDE
from .errors import UserError
from .registry import resolve
from .rendering import render
from .sample import Sample
from .scene import Scene

CAPTION_PX = 13          # caption line height in pixels
CAPTION_LINES = 7


def printable(text: str) -> str:
    """``text`` with characters missing from the glyph atlas replaced by ``?``."""
    ok = set(load_atlas().charset)
    return "".join(c if c in ok else ("" if c in "\r" else "?") for c in text.replace("\n", " "))


def _kind(sample: Sample) -> tuple:
    return sample.answer_text, str(sample.meta.get("negative"))


def _index_order(task, seed: int, picks: int) -> list[int]:
    """Sample indices for ``picks`` picks from one folder: the first index of every kind of
    sample (answer and, where a family names one, the kind of negative) among the first few,
    then the rest in order, so that a folder with few picks still shows each kind (ELVIS: a
    positive, an attribute negative, a principle negative)."""
    if picks == 1:
        return [0]
    window = list(range(max(8, 2 * picks)))
    first: dict[tuple, int] = {}
    for i in window[:min(len(window), 8)]:
        first.setdefault(_kind(task.sample(seed, i)), i)
    lead = sorted(first.values())
    return (lead + [i for i in window if i not in lead])[:picks]


def pick(pattern: str, count: int, seed: int = 0, settings: dict | None = None) -> list[Sample]:
    """``count`` samples spread over the tasks matching ``pattern``: round-robin over their
    folders (e.g. one ELVIS category each) and evenly within a folder. A folder's picks take
    the sample indices of :func:`_index_order`, so each folder shows every kind of sample it
    has room for."""
    if int(count) != count or count <= 0:
        raise UserError(f"count={count!r} must be a positive integer")
    folders: dict[str, list] = {}
    for t in resolve(pattern, settings):
        folders.setdefault(t.id.rsplit("/", 1)[0], []).append(t)
    groups = list(folders.values())
    slots = []                                     # (folder, its j-th pick, picks it gets)
    if count <= len(groups):
        slots = [((i * len(groups)) // count, 0, 1) for i in range(count)]
    else:
        per = [count // len(groups) + (k < count % len(groups)) for k in range(len(groups))]
        slots = [(i % len(groups), i // len(groups), per[i % len(groups)]) for i in range(count)]
    orders = {k: _index_order(groups[k][len(groups[k]) // 2], seed, n) for k, _, n in set(slots)}
    chosen = []
    for k, j, n in slots:
        g = groups[k]
        task = g[len(g) // 2] if n == 1 else g[(j * len(g)) // n]
        chosen.append(task.sample(seed, orders[k][j]))
    return chosen


WIDEST = 3                   # a panel wider than this many tile heights is shrunk to that width


def _panel_hw(s: Sample, size: int) -> tuple[int, int]:
    """``(height, width)`` of each shown panel of ``s`` on a sheet at ``size``: as tall as a
    panel, and a long strip no wider than ``WIDEST`` panels."""
    ext = s.panel_extents[s.shown[0]] if s.panel_extents else None
    hw = (size, max(1, round(size * ext[1] / ext[0]))) if ext else (size, size)
    if ext and hw[1] > WIDEST * size:
        hw = (max(1, round(WIDEST * size * ext[0] / ext[1])), WIDEST * size)
    return hw


def check_layout(samples: list[Sample], size: int, cols: int) -> tuple[int, int]:
    """The sheet's ``(height, width)`` in px, computed from the samples before anything is drawn;
    ``UserError`` naming the size, the widest sample and the largest size that fits when a
    side would exceed ``MAX_SIDE``."""
    widths = [len(s.shown) * _panel_hw(s, size)[1] + 4 * (len(s.shown) - 1) for s in samples]
    cell_w = max(max(widths), 2 * size) + 16
    H = -(-len(samples) // cols) * (size + 8 + CAPTION_PX * CAPTION_LINES + 12)
    W = cols * cell_w
    if max(H, W) > MAX_SIDE:
        widest = samples[widths.index(max(widths))]
        fit = max(1, int(size * MAX_SIDE / max(H, W)) - 8)
        raise UserError(f"--size {size} with {len(samples)} samples makes a {H}x{W} px contact sheet ({widest.task} "
                        f"shows {len(widest.shown)} panels side by side), over {MAX_SIDE} px a side; allowed here: "
                        f"--size up to about {fit}, or fewer samples")
    return H, W


def contact_sheet(samples: list[Sample], size: int = 192, cols: int | None = None) -> torch.Tensor:
    """A ``[3, H, W]`` uint8 sheet: per sample the panels its prompt shows side by side, then
    captions with the task id, question (or the sample's caption, wrapped) and answer."""
    if not samples:
        raise ValueError("a contact sheet needs at least one sample")
    cols = cols or min(4, len(samples))
    check_layout(samples, size, cols)
    tiles = [stitch(render([s.panels[i] for i in s.shown], _panel_hw(s, size)), gap=4, fill=128) for s in samples]
    cell_w = max(max(t.shape[2] for t in tiles), 2 * size) + 16
    cell_h = size + 8 + CAPTION_PX * CAPTION_LINES + 12
    rows = -(-len(samples) // cols)
    W, H = cols * cell_w, rows * cell_h
    sheet = Scene(background=(250, 250, 250))
    u = 1.0 / W                                    # one pixel in scene units
    th = CAPTION_PX * u
    chars = max(20, int((cell_w - 16) / (0.55 * CAPTION_PX)))
    for i, (s, tile) in enumerate(zip(samples, tiles)):
        r, c = divmod(i, cols)
        x0, y0 = c * cell_w + 8, r * cell_h + 8
        w, h = tile.shape[2], tile.shape[1]
        sheet.sprite(tile, ((x0 + w / 2) * u, (y0 + h / 2) * u), (w * u, h * u))
        about = s.caption or "Q: " + s.question
        lines = [s.task] + textwrap.wrap(printable(about), chars)[: CAPTION_LINES - 2]
        lines.append(printable("A: " + s.answer_text)[:chars])
        for j, line in enumerate(lines):
            y = y0 + size + 8 + CAPTION_PX * (j + 0.5)
            color = (30, 30, 140) if j == 0 else ((150, 20, 20) if j == len(lines) - 1 else (20, 20, 20))
            sheet.text(line, (x0 * u, y * u), height=th, anchor="left", color=color)
    return render([sheet], (H, W))[0]


# Image files the engine writes, by extension: Pillow's format name and its largest side.
IMAGE_FORMATS = {".png": ("PNG", 2 ** 31 - 1), ".jpg": ("JPEG", 65_535), ".jpeg": ("JPEG", 65_535),
                 ".webp": ("WEBP", 16_383)}
PNG_LEVEL = 3                 # zlib level: as fast as 1 on rendered images, and smaller files
PNG_BAND = 256                # rows compressed at a time: a PNG of any size is written in bounded memory
PNG_STREAM_PX = 64 * 2 ** 20  # above this many pixels a PNG is streamed in bands, below Pillow encodes it


def image_format(path: str | Path, height: int = 1, width: int = 1) -> str:
    """Pillow's name of the format ``path``'s extension names (``UserError`` for another
    extension, or when ``height x width`` exceeds what that format can hold)."""
    suffix = Path(path).suffix.lower()
    if suffix not in IMAGE_FORMATS:
        raise UserError(f"{str(path)!r}: unknown image extension {suffix or '(none)'!r}; allowed: "
                        f"{', '.join(IMAGE_FORMATS)}")
    fmt, largest = IMAGE_FORMATS[suffix]
    if max(height, width) > largest:
        raise UserError(f"{str(path)!r}: a {height}x{width} px image is too large for {fmt} (at most {largest} px "
                        f"a side); write a .png, or draw fewer or smaller scenes")
    return fmt


def _png_stream(rgb: np.ndarray, f) -> None:
    """Write ``rgb`` ``[H, W, 3]`` uint8 as an 8-bit RGB PNG to the binary file ``f``, compressing
    ``PNG_BAND`` rows at a time (no row filter)."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> None:
        f.write(struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    h, w = rgb.shape[:2]
    f.write(b"\x89PNG\r\n\x1a\n")
    chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
    z = zlib.compressobj(PNG_LEVEL)
    for y in range(0, h, PNG_BAND):
        rows = np.zeros((min(PNG_BAND, h - y), 3 * w + 1), np.uint8)      # column 0: filter type 0
        rows[:, 1:] = rgb[y:y + PNG_BAND].reshape(len(rows), 3 * w)
        data = z.compress(rows.tobytes())
        if data:
            chunk(b"IDAT", data)
    chunk(b"IDAT", z.flush())
    chunk(b"IEND", b"")


def save_image(image, path: str | Path) -> Path:
    """Write ``image`` (a ``[3,H,W]`` uint8 tensor or an ``[H,W,3]`` uint8 array) in the format
    ``path``'s extension names (see ``IMAGE_FORMATS``; Pillow encodes, JPEG and WebP at quality
    95; a PNG of more than ``PNG_STREAM_PX`` pixels is streamed in bands instead, in bounded
    memory), atomically, creating parent folders; returns the path."""
    from PIL import Image

    path = Path(path)
    rgb = image.permute(1, 2, 0).cpu().numpy() if isinstance(image, torch.Tensor) else np.asarray(image)
    fmt = image_format(path, *rgb.shape[:2])
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".tmp-{path.name}")
    try:
        if fmt == "PNG" and rgb.shape[0] * rgb.shape[1] > PNG_STREAM_PX:
            with open(tmp, "wb") as f:
                _png_stream(rgb, f)
        else:
            Image.fromarray(np.ascontiguousarray(rgb)).save(tmp, format=fmt, **({} if fmt == "PNG" else {"quality": 95}))
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def save_png(image: torch.Tensor, path: str | Path) -> Path:
    """Write a ``[3,H,W]`` uint8 tensor as PNG (creating parent folders), whatever the name's
    extension; returns the path. :func:`save_image` follows the extension instead."""
    from PIL import Image

    path = Path(path)
    if path.suffix.lower() == ".png":
        return save_image(image, path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".tmp-{path.name}")
    Image.fromarray(image.permute(1, 2, 0).contiguous().cpu().numpy()).save(tmp, format="PNG")
    tmp.replace(path)
    return path


def sheet_extent(count: int, size: int) -> tuple[int, int]:
    """The smallest ``(height, width)`` in px a contact sheet of ``count`` samples at ``size``
    can take (one square panel per sample; samples showing more panels make it wider)."""
    cols = min(4, count)
    return -(-count // cols) * (size + 8 + CAPTION_PX * CAPTION_LINES + 12), cols * (2 * size + 16)


def check_sheet(count: int, size: int) -> None:
    """Refuse before any sample is made a ``count`` and ``size`` whose contact sheet must exceed
    ``MAX_SIDE`` px a side (``UserError`` naming both and the largest allowed values); the exact
    layout is checked again from the samples, before anything is drawn (:func:`check_layout`)."""
    if int(count) != count or count <= 0:
        raise UserError(f"count={count!r} must be a positive integer")
    if int(size) != size or size <= 0:
        raise UserError(f"size={size!r} must be a positive integer")
    H, W = sheet_extent(count, size)
    if H > MAX_SIDE or W > MAX_SIDE:
        cols = min(4, count)
        rows = MAX_SIDE // (size + 8 + CAPTION_PX * CAPTION_LINES + 12)
        raise UserError(f"--size {size} with --count {count} makes a contact sheet of at least {H}x{W} px, over "
                        f"{MAX_SIDE} px a side; allowed: --size up to {(MAX_SIDE // cols - 16) // 2} with {cols} "
                        f"columns, and --count up to {rows * 4} at --size {size}")


def preview(pattern: str, out: str | Path, count: int = 8, seed: int = 0, size: int = 192,
            settings: dict | None = None) -> Path:
    """Render ``count`` samples of ``pattern`` (with family ``settings``) into a contact sheet
    at ``out`` (the format its extension names); returns the path. ``count`` and ``size`` are
    checked before any sample is made, the sheet's layout before anything is drawn."""
    check_sheet(count, size)
    samples = pick(pattern, count, seed, settings)
    image_format(out, *check_layout(samples, size, min(4, len(samples))))
    return save_image(contact_sheet(samples, size), out)
