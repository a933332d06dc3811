"""The ``kiva`` family's declaration."""
from engine.family import Family

from .reading import read_choice

FAMILY = Family("kiva", "KiVA: visual analogies on rendered 3D objects (colour, size, number, rotation, reflection) "
                        "in kids', adults' and compositional variants, asked in three stages.", reader=read_choice)
