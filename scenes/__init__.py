"""Benchmark families. Importing this package registers every family's tasks."""
from . import bongard, elvis, jigsaw, kiva, perceptv, shapes  # noqa: F401
