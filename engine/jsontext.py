"""A record's metadata as JSON text, fast where a family hands over columns.

A dataset row stores ``meta`` as the text ``json.dumps(meta, sort_keys=True)`` gives. Most
of an ELVIS record is its list of objects (about 24 dicts of nine fields): building those
dicts and encoding them took about a quarter of a worker's time per image. A family may
instead put :class:`Rows` of its columns in ``meta``: a :class:`JSONText` holding the same
text, written from the columns by one compiled pass, that :func:`encode` splices in place.
The bytes written are those of the dicts (a test compares them for every ELVIS category).
"""
from __future__ import annotations

import json

import numpy as np

_encode = json.JSONEncoder(sort_keys=True, check_circular=False).encode
try:        # the C encoder ``_encode`` makes on every call, made once: about 2 us a call less
    _chunks = json.encoder.c_make_encoder(None, json.JSONEncoder().default, json.encoder.encode_basestring_ascii,
                                          None, ": ", ", ", True, False, True)
except (AttributeError, TypeError):     # an interpreter without json's C speedups
    _chunks = None


def _text(value) -> str:
    """``_encode(value)`` for a dict or list."""
    return "".join(_chunks(value, 0)) if _chunks is not None else _encode(value)


class JSONText(str):
    """Text that is already JSON: :func:`encode` writes it in place of the value it stands for."""


def encode(meta: dict) -> str:
    """``json.dumps(meta, sort_keys=True)`` (no cycle check), with every top-level value that
    is a :class:`JSONText` written as its text. The plain values between two spliced ones
    (in key order) are encoded together, one call for each such run. Where a key is not a
    str (json orders those before it makes them text) each JSONText is parsed and encoded
    with the rest instead."""
    if not any(type(v) is JSONText for v in meta.values()):
        return _text(meta)
    if not all(type(k) is str for k in meta):    # json orders other keys before it makes them text
        return _encode({k: json.loads(v) if type(v) is JSONText else v for k, v in meta.items()})
    parts, run = [], {}
    for k in sorted(meta):
        v = meta[k]
        if type(v) is not JSONText:
            run[k] = v
            continue
        if run:
            parts.append(_text(run)[1:-1])
            run = {}
        parts.append(_encode(k) + ": " + v)
    if run:
        parts.append(_text(run)[1:-1])
    return "{" + ", ".join(parts) + "}"


class Rows:
    """The JSON text of rows of columns ``[B, K, ...]`` (numpy): sample ``b`` has the rows
    ``(b, k)`` for ``k < counts[b]``, row ``(b, k)`` the dict ``{name: column[b, k]}``.
    :meth:`text` gives sample ``b``'s list exactly as :func:`encode` writes the list of those
    dicts built from ``column[b, k].tolist()`` (keys sorted). The columns are read once for
    all samples, only where there are rows, and every sample's text is written by one
    compiled pass (:func:`kernels.json_rows.write_rows`): integers, and floats that are short
    decimals (:func:`kernels.json_rows.decimal_digits`), as numbers; booleans and texts
    encoded once per distinct value; any other value encoded one by one."""

    def __init__(self, columns: dict[str, np.ndarray], counts: np.ndarray):
        from kernels.json_rows import write_rows

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
        fields = _Fields()
        pieces = ["{"]                                  # a row's literal text around its fields
        for j, name in enumerate(sorted(columns)):
            a = columns[name]
            pieces[-1] += (", " if j else "") + _encode(name) + ": "
            fields.column(a[np.arange(a.shape[1])[None, :] < counts[:, None]], pieces)
        pieces[-1] += "}"
        numbers, decimals, codes, table = fields.arrays(int(ends[-1]) if len(ends) else 0)
        self._text, ends = write_rows(pieces, numbers, decimals, codes, table, np.stack([ends - counts, ends], 1))
        self._bounds = list(zip([0] + ends[:-1].tolist(), ends.tolist()))

    def text(self, b: int) -> JSONText:
        """Sample ``b``'s rows as a JSON list: :class:`JSONText`."""
        start, end = self._bounds[b]
        return JSONText(self._text[start:end].tobytes().decode("ascii"))


