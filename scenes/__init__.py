"""Benchmark families. Importing this package registers every family's tasks."""
from . import bongard, elvis, jigsaw, perceptv, shapes  # noqa: F401
