"""procvis engine: scenes, sampling, the task registry, rendering, outputs and streams."""
from .batch import SceneBatch
from .render import render
from .scene import KINDS, Scene

__all__ = ["KINDS", "Scene", "SceneBatch", "render"]
