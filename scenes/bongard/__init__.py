"""Bongard problems: procedural concept problems in classic and aerial styles, collages,
the seed's five prompting strategies, a rule-based judge and the model judge."""
from . import protocols, report, tasks  # noqa: F401  (register the problems, strategies and report section)
from .concepts import CATEGORIES, CONCEPTS, Concept
from .family import FAMILY
from .judge import judge, judge_agreement, judge_prompt, model_judge
from .protocols import STRATEGIES
from .tasks import collage, collage_from_folders, collage_pixels

__all__ = ["FAMILY", "CATEGORIES", "CONCEPTS", "Concept", "judge", "judge_agreement", "judge_prompt", "model_judge",
           "STRATEGIES", "collage", "collage_from_folders", "collage_pixels"]
