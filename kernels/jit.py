"""The decorator of the compiled sampling kernels (disc clearance, exact pair statistics,
force-directed layout): numba's ``njit``, cached on disk, releasing the GIL, with IEEE
arithmetic as numpy's (no fast-math), so that a kernel gives what the numpy expression it
replaces gives, bit for bit.

Where numba cannot be imported (an evaluation harness that only scores replies, with
``engine.readers``, imports every family to find its reader, and need not install numba)
the kernel modules still import; calling a kernel there raises
:class:`kernels.errors.SetupError` naming numba and why it could not be imported. Where
numba is installed it is imported with the kernels.
"""
from __future__ import annotations

import functools

from .errors import SetupError

try:
    import numba
    _WHY = ""
except ImportError as e:     # scoring needs no drawing; a broken numba is told apart by its message
    numba, _WHY = None, str(e)


def exact(fn=None, *, inline: bool = False, ieee_division: bool = False):
    """``fn`` compiled by numba (see the module docstring), or where numba is missing a
    stand-in that raises :class:`SetupError` when called. ``@exact(inline=True)``: a helper
    compiled into each kernel that calls it (a call passing arrays counts references on each,
    which in a loop over bytes cost more than the work). ``ieee_division=True``: a float
    division by zero gives inf or NaN, as numpy's, instead of raising ``ZeroDivisionError``."""
    if fn is None:
        return functools.partial(exact, inline=inline, ieee_division=ieee_division)
    if numba is not None:
        return numba.njit(cache=True, nogil=True, fastmath=False, inline="always" if inline else "never",
                          error_model="numpy" if ieee_division else "python")(fn)

    @functools.wraps(fn)
    def missing(*args, **kwargs):
        raise SetupError(f"{fn.__module__}.{fn.__name__} is compiled with numba, which cannot be imported here "
                         f"({_WHY}): pip install numba (drawing needs it; scoring replies does not)")
    return missing
