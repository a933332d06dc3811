"""Benchmark families. Each sub-package is a plug-in that ``engine.registry`` finds and
imports: it declares an ``engine.family.Family`` and registers its tasks, reader, protocols
and report section on it."""
