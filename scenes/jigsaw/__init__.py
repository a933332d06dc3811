"""``jigsaw/...``: Jigsaw-Puzzles spatial tasks (missing piece, localization, connection,
anomaly, order restoration and generation) on photographs from a folder, a local Hugging
Face dataset, or the generated default set."""
from . import tasks  # noqa: F401
from .sources import FolderSource, GeneratedSource, HFSource, SourceError  # noqa: F401
from .features import ModelFeatures  # noqa: F401
from .tasks import use_features, use_source  # noqa: F401
