"""The ``shapes`` family's declaration."""
from engine.family import Family

FAMILY = Family("shapes", "A small demonstration family that exercises every part of the engine (every primitive "
                          "kind, several panels, all four answer types) and that pixel checks verify exactly.")

FAMILY.exempt("shapes/count/*", "probe", "the answer is the number of shapes drawn, which a blob count states")
