"""Benchmark families. Importing this package registers every family's tasks."""
from . import elvis, jigsaw, shapes  # noqa: F401
