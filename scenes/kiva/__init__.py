"""KiVA: procedural 3D objects rendered headless into RGBA sprites, the kids', adults' and
compositional visual-analogy trials (``kiva/``, ``kiva_adults/``, ``kiva_compositional/``),
the three-stage protocols and the per-stage report."""
from . import adults, compositional, protocol, trials  # noqa: F401  (register the trials, protocols, report)
from .family import FAMILY
from .objects import OBJECTS, build

__all__ = ["FAMILY", "OBJECTS", "build"]
