"""The ``bongard`` family's declaration."""
from engine.family import Family

from .judge import read_answer

FAMILY = Family("bongard", "Bongard problems: 6 vs 6 concept problems in classic and aerial styles, collages, the "
                           "seed's five prompting strategies and a judge.", reader=read_answer)
