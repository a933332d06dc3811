"""The ``elvis`` family's declaration."""
from engine.family import Family

FAMILY = Family("elvis", "ELVIS / Gestalt Vision: 3,388 positive/negative rule tasks over proximity, similarity, "
                         "closure, continuity and symmetry.")
