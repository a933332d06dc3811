"""Real Bongard problems from a folder, one sub-folder per problem (the family setting
``bongard.problems``, ``--set bongard.problems=DIR`` or ``$PROCVIS_BONGARD_PROBLEMS``)::

    DIR/<name>/left/            six or more images of the left concept
    DIR/<name>/right/           six or more images of the right concept
    DIR/<name>/test/left/       optional: held-out images, one or more per side
    DIR/<name>/test/right/
    DIR/<name>/rule.txt         two non-empty lines: the left rule, then the right, one sentence each
    DIR/<name>/category.txt     optional: size, number, spatial, same, shape, semantic or presence

Problem names become task ids ``bongard/real/<category or uncategorised>/<name>``. The whole
folder is checked when the setting is read, before any sample is drawn: a missing side, too
few images, a file that is not an image or does not load, a bad ``rule.txt`` or an unknown
category is a one-line :class:`UserError` naming the path and what is allowed.
"""
from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from engine.errors import UserError
from engine.lazy import lazy_module

from .concepts import CATEGORIES

images = lazy_module("kernels.images")         # it loads torch: not needed to parse or list tasks

SETTING = "bongard.problems"
PER_SIDE = 6
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".webp", ".tif", ".tiff")
UNCATEGORISED = "uncategorised"
MAX_SIDE = 1024                  # photos are cropped square and kept at most this many pixels wide
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


@dataclass(frozen=True)
class Problem:
    """One problem folder: its name, category, the two rule sentences and its image files
    (sorted by name) per side and per held-out side."""

    name: str
    category: str
    left_rule: str
    right_rule: str
    left: tuple[Path, ...]
    right: tuple[Path, ...]
    test_left: tuple[Path, ...] = ()
    test_right: tuple[Path, ...] = ()

    @property
    def task_id(self) -> str:
        return f"bongard/real/{self.category}/{self.name}"


def check_problems(value) -> str:
    """The ``bongard.problems`` setting: ``""`` (no real problems) or an absolute folder whose
    every problem is complete and whose every image loads."""
    v = str(value or "").strip()
    if not v:
        return ""
    root = Path(v).expanduser()
    if not root.is_dir():
        raise UserError(f"{SETTING}={v!r}: not a folder (expected one folder per problem holding left/, right/ "
                        "and rule.txt)")
    root = str(root.resolve())
    problems(root)
    return root


def problems(root: str) -> dict[str, Problem]:
    """The problems of folder ``root`` by task id, checked; read once per process (every
    task's settings are checked with it, so a walk per call would grow with the square of
    the number of problems)."""
    return _read(root, _folder_key(root))


def _visible(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if not p.name.startswith("."))


@functools.lru_cache(maxsize=8)
def _folder_key(root: str) -> str:
    """Names, sizes and times of the folder's files, read once per process."""
    return _fingerprint(Path(root))


