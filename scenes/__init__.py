"""Benchmark families. Importing this package registers every family's tasks."""
from . import shapes  # noqa: F401
