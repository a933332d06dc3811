"""A library of everyday 3D objects and toys, each built procedurally from open3d mesh
primitives: a list of coloured parts. ``build(name)`` returns the parts, normalised to fit
the unit sphere; :mod:`scenes.kiva.views` renders them into RGBA sprites. A user's folder of
meshes or object images replaces them through :mod:`scenes.kiva.library`."""
from __future__ import annotations

import functools
import math

import numpy as np


Part = tuple  # (open3d.geometry.TriangleMesh, (r, g, b) in 0..1)

RED, GREEN, BLUE = (0.85, 0.2, 0.15), (0.2, 0.6, 0.25), (0.2, 0.35, 0.8)
YELLOW, WHITE, BLACK = (0.95, 0.8, 0.15), (0.92, 0.92, 0.9), (0.12, 0.12, 0.12)
BROWN, GREY, ORANGE, PINK = (0.55, 0.35, 0.2), (0.6, 0.6, 0.62), (0.95, 0.5, 0.1), (0.95, 0.6, 0.7)


def _o3d():
    import open3d as o3d
    return o3d


def box(w, h, d, at=(0, 0, 0), colour=GREY) -> Part:
    """An axis-aligned box of size (w, h, d) centred at ``at`` (y is up)."""
    m = _o3d().geometry.TriangleMesh.create_box(w, h, d)
    m.translate(np.array(at) - np.array([w, h, d]) / 2)
    return m, colour


def cylinder(r, h, at=(0, 0, 0), axis="y", colour=GREY, resolution=24) -> Part:
    m = _o3d().geometry.TriangleMesh.create_cylinder(r, h, resolution=resolution)   # along z
    _orient(m, axis)
    m.translate(at)
    return m, colour


def cone(r, h, at=(0, 0, 0), axis="y", colour=GREY) -> Part:
    m = _o3d().geometry.TriangleMesh.create_cone(r, h, resolution=24)   # base at z=0, tip at z=h
    m.translate((0, 0, -h / 2))
    _orient(m, axis)
    m.translate(at)
    return m, colour


def sphere(r, at=(0, 0, 0), colour=GREY, scale=(1, 1, 1)) -> Part:
    m = _o3d().geometry.TriangleMesh.create_sphere(r, resolution=16)
    m.vertices = _o3d().utility.Vector3dVector(np.asarray(m.vertices) * np.array(scale))
    m.translate(at)
    return m, colour


def torus(r, tube, at=(0, 0, 0), axis="y", colour=GREY) -> Part:
    m = _o3d().geometry.TriangleMesh.create_torus(r, tube, radial_resolution=24, tubular_resolution=12)   # in xy
    _orient(m, axis, native="z")
    m.translate(at)
    return m, colour


def _orient(m, axis, native="z"):
    rot = {("z", "y"): (-math.pi / 2, 0, 0), ("z", "x"): (0, math.pi / 2, 0), ("z", "z"): (0, 0, 0)}[(native, axis)]
    m.rotate(_o3d().geometry.get_rotation_matrix_from_xyz(rot), center=(0, 0, 0))


def cubes(cells, size=0.3, colour=RED, depth=1) -> list[Part]:
    """Unit cubes at integer ``cells`` ``[(x, y), ...]`` (or ``(x, y, z)``): polycubes, letters."""
    out = []
    for c in cells:
        x, y, z = (c[0], c[1], 0) if len(c) == 2 else c
        for k in range(depth):
            out.append(box(size, size, size, (x * size, y * size, (z + k) * size), colour))
    return out


# ---------------------------------------------------------------- the objects

def _mug():
    return [cylinder(0.35, 0.8, colour=RED), torus(0.22, 0.06, at=(0.42, 0, 0), axis="z", colour=RED)]


