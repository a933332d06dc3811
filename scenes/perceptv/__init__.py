"""Percept-V: 30 simple perception domains with problem sizes, the benchmark's prompts and
strict answer formats, its zero- and one-shot protocols and the per-skill report."""
from . import protocols, report, tasks  # noqa: F401  (register the tasks, protocols and report section)
from .common import DOMAINS, SKILL_NAMES, make, read_reply, size_instance
from .family import FAMILY
from .report import rows, tables

__all__ = ["FAMILY", "DOMAINS", "SKILL_NAMES", "make", "read_reply", "size_instance", "rows", "tables"]
