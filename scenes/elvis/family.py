"""The ``elvis`` family's declaration and its one setting: the share of negatives that break
the principle (the rest keep it and break an attribute rule)."""
from fractions import Fraction

from engine.errors import UserError
from engine.family import Family, Setting

PRINCIPLE_SHARE = "2/3"


def principle_share(value) -> str:
    """``value`` (``"2/3"``, ``0.5``, ...) as an exact fraction in [0, 1], written ``"p/q"``."""
    try:
        share = Fraction(str(value).strip()).limit_denominator(1000)
    except (ValueError, ZeroDivisionError):
        share = None
    if share is None or not 0 <= share <= 1:
        raise UserError(f"elvis.principle_share={value!r}: expected a fraction from 0 to 1, e.g. 2/3 or 0.5")
    return f"{share.numerator}/{share.denominator}"


FAMILY = Family("elvis", "ELVIS / Gestalt Vision: 3,388 positive/negative rule tasks over proximity, similarity, "
                         "closure, continuity and symmetry.",
                settings=[Setting("principle_share", "share of negatives that break the principle (the rest break an "
                                  "attribute rule); spread evenly, so every split of 3 per class holds 2 and 1",
                                  PRINCIPLE_SHARE, env="PROCVIS_ELVIS_PRINCIPLE_SHARE", check=principle_share)])

_PROPERTIES = {"color", "size", "shape", "count"}


_COLOUR_GROUPS = {"fixed_number", "palette"}     # similarity categories whose groups are made by colour
_OVERLAPPING = {"overlap_splines"}               # objects overlap by design: shape and size decide what merges


@FAMILY.concept
def _rule_properties(task, kind):
    """An attribute negative changes a relevant property (a colour rule's negative has other
    colours), so its statistics are the rule's. A principle negative keeps every attribute,
    except where colour makes the groups: there the colours are what the principle is about
    (a negative has one colour group more or fewer). Where objects overlap by design, a shape
    or size rule also states how they merge into blobs."""
    principle = {"color"} if task.params["category"] in _COLOUR_GROUPS else set()
    if kind == "principle":
        return principle
    rel = set(task.params["rel"]) & _PROPERTIES
    if kind is None:                  # any sample: what either kind of negative may change
        rel |= principle
    if task.params["category"] in _OVERLAPPING and rel & {"shape", "size"}:
        rel.add("overlap")
    return rel
