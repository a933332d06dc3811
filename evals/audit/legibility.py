"""Legibility from pixels: is every drawn object big enough to see at the rendered size, is
every line of text tall enough to read, and is anything drawn hidden under the rest?

Each object is measured by re-rendering the panel without it: the pixels that change are
what a reader sees of it. Its extent is the larger side of their bounding box; an object
with fewer than ``MIN_EXTENT`` such pixels is hidden, unless it is not an object at all:
a translucent shading (``alpha < 1``, e.g. a shadow under what casts it) or a blank
backdrop tile (drawn alone on the scene's background it shows fewer than ``MIN_EXTENT``
pixels). A line of text (consecutive glyphs of
one height) is one object, measured by its height. Nothing here reads a family's
layout: only the scene's primitives and the renderer.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from engine.rendering import render

from .features import INK_THRESHOLD

MIN_EXTENT = 4              # px: the smallest object a reader can be expected to see
MIN_TEXT = 7                # px: the smallest readable line of text


def _objects(scene) -> list[list[int]]:
    """Primitive indices grouped into objects: a run of glyphs of one height is one line of
    text, and consecutive primitives sharing a centre are one object (a fill and its
    outline); every other primitive is an object of its own."""
    groups: list[list[int]] = []
    for i, p in enumerate(scene.primitives):
        prev = scene.primitives[i - 1] if i else None
        text_run = p.kind == "text" and prev is not None and prev.kind == "text" and prev.scale == p.scale
        same_place = prev is not None and p.kind != "text" and prev.kind != "text" and prev.center == p.center
        if groups and (text_run or same_place):
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


def _ink_box(diff: np.ndarray) -> tuple[int, int]:
    """``(height, width)`` of the bounding box of ``diff`` ``[H,W]`` bool (0, 0 when empty)."""
    ys, xs = np.nonzero(diff)
    if len(ys) == 0:
        return 0, 0
    return int(ys.max() - ys.min() + 1), int(xs.max() - xs.min() + 1)


def _changed(a, b) -> np.ndarray:
    return (np.abs(np.asarray(a).astype(np.int16) - np.asarray(b).astype(np.int16)).max(0) > INK_THRESHOLD)


def panel_legibility(scene, hw: tuple[int, int], full=None) -> dict:
    """Per-object measures of one panel rendered at ``hw = (H, W)`` (``full``: the panel as
    already rendered, else it is rendered here). Returns ``{"objects", "min_extent",
    "min_text", "hidden"}``: the number of objects, the smallest visible extent of a non-text
    object, the smallest visible text-line height (``None`` when there is none) and how many
    objects have fewer than ``MIN_EXTENT`` visible pixels."""
    groups = _objects(scene)
    if not groups:
        return {"objects": 0, "min_extent": None, "min_text": None, "hidden": 0}
    without = [replace(scene, primitives=[p for j, p in enumerate(scene.primitives) if j not in set(g)])
               for g in groups]
    images = render(without + ([] if full is not None else [scene]), hw)
    full_img = full if full is not None else images[-1]
    extents, texts, unseen = [], [], []
    for k, g in enumerate(groups):
        diff = _changed(images[k], full_img)
        if int(diff.sum()) < MIN_EXTENT:
            if all(scene.primitives[j].alpha >= 1.0 for j in g):
                unseen.append(g)
            continue
        h, w = _ink_box(diff)
        if scene.primitives[g[0]].kind == "text":
            texts.append(h)
        else:
            extents.append(max(h, w))
    hidden = 0
    if unseen:      # blank tiles draw nothing even alone: they are backdrop, not hidden objects
        alone = render([replace(scene, primitives=[scene.primitives[j] for j in g]) for g in unseen]
                       + [replace(scene, primitives=[])], hw)
        hidden = sum(int(_changed(a, alone[-1]).sum()) >= MIN_EXTENT for a in alone[:-1])
    return {"objects": len(groups), "min_extent": min(extents) if extents else None,
            "min_text": min(texts) if texts else None, "hidden": hidden}


def sample_legibility(sample, images, size: tuple[int, int]) -> dict:
    """:func:`panel_legibility` over the panels a sample shows, reduced to the smallest
    extent, smallest text height and the number of hidden objects."""
    rows = [panel_legibility(sample.panels[k], sample.panel_hw(k, size), images[k]) for k in sample.shown]
    ext = [r["min_extent"] for r in rows if r["min_extent"] is not None]
    txt = [r["min_text"] for r in rows if r["min_text"] is not None]
    return {"objects": sum(r["objects"] for r in rows), "min_extent": min(ext) if ext else None,
            "min_text": min(txt) if txt else None, "hidden": sum(r["hidden"] for r in rows)}
