"""Contact sheets: samples with their task, question and answer, drawn by the engine itself
(each sample's image becomes a sprite, captions are glyph text)."""
from __future__ import annotations

import textwrap
from pathlib import Path

import torch

from kernels.glyphs import load_atlas
from kernels.layout import stitch

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


def contact_sheet(samples: list[Sample], size: int = 192, cols: int | None = None) -> torch.Tensor:
    """A ``[3, H, W]`` uint8 sheet: per sample the panels its prompt shows side by side, then
    captions with the task id, question (or the sample's caption, wrapped) and answer."""
    if not samples:
        raise ValueError("a contact sheet needs at least one sample")
    tiles = []
    for s in samples:
        shown = [s.panels[i] for i in s.shown]
        ext = s.panel_extents[s.shown[0]] if s.panel_extents else None
        hw = (size, max(1, round(size * ext[1] / ext[0]))) if ext else size   # as tall as a panel
        if ext and hw[1] > WIDEST * size:                  # a long strip: as wide as WIDEST panels
            hw = (max(1, round(WIDEST * size * ext[0] / ext[1])), WIDEST * size)
        tiles.append(stitch(render(shown, hw), gap=4, fill=128))
    cols = cols or min(4, len(samples))
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


def save_png(image: torch.Tensor, path: str | Path) -> Path:
    """Write a ``[3,H,W]`` uint8 tensor as PNG (creating parent folders); returns the path."""
    from PIL import Image

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".tmp-{path.name}")
    Image.fromarray(image.permute(1, 2, 0).contiguous().cpu().numpy()).save(tmp, format="PNG")
    tmp.replace(path)
    return path


def preview(pattern: str, out: str | Path, count: int = 8, seed: int = 0, size: int = 192,
            settings: dict | None = None) -> Path:
    """Render ``count`` samples of ``pattern`` (with family ``settings``) into a contact sheet
    PNG at ``out``."""
    return save_png(contact_sheet(pick(pattern, count, seed, settings), size), out)
