"""The ``perceptv`` family's declaration."""
from engine.family import Family

from .common import read_reply

FAMILY = Family("perceptv", "Percept-V: 30 simple perception domains with problem sizes 1..20 and strict answer "
                            "formats; perceptv_fixed/ removes three of the reference's shortcuts.", reader=read_reply)
