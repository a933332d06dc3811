"""The ``perceptv`` family's declaration."""
from engine.family import Family

from .common import INSTANCES, NATIVE, SIZES, read_reply

FAMILY = Family("perceptv", "Percept-V: 30 simple perception domains with problem sizes 1..20 and strict answer "
                            "formats; perceptv_fixed/ removes three of the reference's shortcuts.", reader=read_reply,
                block=INSTANCES * SIZES, native_size=NATIVE)


@FAMILY.chance
def _chance(task):
    """The cached chance row (``chance.py``: the readers' acceptance sets over the size mix)."""
    from .chance import chance_of

    return chance_of(task)

# The paper defines these answers by the problem size n (the prompt's own count): a model
# told nothing but n could answer them, by the benchmark's design.
for _domain in ("change_colour", "count_coloured_circles", "counting_circles", "counting_locations",
                "vanishing_objects", "mirror_image", "water_image"):
    FAMILY.exempt(f"perceptv/{_domain}", "predictable", "the paper's gold answer is the problem size n")


# What the answer counts: drawn objects (and, where the prompt names one, a colour). Counting
# them is the skill these domains test, so the audit's rule-blind probe leaves the object and
# colour counts out (a probe that counts blobs is not a shortcut around counting); likewise
# the positions of objects relative to one another where they are the question.
_COUNTED = {"change_colour": {"count", "color"}, "circle_boxes": {"count"}, "circle_location": {"count"},
            "count_coloured_circles": {"count", "color"}, "counting_circles": {"count"},
            "counting_locations": {"count"}, "counting_shapes": {"count", "shape"}, "graph_counting": {"count"},
            "match_outline": {"count", "shape"}, "match_shadow": {"count", "shape"},
            "mirror_image": {"count"}, "vanishing_objects": {"count"}, "water_image": {"count"},
            # inside or not is where the dot sits relative to the circles' centres and sizes
            "inside_circles": {"position"}}


@FAMILY.concept
def _counted(task, kind):
    return _COUNTED.get(task.id.rsplit("/", 1)[-1], set())
