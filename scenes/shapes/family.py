"""The ``shapes`` family's declaration."""
from engine.family import Family

FAMILY = Family("shapes", "A small demonstration family that exercises every part of the engine (every primitive "
                          "kind, several panels, all four answer types) and that pixel checks verify exactly.")
