"""The ``procvis`` command line.

Every user error (unknown task, bad size or count, unknown setting, unwritable output)
ends with one line ``procvis: error: ...`` on stderr naming the value and what is allowed,
and exit code 2, before anything is written; ``main(argv)`` returns that code. Every option
has a checked type (a plug-in's plain ``int``, ``float`` or string option is hardened too:
64-bit integers, finite numbers, non-empty printable text), every number a bound shown under
``--help``. An ``OSError`` about a path the user gave (a folder where a file is expected,
a file inside a path, a read-only place) is such a line too; any other exception is a bug
and keeps its traceback.

The engine's own commands are defined here; other packages add theirs as entry points of
the group ``procvis.commands`` (each a :class:`Command`), so the engine imports neither
``evals`` nor ``benchmarks``. Nothing heavy is imported before the arguments are parsed:
``procvis --help`` and ``procvis list`` answer without loading torch.
"""
from __future__ import annotations

import argparse
import contextlib
import errno
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from kernels.errors import SetupError

from . import registry
from .canvas import MAX_SIDE, canvas_size
from .errors import UserError
from .scene import Scene, parse_color
from .stats import chance, critical_accuracy, percent

EXIT_USAGE = 2
COMMANDS_GROUP = "procvis.commands"


@dataclass(frozen=True)
class Command:
    """A sub-command: ``arguments(parser)`` declares its options, ``run(args) -> int`` runs it
    (imports of heavy modules belong inside ``run``); ``epilog()`` may add text to its help."""

    name: str
    help: str
    arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
    epilog: Callable[[], str] | None = None


# ---------------------------------------------------------------- option types shared by commands

INT64_MIN, INT64_MAX = -2 ** 63, 2 ** 63 - 1
MAX_INT_OPTION = 10 ** 6       # the bound of a positive integer option that names none of its own
MAX_COUNT = 10 ** 8            # samples per task: a week at a thousand samples a second is 6 * 10**8 in all
MAX_WORKERS = 4096             # asked for; the run caps it by cores and memory (see engine.outputs)
MAX_SHARD_SIZE = 100_000
MAX_BASELINE_N = 10 ** 7


