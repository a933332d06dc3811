"""procvis engine: scenes, sampling, the task registry, rendering, outputs and streams.

Describing scenes and listing tasks needs no tensor library; ``render``, ``stream`` and
``SceneBatch`` load torch on first use (so ``procvis list`` and ``--help`` answer at once).
"""
from .registry import get_task, list_tasks
from .sample import Draw, Sample
from .scene import KINDS, Scene

_HEAVY = {"render": ("rendering", "render"), "stream": ("streams", "stream"), "SceneBatch": ("batch", "SceneBatch"),
          "ray_dataset": ("ray_data", "ray_dataset")}      # Ray itself: imported when a dataset is made


def __getattr__(name: str):
    if name in _HEAVY:                       # torch-backed parts: imported when first asked for
        import importlib

        module, attr = _HEAVY[name]
        value = getattr(importlib.import_module(f".{module}", __name__), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'engine' has no attribute {name!r}")


__all__ = ["KINDS", "Scene", "SceneBatch", "render", "list_tasks", "get_task", "Draw", "Sample", "stream", "ray_dataset"]