def _chair():
    legs = [box(0.08, 0.6, 0.08, (x, -0.3, z), BROWN) for x in (-0.3, 0.3) for z in (-0.3, 0.3)]
    return legs + [box(0.7, 0.08, 0.7, (0, 0.02, 0), BROWN), box(0.7, 0.7, 0.08, (0, 0.4, -0.31), BROWN)]


def _table():
    legs = [box(0.08, 0.7, 0.08, (x, -0.35, z), BROWN) for x in (-0.6, 0.6) for z in (-0.3, 0.3)]
    return legs + [box(1.4, 0.08, 0.8, (0, 0.02, 0), BROWN)]


def _lamp():
    return [cylinder(0.3, 0.06, (0, -0.6, 0), colour=BLACK), cylinder(0.03, 1.0, (0, -0.1, 0), colour=GREY),
            box(0.5, 0.03, 0.03, (0.25, 0.4, 0), GREY), cone(0.25, 0.3, (0.5, 0.3, 0), colour=YELLOW)]


def _bottle():
    return [cylinder(0.25, 0.8, (0, -0.2, 0), colour=GREEN), cone(0.25, 0.3, (0, 0.35, 0), colour=GREEN),
            cylinder(0.08, 0.25, (0, 0.6, 0), colour=GREEN), cylinder(0.09, 0.08, (0, 0.75, 0), colour=RED)]


def _car():
    wheels = [cylinder(0.18, 0.1, (x, -0.25, z), axis="z", colour=BLACK) for x in (-0.5, 0.5) for z in (-0.33, 0.33)]
    return wheels + [box(1.5, 0.35, 0.7, (0, -0.05, 0), RED), box(0.8, 0.3, 0.6, (-0.1, 0.27, 0), WHITE)]


def _truck():
    wheels = [cylinder(0.18, 0.1, (x, -0.3, z), axis="z", colour=BLACK) for x in (-0.7, 0.0, 0.6) for z in (-0.33, 0.33)]
    return wheels + [box(1.2, 0.7, 0.7, (-0.3, 0.15, 0), BLUE), box(0.5, 0.5, 0.7, (0.6, 0.05, 0), YELLOW)]


def _house():
    return [box(1.0, 0.7, 0.8, (0, -0.2, 0), YELLOW), cone(0.75, 0.5, (0, 0.4, 0), colour=RED),
            box(0.2, 0.35, 0.02, (0.2, -0.38, 0.41), BROWN), box(0.12, 0.35, 0.12, (-0.3, 0.55, 0), GREY)]


def _tree():
    return [cylinder(0.1, 0.6, (0, -0.5, 0), colour=BROWN), cone(0.45, 0.6, (0, 0.0, 0), colour=GREEN),
            cone(0.35, 0.5, (0, 0.35, 0), colour=GREEN), cone(0.12, 0.2, (0.3, -0.7, 0), colour=GREEN)]


def _rocket():
    fins = [box(0.04, 0.3, 0.3, (0, -0.55, 0.2), RED), box(0.3, 0.3, 0.04, (0.2, -0.55, 0), RED)]
    return fins + [cylinder(0.2, 1.0, (0, 0, 0), colour=WHITE), cone(0.2, 0.35, (0, 0.67, 0), colour=RED),
                   cylinder(0.07, 0.05, (0.2, 0.2, 0), axis="x", colour=BLUE)]


def _boat():
    return [box(1.4, 0.3, 0.5, (0, -0.3, 0), BROWN), cone(0.25, 0.4, (0.85, -0.3, 0), axis="x", colour=BROWN),
            cylinder(0.03, 1.0, (0, 0.3, 0), colour=GREY), box(0.02, 0.6, 0.5, (-0.25, 0.35, 0), WHITE)]


def _duck():
    return [sphere(0.45, (0, -0.2, 0), YELLOW, scale=(1.3, 0.8, 1)), sphere(0.25, (0.4, 0.25, 0), YELLOW),
            cone(0.1, 0.25, (0.7, 0.22, 0), axis="x", colour=ORANGE), sphere(0.04, (0.5, 0.33, 0.2), BLACK)]