def _fingerprint(root: Path) -> str:
    h = hashlib.blake2b(digest_size=8)
    for p in sorted(root.rglob("*")):
        if p.is_file():
            st = p.stat()
            h.update(f"{p.relative_to(root)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


@functools.lru_cache(maxsize=8)
def _read(root: str, fingerprint: str) -> dict[str, Problem]:
    folders = [p for p in _visible(Path(root)) if p.is_dir()]
    if not folders:
        raise UserError(f"{SETTING}={root!r} holds no problem folders (expected DIR/<name>/left, right, rule.txt)")
    out = {}
    for folder in folders:
        p = _problem(folder)
        out[p.task_id] = p
    return out


def _problem(folder: Path) -> Problem:
    if not _NAME.fullmatch(folder.name):
        raise UserError(f"{SETTING}: problem folder {str(folder)!r}: its name becomes a task id; allowed: letters, "
                        "digits, '_', '-' and '.', starting with a letter or digit")
    left, right = (_images(folder / side, PER_SIDE) for side in ("left", "right"))
    test = folder / "test"
    test_left = test_right = ()
    if test.exists():
        test_left, test_right = (_images(test / side, 1) for side in ("left", "right"))
    left_rule, right_rule = _rule(folder / "rule.txt")
    return Problem(folder.name, _category(folder / "category.txt"), left_rule, right_rule, left, right,
                   test_left, test_right)


def _images(folder: Path, least: int) -> tuple[Path, ...]:
    """The image files of ``folder`` (at least ``least``), each checked to load."""
    if not folder.is_dir():
        raise UserError(f"{SETTING}: {str(folder)!r} is not a folder; a problem needs left/ and right/ with at least "
                        f"{PER_SIDE} images each (held-out test/left/ and test/right/ at least 1 each)")
    files = []
    for p in _visible(folder):
        if p.is_dir() or p.suffix.lower() not in IMAGE_SUFFIXES:
            raise UserError(f"{SETTING}: {str(p)!r} is not an image file; allowed: {', '.join(IMAGE_SUFFIXES)}")
        files.append(p)
    if len(files) < least:
        raise UserError(f"{SETTING}: {str(folder)!r} holds {len(files)} images; at least {least} needed there")
    for p in files:
        read_image(p)
    return tuple(files)


def _rule(path: Path) -> tuple[str, str]:
    """The two rule sentences of ``rule.txt``, each ending in a full stop (or ? !)."""
    try:
        lines = [x.strip() for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    except FileNotFoundError:
        raise UserError(f"{SETTING}: {str(path)!r} is missing; it holds two lines: the left side's rule, then the "
                        "right side's, one sentence each") from None
    except (OSError, UnicodeDecodeError) as e:
        raise UserError(f"{SETTING}: cannot read {str(path)!r}: {e}") from None
    if len(lines) != 2:
        held = f"{len(lines)} non-empty line{'' if len(lines) == 1 else 's'}"
        raise UserError(f"{SETTING}: {str(path)!r} holds {held}; it needs exactly 2: the left side's rule, then the "
                        "right side's, one sentence each")
    return tuple(x if x[-1] in ".!?" else x + "." for x in lines)


def _category(path: Path) -> str:
    if not path.exists():
        return UNCATEGORISED
    try:
        text = path.read_text(encoding="utf-8").strip().lower()
    except (OSError, UnicodeDecodeError) as e:
        raise UserError(f"{SETTING}: cannot read {str(path)!r}: {e}") from None
    if text not in CATEGORIES:
        raise UserError(f"{SETTING}: {str(path)!r} names category {text!r}; allowed: {', '.join(CATEGORIES)} "
                        "(or no category.txt)")
    return text


def read_image(path) -> np.ndarray:
    """The image at ``path`` centre-cropped square, at most :data:`MAX_SIDE` pixels wide, as
    ``[3, S, S]`` uint8 RGB (any mode: 16-bit samples scaled to 8 bits, transparency composited
    on white, see :func:`kernels.images.rgb8`); a file that does not load, or holds more pixels
    than the decoder allows, is a one-line :class:`UserError` naming it."""
    return _load(str(path), Path(path).stat().st_mtime_ns)


@functools.lru_cache(maxsize=64)
def _load(path: str, mtime: int) -> np.ndarray:
    try:
        with images.open_image(path) as im:
            img = Image.fromarray(images.rgb8(im))
    except (OSError, ValueError) as e:              # ImageTooLarge is a ValueError
        detail = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise UserError(f"cannot read image {path!r} ({detail})") from None
    side = min(img.size)
    left, top = (img.size[0] - side) // 2, (img.size[1] - side) // 2
    img = img.crop((left, top, left + side, top + side))
    if side > MAX_SIDE:
        img = img.resize((MAX_SIDE, MAX_SIDE), Image.LANCZOS)
    arr = np.ascontiguousarray(np.asarray(img).transpose(2, 0, 1))
    arr.setflags(write=False)
    return arr
