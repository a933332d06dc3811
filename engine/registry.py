"""The registry of families, tasks and protocols, and their discovery.

Every sub-package of ``scenes`` is a family plug-in: importing it declares a
:class:`engine.family.Family` and registers its tasks, reader, protocols and report
section. Lookups import the families on first use (no family is named here), so adding a
family touches only its own folder.

``list_tasks("elvis/*")`` filters ids with glob patterns; ``get_task(id)`` returns one task
bound to its family's settings; ``resolve(pattern, settings)`` returns every matching task.
Settings are given with qualified names, ``{"jigsaw.images": "/data/photos"}``.
"""
from __future__ import annotations

import fnmatch
import importlib
import pkgutil
from typing import TYPE_CHECKING, Callable

from .errors import UnknownTaskError, UserError
from .protocol import Direct, Protocol

if TYPE_CHECKING:
    from .family import Family
    from .task import Task

PLUGINS = "scenes"           # the package whose sub-packages are the families

_FAMILIES: dict[str, Family] = {}
_TASKS: dict[str, Task] = {}
_ROOTS: dict[str, str] = {}  # first part of a task id -> the family that owns it
_PROTOCOLS: dict[str, type[Protocol]] = {Direct.name: Direct}
_RUNNERS: dict[str, tuple[Callable, str]] = {}   # --model NAME[:ARG] -> (factory, help)
_discovered = False
_discovering = False


# ---------------------------------------------------------------- registration (engine.family calls these)

def add_family(family: Family) -> None:
    if family.name in _FAMILIES and _FAMILIES[family.name] is not family:
        raise ValueError(f"family {family.name!r} is declared twice")
    _FAMILIES[family.name] = family


def add_task(task: Task) -> None:
    owner = _ROOTS.setdefault(task.root, task.family)
    if owner != task.family:
        raise ValueError(f"task {task.id!r} of family {task.family!r}: ids under {task.root + '/'!r} belong to {owner!r}")
    if task.id in _TASKS and _TASKS[task.id].fn is not task.fn:
        raise ValueError(f"task id {task.id!r} is registered twice")
    _TASKS[task.id] = task


def add_protocol(cls: type[Protocol]) -> None:
    if cls.name in _PROTOCOLS and _PROTOCOLS[cls.name] is not cls:
        raise ValueError(f"protocol {cls.name!r} is registered twice")
    _PROTOCOLS[cls.name] = cls


def add_runner(name: str, factory: Callable, help: str) -> None:
    if name in _RUNNERS and _RUNNERS[name][0] is not factory:
        raise ValueError(f"runner {name!r} is registered twice")
    _RUNNERS[name] = (factory, help)


def _discover() -> None:
    """Import every family plug-in once. A plug-in that fails to import raises here and is
    retried by the next lookup; a lookup made while the plug-ins import (a family module
    asking the registry at import time) sees what is registered so far."""
    global _discovered, _discovering
    if _discovered or _discovering:
        return
    _discovering = True
    try:
        package = importlib.import_module(PLUGINS)
        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
            if info.ispkg:
                importlib.import_module(f"{PLUGINS}.{info.name}")
        _discovered = True
    finally:
        _discovering = False


# ---------------------------------------------------------------- families and settings

def families() -> list[str]:
    """Names of the family plug-ins."""
    _discover()
    return sorted(_FAMILIES)


def get_family(name: str) -> Family:
    _discover()
    if name not in _FAMILIES:
        raise UserError(f"unknown family {name!r}; families: {', '.join(sorted(_FAMILIES))}")
    return _FAMILIES[name]


def panel_size(task: Task, size: int | None) -> int:
    """``size`` when given, else the panel side ``task``'s family renders at natively."""
    return int(size) if size is not None else get_family(task.family).native_size


def check_settings(settings: dict | None) -> dict:
    """``settings`` (qualified names ``family.setting``) checked: an unknown family or
    setting is a :class:`UserError` naming what exists. Returns them as a new dict."""
    _discover()
    out = dict(settings or {})
    for key in out:
        fam, _, name = key.partition(".")
        if fam not in _FAMILIES or name not in _FAMILIES[fam].settings:
            known = [f"{f.name}.{s}" for f in _FAMILIES.values() for s in f.settings]
            raise UserError(f"unknown setting {key!r}; settings: {', '.join(sorted(known)) or 'none'}")
    return out


def run_settings(tasks: list[Task]) -> dict:
    """The complete settings of ``tasks``' families, qualified (what a run's identity records)."""
    out = {}
    for t in tasks:
        for name, value in (t.settings or {}).items():
            out[f"{t.family}.{name}"] = value
    return dict(sorted(out.items()))


