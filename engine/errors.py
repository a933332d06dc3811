"""The one exception type for mistakes a user can fix (and the one for a stopped run).

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
    """An output folder that cannot be written, holds a run with other settings or files procvis
    did not write, is being written by another run, or sits on a full disk."""


class Interrupted(KeyboardInterrupt):
    """A run stopped by a signal (``signum``: SIGINT, SIGTERM or SIGHUP) after it ended its
    workers and removed its temporary files; the same command resumes it."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = int(signum)

    def __str__(self) -> str:
        import signal

        return f"interrupted by {signal.Signals(self.signum).name}"
