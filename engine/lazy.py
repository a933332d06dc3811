"""Modules imported on first use.

Families are imported to list tasks and protocols (``procvis list``, ``--help``), which
must not load torch. A family module that needs a torch-backed module (the renderer, the
sprite kernels) binds it with :func:`lazy_module` at the top and uses it as usual: the real
module is imported, the ordinary way, when one of its attributes is first read. The proxy
is a plain object and is never put in ``sys.modules``, so nothing else (an import system
walk, ``inspect``) can trigger or see a half-imported module. The import-graph test counts
these bindings as imports.
"""
from __future__ import annotations

import importlib
import threading
from types import ModuleType


class LazyModule:
    """Stands for module ``name``; the first attribute read imports it."""

    def __init__(self, name: str):
        self._name = name
        self._module: ModuleType | None = None
        self._lock = threading.Lock()

    def _load(self) -> ModuleType:
        if self._module is None:
            with self._lock:
                if self._module is None:
                    self._module = importlib.import_module(self._name)
        return self._module

    def __getattr__(self, attr: str):
        return getattr(self._load(), attr)

    def __repr__(self) -> str:
        state = "imported" if self._module is not None else "not imported yet"
        return f"<lazy module {self._name!r}, {state}>"


def lazy_module(name: str) -> LazyModule:
    """A stand-in for the module ``name`` (absolute) that imports it at first use."""
    return LazyModule(name)
