"""The ``jigsaw`` family's declaration and its settings: where the photos come from, their
size, and what ranks hard distractors. Settings are part of every task's identity."""
from __future__ import annotations

from pathlib import Path

from engine.errors import UserError
from engine.family import Family, Setting

IMAGES_HELP = "generated (the built-in set), generated:N (its first N images), a folder of photos, or hf:PATH"


def check_images(value) -> str:
    """A canonical ``images`` setting: ``generated``, ``generated:N``, ``hf:/abs/path`` or
    an absolute folder path."""
    v = str(value).strip()
    if v == "generated":
        return v
    if v.startswith("generated:"):
        n = v.partition(":")[2]
        if not n.isdigit() or int(n) < 2:
            raise UserError(f"jigsaw.images={v!r}: generated:N needs a whole number N >= 2")
        return f"generated:{int(n)}"
    if v.startswith("hf:"):
        path = Path(v[3:]).expanduser()
        if not path.exists():
            raise UserError(f"jigsaw.images={v!r}: dataset path {str(path)!r} does not exist")
        return "hf:" + str(path.resolve())
    path = Path(v).expanduser()
    if not v or not path.is_dir():
        raise UserError(f"jigsaw.images={v!r}: image folder {v!r} does not exist or is not a folder; "
                        f"allowed: {IMAGES_HELP}")
    return str(path.resolve())


def check_size(value) -> int:
    """A photo side in pixels: a multiple of 12 (so 2x2, 3x3 and 4x4 grids have whole cells)
    in 24..2400."""
    try:
        n = int(str(value).strip())
    except ValueError:
        n = -1
    if n % 12 or not 24 <= n <= 2400:
        raise UserError(f"jigsaw.image_size={value!r} must be a multiple of 12 in 24..2400")
    return n


def check_embedder(value) -> str:
    """``""`` (the project's colour + layout features) or an absolute checkpoint folder."""
    v = str(value or "").strip()
    if not v:
        return ""
    path = Path(v).expanduser()
    if not (path / "config.json").is_file():
        raise UserError(f"jigsaw.embedder={v!r}: no model checkpoint there (expected a folder with config.json)")
    return str(path.resolve())


FAMILY = Family(
    "jigsaw", "Jigsaw-Puzzles: missing piece, localization, connection, anomaly and order tasks on photographs.",
    settings=[
        Setting("images", f"where the photos come from: {IMAGES_HELP}", "generated", env="PROCVIS_JIGSAW_IMAGES",
                check=check_images),
        Setting("image_size", "side in pixels of every photo after its centre crop (a multiple of 12)", 384,
                check=check_size),
        Setting("embedder", "a local CLIP-style checkpoint folder that ranks hard distractors (empty: the "
                            "project's colour + layout features)", "", env="PROCVIS_JIGSAW_EMBEDDER",
                check=check_embedder),
    ])
