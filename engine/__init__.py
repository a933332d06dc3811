"""procvis engine: scenes, sampling, the task registry, rendering, outputs and streams.

Describing scenes and listing tasks needs no tensor library; ``render``, ``stream`` and
``SceneBatch`` load torch on first use (so ``procvis list`` and ``--help`` answer at once).
"""
import os as _os
import sys as _sys

# After each CPU operation torch's OpenMP threads spin a while before they sleep; when other
# work shares the cores, that spinning takes them from the renderer's threads, and a stream
# that alternates renders with small tensor operations ran 1.2x (beside one busy process) to
# 5-12x (beside a multi-threaded job) slower on 2 cores; on an idle machine sleeping changes
# nothing (benchmarks/RESULTS.md, streams). OpenMP reads this when torch loads, so it is set
# only when torch is not loaded yet, and never over a value the user chose.
if "torch" not in _sys.modules:
    _os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

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
