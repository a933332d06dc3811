"""ELVIS (Gestalt Vision): proximity, similarity, closure, continuity and symmetry rule
tasks, the paper's two-stage protocols and the per-principle report."""
from . import protocol, report, runners  # noqa: F401  (register the protocols, report section and runners)
from .factors import CATEGORIES, PRINCIPLES, Factors, enumerate_factors
from .family import FAMILY
from .protocol import induction_prompt, parse_label
from .report import f1_curve, grouped, task_metrics
from .tasks import LABELS, QUESTION, negative_kind, rule_text, split_indices

__all__ = ["FAMILY", "CATEGORIES", "PRINCIPLES", "Factors", "enumerate_factors", "LABELS", "QUESTION",
           "negative_kind", "rule_text", "split_indices", "induction_prompt", "parse_label", "f1_curve", "grouped",
           "task_metrics"]