# ---------------------------------------------------------------- tasks

def list_tasks(pattern: str | None = None) -> list[str]:
    """Sorted ids of the registered tasks matching the glob ``pattern`` (all when ``None``)."""
    _discover()
    ids = sorted(_TASKS)
    return ids if pattern is None else [t for t in ids if fnmatch.fnmatchcase(t, pattern)]


def get_task(task_id: str, settings: dict | None = None) -> Task:
    """The task with this exact id, bound to its family's settings (``settings`` overrides
    the defaults), or :class:`UnknownTaskError` naming close matches."""
    task = _lookup(task_id)
    family = _FAMILIES[task.family]
    return task.bind(family.resolve_settings(settings or {})) if family.settings else task


def bound_task(task_id: str, settings: dict | None) -> Task:
    """The task with this id under ``settings`` exactly as a sample recorded them (its
    family's own names; ``None`` for a family without settings). Nothing is resolved from
    defaults or the environment, so this is the task that drew the sample."""
    task = _lookup(task_id)
    return task.bind(settings) if settings else task


def task_of(sample) -> Task:
    """The task that drew ``sample``, under the settings it was drawn with (a protocol that
    shows other samples of the same task, a training split or an exemplar, uses this)."""
    return bound_task(sample.task, sample.settings)


def _lookup(task_id: str) -> Task:
    _discover()
    if task_id not in _TASKS:
        root = task_id.split("/", 1)[0]
        near = [t for t in sorted(_TASKS) if t.startswith(root + "/")][:5]
        hint = f"; tasks of {root!r} include {', '.join(near)}" if near else f"; task roots: {', '.join(_roots())}"
        raise UnknownTaskError(f"unknown task {task_id!r}{hint}")
    return _TASKS[task_id]


def resolve(pattern: str, settings: dict | None = None) -> list[Task]:
    """Tasks matching ``pattern`` (an exact id or a glob) bound to ``settings``;
    :class:`UnknownTaskError` if none matches, :class:`UserError` for an unknown setting."""
    settings = check_settings(settings)
    ids = list_tasks(pattern)
    if not ids:
        raise UnknownTaskError(f"no registered task matches {pattern!r}; task roots: {', '.join(_roots())} "
                               f"(try 'procvis list' or a pattern such as '{_roots()[0]}/*')")
    return [get_task(t, settings) for t in ids]


def _roots() -> list[str]:
    return sorted(_ROOTS)


# ---------------------------------------------------------------- runners

def runners() -> dict[str, str]:
    """The runners families register (``--model NAME`` or ``NAME:ARG``), with their help."""
    _discover()
    return {n: h for n, (_, h) in sorted(_RUNNERS.items())}


def get_runner(model: str, **options):
    """The runner a family registered for ``model`` (``NAME`` or ``NAME:ARG``; ARG goes to the
    factory as its first argument, ``None`` when absent), or ``None`` if no family has it."""
    _discover()
    name, _, arg = model.partition(":")
    if name not in _RUNNERS:
        return None
    return _RUNNERS[name][0](arg or None, **options)


# ---------------------------------------------------------------- protocols

def protocols() -> dict[str, type[Protocol]]:
    """Every protocol by name: ``direct`` and the families' own."""
    _discover()
    return dict(sorted(_PROTOCOLS.items()))


def get_protocol(name: str) -> Protocol:
    """A fresh instance of protocol ``name``, or a :class:`UserError` listing them."""
    known = protocols()
    if name not in known:
        raise UserError(f"--protocol {name!r} is not a protocol; protocols: {', '.join(known)}")
    return known[name]()


def check_fit(protocol: Protocol, tasks: list[Task]) -> None:
    """A :class:`UserError` when ``protocol`` belongs to another family than one of ``tasks``."""
    if protocol.family is None:
        return
    other = [t for t in tasks if t.family != protocol.family]
    if other:
        fits = [n for n, p in protocols().items() if p.family in (None, other[0].family)]
        raise UserError(f"--protocol {protocol.name!r} is for {protocol.family} tasks, not {other[0].id!r}; "
                        f"protocols for {other[0].family}: {', '.join(fits)}")


__all__ = ["list_tasks", "get_task", "task_of", "bound_task", "runners", "get_runner", "resolve", "families",
           "get_family", "check_settings", "run_settings", "protocols", "get_protocol", "check_fit", "UnknownTaskError"]
