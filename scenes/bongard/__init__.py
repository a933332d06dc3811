"""Bongard problems: procedural concept problems in classic and aerial styles, real problems
from folders (:mod:`scenes.bongard.folders`), collages, the seed's five prompting
strategies, a rule-based judge and the model judge."""
from . import attributes, grading, protocols, real, report, tasks  # noqa: F401  (they register on FAMILY)
from .concepts import CATEGORIES, CONCEPTS, Concept
from .family import FAMILY
from .judge import judge, judge_agreement, judge_prompt, model_judge
from .protocols import STRATEGIES
from .tasks import collage, collage_from_folders, collage_pixels

__all__ = ["FAMILY", "CATEGORIES", "CONCEPTS", "Concept", "judge", "judge_agreement", "judge_prompt", "model_judge",
           "STRATEGIES", "collage", "collage_from_folders", "collage_pixels"]
