"""A record's metadata as JSON text, fast where a family hands over columns.

A dataset row stores ``meta`` as the text ``json.dumps(meta, sort_keys=True)`` gives. Most
of an ELVIS record is its list of objects (about 24 dicts of nine fields): building those
dicts and encoding them took about a quarter of a worker's time per image. A family may
instead put :class:`Rows` of its columns in ``meta``: a :class:`JSONText` holding the same
text, made from the columns with one format per row, that :func:`encode` splices in place.
The bytes written are those of the dicts (a test compares them for every ELVIS category).
"""
from __future__ import annotations

import json

import numpy as np

_encode = json.JSONEncoder(sort_keys=True, check_circular=False).encode


class JSONText(str):
    """Text that is already JSON: :func:`encode` writes it in place of the value it stands for."""


def encode(meta: dict) -> str:
    """``json.dumps(meta, sort_keys=True)`` (no cycle check), with every top-level value that
    is a :class:`JSONText` written as its text."""
    spliced = {k: v for k, v in meta.items() if type(v) is JSONText}
    if not spliced:
        return _encode(meta)
    marks = {k: f"\0procvis-json-{k}\0" for k in spliced}
    text = _encode({**meta, **marks})
    for k, mark in marks.items():
        quoted = _encode(mark)
        if text.count(quoted) != 1:           # only a value holding the mark's NUL-framed text could do this
            raise ValueError(f"meta[{k!r}]: its place in the JSON text is not unique")
        text = text.replace(quoted, spliced[k])
    return text


class Rows:
    """The JSON text of rows of columns ``[B, K, ...]`` (numpy): sample ``b`` has the rows
    ``(b, k)`` for ``k < counts[b]``, row ``(b, k)`` the dict ``{name: column[b, k]}``.
    :meth:`text` gives sample ``b``'s list exactly as :func:`encode` writes the list of those
    dicts built from ``column[b, k].tolist()`` (keys sorted). The columns are read once for
    all samples, only where there are rows: finite float and integer values formatted as
    json formats them, booleans and texts encoded once per distinct value, any other value
    one by one."""

    def __init__(self, columns: dict[str, np.ndarray], counts: np.ndarray):
        counts = np.asarray(counts, np.int64)
        odd = [k for k in columns if not isinstance(k, str)]
        if odd:
            raise TypeError(f"column names must be str, not {odd[0]!r}")
        for name, a in columns.items():
            if a.ndim < 2 or a.shape[0] != len(counts) or (len(counts) and not 0 <= counts.min() <= counts.max()
                                                           <= a.shape[1]):
                raise ValueError(f"column {name!r} of shape {list(a.shape)} does not hold [B, K, ...] with "
                                 f"B = {len(counts)} and counts 0..K")
        ends = np.cumsum(counts)
        self._bounds = list(zip((ends - counts).tolist(), ends.tolist()))
        parts, self._slots = [], []
        for name in sorted(columns):
            a = columns[name]
            fmt, slots = _column(a[np.arange(a.shape[1])[None, :] < counts[:, None]])
            parts.append(f"{_encode(name).replace('%', '%%')}: {fmt}")    # a name's % is text, not a field
            self._slots += slots
        self._template = "{" + ", ".join(parts) + "}"

    def text(self, b: int) -> JSONText:
        """Sample ``b``'s rows as a JSON list: :class:`JSONText`."""
        start, end = self._bounds[b]
        if not self._slots:                                   # no value to fill in: every row the same
            return JSONText("[" + ", ".join([self._template % ()] * (end - start)) + "]")
        values = [slot[start:end] for slot in self._slots]
        return JSONText("[" + ", ".join([self._template % row for row in zip(*values)]) + "]")


def _column(a: np.ndarray) -> tuple[str, list]:
    """``(format of one row's value, its slots)`` of the rows ``a`` ``[N, ...]`` of a column
    for :class:`Rows`: each slot a list over the rows of what fills one of the format's
    fields."""
    kind = a.dtype.kind
    if kind in "iuf" and a.dtype.itemsize <= 8 and a.ndim <= 2 and (kind != "f" or np.isfinite(a).all()):
        one = "%d" if kind in "iu" else "%r"          # as json formats ints and finite floats
        if a.ndim == 1:
            return one, [a.tolist()]
        return "[" + ", ".join([one] * a.shape[1]) + "]", [a[:, j].tolist() for j in range(a.shape[1])]
    values = a.tolist()
    if a.ndim == 1 and (kind == "b" or {type(v) for v in values} <= {str, type(None)}):   # each encoded once
        table = {v: _encode(v) for v in set(values)}
        return "%s", [[table[v] for v in values]]
    return "%s", [[_encode(v) for v in values]]                              # anything else, one by one
