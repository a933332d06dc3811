"""Benchmark families. Importing this package registers every family's tasks."""
from . import jigsaw, shapes  # noqa: F401