DECIMALS = (6, 9, 12, 15, 3, 0)     # places tried for a float column's numbers: rounded records first, then
#                                     larger values (fewer places keep |k| < 10**15)


class _Fields:
    """The fields of a row template being built: per field the numbers, their decimals and
    the codes of texts written instead (see :func:`kernels.json_rows.write_rows`)."""

    def __init__(self):
        self.numbers, self.decimals, self.codes = [], [], []
        self.table: dict[str, int] = {}

    def column(self, a: np.ndarray, pieces: list[str]) -> None:
        """Add the fields of the rows ``a`` ``[N, ...]`` of one column, the template's
        literal text around them to ``pieces`` (whose last item is the text before them)."""
        kind = a.dtype.kind
        if kind in "iuf" and a.dtype.itemsize <= 8 and a.ndim <= 2:
            if a.ndim == 1:
                self.number(a)
                pieces.append("")
                return
            pieces[-1] += "["
            for j in range(a.shape[1]):
                pieces[-1] += ", " if j else ""
                self.number(a[:, j])
                pieces.append("")
            pieces[-1] += "]"
            return
        if a.ndim == 1 and kind in "bU":                  # each distinct value encoded once
            distinct, inverse = np.unique(a, return_inverse=True)
            self.texts(self.coded([_encode(v) for v in distinct.tolist()])[inverse.reshape(-1)])
        else:
            values = a.tolist()
            try:
                at = {v: j for j, v in enumerate(dict.fromkeys(values))} if a.ndim == 1 else {}
            except TypeError:                               # a list or dict among them
                at = {}
            # texts and None each encoded once; a value equal to a text (``==``) and kept in
            # its place is a str too, whose JSON is the same
            if at and all(type(v) is str or v is None for v in at):
                codes = np.fromiter(map(at.__getitem__, values), np.int64, len(values))
                self.texts(self.coded([_encode(v) for v in at])[codes])
            else:                                           # anything else, one by one
                self.texts(self.coded([_encode(v) for v in values]))
        pieces.append("")

    def number(self, a: np.ndarray) -> None:
        """A field of the numbers ``a [N]`` (ints, or floats as json writes them)."""
        from kernels.json_rows import MAX_DIGITS, decimal_digits

        if a.dtype.kind != "f":
            ok = np.abs(a.astype(np.float64)) < 10.0 ** MAX_DIGITS        # far from int64's ends
            self.add(np.where(ok, a, 0).astype(np.int64), -1, ok, [str(v) for v in a[~ok].tolist()])
            return
        a = a.astype(np.float64)
        best = None
        for d in DECIMALS:                              # the first that writes every value, else the one writing most
            k, ok = decimal_digits(a, d)
            if best is None or ok.sum() > best[2].sum():
                best = (k, d, ok)
            if ok.all():
                break
        k, d, ok = best
        self.add(k, d, ok, [_encode(v) for v in a[~ok].tolist()])

    def texts(self, codes: np.ndarray) -> None:
        """A field of texts: ``codes [N]`` of the table's."""
        self.numbers.append(np.zeros(len(codes), np.int64))
        self.decimals.append(-1)
        self.codes.append(np.asarray(codes, np.int64))

    def add(self, numbers: np.ndarray, decimals: int, ok: np.ndarray, texts: list[str]) -> None:
        """A field of ``numbers`` with ``decimals`` places where ``ok``, elsewhere of
        ``texts`` (one per such row, in order)."""
        codes = np.full(len(numbers), -1, np.int64)
        if texts:
            codes[~ok] = self.coded(texts)
        self.numbers.append(numbers)
        self.decimals.append(decimals)
        self.codes.append(codes)

    def coded(self, texts: list[str]) -> np.ndarray:
        """The table's codes of ``texts`` (JSON), each distinct one entered once."""
        return np.array([self.table.setdefault(t, len(self.table)) for t in texts], np.int64)

    def arrays(self, n: int) -> tuple:
        """``(numbers [F, n], decimals [F], codes [F, n], table)``."""
        F = len(self.numbers)
        shape = (F, n)
        return (np.array(self.numbers, np.int64).reshape(shape), np.array(self.decimals, np.int64),
                np.array(self.codes, np.int64).reshape(shape), list(self.table))
