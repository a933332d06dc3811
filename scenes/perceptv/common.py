"""Shared pieces of the Percept-V domains: the 20-colour palette and its legend, shapes, the
answer formats and the reply reader, and the domain records (registered as tasks in
``tasks.py``).

Sample ``index`` of a domain is problem size ``index // 10 % 20 + 1`` and instance
``index % 10`` (plus 10 per further block of 200), so ``--count 200`` is the benchmark's
200 problems of the domain and longer streams keep cycling through the sizes with new
instances. :func:`make` draws one problem of any size the domain allows.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from engine.answers import format_answer
from engine.errors import UserError
from engine.placement import PlacementError, scatter
from engine.registry import get_task
from engine.replies import Parsed
from engine.rng import sample_rng
from engine.sample import Draw, Sample
from engine.scene import Scene

from .answers import Form
from .prompts import PROMPTS, SUFFIX

PALETTE = {"black": (0, 0, 0), "gray": (128, 128, 128), "brown": (165, 42, 42), "maroon": (128, 0, 0),
           "red": (255, 0, 0), "coral": (255, 127, 80), "tan": (210, 180, 140), "orange": (255, 165, 0),
           "ivory": (255, 255, 240), "goldenrod": (218, 165, 32), "yellow": (255, 255, 0), "green": (0, 128, 0),
           "olive": (128, 128, 0), "turquoise": (64, 224, 208), "skyblue": (135, 206, 235), "blue": (0, 0, 255),
           "lavender": (230, 230, 250), "purple": (128, 0, 128), "pink": (255, 192, 203), "fuchsia": (255, 0, 255)}
BASIC = {"red": (255, 0, 0), "green": (0, 128, 0), "blue": (0, 0, 255), "yellow": (255, 215, 0),
         "purple": (128, 0, 128), "orange": (255, 165, 0), "black": (0, 0, 0), "cyan": (0, 190, 190),
         "magenta": (255, 0, 255)}
WHITE = (255, 255, 255)
SIZES = 20
NATIVE = 512          # px: the panel side evaluations render at (the reference's images are 389-1,800 px)
INSTANCES = 10
ATTEMPTS = 60

# TVPS-4 skills per domain (the benchmark's Table 1)
SKILL_NAMES = {"D": "Visual Discrimination", "M": "Visual Memory", "SM": "Visual Sequential Memory",
               "FG": "Visual Figure Ground", "FC": "Visual Form Constancy", "C": "Visual Closure",
               "SR": "Visual Spatial Relationship"}


@dataclass(frozen=True)
class Domain:
    name: str
    answer_type: str
    skills: tuple[str, ...]
    max_size: int
    form: "Form"
    fn: object
    fixes: str = ""               # the reference shortcut that ``perceptv_fixed/<name>`` removes


DOMAINS: dict[str, Domain] = {}


def size_instance(index: int) -> tuple[int, int]:
    """The (problem size, instance) of sample ``index``."""
    return index // INSTANCES % SIZES + 1, index % INSTANCES + INSTANCES * (index // (INSTANCES * SIZES))


def domain(name: str, answer_type: str, skills: str, max_size: int, form: "Form", fixes: str = ""):
    """Record ``fn(rng, size, instance) -> (panels, answer, meta)`` as the domain ``name``
    (``(panels, answer, meta, extent)`` for panels that are not square: ``extent`` is their
    ``(height, width)`` in units of the native side, see :func:`extent`); it
    becomes the task ``perceptv/<name>`` (the reference's distribution) and, with ``fixes``
    (the shortcut the reference leaves), also ``perceptv_fixed/<name>``, whose ``fn`` gets
    ``fixed=True``."""
    def deco(fn):
        DOMAINS[name] = Domain(name, answer_type, tuple(skills.split(",")), max_size, form, fn, fixes)
        return fn
    return deco


def draw_problem(d: Domain, rng, size: int, instance: int, fixed: bool = False) -> Draw:
    """One problem of domain ``d`` at ``size`` (a clear error past its maximum), retried on
    placement failures."""
    if not 1 <= size <= d.max_size:
        raise UserError(f"size={size!r} is out of range for perceptv/{d.name}: 1..{d.max_size}")
    for _ in range(ATTEMPTS):
        try:
            out = d.fn(rng, size, instance, fixed=True) if fixed else d.fn(rng, size, instance)
            break
        except PlacementError:
            continue
    else:
        raise RuntimeError(f"perceptv{'_fixed' if fixed else ''}/{d.name}: no layout for size {size} in {ATTEMPTS} attempts")
    panels, answer, meta = out[:3]
    count = len(panels) if isinstance(panels, list) else 1
    extents = [tuple(out[3])] * count if len(out) > 3 else None
    meta = {"domain": d.name, "size": size, "instance": instance, "skills": list(d.skills), **meta}
    return Draw(panels, PROMPTS[d.name] + SUFFIX, answer, d.answer_type, meta=meta, gold_text=d.form.render(answer),
                panel_extents=extents)


def extent(height: float, width: float) -> tuple[float, float]:
    """A panel's ``(height, width)`` in units of the native side (:data:`NATIVE` px), rounded
    so that it renders to whole pixels at the native size; the scene then spans ``x`` in
    ``[0, 1]`` and ``y`` in ``[0, height / width]``."""
    return round(height * NATIVE) / NATIVE, round(width * NATIVE) / NATIVE


def make(name: str, size: int, instance: int = 0, seed: int = 0, fixed: bool = False) -> Sample:
    """One problem of ``perceptv/<name>`` (``perceptv_fixed/<name>`` with ``fixed``) at any
    allowed ``size`` (a clear error otherwise)."""
    if name not in DOMAINS:
        raise UserError(f"unknown Percept-V domain {name!r}; domains: {', '.join(sorted(DOMAINS))}")
    d = DOMAINS[name]
    if fixed and not d.fixes:
        raise UserError(f"perceptv/{name} has no fixed variant; domains with one: "
                        f"{', '.join(sorted(k for k, v in DOMAINS.items() if v.fixes))}")
    task = get_task(f"perceptv{'_fixed' if fixed else ''}/{name}")
    draw = draw_problem(d, sample_rng(seed, f"{task.id}@{size}", instance), int(size), int(instance), fixed)
    return task.build(draw, seed, instance)


def read_reply(reply, sample) -> Parsed:
    """The family's reader: a reply in the sample's domain's output format -> the canonical
    answer text (strict when the reply is exactly the format). For ``cross_and_knots`` any
    safe cell reads as the gold."""
    d = DOMAINS[sample.meta["domain"]]
    value, strict = d.form.read(reply)
    if value is None:
        return Parsed(None, False)
    text = format_answer(value, d.answer_type)
    if "accepted" in sample.meta and text in sample.meta["accepted"]:
        text = sample.answer_text
    return Parsed(text, strict)


# ---------------------------------------------------------------- drawing helpers

def shape(s: Scene, kind: str, c, r: float, color, outline=None, fill=True, stroke=0.006, flip=False) -> None:
    """A shape of half-size ``r``: circle, triangle (apex up; ``flip``: apex down), square,
    pentagon, hexagon, octagon or diamond; ``outline`` adds a border of that colour."""
    rot = 180.0 if flip else 0.0
    style = dict(color=color, fill=fill, stroke=stroke)
    if kind == "circle":
        s.circle(c, r, **style)
    elif kind == "square":
        s.square(c, 2 * r, **style)
    elif kind == "diamond":
        s.polygon(c, r, 4, **style)
    else:
        sides = {"triangle": 3, "pentagon": 5, "hexagon": 6, "octagon": 8}[kind]
        s.polygon(c, r, sides, rotation=rot, **style)
    if outline is not None and fill:
        shape(s, kind, c, r, outline, fill=False, stroke=stroke, flip=flip)


def place(rng, radii, bounds=(0.03, 0.03, 0.97, 0.97), gap=0.01) -> np.ndarray:
    return scatter(rng, radii, bounds, gap=gap, tries=400)


LEGEND = 1 / 3              # the legend strip's height / width (the reference's 6 x 2 in strip)
LEGEND_PANEL = extent(1 + LEGEND, 1.0)   # a square scene with the strip under it


def legend(s: Scene, top: float = 1.0) -> None:
    """The 20-colour swatch strip with its names, across the canvas from ``top`` down (a
    third of the width tall): the reference appends it under the square scene."""
    s.primitives.extend(_legend(top))


@functools.lru_cache(maxsize=4)
def _legend(top: float) -> tuple:
    """The legend's primitives, drawn once per ``top`` (every legend is the same)."""
    s = Scene()
    w = 1.0 / len(PALETTE)
    s.line((0.0, top), (1.0, top), width=0.003, color=(0, 0, 0))
    for k, (name, rgb) in enumerate(PALETTE.items()):
        x = w * (k + 0.5)
        s.rectangle((x, top + 0.07), (w * 0.8, 0.1), color=rgb)
        s.rectangle((x, top + 0.07), (w * 0.8, 0.1), color=(0, 0, 0), fill=False, stroke=0.002)
        s.text(name, (x, top + 0.13), height=0.024, anchor="right", rotation=90, color=(0, 0, 0))
    for p in s.primitives:                       # shared by every legend: read-only
        if p.verts is not None:
            p.verts.flags.writeable = False
    return tuple(s.primitives)


def pick(rng, values, k=None):
    values = list(values)
    if k is None:
        return values[int(rng.integers(len(values)))]
    return [values[int(i)] for i in rng.choice(len(values), size=k, replace=False)]
