"""The one exception type for mistakes a user can fix.

A :class:`UserError` names the bad value and what is allowed; the command line prints its
first line as ``procvis: error: ...`` with exit code 2. Every other exception is a bug in
procvis (or in a plug-in) and keeps its traceback. It subclasses ``ValueError`` so Python
callers that validate arguments the usual way keep working.
"""
from __future__ import annotations


class UserError(ValueError):
    """A bad task pattern, option value, setting, file or folder: fixable by the user."""


class UnknownTaskError(UserError):
    """A task id or pattern that names no registered task."""


class OutputError(UserError):
    """An output folder that cannot be written, or that holds a run with other settings."""
