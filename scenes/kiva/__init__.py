"""KiVA: procedural 3D objects rendered headless into RGBA sprites, the batched sprite
transforms of the analogy domains, and the kids' trials (``kiva/<domain>/<parameter>``)."""
from . import adults, compositional, trials  # noqa: F401  (register the trials)
from .objects import OBJECTS, build, load_mesh_folder
from .render3d import HeadlessGLError, render_parts, sprite

__all__ = ["OBJECTS", "build", "load_mesh_folder", "HeadlessGLError", "render_parts", "sprite"]
