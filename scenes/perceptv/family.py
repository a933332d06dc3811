"""The ``perceptv`` family's declaration."""
from engine.family import Family

from .common import read_reply

FAMILY = Family("perceptv", "Percept-V: 30 simple perception domains with problem sizes 1..20 and strict answer "
                            "formats; perceptv_fixed/ removes three of the reference's shortcuts.", reader=read_reply)

# The paper defines these answers by the problem size n (the prompt's own count): a model
# told nothing but n could answer them, by the benchmark's design.
for _domain in ("change_colour", "count_coloured_circles", "counting_circles", "counting_locations",
                "vanishing_objects", "mirror_image", "water_image"):
    FAMILY.exempt(f"perceptv/{_domain}", "predictable", "the paper's gold answer is the problem size n")
