"""The ``elvis`` family's declaration."""
from engine.family import Family

FAMILY = Family("elvis", "ELVIS / Gestalt Vision: 3,388 positive/negative rule tasks over proximity, similarity, "
                         "closure, continuity and symmetry.")

_PROPERTIES = {"color", "size", "shape", "count"}


@FAMILY.concept
def _rule_properties(task, kind):
    """An attribute negative changes a relevant property (a colour rule's negative has other
    colours), so its statistics are the rule's; a principle negative keeps every attribute."""
    return set() if kind == "principle" else set(task.params["rel"]) & _PROPERTIES
