"""The kernels' one user-facing failure: the machine lacks something a kernel needs (a font
for the glyph atlas, a headless GL library). The command line prints it in one line."""
from __future__ import annotations


class SetupError(RuntimeError):
    """A missing system font or library, named with how to install it."""
