"""The registry of families, tasks and protocols, and their discovery.

Every sub-package of ``scenes`` is a family plug-in: importing it declares a
:class:`engine.family.Family` and registers its tasks, reader, protocols and report
section. Lookups import the families on first use (no family is named here), so adding a
family touches only its own folder.

``list_tasks("elvis/*")`` filters ids with glob patterns; ``get_task(id)`` returns one task
bound to its family's settings; ``resolve(pattern, settings)`` returns every matching task.
Settings are given with qualified names, ``{"jigsaw.images": "/data/photos"}``. Besides the
tasks registered in code, a family may declare a task source (``Family.task_source``): tasks
its settings provide, e.g. one per problem folder a setting names, found under the same
calls whenever the settings are given (or come from the environment).
"""
from __future__ import annotations

import fnmatch
import importlib
import pkgutil
from dataclasses import replace
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
_SOURCES: dict[str, tuple[Task, Callable, object]] = {}   # id prefix -> (template task, cases, description)
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


def add_source(prefix: str, template: Task, cases: Callable, description) -> None:
    owner = _ROOTS.setdefault(template.root, template.family)
    if owner != template.family:
        raise ValueError(f"task source {prefix!r} of family {template.family!r}: ids under "
                         f"{template.root + '/'!r} belong to {owner!r}")
    if prefix in _SOURCES and _SOURCES[prefix][0].fn is not template.fn:
        raise ValueError(f"task source {prefix!r} is registered twice")
    _SOURCES[prefix] = (template, cases, description)


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

def list_tasks(pattern: str | None = None, settings: dict | None = None) -> list[str]:
    """Sorted ids of the tasks matching the glob ``pattern`` (all when ``None``): those
    registered in code and those the task sources provide under ``settings`` (qualified
    names; defaults and the environment for the rest)."""
    _discover()
    ids = sorted({*_TASKS, *_provided(pattern, settings)})
    return ids if pattern is None else [t for t in ids if fnmatch.fnmatchcase(t, pattern)]


def representatives(parts: int, pattern: str | None = None) -> list[str]:
    """The first id (sorted) of each group of :func:`list_tasks` ``(pattern)`` sharing their
    first ``parts`` id parts: one task per family (``parts=1``), per family and kind (2), ..."""
    first: dict[str, str] = {}
    for t in list_tasks(pattern):
        first.setdefault("/".join(t.split("/")[:parts]), t)
    return list(first.values())


def _could_match(pattern: str | None, prefix: str) -> bool:
    """Whether glob ``pattern`` may match an id starting with ``prefix`` (so a source whose
    setting is unset or wrong is not read for unrelated patterns)."""
    if pattern is None:
        return True
    literal = pattern
    for ch in "*?[":
        literal = literal.split(ch, 1)[0]
    return prefix.startswith(literal) or literal.startswith(prefix)


def _source_of(task_id: str) -> str | None:
    """The prefix of the task source whose ids ``task_id`` falls under, or None."""
    return next((p for p in _SOURCES if task_id.startswith(p)), None)


def _provided(pattern: str | None, settings: dict | None, own: dict | None = None) -> dict[str, Task]:
    """The tasks the sources that ``pattern`` may match provide, unbound, by id; under
    ``settings`` (qualified, resolved) or ``own`` (a family's own names, as recorded)."""
    out = {}
    for prefix, (template, cases, description) in _SOURCES.items():
        if not _could_match(pattern, prefix):
            continue
        values = own if own is not None else _FAMILIES[template.family].resolve_settings(settings or {}, prefix)
        for tid, params in cases(values).items():
            if not tid.startswith(prefix):
                raise ValueError(f"task source {prefix!r} listed {tid!r}, outside its prefix")
            about = (description(**params) if callable(description) else description) or template.description
            out[tid] = replace(template, id=tid, params=dict(params), description=about)
    return out


def get_task(task_id: str, settings: dict | None = None) -> Task:
    """The task with this exact id, bound to its family's settings (``settings`` overrides
    the defaults), or :class:`UnknownTaskError` naming close matches."""
    task = _lookup(task_id, settings)
    family = _FAMILIES[task.family]
    return task.bind(family.resolve_settings(settings or {}, task_id)) if family.settings else task