def integer(name: str, low: int = INT64_MIN, high: int = INT64_MAX):
    """An argparse type: a whole number in ``low..high`` (one-line error naming the value otherwise)."""
    def parse(text):
        try:
            v = int(str(text).strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer, got {text!r}; allowed: {low}..{high}") \
                from None
        if not low <= v <= high:
            raise argparse.ArgumentTypeError(f"{name} {text!r}: {name.lstrip('-')}={v} must lie in {low}..{high}")
        return v
    parse.bounds, parse.kind = (low, high), "integer"
    return parse


def positive_int(name: str, maximum: int = MAX_INT_OPTION):
    """An argparse type: a whole number in ``1..maximum``."""
    def parse(text):
        try:
            v = int(str(text).strip())
        except ValueError:
            v = None
        if v is None or not 1 <= v <= maximum:
            raise argparse.ArgumentTypeError(f"{name} must be a positive integer, got {text!r}; allowed: 1..{maximum}")
        return v
    parse.bounds, parse.kind = (1, maximum), "integer"
    return parse


_worker_count = positive_int("--workers", MAX_WORKERS)


def workers_arg(text):
    """An argparse type for ``--workers``: ``auto`` or a whole number in ``1..MAX_WORKERS``."""
    if str(text).strip() == "auto":
        return "auto"
    try:
        return _worker_count(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"--workers must be 'auto' or a positive integer, got {text!r}; "
                                         f"allowed: auto, 1..{MAX_WORKERS}") from None


def real(name: str, low: float = -math.inf, high: float = math.inf, open_ends: bool = False):
    """An argparse type: a finite number in ``[low, high]`` (``(low, high)`` when ``open_ends``)."""
    def parse(text):
        try:
            v = float(text)
        except ValueError:
            v = math.nan
        inside = (low < v < high) if open_ends else (low <= v <= high)
        if not (math.isfinite(v) and inside):
            span = f"strictly between {low:g} and {high:g}" if open_ends else f"finite, in {low:g}..{high:g}"
            raise argparse.ArgumentTypeError(f"{name} must be a number {span}, got {text!r}")
        return v
    parse.bounds, parse.kind, parse.open_ends = (low, high), "number", open_ends
    return parse


def text(name: str):
    """An argparse type for a plain string option: refuses an empty value and control characters
    (a NUL cannot be a path; an empty path or pattern is always a mistake)."""
    def parse(value):
        if not value.strip():
            raise argparse.ArgumentTypeError(f"{name} {value!r} names no folder, file or value: give one")
        if any(ord(c) < 32 for c in value):
            raise argparse.ArgumentTypeError(f"{name} {value!r} holds a control character; allowed: printable text")
        return value
    return parse


def canvas(text: str) -> tuple[int, int]:
    """``N`` or ``HxW`` -> ``(H, W)``."""
    try:
        return canvas_size(tuple(text.split("x")) if "x" in text else text)
    except UserError as e:
        msg = str(e) if repr(text) in str(e) else f"--size {text!r}: give N or HxW, each a whole number in 1..{MAX_SIDE}"
        raise argparse.ArgumentTypeError(msg) from None


def side(text: str) -> int:
    """``N`` -> N; ``HxW`` is refused: task panels have their own shapes."""
    if "x" in text:
        raise argparse.ArgumentTypeError(
            f"--size {text!r}: give one number of pixels N (1..{MAX_SIDE}); a task's panels keep their own shapes "
            "(a square panel is N x N, a collage of several images is wider)")
    return canvas(text)[0]


canvas.bounds = side.bounds = (1, MAX_SIDE)            # shown under --help


def setting(text: str) -> tuple[str, str]:
    name, eq, value = text.partition("=")
    if not eq or "." not in name:
        raise argparse.ArgumentTypeError(f"--set {text!r}: expected FAMILY.SETTING=VALUE, e.g. jigsaw.images=/data/photos")
    return name.strip(), value


def settings_of(args) -> dict:
    """The ``--set`` options as a dict of qualified names (later ones win)."""
    return dict(getattr(args, "set", None) or [])


def sampling_options(p: argparse.ArgumentParser, count: int, size: int | None, quiet: bool = True) -> None:
    """The options every sampling command shares: --count, --seed, --size, --set (and --quiet);
    ``size`` None: each family's native panel side."""
    p.add_argument("--count", type=positive_int("--count", MAX_COUNT), default=count, help="samples per task")
    p.add_argument("--seed", type=integer("--seed"), default=0, help="dataset seed: with task and index it decides every sample")
    p.add_argument("--size", type=side, default=size, metavar="N",
                   help="panel side in pixels" if size is not None else
                   "panel side in pixels (default: each family's native size, e.g. 224; Percept-V 512)")
    p.add_argument("--set", type=setting, action="append", metavar="FAMILY.SETTING=VALUE", default=[],
                   help="a family setting (repeatable; see 'procvis families'), e.g. jigsaw.images=/data/photos")
    if quiet:
        p.add_argument("--quiet", action="store_true", help="no progress bar")


def writable_parent(path: Path) -> None:
    import os

    parent = path.parent if str(path.parent) else Path(".")
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UserError(f"cannot create folder {str(parent)!r}: {e.strerror}") from None
    if not os.access(parent, os.W_OK):
        raise UserError(f"folder {str(parent)!r} is not writable")


def writable_folder(path: str, option: str) -> None:
    """Refuse before any work a folder option that names a file, or a place where no folder
    can be made (``UserError`` naming the option and value); leaves nothing behind (a folder
    made to find out is removed again)."""
    import os

    p = Path(path)
    if p.exists() and not p.is_dir():
        raise UserError(f"{option} {path!r} is a file; a folder is expected")
    missing = [q for q in [p, *p.parents] if not q.exists()]
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UserError(f"{option} {path!r}: cannot create that folder: {e.strerror}") from None
    finally:
        for q in missing:                      # deepest first
            with contextlib.suppress(OSError):
                q.rmdir()
    if not os.access(p if p.exists() else (missing[-1].parent if missing else Path(".")), os.W_OK | os.X_OK):
        raise UserError(f"{option} {path!r}: that folder is not writable")


FILE_SUFFIXES = (".md", ".png", ".jpg", ".jpeg", ".webp", ".json", ".jsonl", ".parquet", ".csv", ".txt", ".html")


def _folders_named_as_files(parser: argparse.ArgumentParser, a: argparse.Namespace) -> None:
    """Refuse before a command runs a string option whose value has a file's extension (e.g.
    ``.md``) but names an existing folder: a plug-in's output file would otherwise fail only
    when written, after its work."""
    for action in parser._actions:
        value = getattr(a, action.dest, None) if action.option_strings else None
        if "folder" in (action.help or ""):      # an option that names a folder may have any name
            continue
        if isinstance(value, str) and Path(value).suffix.lower() in FILE_SUFFIXES and Path(value).is_dir():
            raise UserError(f"{_option_name(action)} {value!r} is a folder; a file is expected")


# ---------------------------------------------------------------- the engine's commands

def _list_args(p):
    p.add_argument("pattern", nargs="?", help="glob pattern, e.g. 'elvis/closure/*' (all tasks when left out)")
    p.add_argument("--set", type=setting, action="append", metavar="FAMILY.SETTING=VALUE", default=[],
                   help="a family setting (repeatable), e.g. bongard.problems=DIR, whose folder provides tasks")


def _list(a) -> int:
    given = settings_of(a)
    pattern = "*" if a.pattern is None and given else a.pattern
    ids = registry.list_tasks() if pattern is None else [t.id for t in registry.resolve(pattern, given)]
    sys.stdout.write("".join(t + "\n" for t in ids))
    return 0


def _families_args(p):
    pass


def _families(a) -> int:
    """Every family with its task roots, protocols and settings (current value and source)."""
    import os

    tasks = [registry.get_task(t) for t in registry.list_tasks()]
    protocols = registry.protocols()
    for name in registry.families():
        fam = registry.get_family(name)
        mine = [t.id for t in tasks if t.family == name]
        roots = sorted({t.split("/", 1)[0] for t in mine})
        print(f"{name}: {fam.about}")
        print(f"  tasks: {len(mine)} under {', '.join(r + '/' for r in roots)}")
        print(f"  protocols: {', '.join(['direct'] + [n for n, p in protocols.items() if p.family == name])}")
        for s in fam.settings.values():
            env = f", or ${s.env}" if s.env else ""
            now = os.environ.get(s.env) if s.env and os.environ.get(s.env) else s.default
            print(f"  setting {name}.{s.name} = {now!r}  ({s.help}; set with --set {name}.{s.name}=VALUE{env})")
    return 0


def _generate_args(p):
    p.add_argument("pattern", help="task id or glob pattern")
    p.add_argument("--out", required=True,
                   help="output folder (a resumed run must use the same settings), or a URL an installed fsspec "
                        "driver writes (s3://, gs://, az://, hf://): made in $PROCVIS_CACHE/staging, then uploaded")
    sampling_options(p, count=10, size=224)
    p.add_argument("--format", choices=("parquet", "imagefolder", "hf"), default="parquet",
                   help="shard format: Parquet files per benchmark (many tasks to a file when each has few samples), "
                        "imagefolder shards per task, or hf: the Hugging Face Hub layout "
                        "(a config per benchmark, the papers' splits, a dataset card, shards sized by bytes)")
    p.add_argument("--workers", type=workers_arg, default="auto",
                   help="worker processes (capped by the cores and the memory budget, with a note); auto: one "
                        "for runs under 2,000 samples, else every core")
    p.add_argument("--shard-size", type=positive_int("--shard-size", MAX_SHARD_SIZE), default=None,
                   help="samples per shard, a worker's unit of work (parquet, imagefolder: 256) or per Parquet row "
                        "group (hf: 100)")
    p.add_argument("--shard-mb", type=real("--shard-mb", 0.01, 100_000), default=None,
                   help="hf only: target size of a shard in MiB (256); a small dataset gets one file per split")
    p.add_argument("--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
                   help="make the shards as Ray tasks on the cluster at ADDRESS (host:port, ray://host:port or "
                        "auto), or on a Ray instance started on this machine for the run when no ADDRESS is given; "
                        "the files are those of a local run; the cluster's CPUs replace --workers (needs "
                        "pip install 'procvis[ray]')")


def _generate(a) -> int:
    import signal

    from .outputs import generate, owned_heap  # torch: loaded when the command runs, not to parse it

    on_ray = {}
    if a.ray is not None:
        from .ray_jobs import RayExecutor  # Ray: optional, loaded only for --ray
        on_ray = {"executor": RayExecutor(a.ray)}
    out = local_path(a.out)
    if is_url(a.out):
        from .upload import filesystem    # fsspec: only for a URL; a missing driver is said before drawing

        filesystem(a.out)
        out = staging_folder(a.out, [a.pattern, a.seed, a.count, a.size, a.format, a.shard_size, a.shard_mb,
                                     sorted(settings_of(a).items())])
    try:
        with owned_heap():                 # a run here may tune the collector; the caller's is restored after
            m = generate(a.pattern, out, seed=a.seed, count=a.count, size=a.size, fmt=a.format, workers=a.workers,
                         shard_size=a.shard_size, progress=not a.quiet, settings=settings_of(a),
                         shard_bytes=None if a.shard_mb is None else round(a.shard_mb * 2 ** 20), **on_ray)
    except KeyboardInterrupt as e:         # workers ended, temporary files removed: say how to resume
        signum = getattr(e, "signum", signal.SIGINT)
        print(f"procvis: interrupted by {signal.Signals(signum).name}; run the same command again to resume",
              file=sys.stderr)
        return 128 + signum
    if is_url(a.out):
        from .upload import upload         # fsspec: only for a URL

        upload(out, a.out)
    print(f"wrote {m['total']} samples of {len(m['tasks'])} tasks to {a.out} ({len(m['files'])} files)")
    return 0


def is_url(out: str) -> bool:
    """Whether ``out`` names a remote file system by URL (``s3://bucket/path``, ``memory://``);
    ``file://`` URLs are local paths (:func:`local_path`)."""
    import re

    return re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", out) is not None and not out.startswith("file://")


def local_path(out: str) -> str:
    """``out`` as a local path: a ``file://`` URL's path, anything else unchanged."""
    if out.startswith("file://"):
        from urllib.parse import unquote, urlparse

        return unquote(urlparse(out).path)
    return out


def staging_folder(url: str, settings: list) -> str:
    """The local folder where a run for ``url`` with these ``settings`` is made (lock,
    journal and resume stay there) before it is uploaded: ``$PROCVIS_CACHE/staging/<hash>``,
    so another run to the same URL is staged apart and replaces what is there."""
    import hashlib

    from kernels.glyphs import cache_dir

    key = hashlib.sha256(json.dumps([url, *settings], default=str).encode()).hexdigest()[:16]
    return str(cache_dir() / "staging" / key)


def _preview_args(p):
    p.add_argument("pattern", help="task id or glob pattern")
    p.add_argument("--out", required=True, help="the contact sheet: .png, .jpg/.jpeg or .webp")
    sampling_options(p, count=8, size=192, quiet=False)


def _preview(a) -> int:
    from .preview import check_sheet, preview, sheet_extent           # torch: loaded when the command runs

    out = Path(a.out)
    check_sheet(a.count, a.size)
    _check_image_out(out, *sheet_extent(a.count, a.size))
    path = preview(a.pattern, out, count=a.count, seed=a.seed, size=a.size, settings=settings_of(a))
    print(f"wrote {path}")
    return 0


def _render_args(p):
    p.add_argument("scene", help='JSON file: {"background": [r,g,b], "primitives": [{"kind": ..., ...}]} or a list '
                                 "of them; colours are integers 0..255 or floats 0..1; a sprite's \"image\" is an "
                                 "image file (relative to the JSON file) or nested lists [C][h][w]")
    p.add_argument("--out", required=True, help="the image: .png, .jpg/.jpeg or .webp, the format its extension "
                                                "names (several scenes are drawn side by side)")
    p.add_argument("--size", type=canvas, default=(224, 224), metavar="N|HxW",
                   help="canvas side N, or height x width (scene units are fractions of the width)")


GAP = 8                    # px of white between scenes drawn side by side
CHUNK_BYTES = 256 << 20    # scenes rendered at once by ``render``: about this much (and one per core at least)


def _sprite_image(value, base: Path, cache: dict):
    """A sprite primitive's ``image`` from JSON: an image file path (relative to ``base``) -> a
    ``[4,h,w]`` uint8 tensor, or nested lists ``[C][h][w]`` (integers 0..255 or floats 0..1) ->
    an array; one object per distinct file, so scenes share it (``ValueError`` naming it)."""
    import numpy as np

    if isinstance(value, str):
        if value not in cache:
            cache[value] = _read_sprite_file(base / value, value)
        return cache[value]
    try:
        arr = np.asarray(value)
    except ValueError:
        arr = np.asarray([])
    if arr.ndim != 3 or arr.dtype.kind not in "iuf" or arr.shape[0] not in (3, 4) or 0 in arr.shape \
            or max(arr.shape[1:]) > MAX_SIDE:
        raise ValueError(f"sprite image must be an image file path or nested lists [3 or 4][h][w] of numbers "
                         f"(h, w in 1..{MAX_SIDE}), got {'shape ' + str(arr.shape) if arr.ndim else repr(value)[:60]}")
    top = 255 if arr.dtype.kind in "iu" else 1.0
    if not (np.isfinite(arr).all() and arr.min() >= 0 and arr.max() <= top):
        rule = "integers 0..255" if top == 255 else "floats 0..1 (integers mean 0..255)"
        raise ValueError(f"sprite image values must be {rule}, got {arr.min()!r}..{arr.max()!r}")
    return arr.astype(np.uint8) if top == 255 else arr.astype(np.float32)


def _read_sprite_file(path: Path, given: str):
    """``path`` read as a ``[4,h,w]`` uint8 RGBA tensor (``ValueError`` naming ``given``)."""
    import numpy as np
    import torch
    from PIL import Image

    try:
        with Image.open(path) as im:
            if max(im.size) > MAX_SIDE:
                raise ValueError(f"sprite image {given!r} is {im.size[0]}x{im.size[1]} px; allowed: up to "
                                 f"{MAX_SIDE} px a side")
            rgba = np.asarray(im.convert("RGBA"))
    except (OSError, Image.DecompressionBombError) as e:
        raise ValueError(f"cannot read sprite image {given!r}: {getattr(e, 'strerror', None) or e}") from None
    return torch.from_numpy(rgba.copy()).permute(2, 0, 1).contiguous()


def _scene_from_json(sd, k: int, base: Path, cache: dict) -> Scene:
    """Scene ``k`` of a scene file from its JSON object (``UserError`` naming the bad value)."""
    if not isinstance(sd, dict) or not isinstance(sd.get("primitives"), list):
        raise UserError(f"scene {k} must be an object with a 'primitives' list")
    bg = sd.get("background", (255, 255, 255))
    bg = bg if isinstance(bg, str) else tuple(bg) if isinstance(bg, list) else bg
    try:
        parse_color(bg)
    except ValueError as e:              # the file's value, checked by the scene API
        raise UserError(f"scene {k} background: {e}") from None
    s = Scene(background=bg)
    for i, p in enumerate(sd["primitives"]):
        if not isinstance(p, dict) or "kind" not in p:
            raise UserError(f"scene {k} primitive {i} must be an object with a 'kind'")
        try:
            params = {key: (tuple(v) if isinstance(v, list) and key not in ("points", "image") else v)
                      for key, v in p.items() if key != "kind"}
            if p["kind"] == "sprite" and "image" in params:
                params["image"] = _sprite_image(params["image"], base, cache)
            s.add(p["kind"], **params)
        except (ValueError, TypeError) as e:      # the file's values, checked by the scene API
            raise UserError(f"scene {k} primitive {i}: {e}") from None
    return s


def load_scene_file(path: str) -> list[Scene]:
    """The scenes of a JSON scene file (one object or a list of them); ``UserError`` naming the
    file, scene and primitive when something in it is wrong."""
    try:
        spec = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise UserError(f"cannot read scene file {path!r}: {getattr(e, 'strerror', None) or e}") from None
    specs = spec if isinstance(spec, list) else [spec]
    if not specs:
        raise UserError(f"scene file {path!r} holds an empty list; give at least one scene")
    cache: dict = {}
    return [_scene_from_json(sd, k, Path(path).parent, cache) for k, sd in enumerate(specs)]


def _check_image_out(out: Path, height: int, width: int) -> str:
    """Refuse before any work an ``--out`` that is a folder, has an extension naming no image
    format, cannot hold ``height x width`` px or cannot be written; returns Pillow's format name."""
    from .preview import image_format

    if out.is_dir():
        raise UserError(f"--out {str(out)!r} is a folder; give an image file such as {str(out / 'scene.png')!r}")
    try:
        fmt = image_format(out, height, width)
    except UserError as e:
        raise UserError(f"--out {e}") from None
    writable_parent(out)
    return fmt


def _render(a) -> int:
    """Render a JSON scene file: ``{"background": [r,g,b], "primitives": [{"kind": ..., ...}]}``;
    several scenes side by side, rendered a few at a time within the memory budget."""
    import os

    import numpy as np

    from .canvas import ENCODER_BYTES_PER_PX, gib, images_per_batch, memory_budget
    from .preview import save_image
    from .rendering import render

    scenes = load_scene_file(a.scene)
    (H, W), n = a.size, len(scenes)
    total_w = n * W + (n - 1) * GAP
    out = Path(a.out)
    fmt = _check_image_out(out, H, total_w)
    budget = memory_budget()
    held = H * total_w * (3 + ENCODER_BYTES_PER_PX[fmt])          # the picture, and the encoder's copy
    if held + 3 * H * W > budget:
        raise UserError(f"{n} scenes of {H}x{W} px make a {H}x{total_w} px {fmt} image that needs about "
                        f"{gib(held + 3 * H * W)}, over the memory budget of {gib(budget)}; draw fewer or smaller "
                        "scenes, or set PROCVIS_MEMORY_BUDGET (e.g. 16G) if the machine has the memory")
    # A few images at a time: enough for every core (one scene per thread), little beyond the picture.
    step = min(n, images_per_batch((H, W), "numba", budget - held), max(os.cpu_count() or 1, CHUNK_BYTES // (3 * H * W)))
    picture = np.empty((H, total_w, 3), np.uint8)
    for k in range(n - 1):
        picture[:, k * (W + GAP) + W:(k + 1) * (W + GAP)] = 255          # the white gaps
    for j in range(0, n, step):
        for k, img in enumerate(render(scenes[j:j + step], (H, W)), start=j):
            picture[:, k * (W + GAP): k * (W + GAP) + W] = img.permute(1, 2, 0).numpy()
    save_image(picture, out)
    print(f"wrote {out}")
    return 0


def _demo_args(p):
    p.add_argument("--pattern", default="*", help="tasks to generate")
    p.add_argument("--out", default="out/demo", help="output folder")
    sampling_options(p, count=4, size=224)


def _demo(a) -> int:
    from .outputs import generate          # torch: loaded when the command runs
    from .preview import preview

    out = Path(a.out)
    m = generate(a.pattern, str(out), seed=a.seed, count=a.count, size=a.size, progress=not a.quiet, workers=2,
                 settings=settings_of(a), fmt="hf")           # the Hub layout: a config per benchmark
    sheet = preview(a.pattern, out / "contact_sheet.png", count=min(max(len(registry.list_tasks(a.pattern)), 8), 24),
                    seed=a.seed, settings=settings_of(a))
    print(f"wrote {m['total']} samples of {len(m['tasks'])} tasks to {out}/ and a contact sheet at {sheet}")
    return 0


def _baselines_args(p):
    p.add_argument("pattern", help="task id or glob pattern")
    p.add_argument("--n", type=positive_int("--n", MAX_BASELINE_N), default=1100, help="items per task")
    p.add_argument("--alpha", type=real("--alpha", 0.0, 1.0, open_ends=True), default=0.05, help="significance level of the one-sided binomial test")
    p.add_argument("--set", type=setting, action="append", metavar="FAMILY.SETTING=VALUE", default=[],
                   help="a family setting (repeatable), e.g. bongard.problems=DIR, whose folder provides tasks")


def _baselines(a) -> int:
    """Chance accuracy and the exact one-sided binomial p < alpha threshold per task."""
    if not 0 < a.alpha < 1:
        raise UserError(f"--alpha {a.alpha!r} must lie strictly between 0 and 1")
    tasks = sorted(registry.resolve(a.pattern, settings_of(a)), key=lambda t: (t.root, t.rank, t.id))
    missing = [t.id for t in tasks if t.answer_distribution is None and not t.open_answer]
    if missing:
        raise UserError(f"no stated answer distribution for {', '.join(missing[:3])}"
                        f"{' and more' if len(missing) > 3 else ''}; baselines need tasks that declare one")
    width = max(len(t.id) for t in tasks)
    print(f"{'task':<{width}}  {'chance %':>8}  {'p<' + str(a.alpha) + ' %':>8}   (n = {a.n})")
    closed = []
    for t in tasks:
        if t.open_answer:                  # free text graded by a judge: nothing to guess from
            print(f"{t.id:<{width}}  {'—':>8}  {'—':>8}   free text graded by a judge: no chance level")
            continue
        p0 = chance(t.answer_distribution)
        # Critical accuracy as the papers report it: k/n rounded to one decimal.
        level = critical_accuracy(a.n, p0, a.alpha)
        crit = f"{percent(level, 1):8.2f}" if level == level else f"{'–':>8}"     # NaN: n of n does not reach it
        open_answer = t.sample(0, 0).answer_type != "fixed"
        if not open_answer:
            closed.append(p0)
        note = "   open answer: not in the overall" if open_answer else ""
        print(f"{t.id:<{width}}  {percent(p0):8.2f}  {crit}{note}")
    if closed:
        print(f"{'overall (mean of the closed-answer tasks)':<{width}}  {percent(sum(closed) / len(closed)):8.2f}")
    return 0


def _report_args(p):
    p.add_argument("runs", nargs="+", metavar="RUN", help="run folders written by 'procvis eval' (one model under "
                                                          "one protocol each)")
    p.add_argument("--out", required=True, help="folder for report.md (and the families' plots)")


def _report(a) -> int:
    """One report over several runs: each family's table over all of them (Bongard: models x strategies)."""
    from .reports import write_report

    writable_folder(a.out, "--out")
    print(f"wrote {write_report(a.runs, a.out)}")
    return 0


ENGINE_COMMANDS = (
    Command("list", "print registered task ids, one per line", _list_args, _list),
    Command("families", "describe every family: its tasks, protocols and settings", _families_args, _families),
    Command("generate", "write a dataset (Parquet or imagefolder shards + manifest)", _generate_args, _generate),
    Command("preview", "contact sheet of samples with question and answer", _preview_args, _preview),
    Command("render", "render a JSON scene file to an image (PNG, JPEG or WebP)", _render_args, _render),
    Command("demo", "generate a small sample of every task and a contact sheet", _demo_args, _demo),
    Command("baselines", "chance accuracy and significance thresholds per task", _baselines_args, _baselines),
    Command("report", "one report over several 'procvis eval' runs (e.g. models x strategies)", _report_args,
            _report),
)


# ---------------------------------------------------------------- the parser

class _Formatter(argparse.RawDescriptionHelpFormatter):
    """Help text with every option's default (or that it is required); epilogs as written."""

    def _get_help_string(self, action):
        text = action.help or ""
        optional_positional = not action.option_strings and action.nargs == "?" and action.default is not None
        if (not action.option_strings and not optional_positional) or action.default is argparse.SUPPRESS \
                or "%(default)" in text:
            return text
        if action.required:
            return text + " (required)"
        if isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction)):
            return text + f" (default: {'on' if action.default else 'off'})"
        default = action.default
        if isinstance(default, tuple) and len(default) == 2 and default[0] == default[1]:
            default = default[0]                     # a square canvas size
        bounds = getattr(action.type, "bounds", None)
        show = lambda v: str(v) if isinstance(v, int) else f"{v:g}"           # noqa: E731
        between = " strictly between {} and {}" if getattr(action.type, "open_ends", False) else ": {}..{}"
        allowed = f" (allowed{between.format(show(bounds[0]), show(bounds[1]))})" if bounds else ""
        if default in (None, [], ""):
            return text + " (default: none)" + allowed
        return text + f" (default: {default})" + allowed


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage block), exit code 2, and an epilog that may
    be computed when the help is shown."""

    epilog_fn: Callable[[], str] | None = None

    def error(self, message):
        self.exit(EXIT_USAGE, f"procvis: error: {message}\n")

    def format_help(self):
        if self.epilog_fn is not None:
            self.epilog = self.epilog_fn()
        return super().format_help()


def plugin_commands() -> list[Command]:
    """The commands other packages declare as entry points of ``procvis.commands``."""
    from importlib.metadata import entry_points

    out = []
    for ep in sorted(entry_points(group=COMMANDS_GROUP), key=lambda e: e.name):
        cmd = ep.load()
        if not isinstance(cmd, Command):
            raise TypeError(f"entry point {ep.name} = {ep.value} is not an engine.cli.Command")
        out.append(cmd)
    return out


def _option_name(action: argparse.Action) -> str:
    return action.option_strings[-1] if action.option_strings else (action.metavar or action.dest).upper()


def _harden(parser: argparse.ArgumentParser) -> None:
    """Give every option a checked type, so that a plug-in's plain ``int``, ``float`` or string
    option refuses bad values with the one-line error too: ``int`` -> a 64-bit integer,
    ``float`` -> a finite number, a string -> non-empty printable text."""
    for action in parser._actions:
        if action.nargs == 0 or isinstance(action, argparse._SubParsersAction):
            continue
        name = _option_name(action)
        if action.type is int:
            action.type = integer(name)
        elif action.type is float:
            action.type = real(name)
        elif action.type in (None, str):
            action.type = text(name)


def build_parser() -> argparse.ArgumentParser:
    """The ``procvis`` parser with every engine and plug-in command (options hardened by
    :func:`_harden`)."""
    p = _Parser(prog="procvis", description="Batched procedural rendering of visual-cognition benchmarks.",
                formatter_class=_Formatter)
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser, metavar="COMMAND")
    for cmd in [*ENGINE_COMMANDS, *plugin_commands()]:
        s = sub.add_parser(cmd.name, help=cmd.help, description=cmd.help, formatter_class=_Formatter)
        s.epilog_fn = cmd.epilog
        cmd.arguments(s)
        _harden(s)
        s.set_defaults(fn=cmd.run)
    return p


_OS_HINTS = {errno.EISDIR: "is a folder; a file is expected here",
             errno.ENOTDIR: "a part of it is a file, not a folder",
             errno.ENOENT: "does not exist",
             errno.EACCES: "permission denied",
             errno.EPERM: "permission denied",
             errno.EROFS: "is on a read-only file system",
             errno.ENOSPC: "the disk is full",
             errno.ENAMETOOLONG: "the name is too long",
             errno.EEXIST: "already exists"}


def _named_by_user(e: OSError, a: argparse.Namespace, names: dict[str, str]) -> str | None:
    """The option whose value ``e`` is about (the path itself or a place inside it), or None
    when the failing path is not one the user gave: then it is a bug and keeps its traceback."""
    import os

    failed = [str(f) for f in (e.filename, e.filename2) if f is not None]
    if not failed:
        return None
    for dest, value in vars(a).items():
        for v in (value if isinstance(value, list) else [value]):
            if not isinstance(v, str) or not v:
                continue
            given = os.path.abspath(v)
            for f in failed:
                f = os.path.abspath(f)
                if f == given or f.startswith(given.rstrip(os.sep) + os.sep) or given.startswith(f + os.sep):
                    return f"{names.get(dest, '--' + dest.replace('_', '-'))} {v!r}"
    return None


def _subparser(parser: argparse.ArgumentParser, command: str | None) -> argparse.ArgumentParser | None:
    """The sub-parser of ``command`` (None when there is none)."""
    sub = next((x for x in parser._actions if isinstance(x, argparse._SubParsersAction)), None)
    return sub.choices.get(command) if sub is not None else None


def _dest_names(parser: argparse.ArgumentParser, command: str | None) -> dict[str, str]:
    """``{dest: option name}`` of ``command``'s sub-parser."""
    chosen = _subparser(parser, command)
    return {x.dest: _option_name(x) for x in (chosen._actions if chosen else [])}