def _snowman():
    return [sphere(0.4, (0, -0.45, 0), WHITE), sphere(0.3, (0, 0.15, 0), WHITE), sphere(0.2, (0, 0.6, 0), WHITE),
            cone(0.05, 0.25, (0.2, 0.6, 0), axis="x", colour=ORANGE), box(0.4, 0.05, 0.05, (0.35, 0.15, 0), BROWN)]


def _letter(cells, colour):
    def build():
        return cubes(cells, colour=colour, depth=1)
    return build


LETTERS = {
    "letter_F": [(0, 0), (0, 1), (0, 2), (0, 3), (0, 4), (1, 4), (2, 4), (1, 2)],
    "letter_L": [(0, 0), (0, 1), (0, 2), (0, 3), (0, 4), (1, 0), (2, 0)],
    "letter_R": [(0, 0), (0, 1), (0, 2), (0, 3), (0, 4), (1, 4), (2, 3), (1, 2), (2, 1), (2, 0)],
    "letter_J": [(2, 1), (2, 2), (2, 3), (2, 4), (1, 0), (0, 1), (1, 4), (3, 4)],
    "letter_P": [(0, 0), (0, 1), (0, 2), (0, 3), (0, 4), (1, 4), (2, 3), (1, 2)],
    "letter_G": [(1, 0), (2, 0), (0, 1), (0, 2), (0, 3), (1, 4), (2, 4), (3, 1), (2, 2), (3, 2)],
    "digit_7": [(0, 4), (1, 4), (2, 4), (2, 3), (1, 2), (1, 1), (0, 0)],
}
POLYCUBES = {
    "toy_tetris_s": ([(0, 0), (1, 0), (1, 1), (2, 1)], BLUE),
    "toy_tetris_l": ([(0, 0), (0, 1), (0, 2), (1, 0)], ORANGE),
    "toy_tetris_t": ([(0, 1), (1, 1), (2, 1), (1, 0)], PINK),
    "toy_zigzag": ([(0, 0), (0, 1), (1, 1), (1, 2), (2, 2)], GREEN),
    "toy_hook": ([(0, 0), (1, 0), (2, 0), (2, 1), (2, 2), (1, 2)], RED),
    "toy_3d_corner": ([(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1), (0, 2, 0)], YELLOW),
}


def _hammer():
    return [box(0.12, 1.2, 0.12, (0, -0.2, 0), BROWN), box(0.6, 0.2, 0.2, (0.15, 0.45, 0), GREY)]


def _key():
    return [torus(0.2, 0.06, (-0.5, 0, 0), axis="z", colour=YELLOW), box(0.8, 0.08, 0.08, (0.05, 0, 0), YELLOW),
            box(0.08, 0.2, 0.08, (0.35, -0.12, 0), YELLOW), box(0.08, 0.15, 0.08, (0.2, -0.1, 0), YELLOW)]


def _umbrella():
    return [cone(0.7, 0.35, (0, 0.45, 0), colour=BLUE), cylinder(0.03, 1.0, (0, 0.0, 0), colour=BLACK),
            torus(0.12, 0.03, (0.12, -0.5, 0), axis="z", colour=BLACK)]


def _mushroom():
    return [cylinder(0.15, 0.5, (0.05, -0.3, 0), colour=WHITE), sphere(0.45, (0, 0.1, 0), RED, scale=(1, 0.5, 1)),
            sphere(0.08, (0.25, 0.28, 0.2), WHITE)]


def _watering_can():
    return [cylinder(0.35, 0.6, colour=GREEN), cylinder(0.05, 0.7, (0.55, 0.2, 0), axis="x", colour=GREEN),
            torus(0.2, 0.04, (-0.3, 0.25, 0), axis="z", colour=GREEN)]


