"""Headless rendering of coloured triangle meshes into RGBA sprites (pyrender on EGL).

``render_parts(parts, view, size)`` draws ``((mesh, rgb), ...)`` (open3d triangle meshes
fitting the unit sphere) with soft shading on a transparent background, seen from one of
the named ``VIEWS``. pyrender and the GL stack load on first use; a missing system library
is named in a :class:`HeadlessGLError`."""
from __future__ import annotations

import ctypes.util
import functools
import math
import os

import numpy as np
import torch

from .errors import SetupError

VIEWS = {"front": (25.0, 15.0), "side": (70.0, 15.0), "top": (25.0, 55.0)}   # azimuth, elevation (degrees)


class HeadlessGLError(SetupError):
    """No headless OpenGL (EGL) is available to render 3D objects."""


def _check_gl() -> None:
    missing = [lib for lib in ("EGL", "GL") if ctypes.util.find_library(lib) is None]
    if missing:
        raise HeadlessGLError(
            f"3D objects need headless OpenGL: missing system librar{'y' if len(missing) == 1 else 'ies'} "
            f"{', '.join('lib' + m for m in missing)} (Debian: apt-get install libegl1 libegl-mesa0 libgl1-mesa-dri)")


def _llvm_users_first() -> None:
    """Load triton (where installed) before the GL stack. Mesa's software rasterizer puts its
    own LLVM among the process's global symbols, and triton's compiler loaded after it binds
    to that LLVM and crashes the process (a segmentation fault in ``import triton``, e.g. when
    a model or the fused GPU pass loads after sprites were rendered); loaded first, each keeps
    its own."""
    import importlib.util

    if importlib.util.find_spec("triton") is not None:
        try:
            import triton  # noqa: F401
        except Exception:              # a broken triton is the caller's business, not the renderer's
            pass


@functools.lru_cache(maxsize=1)
def _renderer_module():
    os.environ.setdefault("PYOPENGL_PLATFORM", "egl")
    _check_gl()
    _llvm_users_first()
    try:
        import pyrender
        import trimesh
    except ImportError as e:
        raise HeadlessGLError(f"3D rendering needs pyrender and trimesh: {e}") from None
    return pyrender, trimesh


_RENDERERS: dict = {}      # size -> its headless renderer, kept open (deleted explicitly, never left to the GC)


def _offscreen(size: int):
    if size in _RENDERERS:
        return _RENDERERS[size]
    pyrender, _ = _renderer_module()
    try:
        _RENDERERS[size] = pyrender.OffscreenRenderer(size, size)
    except Exception as e:                 # pyrender raises bare exceptions from the GL stack
        raise HeadlessGLError(f"could not open a headless OpenGL context ({type(e).__name__}: {e}); "
                              "PYOPENGL_PLATFORM=egl needs Mesa EGL (libegl-mesa0, libgl1-mesa-dri)") from None
    return _RENDERERS[size]


def _reopen(size: int) -> None:
    """Close the renderer of ``size`` so that the next render opens a fresh context."""
    old = _RENDERERS.pop(size, None)
    if old is not None:
        try:
            old.delete()
        except Exception:                  # a context already broken may fail to close; it is dropped anyway
            pass


def _camera_pose(azimuth: float, elevation: float, distance: float = 4.0) -> np.ndarray:
    a, e = math.radians(azimuth), math.radians(elevation)
    eye = distance * np.array([math.sin(a) * math.cos(e), math.sin(e), math.cos(a) * math.cos(e)])
    z = eye / np.linalg.norm(eye)
    x = np.cross([0.0, 1.0, 0.0], z)
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    pose = np.eye(4)
    pose[:3, 0], pose[:3, 1], pose[:3, 2], pose[:3, 3] = x, y, z, eye
    return pose


