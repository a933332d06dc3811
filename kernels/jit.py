"""The decorator of the compiled sampling kernels (disc clearance, exact pair statistics,
force-directed layout): numba's ``njit``, cached on disk, releasing the GIL, with IEEE
arithmetic as numpy's (no fast-math), so that a kernel gives what the numpy expression it
replaces gives, bit for bit.

Where numba is not installed (an evaluation harness that only scores replies, with
``engine.readers``, imports every family to find its reader) the kernel modules still
import; calling a kernel there raises :class:`kernels.errors.SetupError` naming numba.
"""
from __future__ import annotations

import functools

from .errors import SetupError

try:
    import numba
except ImportError:          # scoring needs no drawing
    numba = None


def exact(fn):
    """``fn`` compiled by numba (see the module docstring), or where numba is missing a
    stand-in that raises :class:`SetupError` when called."""
    if numba is not None:
        return numba.njit(cache=True, nogil=True, fastmath=False)(fn)

    @functools.wraps(fn)
    def missing(*args, **kwargs):
        raise SetupError(f"{fn.__module__}.{fn.__name__} is compiled with numba, which is not installed here: "
                         "pip install numba (drawing needs it; scoring replies does not)")
    return missing
