"""Scenes inside scenes: place a whole scene into a box of another, still symbolic, so a
composite (a collage of panels) renders in one pass at any resolution."""
from __future__ import annotations

from .scene import Scene, parse_color


def inset(dst: Scene, src: Scene, center, width: float, frame: tuple | None = None, frame_width: float = 0.0) -> Scene:
    """Draw ``src`` (its unit square, background included) into ``dst`` as a square of side
    ``width`` centred at ``center``; ``frame`` outlines it in that colour. Returns ``dst``."""
    cx, cy = float(center[0]), float(center[1])
    w = float(width)
    if not w > 0:
        raise ValueError(f"width={width!r} must be positive")
    bg = src.background
    dst.rectangle((cx, cy), (w, w), color=bg if isinstance(bg, str) else tuple(bg))
    offset = len(dst.sprites)
    dst.sprites.extend(src.sprites)
    for p in src.primitives:
        dst.primitives.append(p._replace(
            center=(cx + (p.center[0] - 0.5) * w, cy + (p.center[1] - 0.5) * w),
            scale=(p.scale[0] * w, p.scale[1] * w), stroke=p.stroke * w, shell=p.shell * w,
            index=p.index + offset if p.kind == "sprite" else p.index))
    if frame is not None:
        parse_color(frame)
        dst.rectangle((cx, cy), (w, w), color=frame, fill=False, stroke=frame_width or w * 0.01)
    return dst