def _shoot(scene, view: str, size: int) -> torch.Tensor:
    """Add the camera and light of ``view`` to a pyrender scene and render it RGBA."""
    pyrender, _ = _renderer_module()
    pose = _camera_pose(*VIEWS[view])
    scene.add(pyrender.OrthographicCamera(xmag=1.05, ymag=1.05, znear=0.1, zfar=10.0), pose=pose)
    key = _camera_pose(VIEWS[view][0] - 35, VIEWS[view][1] + 30)
    scene.add(pyrender.DirectionalLight(color=[1.0, 1.0, 1.0], intensity=2.6), pose=key)
    try:
        colour, _ = _offscreen(size).render(scene, flags=pyrender.RenderFlags.RGBA)
    except Exception as e:
        if type(e).__name__ != "GLError":
            raise
        # a long-lived headless context occasionally fails a render (seen once in a full test
        # run: GLError on a mesh the same process drew fine before); a fresh one draws it
        _reopen(size)
        colour, _ = _offscreen(size).render(scene, flags=pyrender.RenderFlags.RGBA)
    return _straight(np.ascontiguousarray(colour))


def _straight(rgba: np.ndarray) -> torch.Tensor:
    """``[H, W, 4]`` as rendered (antialiased edges blended over transparent black, i.e.
    premultiplied) -> ``[4, H, W]`` uint8 straight alpha, so that edges are not drawn dark."""
    a = rgba[..., 3:].astype(np.float32)
    rgb = np.where(a > 0, np.clip(rgba[..., :3].astype(np.float32) * 255 / np.maximum(a, 1), 0, 255), 0)
    out = np.concatenate([np.round(rgb), a], -1).astype(np.uint8)
    return torch.from_numpy(out).permute(2, 0, 1).contiguous()


def render_parts(parts, view: str = "front", size: int = 256) -> torch.Tensor:
    """RGBA sprite ``[4, size, size]`` uint8 of ``parts`` (``((mesh, rgb in 0..1), ...)``):
    soft shading, transparent background, the object filling about 90% of the frame."""
    if view not in VIEWS:
        raise ValueError(f"view={view!r}; views: {', '.join(VIEWS)}")
    pyrender, trimesh = _renderer_module()
    scene = pyrender.Scene(bg_color=[0, 0, 0, 0], ambient_light=[0.45, 0.45, 0.45])
    for mesh, rgb in parts:
        tm = trimesh.Trimesh(np.asarray(mesh.vertices), np.asarray(mesh.triangles), process=False)
        mat = pyrender.MetallicRoughnessMaterial(baseColorFactor=[*rgb, 1.0], metallicFactor=0.0, roughnessFactor=0.8)
        scene.add(pyrender.Mesh.from_trimesh(tm, material=mat, smooth=False))
    return _shoot(scene, view, size)


def load_mesh_file(path):
    """A mesh file (OBJ, PLY, GLB, ...) as a trimesh scene with its own colours and textures,
    centred and scaled into the unit sphere; points and lines in it are left out. Raises
    ``ValueError`` when it holds no triangles."""
    _, trimesh = _renderer_module()
    tm = trimesh.load(str(path), force="scene")
    for key, geometry in list(tm.geometry.items()):
        if not isinstance(geometry, trimesh.Trimesh) or len(geometry.faces) == 0:
            tm.delete_geometry(key)
    if not tm.geometry:
        raise ValueError("no triangles in it")
    lo, hi = tm.bounds
    centre, radius = (lo + hi) / 2, float(np.linalg.norm(hi - lo)) / 2
    if not np.isfinite(radius) or radius <= 0:
        raise ValueError("its vertices span no volume")
    move = np.eye(4)
    move[:3, :3] /= radius
    move[:3, 3] = -centre / radius
    tm.apply_transform(move)
    return tm


def render_mesh(tm, view: str = "front", size: int = 256) -> torch.Tensor:
    """RGBA sprite ``[4, size, size]`` uint8 of a trimesh scene from :func:`load_mesh_file`,
    with its own materials (vertex colours, textures), lit and framed as :func:`render_parts`."""
    if view not in VIEWS:
        raise ValueError(f"view={view!r}; views: {', '.join(VIEWS)}")
    pyrender, _ = _renderer_module()
    scene = pyrender.Scene.from_trimesh_scene(tm, bg_color=[0, 0, 0, 0], ambient_light=[0.45, 0.45, 0.45])
    return _shoot(scene, view, size)
