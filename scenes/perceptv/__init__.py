"""Percept-V: 30 simple perception domains with problem sizes, the benchmark's prompts and
strict answer formats."""
from . import colours, counting, grids, rows  # noqa: F401  (registers the domains)
from .common import DOMAINS, SKILL_NAMES, make, size_instance

__all__ = ["DOMAINS", "SKILL_NAMES", "make", "size_instance"]
