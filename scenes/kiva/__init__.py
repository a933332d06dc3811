"""KiVA foundations: procedural 3D objects rendered headless into RGBA sprites, and the
batched sprite transforms of the analogy domains. (The trials and their protocols are not
registered yet.)"""
from .objects import OBJECTS, build, load_mesh_folder
from .render3d import HeadlessGLError, render_parts, sprite

__all__ = ["OBJECTS", "build", "load_mesh_folder", "HeadlessGLError", "render_parts", "sprite"]
