"""Shared pieces of the Percept-V domains: the 20-colour palette and its legend, shapes, the
answer formats and the reply reader, and the domain records (registered as tasks in
``tasks.py``).

Sample ``index`` of a domain is problem size ``index // 10 % 20 + 1`` and instance
``index % 10`` (plus 10 per further block of 200), so ``--count 200`` is the benchmark's
200 problems of the domain and longer streams keep cycling through the sizes with new
instances. :func:`make` draws one problem of any size the domain allows.
"""
from __future__ import annotations

import re
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
    """Record ``fn(rng, size, instance) -> (panels, answer, meta)`` as the domain ``name``; it
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
            panels, answer, meta = d.fn(rng, size, instance, fixed=True) if fixed else d.fn(rng, size, instance)
            break
        except PlacementError:
            continue
    else:
        raise RuntimeError(f"perceptv/{d.name}: no layout for size {size} in {ATTEMPTS} attempts")
    meta = {"domain": d.name, "size": size, "instance": instance, "skills": list(d.skills), **meta}
    return Draw(panels, PROMPTS[d.name] + SUFFIX, answer, d.answer_type, meta=meta, gold_text=d.form.render(answer))


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


def legend(s: Scene, top: float = 0.8) -> None:
    """The 20-colour swatch strip with its names, across the canvas below ``top``."""
    w = 1.0 / len(PALETTE)
    for k, (name, rgb) in enumerate(PALETTE.items()):
        x = w * (k + 0.5)
        s.rectangle((x, top + 0.035), (w * 0.9, 0.06), color=rgb)
        s.rectangle((x, top + 0.035), (w * 0.9, 0.06), color=(0, 0, 0), fill=False, stroke=0.002)
        s.text(name, (x, top + 0.08), height=0.022, anchor="right", rotation=90, color=(0, 0, 0))


def pick(rng, values, k=None):
    values = list(values)
    if k is None:
        return values[int(rng.integers(len(values)))]
    return [values[int(i)] for i in rng.choice(len(values), size=k, replace=False)]


# ---------------------------------------------------------------- answer formats

_NUM = r"-?\d+"


@dataclass(frozen=True)
class Form:
    """How a domain's answer is written and read.

    ``keys``: labels before the values (``COUNT``, ``QUADRANT``/``COUNT``, ``ANSWER``, ...);
    ``item``: ``int``, ``word`` or ``cell``; ``sep``: how list items are joined; ``case``:
    how words are written in the gold text (``lower``, ``title``, ``upper``); ``space``:
    a space after the colon."""

    kind: str
    keys: tuple[str, ...] = ()
    item: str = "int"
    sep: str = ", "
    case: str = "lower"
    space: bool = False
    vocab: tuple[str, ...] = ()

    def _word(self, w: str) -> str:
        return {"lower": w.lower(), "title": w.title(), "upper": w.upper()}[self.case] if self.item == "word" else w

    def render(self, answer) -> str:
        """The gold answer in the domain's output format."""
        colon = ": " if self.space else ":"
        if self.kind == "fixed" and len(self.keys) > 1:
            return " ".join(f"{k}{colon}{v}" for k, v in zip(self.keys, answer.split()))
        if self.kind in ("single", "fixed") and self.item == "words":
            body = self.sep.join(answer.split())
        elif self.kind in ("single", "fixed"):
            body = self._word(answer)
        else:                   # list/set cells are "(r c)" inside procvis: items may not hold commas
            body = self.sep.join(self._word(a).replace(" ", ",") if self.item == "cell" else self._word(a)
                                 for a in answer)
        return f"{self.keys[0]}{colon}{body}" if self.keys else body

    def read(self, reply):
        """``(canonical answer or None, strict)`` from a model reply."""
        text = reply if isinstance(reply, str) else ""
        lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
        if not lines:
            return None, False
        value = self._extract(lines[-1])
        if value is not None:
            return value, len(lines) == 1 and _norm(lines[0]) == _norm(self.render(value))
        for ln in reversed(lines[:-1]):
            value = self._extract(ln)
            if value is not None:
                return value, False
        return None, False

    def _extract(self, line: str):
        low = line.lower()
        if self.kind == "fixed" and len(self.keys) > 1:
            vals = []
            for k in self.keys:
                m = re.search(re.escape(k.lower()) + r"\s*:\s*(" + _NUM + ")", low)
                if not m:
                    return None
                vals.append(str(int(m.group(1))))
            return " ".join(vals)
        body = low
        if self.keys:
            idx = low.rfind(self.keys[0].lower())
            m = re.match(re.escape(self.keys[0].lower()) + r"\s*:\s*(.*)$", low[idx:]) if idx >= 0 else None
            if m is None:
                if self.kind in ("list", "set") or self.item in ("words", "cell"):
                    return None
            else:
                body = m.group(1)
        if self.item == "cell":
            if re.fullmatch(r"[\s.]*none[\s.]*", body):
                return "None" if self.kind == "fixed" else []
            cells = [(int(a), int(b)) for a, b in re.findall(r"\(\s*(\d+)\s*,\s*(\d+)\s*\)", body)]
            if not cells:
                return None
            if self.kind == "fixed":
                return f"({cells[0][0]},{cells[0][1]})" if len(cells) == 1 else None
            cells = [f"({a} {b})" for a, b in cells]
            return sorted(set(cells)) if self.kind == "set" else cells
        if self.kind == "single":
            if self.item == "int":
                m = re.findall(_NUM, body)
                return str(int(m[-1])) if m else None
            words = [w for w in re.findall(r"[a-z]+", body) if w in self.vocab]
            return words[-1] if words and len(set(words)) == 1 else None
        tokens = [t for t in re.split(r"[\s,;]+", body.strip(" .[](){}")) if t]
        tokens = [t.strip(".'\"[](){}") for t in tokens]
        tokens = [t for t in tokens if t]
        if self.item in ("word", "words") and self.vocab:
            tokens = [t for t in tokens if t in self.vocab]
        if not tokens:
            return None
        if self.item == "words":
            return " ".join(tokens)
        if self.item == "label":
            tokens = [t.upper() if t in ("s", "e") else t for t in tokens]
        return sorted(set(tokens)) if self.kind == "set" else tokens


def _norm(text: str) -> str:
    return re.sub(r"\s+", "", text).lower().rstrip(".")
