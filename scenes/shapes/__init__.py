"""``shapes/...``: a small demonstration family that exercises every part of the engine
(every primitive kind, several panels, all four answer types) until the benchmark
families land, and that the pixel checks in the tests can verify exactly."""
from . import tasks  # noqa: F401