def _train():
    wheels = [cylinder(0.15, 0.08, (x, -0.35, z), axis="z", colour=BLACK) for x in (-0.5, -0.1, 0.4) for z in (-0.3, 0.3)]
    return wheels + [cylinder(0.3, 1.0, (0.1, -0.05, 0), axis="x", colour=RED), box(0.5, 0.7, 0.6, (-0.55, 0.05, 0), BLUE),
                     cylinder(0.08, 0.35, (0.45, 0.35, 0), colour=BLACK)]


def _plane():
    return [cylinder(0.15, 1.6, axis="x", colour=WHITE), box(0.4, 0.05, 1.6, (0.1, 0, 0), GREY),
            box(0.25, 0.4, 0.05, (-0.7, 0.2, 0), RED), cone(0.15, 0.3, (0.95, 0, 0), axis="x", colour=WHITE)]


def _windmill():
    blades = [box(0.12, 0.8, 0.04, (0.0, 0.55, 0.25), WHITE), box(0.8, 0.12, 0.04, (0.0, 0.55, 0.25), WHITE)]
    return [cone(0.35, 1.0, (0, -0.2, 0), colour=BROWN)] + blades + [box(0.5, 0.12, 0.04, (0.35, 0.9, 0.25), WHITE)]


def _castle():
    towers = [cylinder(0.18, 0.9, (x, 0, 0), colour=GREY) for x in (-0.55, 0.55)]
    return towers + [box(0.9, 0.6, 0.5, (0, -0.15, 0), GREY), cone(0.22, 0.35, (-0.55, 0.62, 0), colour=RED),
                     box(0.2, 0.3, 0.02, (0.1, -0.3, 0.26), BROWN)]


def _robot():
    return [box(0.6, 0.7, 0.4, (0, 0, 0), GREY), box(0.4, 0.35, 0.35, (0, 0.55, 0), GREY),
            box(0.15, 0.6, 0.15, (-0.4, 0.05, 0), BLUE), box(0.15, 0.3, 0.15, (0.4, 0.2, 0), BLUE),
            box(0.18, 0.5, 0.2, (-0.15, -0.6, 0), BLACK), sphere(0.05, (0.1, 0.6, 0.18), RED)]


def _bench():
    return [box(1.4, 0.08, 0.4, (0, 0, 0), BROWN), box(1.4, 0.3, 0.06, (0, 0.25, -0.2), BROWN),
            box(0.08, 0.4, 0.35, (-0.6, -0.24, 0), BLACK), box(0.08, 0.4, 0.35, (0.6, -0.24, 0), BLACK)]


def _giraffe():
    legs = [box(0.08, 0.6, 0.08, (x, -0.45, z), YELLOW) for x in (-0.3, 0.3) for z in (-0.12, 0.12)]
    return legs + [sphere(0.35, (0, 0.0, 0), YELLOW, scale=(1.3, 0.7, 0.7)), box(0.1, 0.7, 0.1, (0.35, 0.4, 0), YELLOW),
                   box(0.3, 0.14, 0.14, (0.45, 0.75, 0), YELLOW), sphere(0.07, (-0.45, 0.05, 0), BROWN)]


def _teapot():
    return [sphere(0.45, colour=WHITE, scale=(1, 0.8, 1)), cone(0.08, 0.5, (0.55, 0.1, 0), axis="x", colour=WHITE),
            torus(0.2, 0.04, (-0.5, 0.05, 0), axis="z", colour=WHITE), sphere(0.08, (0, 0.42, 0), RED)]


def _flag():
    return [cylinder(0.03, 1.4, (-0.4, 0, 0), colour=GREY), box(0.7, 0.45, 0.02, (-0.05, 0.42, 0), RED),
            box(0.25, 0.2, 0.025, (-0.22, 0.52, 0), WHITE)]


def _sofa():
    return [box(1.4, 0.3, 0.6, (0, -0.2, 0), BLUE), box(1.4, 0.5, 0.15, (0, 0.15, -0.25), BLUE),
            box(0.15, 0.4, 0.6, (-0.7, 0.0, 0), BLUE), box(0.15, 0.25, 0.6, (0.7, -0.05, 0), BLUE)]


