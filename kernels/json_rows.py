"""The JSON text of many rows of one template, written by one compiled pass.

A row is a template's literal pieces with a value between each two: a number or one of a
table's texts. Numbers are integers ``k``, written as ``%d`` writes them, or decimals
``k / 10**d`` written as Python's ``repr`` writes the double nearest them (``d`` fixed per
field; trailing zeros dropped, at least one decimal): :func:`decimal_digits` gives ``k``
where that text is exactly ``repr``'s. A sample's text is its rows joined by ``", "``
inside ``[...]``. Formatting floats one by one in Python took most of an ELVIS record's
metadata time (about 170 of 350 us per image with 24 objects; 2026-11-28).
"""
from __future__ import annotations

import numpy as np

from .jit import exact

MAX_DIGITS = 15             # |k| below 10**15: the decimal holds at most 15 significant digits, which a
#                             double tells apart from every other such decimal (see decimal_digits)
MAX_NUMBER = 10 ** 18       # what write_rows takes: |k| below this, at most MAX_DIGITS places
NUMBER_BYTES = 24           # a number's text at most: sign, 19 digits, point, a zero (21)


def decimal_digits(values: np.ndarray, d: int) -> tuple[np.ndarray, np.ndarray]:
    """``(k, ok)`` for float64 ``values``: ``ok`` where ``repr(value)`` is the decimal
    ``k / 10**d`` written plainly with its trailing zeros dropped (``int64`` ``k``; 0 where
    not ``ok``).

    That holds where the value is the double nearest ``k / 10**d`` with ``|k| < 10**15``,
    and ``repr`` writes it without an exponent (0, or at least ``1e-4`` in size) and is not
    ``-0.0``: doubles there are closer together than ``10**-d`` so no other decimal of ``d``
    or fewer places is nearest the same double, and the shortest text that reads back as the
    value, which ``repr`` gives, is this one."""
    scale = 10.0 ** d
    with np.errstate(over="ignore", invalid="ignore"):
        k = np.rint(values * scale)
        ok = (np.abs(k) < 10.0 ** MAX_DIGITS) & (k / scale == values)
        ok &= (values == 0) & ~np.signbit(values) | (np.abs(values) >= 1e-4)
    return np.where(ok, k, 0).astype(np.int64), ok


@exact(inline=True)
def _number(out, o, k, d, scratch):
    """Write ``k`` (``d < 0``) or the decimal ``k / 10**d`` (trailing zeros dropped, at
    least one decimal) at ``out[o]``; returns the next position. The digits are made least
    significant first into ``scratch`` by division by the constant 10 (a multiply), not by
    ``10**d``, a division the compiler cannot turn into one and that took most of the time."""
    if k < 0:
        out[o] = 45                                     # "-"
        o += 1
        k = -k
    n = 0
    while True:                                         # at least d + 1 digits: the whole part and d places
        scratch[n] = 48 + k % 10
        k //= 10
        n += 1
        if k == 0 and n > d:
            break
    if d < 0:
        for j in range(n - 1, -1, -1):
            out[o] = scratch[j]
            o += 1
        return o
    zeros = 0                                           # trailing zeros of the places, dropped
    while zeros < d and scratch[zeros] == 48:
        zeros += 1
    for j in range(n - 1, d - 1, -1):
        out[o] = scratch[j]
        o += 1
    out[o] = 46                                         # "."
    o += 1
    if zeros == d:
        out[o] = 48
        return o + 1
    for j in range(d - 1, zeros - 1, -1):
        out[o] = scratch[j]
        o += 1
    return o


@exact(inline=True)
def _copy(out, o, src, a, b):
    for j in range(a, b):
        out[o] = src[j]
        o += 1
    return o


