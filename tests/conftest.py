import os
import shutil
import tempfile

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")    # as engine sets it: torch is imported below

import numpy as np
import pytest
import torch

from engine.scene import KINDS, Scene

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.fixture(autouse=True)
def _hf_offline(tmp_path, monkeypatch):
    # datasets caches prepared data by folder name: keep each test's cache its own.
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


def sprite_image(rng, h=12, w=17):
    img = torch.from_numpy(rng.integers(0, 256, size=(4, h, w)).astype(np.uint8))
    img[3, :2] = 0           # transparent rows exercise premultiplied filtering
    return img


def random_scene(rng: np.random.Generator, kinds=KINDS, n=None) -> Scene:
    """A scene holding every kind in ``kinds`` (plus ``n`` random extra ones) with random
    position, size, colour, alpha, rotation, fill/outline, stroke and draw order."""
    s = Scene(background=tuple(int(v) for v in rng.integers(0, 256, 3)))
    chosen = list(kinds) + (list(rng.choice(kinds, size=n)) if n else [])
    for kind in chosen:
        c = tuple(rng.uniform(0.05, 0.95, 2))
        r = float(rng.uniform(0.03, 0.2))
        style = dict(color=tuple(int(v) for v in rng.integers(0, 256, 3)), alpha=float(rng.uniform(0.3, 1.0)),
                     order=float(rng.integers(0, 4)))
        rot = float(rng.uniform(-180, 180))
        shape = dict(fill=bool(rng.integers(2)), stroke=float(rng.uniform(0.002, 0.03)), rotation=rot)
        if kind == "circle":
            s.circle(c, r, **style, **shape)
        elif kind == "ellipse":
            s.ellipse(c, (r, r * rng.uniform(0.3, 1.0)), **style, **shape)
        elif kind == "triangle":
            p = rng.uniform(0.05, 0.95, size=(3, 2))
            s.triangle(*map(tuple, p), **style, **shape)
        elif kind == "rectangle":
            s.rectangle(c, (r, r * rng.uniform(0.2, 2)), **style, **shape)
        elif kind == "square":
            s.square(c, r, **style, **shape)
        elif kind == "polygon":
            s.polygon(c, r, int(rng.integers(3, 11)), **style, **shape)
        elif kind == "star":
            s.star(c, r, points=int(rng.integers(4, 8)), inner=float(rng.uniform(0.3, 0.7)), **style, **shape)
        elif kind in ("diamond", "cross", "plus", "heart", "spade", "club"):
            getattr(s, kind)(c, r, **style, **shape)
        elif kind == "sector":
            a = float(rng.uniform(0, 360))
            s.sector(c, r, a, a + float(rng.uniform(20, 340)), **style, **shape)
        elif kind == "pacman":
            s.pacman(c, r, mouth=float(rng.uniform(10, 120)), direction=float(rng.uniform(0, 360)), **style, **shape)
        elif kind == "ring":
            s.ring(c, r, r * float(rng.uniform(0.3, 0.9)), **style, **shape)
        elif kind == "line":
            s.line(c, tuple(rng.uniform(0, 1, 2)), width=float(rng.uniform(0.003, 0.03)), **style)
        elif kind == "polyline":
            s.polyline(rng.uniform(0, 1, size=(int(rng.integers(2, 7)), 2)), width=float(rng.uniform(0.003, 0.03)), **style)
        elif kind == "spline":
            s.spline(rng.uniform(0, 1, size=(int(rng.integers(2, 6)), 2)), width=float(rng.uniform(0.003, 0.03)), **style)
        elif kind == "arrow":
            s.arrow(c, tuple(rng.uniform(0, 1, 2)), width=float(rng.uniform(0.005, 0.03)), **style, **shape)
        elif kind == "text":
            txt = "".join(rng.choice(list("AbQ09?!,.→↑↓←×"), size=int(rng.integers(1, 6))))
            s.text(txt, c, height=float(rng.uniform(0.04, 0.2)), anchor=str(rng.choice(["left", "center", "right"])),
                   **style, **shape)
        elif kind == "sprite":
            s.sprite(sprite_image(rng), c, (r * 2, r * rng.uniform(0.5, 2)), rotation=rot, alpha=style["alpha"], order=style["order"])
        else:
            raise AssertionError(kind)
    return s


@pytest.fixture
def make_scene():
    return random_scene


def pytest_configure(config):
    os.environ.setdefault("PROCVIS_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "procvis"))
    # the built-in Jigsaw photos are drawn afresh by every test session (kept for the
    # session only), so that what the tests check is the drawing, not an earlier run's files
    if "PROCVIS_PHOTO_CACHE" not in os.environ:
        config._photo_cache = tempfile.mkdtemp(prefix="procvis-test-photos-")
        os.environ["PROCVIS_PHOTO_CACHE"] = config._photo_cache


def pytest_unconfigure(config):
    if getattr(config, "_photo_cache", None):
        shutil.rmtree(config._photo_cache, ignore_errors=True)