def _bed():
    return [box(1.4, 0.25, 0.8, (0, -0.2, 0), BROWN), box(1.2, 0.12, 0.75, (0.05, -0.02, 0), WHITE),
            box(0.08, 0.7, 0.8, (-0.7, 0.05, 0), BROWN), sphere(0.15, (-0.45, 0.1, 0), PINK, scale=(1, 0.5, 1.8))]


def _bowl():                          # symmetric: never eligible for rotation/reflection trials
    return [sphere(0.5, colour=ORANGE, scale=(1, 0.5, 1))]


def _ball():                          # symmetric
    return [sphere(0.5, colour=RED)]


def _helicopter():
    return [sphere(0.35, colour=YELLOW, scale=(1.4, 0.9, 0.9)), box(0.9, 0.1, 0.1, (-0.7, 0.05, 0), YELLOW),
            box(1.4, 0.03, 0.12, (0, 0.42, 0), BLACK), box(0.05, 0.3, 0.05, (-1.1, 0.15, 0), BLACK),
            box(0.7, 0.04, 0.04, (0, -0.4, 0.2), BLACK)]


def _guitar():
    return [sphere(0.4, (0, -0.35, 0), BROWN, scale=(1, 1, 0.3)), sphere(0.3, (0, 0.1, 0), BROWN, scale=(1, 1, 0.3)),
            box(0.1, 0.8, 0.08, (0, 0.7, 0), BLACK), box(0.2, 0.18, 0.08, (0.05, 1.15, 0), BLACK)]


def _scooter():
    return [box(1.0, 0.08, 0.25, (0, -0.4, 0), RED), cylinder(0.14, 0.08, (-0.5, -0.45, 0), axis="z", colour=BLACK),
            cylinder(0.14, 0.08, (0.5, -0.45, 0), axis="z", colour=BLACK), box(0.06, 0.9, 0.06, (0.45, 0.0, 0), GREY),
            box(0.06, 0.06, 0.5, (0.45, 0.45, 0), BLACK)]


BUILDERS = {
    "mug": _mug, "chair": _chair, "table": _table, "lamp": _lamp, "bottle": _bottle, "car": _car, "truck": _truck,
    "house": _house, "tree": _tree, "rocket": _rocket, "boat": _boat, "duck": _duck, "snowman": _snowman,
    "hammer": _hammer, "key": _key, "umbrella": _umbrella, "mushroom": _mushroom, "watering_can": _watering_can,
    "train": _train, "plane": _plane, "windmill": _windmill, "castle": _castle, "robot": _robot, "bench": _bench,
    "giraffe": _giraffe, "teapot": _teapot, "flag": _flag, "sofa": _sofa, "bed": _bed, "bowl": _bowl, "ball": _ball,
    "helicopter": _helicopter, "guitar": _guitar, "scooter": _scooter,
    **{name: _letter(cells, RED if name.startswith("letter") else BLUE) for name, cells in LETTERS.items()},
    **{name: _letter(cells, colour) for name, (cells, colour) in POLYCUBES.items()},
}
OBJECTS = tuple(sorted(BUILDERS))


@functools.lru_cache(maxsize=64)
def build(name: str) -> tuple:
    """The object's parts ``((mesh, rgb), ...)``, centred and scaled into the unit sphere."""
    if name not in BUILDERS:
        raise ValueError(f"unknown object {name!r}; objects: {', '.join(OBJECTS)}")
    parts = BUILDERS[name]()
    pts = np.concatenate([np.asarray(m.vertices) for m, _ in parts])
    centre = (pts.min(0) + pts.max(0)) / 2
    radius = np.linalg.norm(pts - centre, axis=1).max()
    for m, _ in parts:
        m.translate(-centre)
        m.scale(1.0 / radius, center=(0, 0, 0))
        m.compute_vertex_normals()
    return tuple(parts)