def bound_task(task_id: str, settings: dict | None) -> Task:
    """The task with this id under ``settings`` exactly as a sample recorded them (its
    family's own names; ``None`` for a family without settings). Nothing is resolved from
    defaults or the environment, so this is the task that drew the sample (a task a source
    provides, recorded without settings, is looked up under the defaults and environment)."""
    if _source_of(task_id) is not None and task_id not in _TASKS and settings:
        _discover()
        task = _provided(task_id, None, own=settings).get(task_id) or _lookup(task_id)
    else:
        task = _lookup(task_id)
    return task.bind(settings) if settings else task


def family_of(task_id: str) -> str:
    """The family that owns ids under ``task_id``'s root (whether or not the task exists)."""
    _discover()
    root = task_id.split("/", 1)[0]
    if root not in _ROOTS:
        raise UnknownTaskError(f"no family owns task {task_id!r}; task roots: {', '.join(_roots())}")
    return _ROOTS[root]


def task_of(sample) -> Task:
    """The task that drew ``sample``, under the settings it was drawn with (a protocol that
    shows other samples of the same task, a training split or an exemplar, uses this)."""
    return bound_task(sample.task, sample.settings)


def _lookup(task_id: str, settings: dict | None = None) -> Task:
    _discover()
    if task_id in _TASKS:
        return _TASKS[task_id]
    prefix = _source_of(task_id)
    if prefix is not None:
        provided = _provided(task_id, settings)
        if task_id in provided:
            return provided[task_id]
        near = sorted(provided)[:5]
        hint = f"; tasks under {prefix!r} include {', '.join(near)}" if near else _source_hint([prefix])
        raise UnknownTaskError(f"unknown task {task_id!r}{hint}")
    root = task_id.split("/", 1)[0]
    near = [t for t in sorted(_TASKS) if t.startswith(root + "/")][:5]
    hint = f"; tasks of {root!r} include {', '.join(near)}" if near else f"; task roots: {', '.join(_roots())}"
    raise UnknownTaskError(f"unknown task {task_id!r}{hint}")


def _source_hint(prefixes: list[str]) -> str:
    """Where the tasks under ``prefixes`` come from: the settings that provide them."""
    how = []
    for prefix in prefixes:
        family = _FAMILIES[_SOURCES[prefix][0].family]
        for st in family.settings.values():
            if st.concerns(prefix):
                env = f" or ${st.env}" if st.env else ""
                how.append(f"--set {family.name}.{st.name}=VALUE{env}")
    return (f"; tasks under {', '.join(prefixes)} come from a setting ({'; '.join(how) or 'none'}), and its current "
            "value provides none that match")


def resolve(pattern: str, settings: dict | None = None) -> list[Task]:
    """Tasks matching ``pattern`` (an exact id or a glob) bound to ``settings``;
    :class:`UnknownTaskError` if none matches, :class:`UserError` for an unknown setting."""
    settings = check_settings(settings)
    _discover()
    provided = _provided(pattern, settings)
    ids = sorted(t for t in {*_TASKS, *provided} if fnmatch.fnmatchcase(t, pattern))
    if not ids:
        sources = [p for p in _SOURCES if _could_match(pattern, p)]
        extra = _source_hint(sources) if sources else ""
        raise UnknownTaskError(f"no registered task matches {pattern!r}{extra}; task roots: {', '.join(_roots())} "
                               f"(try 'procvis list' or a pattern such as '{_roots()[0]}/*')")
    out = []
    for t in ids:
        task = _TASKS.get(t) or provided[t]
        family = _FAMILIES[task.family]
        out.append(task.bind(family.resolve_settings(settings, t)) if family.settings else task)
    return out


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


__all__ = ["list_tasks", "get_task", "task_of", "bound_task", "family_of", "runners", "get_runner", "resolve",
           "families", "get_family", "check_settings", "run_settings", "protocols", "get_protocol", "check_fit", "UnknownTaskError"]
