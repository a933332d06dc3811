"""ELVIS (Gestalt Vision): proximity, similarity, closure, continuity and symmetry rule tasks."""
from .factors import CATEGORIES, PRINCIPLES, Factors, enumerate_factors
from .tasks import LABELS, QUESTION, negative_kind, rule_text, split_indices

__all__ = ["CATEGORIES", "PRINCIPLES", "Factors", "enumerate_factors", "LABELS", "QUESTION", "negative_kind",
           "rule_text", "split_indices"]
