"""Modules imported on first use.

Families are imported to list tasks and protocols (``procvis list``, ``--help``), which
must not load torch. A family module that needs a torch-backed module (the renderer, the
sprite kernels) binds it with :func:`lazy_module` at the top and uses it as usual; the
module is executed at its first attribute access. This is the standard library's
``importlib.util.LazyLoader`` recipe; the import-graph test counts these as imports.
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
from types import ModuleType


def lazy_module(name: str) -> ModuleType:
    """The module ``name`` (absolute), executed when one of its attributes is first read.
    An already imported module is returned as it is."""
    if name in sys.modules:
        return sys.modules[name]
    parent, _, child = name.rpartition(".")
    if parent:
        importlib.import_module(parent)
    spec = importlib.util.find_spec(name)
    if spec is None:
        raise ModuleNotFoundError(f"no module named {name!r}", name=name)
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    if parent:
        setattr(sys.modules[parent], child, module)
    return module
