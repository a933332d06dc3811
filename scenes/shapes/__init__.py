"""``shapes/...``: a small demonstration family that exercises every part of the engine
(every primitive kind, several panels, all four answer types) and that the pixel checks in
the tests can verify exactly."""
from . import tasks  # noqa: F401  (registers the tasks)
from .family import FAMILY

__all__ = ["FAMILY"]
