"""``jigsaw/...``: Jigsaw-Puzzles spatial tasks (missing piece, localization, connection,
anomaly, order restoration and generation) on photographs from a folder, a local Hugging
Face dataset, or the generated default set, chosen by the family's settings."""
from . import puzzle, report, tasks  # noqa: F401  (register the tasks, the seam solver's puzzles, the report)
from .family import FAMILY

__all__ = ["FAMILY"]
