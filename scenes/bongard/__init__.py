"""Bongard problems: procedural concept problems, collages, and a rule-based judge."""
from . import tasks  # noqa: F401  (registers the problems)
from .concepts import CATEGORIES, CONCEPTS, Concept
from .judge import judge
from .tasks import collage, collage_pixels

__all__ = ["CATEGORIES", "CONCEPTS", "Concept", "judge", "collage", "collage_pixels"]