DRAWING = ("generate", "preview", "render", "eval", "audit", "bench", "demo")


def _compile_note() -> None:
    note = ("procvis: compiling the renderer's kernels (first run only: about a minute on 2 cores; cached "
            "on disk for later runs)")
    if "tqdm" in sys.modules:             # a progress bar may be on the line: written above it
        sys.modules["tqdm"].tqdm.write(note, file=sys.stderr)
    else:
        print(note, file=sys.stderr, flush=True)


def main(argv=None) -> int:
    """Run ``procvis`` with ``argv``; returns the exit status (2 and one line on stderr for a
    user error; a bug raises with its traceback)."""
    parser = build_parser()
    try:
        a = parser.parse_args(argv)
    except SystemExit as e:               # --help (0) or a bad option (2, its line already printed)
        return e.code if isinstance(e.code, int) else EXIT_USAGE
    try:
        chosen = _subparser(parser, getattr(a, "command", None))
        if chosen is not None:
            _folders_named_as_files(chosen, a)
        if getattr(a, "command", None) in DRAWING:
            from kernels import raster_numba

            # said when drawing starts, after the command has checked its input: a refused
            # command prints its one line alone
            raster_numba.note_before_compiling(_compile_note)
        return a.fn(a)
    except (UserError, SetupError) as e:
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        print(f"procvis: error: {msg}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as e:                  # a path the user gave that cannot be used as asked
        what = _named_by_user(e, a, _dest_names(parser, getattr(a, "command", None)))
        if what is None:
            raise
        hint = _OS_HINTS.get(e.errno, e.strerror or type(e).__name__)
        print(f"procvis: error: {what}: {hint} ({e.filename})", file=sys.stderr)
        return EXIT_USAGE
    finally:
        if "kernels.raster_numba" in sys.modules:
            sys.modules["kernels.raster_numba"].note_before_compiling(None)


if __name__ == "__main__":
    # Run the imported module, not this copy named __main__: plug-in commands are instances
    # of engine.cli.Command.
    from engine.cli import main as _main

    sys.exit(_main())
