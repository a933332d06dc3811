"""procvis engine: scenes, sampling, the task registry, rendering, outputs and streams."""
from .batch import SceneBatch
from .registry import get_task, list_tasks, register_task
from .render import render
from .sample import Draw, Sample
from .scene import KINDS, Scene
from .stream import stream

__all__ = ["KINDS", "Scene", "SceneBatch", "render", "register_task", "list_tasks", "get_task", "Draw", "Sample",
           "stream"]