@exact
def _write(pieces, piece_ends, numbers, decimals, codes, table, table_ends, bounds, out, ends):
    """Each sample's rows as text into ``out``; ``ends[b]`` where sample ``b``'s ends.
    Row ``r``'s field ``f`` is ``table`` text ``codes[r, f]`` where that is ``>= 0``, else
    the number ``numbers[r, f]`` with ``decimals[f]`` places (``< 0``: an integer); a row's
    fields lie together in memory."""
    F = numbers.shape[1]
    scratch = np.empty(32, np.uint8)
    o = 0
    for b in range(bounds.shape[0]):
        out[o] = 91                                     # "["
        o += 1
        for r in range(bounds[b, 0], bounds[b, 1]):
            if r > bounds[b, 0]:
                out[o] = 44                             # ", "
                out[o + 1] = 32
                o += 2
            o = _copy(out, o, pieces, 0, piece_ends[0])
            for f in range(F):
                c = codes[r, f]
                if c >= 0:
                    o = _copy(out, o, table, table_ends[c - 1] if c > 0 else 0, table_ends[c])
                else:
                    o = _number(out, o, numbers[r, f], decimals[f], scratch)
                o = _copy(out, o, pieces, piece_ends[f], piece_ends[f + 1])
        out[o] = 93                                     # "]"
        o += 1
        ends[b] = o


def write_rows(pieces: list[str], numbers: np.ndarray, decimals: np.ndarray, codes: np.ndarray, table: list[str],
               bounds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(text, ends)``: every sample's rows as ASCII bytes (uint8), sample ``b``'s list
    ``text[ends[b - 1]:ends[b]]`` (from 0 for the first).

    ``pieces``: the ``F + 1`` literal parts of a row around its ``F`` fields;
    ``numbers [F, N]`` int64 (within ``+-MAX_NUMBER``) and ``decimals [F]`` (an integer
    field: ``-1``; at most ``MAX_DIGITS``) the numbers, ``codes [F, N]`` where ``>= 0`` the
    ``table`` text written instead; ``bounds [B, 2]`` each sample's rows ``[start, end)``.
    Every text is ASCII. The output buffer is sized from what each row holds (a long text
    costs only the rows that use it). Raises ``ValueError`` for inputs outside these."""
    F = len(pieces) - 1
    numbers, codes = np.ascontiguousarray(numbers, np.int64), np.ascontiguousarray(codes, np.int64)
    decimals = np.asarray(decimals, np.int64)
    if numbers.shape != codes.shape or numbers.shape[0] != F or len(decimals) != F:
        raise ValueError(f"{F} fields: numbers {list(numbers.shape)}, codes {list(codes.shape)} and "
                         f"{len(decimals)} decimals do not match")
    written = codes < 0
    if ((decimals < -1) | (decimals > MAX_DIGITS)).any() or not ((-MAX_NUMBER < numbers[written])
                                                                 & (numbers[written] < MAX_NUMBER)).all():
        raise ValueError(f"numbers must lie within +-{MAX_NUMBER} and decimals within -1..{MAX_DIGITS}")
    if not ((-1 <= codes) & (codes < len(table))).all():
        raise ValueError(f"codes must be -1 or index the table of {len(table)} texts")
    bounds = np.ascontiguousarray(bounds, np.int64).reshape(-1, 2)
    if not ((0 <= bounds[:, 0]) & (bounds[:, 0] <= bounds[:, 1]) & (bounds[:, 1] <= numbers.shape[1])).all():
        raise ValueError(f"bounds must be rows [start, end) within 0..{numbers.shape[1]}")
    piece_bytes = [p.encode("ascii") for p in pieces]
    table_bytes = [t.encode("ascii") for t in table]
    widths = np.where(written, NUMBER_BYTES, np.array([len(t) for t in table_bytes] + [0])[codes])
    upto = np.concatenate([[0], np.cumsum(widths.sum(0) + 2 + sum(map(len, piece_bytes)))])   # bytes before each row
    size = 2 * len(bounds) + int((upto[bounds[:, 1]] - upto[bounds[:, 0]]).sum())
    out, ends = np.empty(size, np.uint8), np.empty(len(bounds), np.int64)
    _write(_buffer(b"".join(piece_bytes)), _ends(piece_bytes), np.ascontiguousarray(numbers.T), decimals,
           np.ascontiguousarray(codes.T),
           _buffer(b"".join(table_bytes)), _ends(table_bytes), bounds, out, ends)
    return out[:ends[-1] if len(ends) else 0], ends


def _buffer(data: bytes) -> np.ndarray:
    return np.frombuffer(data or b"\0", np.uint8).copy()      # writable (one kernel signature) and never empty


def _ends(parts: list[bytes]) -> np.ndarray:
    return np.cumsum([0] + [len(p) for p in parts], dtype=np.int64)[1:] if parts else np.zeros(1, np.int64)
