"""Where a trial's objects come from: the built-in procedural objects, or a folder the user
names with the family setting ``kiva.objects`` (``--set kiva.objects=DIR`` or
``$PROCVIS_KIVA_OBJECTS``):

- a folder of meshes (OBJ, PLY, GLB, GLTF; an OBJ's material and texture files beside it),
  rendered with their own colours and textures like the built-in objects, or
- a folder of object images: RGBA PNGs (their alpha is the object), or pictures on a plain
  background (read from the border), which is keyed out.

Every object becomes an RGBA sprite ``[4, S, S]`` whose visible part is fitted to 90% of the
canvas (:func:`kernels.sprites.fit`), so that objects of any framing start at one size. Which
objects suit which trial (rotation and reflection need no symmetry, colour needs a hue that
lands on the named colour, every object must stand out from the background) is measured on
these sprites by the trials, the same way for built-in and user objects.
"""
from __future__ import annotations

import functools
import hashlib
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from engine.errors import UserError
from engine.lazy import lazy_module

from .objects import OBJECTS

T = lazy_module("kernels.sprites")
torch = lazy_module("torch")
views = lazy_module("scenes.kiva.views")
mesh_render = lazy_module("kernels.mesh_render")
images = lazy_module("kernels.images")

MESHES = (".obj", ".ply", ".glb", ".gltf")
IMAGES = (".png", ".jpg", ".jpeg", ".webp", ".bmp")
ASSETS = (".mtl", ".bin")                  # an OBJ's materials, a GLTF's buffers: read with their mesh
KEY_TOLERANCE = 40                         # colour distance from the border colour that is background
PLAIN_BORDER = 0.9                         # share of border pixels that must be that colour


def check_objects(value) -> str:
    """The ``kiva.objects`` setting: ``""`` (the built-in objects) or an absolute folder whose
    every object loads (the folder is read once here, so a bad file is named before any
    trial is drawn)."""
    v = str(value or "").strip()
    if not v:
        return ""
    root = Path(v).expanduser()
    if not root.is_dir():
        raise UserError(f"kiva.objects={v!r}: not a folder (expected a folder of object meshes or images)")
    root = str(root.resolve())
    user_objects(root, _folder_key(root))
    return root


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and not any(part.startswith(".")
                                                                        for part in p.relative_to(root).parts))


