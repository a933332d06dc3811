"""Comparing meanings: whether an answer sentence states a reference sentence's meaning.

Claims are first expanded with what they imply (a square is a quadrilateral, a circle is
curved, "A above B" denies "B above A"); the claims that distinguish one side's reference from
the other side's are what an answer must state, with the same polarity. A claim matches only
when the nouns the two claims are bound to are :func:`compatible` ("large gaps" is not a large
figure; "the left side of the image" is not the left side of the road).
"""
from __future__ import annotations

from functools import lru_cache

from . import lexicon as L
from .meaning import Claim, Meaning


def _flip(c: Claim) -> Claim:
    return Claim(c.dim, c.value, not c.pol, c.of)


def expand(claims) -> frozenset:
    """``claims`` with what they imply: a kind's more general kinds and edge type, and the
    converse of an above/left-of relation ("A above B" denies "B above A", and the reverse)."""
    claims = frozenset(claims)
    out, todo = set(claims), list(claims)
    while todo:
        c = todo.pop()
        new = []
        if c.dim == "has" and c.pol:
            for p in L.IMPLIES.get(c.value, ()):
                new.append(Claim("edges", "curved", p == "edges:curved") if p.startswith("edges:") else Claim("has", p))
        if c.dim == "rel" and c.value[0] == "inside" and c.value[1:] in L.ENCLOSED:
            new.append(Claim("has", L.ENCLOSED[c.value[1:]], c.pol))
        if c.dim == "rel" and c.value[0] in ("above", "left") and None not in c.value:
            name, s, o = c.value
            new.append(Claim("rel", (name, o, s), not c.pol, c.of))
        for n in new:
            if n not in out:
                out.add(n)
                todo.append(n)
    # implied claims that clash (a circle and a triangle: curved and straight) say nothing
    return frozenset(c for c in out if c in claims or _flip(c) not in out)


def _slot(a, b) -> bool:
    return a is None or b is None or a == b or L.GENERIC in (a, b)


@lru_cache(maxsize=None)
def _kinds(cls: str) -> frozenset:
    """``cls`` and the more general kinds it implies (a square is a quadrilateral)."""
    out = {cls}
    for p in L.IMPLIES.get(cls, ()):
        if not p.startswith("edges:"):
            out |= _kinds(p)
    return frozenset(out)


def compatible(a, r) -> bool:
    """Whether an answer's claim said of noun class ``a`` can be the reference's claim said of
    ``r``: either unnamed, the same class or one a kind of the other, or a generic word (figure,
    object, thing) for any thing that is not a part, a place or the panel."""
    if a is None or r is None or a == r or a in _kinds(r) or r in _kinds(a):
        return True
    if L.GENERIC in (a, r):
        return ({a, r} - {L.GENERIC}).isdisjoint({L.FRAME, L.PLACE, *L.PARTS, *L.GROUNDS})
    return False


def _slots(sa, oa, sr, orr) -> bool:
    """A relation's subject and object against the reference's: each compatible, and a generic
    word stands for the reference's generic thing, not for the named one ("the figure is inside
    a figure" is not "the dot is inside the figure")."""
    if not (_slot(sa, sr) and _slot(oa, orr)):
        return False
    return not (sa == L.GENERIC and sr not in (None, L.GENERIC) and orr == L.GENERIC or
                oa == L.GENERIC and orr not in (None, L.GENERIC) and sr == L.GENERIC)


def _same_value(ans: Claim, ref: Claim) -> bool:
    """Whether the answer's claim is about the same thing as the reference's (polarity aside)."""
    if ans.dim != ref.dim or not compatible(ans.of, ref.of):
        return False
    if ans.dim == "rel":
        (na, sa, oa), (nr, sr, orr) = ans.value, ref.value
        return na == nr and _slots(sa, oa, sr, orr)
    if ans.dim.endswith(("vpos", "hpos", "orient")):  # (value, the thing): an unnamed thing matches any
        return ans.value[0] == ref.value[0] and _slot(ans.value[1], ref.value[1])
    if ans.dim == "same":       # an unnamed aspect matches any; "identical" (none) also means the kind
        return ans.value is None or ans.value == ref.value or (ref.value is None and ans.value == "kind")
    return ans.value == ref.value


def _states(answer, targets) -> bool:
    return any(_same_value(a, t) and a.pol == t.pol for a in answer for t in targets)


def _contradicts(answer, ref) -> bool:
    return any(_same_value(a, r) and a.pol != r.pol or
               a.dim == r.dim == "count" and a.pol and r.pol and a.value != r.value for a in answer for r in ref)


def side_matches(answer: Meaning, ref: Meaning, other: Meaning) -> bool:
    """Whether ``answer`` states the meaning of ``ref`` as opposed to ``other`` (the other side's
    reference): it states a claim that distinguishes ``ref`` from ``other`` or denies one that
    ``other`` states ("not digits" for letters vs digits: the sides are complements), states none
    that distinguishes ``other`` (a claim both sentences only imply does not count), and
    contradicts nothing ``ref`` states. Claims match only when the nouns they are bound to are
    :func:`compatible`."""
    a, r, o = expand(answer.claims), expand(ref.claims), expand(other.claims)
    mine, theirs = r - o, o - r
    if answer.other and not _states(a, mine):
        a = a | {_flip(c) for c in theirs}
    denies = _states({_flip(c) for c in a}, theirs & other.claims)
    # what both only imply says nothing ("ovals" and "a circle" both imply curved outlines)
    theirs_stated = _states(a, theirs & other.claims) or _states(answer.claims, theirs)
    return (_states(a, mine) or denies) and not theirs_stated and not _contradicts(a, r)
