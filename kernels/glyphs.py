"""Glyph atlas: signed distance fields of every supported character, built once from a font.

The atlas is a ``(G, A, A)`` float32 tensor; cell ``g`` holds the signed distance (in atlas
pixels, negative inside the glyph) of character ``CHARSET[g]`` drawn centred in a square
cell whose side is the font's line height. Sampling it bilinearly and scaling the distance
to output pixels gives anti-aliased text at any size and rotation, on any device.

The font comes from Debian's ``fonts-dejavu-core`` (installed by the project's set-up) or
from ``$PROCVIS_FONT``; the built atlas is cached under ``$PROCVIS_CACHE`` (default
``~/.cache/procvis``), so nothing is fetched at run time.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import string
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import SetupError

ATLAS_CELL = 48          # atlas pixels per cell side
SUPERSAMPLE = 4          # the glyph bitmap is drawn at this multiple of the cell
SPREAD = 6.0             # distances are clamped to +-SPREAD atlas pixels
ATLAS_VERSION = 1

ARROWS = "←↑→↓↔↕↖↗↘↙"
EXTRA = "×÷°±·•–—…✓✗“”‘’"
CHARSET = string.digits + string.ascii_letters + string.punctuation + " " + ARROWS + EXTRA

FONT_CANDIDATES = (
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
)


@dataclass(frozen=True)
class GlyphAtlas:
    """The built atlas.

    Attributes:
        sdf: ``(G, A, A)`` float32 signed distances in atlas pixels (negative inside).
        advance: ``(G,)`` float32 horizontal advance of each glyph, in units of the line height.
        charset: the characters, ``charset[g]`` is cell ``g``.
        font: path of the font the atlas was built from.
    """

    sdf: np.ndarray
    advance: np.ndarray
    charset: str
    font: str

    def index(self, text: str) -> list[int]:
        """Cell index of every character of ``text``; a clear error names an unsupported one."""
        lookup = _lookup(self.charset)
        out = []
        for ch in text:
            if ch not in lookup:
                raise ValueError(
                    f"character {ch!r} (U+{ord(ch):04X}) is not in the glyph atlas; supported: "
                    f"digits, ASCII letters and punctuation, space and {ARROWS + EXTRA!r}")
            out.append(lookup[ch])
        return out


class MissingFontError(SetupError, FileNotFoundError):
    """No font file for the glyph atlas."""


@functools.lru_cache(maxsize=4)
def _lookup(charset: str) -> dict[str, int]:
    return {c: i for i, c in enumerate(charset)}


def find_font() -> str:
    """Path of the font used for the atlas: ``$PROCVIS_FONT`` or DejaVu Sans from the system."""
    env = os.environ.get("PROCVIS_FONT")
    if env:
        if not Path(env).is_file():
            raise MissingFontError(f"PROCVIS_FONT={env!r} is not a readable font file")
        return env
    for path in FONT_CANDIDATES:
        if Path(path).is_file():
            return path
    raise MissingFontError(
        "no font for the glyph atlas: install Debian's fonts-dejavu-core (make setup does this) "
        f"or set PROCVIS_FONT to a TrueType file; looked in {', '.join(FONT_CANDIDATES)}")


def cache_dir() -> Path:
    """Folder for built artefacts (the glyph atlas): ``$PROCVIS_CACHE`` or ``~/.cache/procvis``."""
    return Path(os.environ.get("PROCVIS_CACHE", Path.home() / ".cache" / "procvis"))


def build_atlas(font_path: str, charset: str = CHARSET) -> GlyphAtlas:
    """Draw every character of ``charset`` with ``font_path`` and compute its distance field."""
    from PIL import Image, ImageDraw, ImageFont

    from .glyph_sdf import signed_distance   # numba: compiled only when an atlas is built

    hi = ATLAS_CELL * SUPERSAMPLE
    size = 64
    probe = ImageFont.truetype(font_path, size=size)
    ascent, descent = probe.getmetrics()
    size = int(size * hi / (ascent + descent) * 0.86)  # leave room for the distance spread
    font = ImageFont.truetype(font_path, size=size)
    ascent, descent = font.getmetrics()
    top = (hi - (ascent + descent)) / 2
    sdf = np.empty((len(charset), ATLAS_CELL, ATLAS_CELL), np.float32)
    advance = np.empty(len(charset), np.float32)
    for g, ch in enumerate(charset):
        adv = font.getlength(ch)
        img = Image.new("L", (hi, hi), 0)
        ImageDraw.Draw(img).text(((hi - adv) / 2, top), ch, font=font, fill=255)
        inside = np.asarray(img) >= 128
        sdf[g] = signed_distance(inside, ATLAS_CELL, SUPERSAMPLE, SPREAD)
        advance[g] = adv / hi
    return GlyphAtlas(sdf=sdf, advance=advance, charset=charset, font=font_path)


@functools.lru_cache(maxsize=1)
def load_atlas() -> GlyphAtlas:
    """The process-wide atlas, built on first use and cached on disk by font content; a
    damaged cache file is rebuilt, and an unwritable cache folder only costs the rebuild."""
    font = find_font()
    digest = hashlib.sha256(Path(font).read_bytes() + CHARSET.encode()).hexdigest()[:16]
    path = cache_dir() / f"glyphs-v{ATLAS_VERSION}-{ATLAS_CELL}-{digest}.npz"
    atlas = _read_cached_atlas(path, font)
    if atlas is None:
        atlas = build_atlas(font)
        _write_cached_atlas(path, atlas)
    return atlas


def _read_cached_atlas(path: Path, font: str) -> GlyphAtlas | None:
    """The atlas cached at ``path``, or ``None`` when it is missing or damaged in any way
    (empty, truncated, not an archive, arrays of the wrong shape)."""
    try:
        with np.load(path) as z:
            sdf, advance = z["sdf"], z["advance"]
    except Exception:        # missing, or damaged in one of many ways: EOFError, BadZipFile, ValueError...
        return None
    if sdf.shape != (len(CHARSET), ATLAS_CELL, ATLAS_CELL) or advance.shape != (len(CHARSET),) \
            or sdf.dtype != np.float32 or advance.dtype != np.float32 or not np.isfinite(sdf).all():
        return None
    return GlyphAtlas(sdf=sdf, advance=advance, charset=CHARSET, font=font)


def _write_cached_atlas(path: Path, atlas: GlyphAtlas) -> None:
    """Cache ``atlas`` at ``path`` atomically; nothing when the folder cannot be written."""
    tmp = path.with_name(f".tmp-{os.getpid()}-{path.name}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as f:
            np.savez(f, sdf=atlas.sdf, advance=atlas.advance)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