def _fingerprint(root: Path) -> str:
    """Names, sizes and times of the folder's files: a changed folder is read again."""
    h = hashlib.blake2b(digest_size=8)
    for p in _files(root):
        st = p.stat()
        h.update(f"{p.relative_to(root)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


@functools.lru_cache(maxsize=8)
def user_objects(root: str, fingerprint: str) -> dict[str, tuple[str, object, Path]]:
    """The objects of folder ``root``: ``{name: (kind, loaded, file)}``, ``kind`` ``"mesh"``
    (a trimesh scene) or ``"image"`` (an RGBA array). A folder holding any mesh is a mesh folder
    (its images are textures); otherwise every image is an object. A file of another kind,
    or one that does not load, is a one-line :class:`UserError` naming it."""
    files = _files(Path(root))
    meshes = [p for p in files if p.suffix.lower() in MESHES]
    allowed = MESHES + IMAGES + ASSETS if meshes else IMAGES
    for p in files:
        if p.suffix.lower() not in allowed:
            raise UserError(f"kiva.objects: {p}: unsupported file type {p.suffix or '(none)'!r}; allowed: "
                            f"meshes {', '.join(MESHES)} or images {', '.join(IMAGES)}")
    named: dict[str, Path] = {}
    for p in meshes or [p for p in files if p.suffix.lower() in IMAGES]:
        name = "user:" + str(p.relative_to(root).with_suffix(""))
        if name in named:
            raise UserError(f"kiva.objects: {named[name]} and {p} are both object {name!r}; rename one")
        named[name] = p
    out: dict[str, tuple[str, object, Path]] = {}
    for name, p in named.items():
        try:
            out[name] = ("mesh", mesh_render.load_mesh_file(p), p) if meshes else ("image", _load_image(p), p)
        except UserError:
            raise
        except Exception as e:                   # loaders raise many kinds of errors on a bad file
            detail = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise UserError(f"kiva.objects: {p}: cannot read it as {'a mesh' if meshes else 'an image'} "
                            f"({detail})") from None
    if len(out) < 2:
        raise UserError(f"kiva.objects={root!r}: {len(out)} object(s) found; a trial needs at least 2 "
                        f"(meshes {', '.join(MESHES)} or images {', '.join(IMAGES)})")
    return out


def _load_image(path: Path) -> np.ndarray:
    """An object image as ``[H, W, 4]`` uint8 (any mode, read by :func:`kernels.images.rgba8`):
    its own alpha when some pixel is transparent, else the plain background (the border's
    colour) keyed out where it touches the border."""
    with images.open_image(path) as im:
        a = images.rgba8(im)                     # 16-bit samples scaled, not clipped to white
    if (a[..., 3] < 255).any():
        if not (a[..., 3] > 127).any():
            raise UserError(f"kiva.objects: {path}: the image is fully transparent")
        return a.copy()
    border = np.concatenate([a[0, :, :3], a[-1, :, :3], a[:, 0, :3], a[:, -1, :3]]).astype(np.int32)
    key = np.median(border, 0)
    plain = (np.abs(border - key).max(1) <= KEY_TOLERANCE).mean()
    if plain < PLAIN_BORDER:
        raise UserError(f"kiva.objects: {path}: no transparent pixels and no plain background to key out "
                        f"(only {100 * plain:.0f}% of the border is one colour); use an RGBA PNG")
    rgb = Image.fromarray(np.pad(a[..., :3], ((1, 1), (1, 1), (0, 0)), mode="edge"))
    rgb.putpixel((0, 0), tuple(int(c) for c in key))
    ImageDraw.floodfill(rgb, (0, 0), (1, 2, 3), thresh=KEY_TOLERANCE)      # a marker no photo border keeps
    filled = np.asarray(rgb)[1:-1, 1:-1]
    background = (filled == np.array([1, 2, 3], np.uint8)).all(-1) & (np.abs(a[..., :3].astype(np.int32) - key).max(-1)
                                                                       <= KEY_TOLERANCE)
    out = a.copy()
    out[background, 3] = 0
    if not (out[..., 3] > 0).any():
        raise UserError(f"kiva.objects: {path}: nothing is left once its background is keyed out")
    return out


@functools.lru_cache(maxsize=8)
def _folder_key(folder: str) -> str:
    """The folder's fingerprint, read once per process (trials draw many objects)."""
    return _fingerprint(Path(folder))


def names(settings: dict | None) -> tuple[str, ...]:
    """The object names a trial draws from under the family ``settings``."""
    folder = (settings or {}).get("objects") or ""
    if not folder:
        return OBJECTS
    return tuple(user_objects(folder, _folder_key(folder)))


@functools.lru_cache(maxsize=1024)
def _fitted(name: str, size: int, folder: str, fingerprint: str):
    if not folder:
        raw = views.sprite(name, "front", size)
    else:
        kind, obj, path = user_objects(folder, fingerprint)[name]
        if kind == "mesh":
            try:
                raw = mesh_render.render_mesh(obj, "front", size)
            except mesh_render.HeadlessGLError:
                raise
            except Exception as e:               # the renderer raises many kinds of errors on odd content
                raise UserError(f"kiva.objects: {path}: cannot draw it ({type(e).__name__}: "
                                f"{str(e).splitlines()[0] if str(e) else ''})") from None
        else:                                    # centred on a transparent square, then resized
            h, w = obj.shape[:2]
            side = max(h, w)
            square = np.zeros((side, side, 4), np.uint8)
            square[(side - h) // 2:(side - h) // 2 + h, (side - w) // 2:(side - w) // 2 + w] = obj
            raw = torch.from_numpy(square).permute(2, 0, 1)[None]
            raw = T.unpremultiply(torch.nn.functional.interpolate(T.premultiply(raw), size=(size, size),
                                                                  mode="bilinear", antialias=True,
                                                                  align_corners=False))[0]
    return T.fit(raw[None])[0]


def sprite(name: str, size: int, settings: dict | None = None):
    """Object ``name`` as an RGBA sprite ``[4, size, size]`` uint8, its visible part fitted to
    90% of the canvas (under the family ``settings``: built-in or user objects)."""
    folder = (settings or {}).get("objects") or ""
    return _fitted(name, int(size), folder, _folder_key(folder) if folder else "")
