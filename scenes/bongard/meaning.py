"""Sentences as structured meaning: what a Bongard answer or reference sentence states.

:func:`parse` reads one sentence into a :class:`Meaning`: a set of :class:`Claim` (dimension,
value, polarity) plus a summary (subject, relation and object, negation, count, attributes)
for reports. References to the collage's sides ("in every image on the left") are dropped,
words are looked up in :mod:`scenes.bongard.lexicon` (longest phrase first, plurals reduced to
their base form), then assembled:

* negation applies to the next thing it can negate, with all that word means ("no figure is
  black": not filled either); after "none of" / "no two" it skips the quantified noun;
* numbers count the noun they follow ("three figures", "the number of figures is three");
* relations take the nearest nouns before and after them; "below"/"under"/"right of" are
  stored reversed as "above"/"left of", "outside" as a negated "inside"; a relation to the
  panel itself ("above the middle") is a position;
* positions and orientations record the named thing they describe ("the road is on the left"
  is not "vehicles keep left") and the ground they are taken in ("the left side *of the road*"
  is not "of the image"); a left/right after a verb of facing ("points to the left") is a
  facing, not a position; adjectives of a relation's object, of a texture, of a part
  ("starts with a vowel") or of a definite description followed by a predicate ("the large
  figure is on top") are kept apart from the subject's claims;
* every attribute records the noun it is bound to (:attr:`Claim.of`): the noun it modifies
  ("large *gaps*", "a small *road*") or else the subject it is predicated of ("the *buildings*
  are small"); a kind word before a panel noun ("a square frame") describes the frame; a
  same/different with another thing ("the same colour *as the road*") is a relation to it, not
  a likeness among the things.

:mod:`scenes.bongard.matching` compares meanings.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from . import lexicon as L

_VOWELS = set("aeiou")
_FRAME_ASPECT = "scene"
_SHAPE_WORDS = {"shape", "form", "figure", "kind"}


@dataclass(frozen=True)
class Claim:
    """One stated fact: ``dim`` (``has``, ``size``, ``count``, ``rel``, ``same``, ...), its
    ``value`` (a relation's is ``(name, subject, object)``), whether it holds (``pol``) and the
    noun class it is bound to (``of``): what an attribute modifies or is predicated of ("large
    gaps": the gaps), or the ground a position is taken in ("the left side of the road")."""

    dim: str
    value: object
    pol: bool = True
    of: str | None = None       # the noun class the claim is said of (None: unnamed)

    def __str__(self) -> str:
        return f"{'' if self.pol else 'not '}{self.dim}={self.value}" + (f"@{self.of}" if self.of else "")


@dataclass(frozen=True)
class Meaning:
    """What a sentence states: ``claims`` (what the judge compares) and a summary of them:
    ``subject`` (the first named noun class), ``relation``/``object`` (the first relation),
    ``negated`` (any claim denied), ``count``, ``attributes`` (the other claims) and ``other``
    (the sentence points at the complement of the other side: "any other letter")."""

    text: str
    subject: str | None
    relation: str | None
    object: str | None
    negated: bool
    count: int | None
    attributes: tuple
    claims: frozenset
    other: bool = False

    def describe(self) -> str:
        """A one-line account of what was understood."""
        return "; ".join(sorted(str(c) for c in self.claims)) or "(nothing understood)"


# references to the collage's sides ("in every image on the left", "unlike the right panels"):
# which side a sentence is about, not what it states
_SIDE_REF = re.compile(
    r"\bunlike\s+(?:in\s+)?(?:the\s+)?(?:(?:left|right|other)\b|images|panels|pictures)[^,;.]*|"
    r"\b(?:in|of|for|on|at)?\s*(?:every|each|all|all the|the|any)?\s*(?:images?|panels?|pictures?|examples?|cases?)"
    r"\s+(?:on|at|in|of)\s+the\s+(?:left|right)(?:\s+(?:side|half|group|set))?\b|"
    r"\b(?:in|on|for)\s+(?:all\s+|every\s+|each\s+)?(?:the\s+)?(?:left|right)(?:\s+side)?\s+"
    r"(?:images?|panels?|pictures?|examples?|group|set|collage)\b", re.I)
_VERBS = {"is", "are", "was", "were", "lie", "lies", "sit", "sits", "stand", "stands", "appear", "appears"}
_NEGATOR_WORDS = {"not", "no", "none", "never", "neither", "nor", "without", "outside", "except", "excluding", "beyond"}


def tokens(text: str) -> list[str]:
    """The lower-case words, digits and clause marks (``,`` ``;``) of ``text``, without its
    references to the collage's sides."""
    s = _SIDE_REF.sub(" ", text.lower().replace("\u2019", "'"))
    s = re.sub(r"n't\b", " not", s).replace("cannot", "can not")
    s = re.sub(r"'s\b", "", s)
    return re.findall(r"[a-z]+|\d+|[,;]", s)


def lemma(word: str) -> str:
    """``word`` reduced to the base form the lexicon knows (``circles`` -> ``circle``)."""
    if word in L.VOCAB:
        return word
    for suffix, repl in (("ies", "y"), ("ves", "f"), ("es", ""), ("s", "")):
        if word.endswith(suffix) and word[:-len(suffix)] + repl in L.VOCAB:
            return word[:-len(suffix)] + repl
    return word


def _only(word: str, kind: str) -> bool:
    got = L.PHRASES.get((word,))
    return bool(got) and all(a[0] == kind for a in got)


def _presupposed(lem: list[str]) -> set[int]:
    """Word positions of adjectives in a definite description followed by a predicate ("the
    *large* figure is on top"): they pick the thing out rather than state something of it."""
    out = set()
    for i, w in enumerate(lem):
        if w != "the":
            continue
        j = i + 1
        while j < len(lem) and _only(lem[j], "attr"):
            j += 1
        if j > i + 1 and j < len(lem) and _only(lem[j], "ent") and _VERBS & set(lem[j + 1:]):
            out.update(range(i + 1, j))
    return out


def atoms(words: list[str]) -> tuple[list[tuple], list[int], set[int], list[int], list[str]]:
    """``(atoms, groups, presupposed, ends, lemmas)``: the lexicon's atoms for ``words`` (longest
    phrase first, unknown words dropped), the word position of the phrase each came from and of
    the word after it, the atoms that only pick a thing out, and the words' base forms."""
    lem = [lemma(w) for w in words]
    skip = _presupposed(lem)
    out, groups, pre, ends, i = [], [], set(), [], 0

    def longest(k: int, most: int) -> int:
        return next((n for n in range(min(most, len(lem) - k), 0, -1) if tuple(lem[k:k + n]) in L.PHRASES), 0)

    while i < len(lem):
        most = L.LONGEST
        # a longer phrase starting at this match's last word wins it ("points | left to right")
        while (n := longest(i, most)) > 1 and longest(i + n - 1, L.LONGEST) > n:
            most = n - 1
        for n in range(min(most, len(lem) - i), 0, -1):
            key = tuple(lem[i:i + n])
            if key in L.PHRASES:
                for a in L.PHRASES[key]:
                    if i in skip:
                        pre.add(len(out))
                    out.append(a)
                    groups.append(i)
                    ends.append(i + n)
                i += n
                break
        else:
            if lem[i].isdigit():
                out.append(("num", int(lem[i])))
                groups.append(i)
                ends.append(i + 1)
            i += 1
    return out, groups, pre, ends, lem


def _letter_list(words: list[str]) -> list[Claim]:
    """Claims of a list of single letters ("A, E, I, O or U"): vowels or consonants (denied
    when a negation comes before the list)."""
    singles = [k for k, w in enumerate(words) if len(w) == 1 and w.isalpha() and w != "a"]
    letters = {words[k] for k in singles}
    if len(letters) < 2:
        return []
    pol = not _NEGATOR_WORDS & set(words[:singles[0]])
    if letters <= _VOWELS:
        return [Claim("has", "letter"), Claim("has", "vowel", pol)]
    if not letters & _VOWELS:
        return [Claim("has", "letter"), Claim("has", "vowel", not pol)]
    return []


_MIXTURES = {"size": "size", "orient": "orientation"}   # both values stated: the sizes differ


class _Reader:
    """One pass over a sentence's atoms, collecting claims."""

    def __init__(self, seq: list[tuple], groups: list[int], presupposed: set[int], ends: list[int],
                 words: list[str]):
        road = any(a[0] == "ent" and a[1] in L.ROAD_DOMAIN for a in seq)
        # "circle" among roads is a roundabout ("an intersection without a circle")
        self.seq = [("ent", "roundabout", a[2]) if road and a[0] == "ent" and a[1] == "circle" else a for a in seq]
        self.domain = "road" if road else "sky" if any(a[0] == "ent" and a[1] in L.SKY_DOMAIN for a in seq) \
            else None
        self.groups, self.presupposed, self.ends, self.words = groups, presupposed, ends, words
        self.claims: list[Claim] = []
        self.picked: list[Claim] = []           # claims of presupposed words
        self.ents: list[tuple[int, str]] = []
        self.neg = False
        self.through = False                   # "none of the roofs ...": the negation is for the predicate
        self.neg_group = None
        self.last_negated = False
        self.other = False
        self.clause = 0
        self.i = 0
        self.prefix = {}                        # atom index -> dimension prefix ("obj:", "part:", "texture:")
        self.skip: set[int] = set()

    def claim(self, dim: str, value, pol: bool = True, grouped: bool = True, of: str | None = None) -> None:
        # a negation covers every attribute of the word it negates ("not black": not filled either)
        negated = self.neg or grouped and self.neg_group == self.groups[self.i]
        c = Claim(self.prefix.get(self.i, "") + dim, value, pol != negated, of)
        (self.picked if self.i in self.presupposed else self.claims).append(c)
        if self.neg:
            self.neg_group = self.groups[self.i]
        self.last_negated, self.neg, self.through = negated, False, False

    def clause_end(self, i: int) -> int:
        j = i + 1
        while j < len(self.seq) and self.seq[j][0] != "sep":
            j += 1
        return j

    def between(self, i: int) -> list[str]:
        """The words the lexicon has no atom for between atom ``i`` and the next one."""
        stop = self.groups[i + 1] if i + 1 < len(self.seq) else len(self.words)
        return self.words[self.ends[i]:stop]

    def subject_of(self, i: int) -> str | None:
        """The clause's first named noun before atom ``i`` (not the panel, not ``i``'s own word)."""
        return next((c for k, c in self.ents if self.clause <= k < i and c not in (L.FRAME, L.PLACE)
                     and self.groups[k] != self.groups[i]), None)

    def bound(self, i: int) -> str | None:
        """The noun an attribute at atom ``i`` is said of: the noun it modifies ("large *gaps*",
        "a small *road*": only attributes and modifiers between), else the clause's subject it
        is predicated of ("the *buildings* are small"), else None."""
        k = i + 1
        while k < len(self.seq) and (self.seq[k][0] == "attr" or self.groups[k] == self.groups[i]):
            k += 1
        if k < len(self.seq) and self.seq[k][0] == "ent" and self.seq[k][1] not in (L.FRAME, L.PLACE) \
                and not any(L.LINKS & set(self.between(m)) for m in range(i, k)):
            return self.seq[k][1]
        return self.subject_of(i)

    def ground(self, i: int) -> str | None:
        """The thing a position at atom ``i`` is taken in: "the left side *of the road*" (of a
        compound, its last noun; a generic word names nothing)."""
        if self.between(i)[:1] != ["of"]:
            return None
        found, k = None, i + 1
        while k < len(self.seq) and self.seq[k][0] == "ent" and (found is None or not self.between(k - 1)):
            found, k = self.seq[k][1], k + 1
        return None if found == L.GENERIC else found

    def named_near(self, i: int) -> str | None:
        """The named thing a position or orientation word describes: the clause's first noun
        before it ("the rows in the fields"), else the first after it; of a compound, its last
        noun ("field lines")."""
        found = self._first_run(range(self.clause, i)) or self._first_run(range(i + 1, self.clause_end(i)))
        return None if found in (None, L.GENERIC, L.FRAME, L.PLACE) else found

    def _first_run(self, span) -> str | None:
        found = None
        for j in span:
            x = self.seq[j]
            if x[0] == "ent" and not (x[1] == L.GENERIC and found):
                found = x[1]
            elif found and x[0] != "ent":
                break
        return found

    def read(self) -> None:
        for i, a in enumerate(self.seq):
            if i not in self.skip:
                self.i = i
                getattr(self, "_" + a[0])(i, a)

    def _sep(self, i, a):
        self.neg, self.through, self.clause = False, False, i + 1

    def _ctx(self, i, a):                      # "among the outlines": the rest of the clause is context
        self.skip.update(range(i + 1, self.clause_end(i)))

    def _count_of(self, i, a):
        pass

    def _conj(self, i, a):
        nxt = self.seq[i + 1] if i + 1 < len(self.seq) else None
        if self.last_negated and nxt and nxt[0] == "ent" and nxt[1] not in (L.GENERIC, L.FRAME):
            self.neg = True             # "no circles or ovals"

    def _neg(self, i, a):
        self.neg = True
        nxt = self.seq[i + 1] if i + 1 < len(self.seq) else None
        self.through = len(a) > 1 or bool(nxt and nxt[0] == "num")      # "none of", "no two"

    def _postneg(self, i, a):
        for k in range(len(self.claims) - 1, -1, -1):
            if self.claims[k].dim == "has":
                c = self.claims[k]
                self.claims[k] = Claim(c.dim, c.value, not c.pol, c.of)
                return
        self.neg = True

    def _other(self, i, a):
        self.other = True

    def _num(self, i, a):
        n, weak = a[1], len(a) > 2 and a[2]
        j = i + 1
        while j < len(self.seq) and self.seq[j][0] == "attr" and self.seq[j][1] in ("size", "colour", "filled"):
            j += 1
        nxt = self.seq[j] if j < len(self.seq) else None
        if nxt and nxt[0] == "sides" and n in L.SIDES:          # "three-sided"
            self.skip.add(j)
            self.claim("has", L.SIDES[n])
        elif nxt and nxt[0] == "aspect" and nxt[1] in ("colour", "size", "kind"):    # "one colour", "many sizes"
            self.claim("same", nxt[1], n == 1)
        elif nxt and nxt[0] == "ent" and nxt[1] != L.FRAME:
            if not weak and not self.neg:
                self.claims.append(Claim("count", n))
        elif nxt is None and not self.neg and (any(x[0] == "count_of" for x in self.seq[:i])
                                               or not weak and not any(x[0] == "ent" for x in self.seq)):
            self.claims.append(Claim("count", n))     # "the number of figures is three"; a bare "Three."

    def _vague(self, i, a):
        nxt = self.seq[i + 1] if i + 1 < len(self.seq) else None
        if nxt and nxt[0] == "aspect" and nxt[1] != _FRAME_ASPECT:  # "many colours"
            self.claim("same", nxt[1], False)

    def _ent(self, i, a):
        cls = a[1]
        prev = self.seq[i - 1] if i else None
        if cls == L.GENERIC and prev and prev[0] == "ent" and prev[1] not in (L.GENERIC, L.FRAME):
            return                      # "round shape": the shape is the circle
        nxt = self.seq[i + 1] if i + 1 < len(self.seq) else None
        if nxt and nxt[0] == "ent" and nxt[1] == L.FRAME and not self.between(i) and cls != L.GENERIC:
            return                      # "a square frame", "a round border": the kind is the frame's
        self.ents.append((i, cls))
        if cls not in (L.GENERIC, L.FRAME, L.PLACE, *L.PARTS):
            if self.through or a[2] in L.VERBAL:
                self.claims.append(Claim("has", cls))
            else:
                self.claim("has", cls, grouped=False)
        if a[2] not in L.VERBAL:
            self.through = False

    def _attr(self, i, a):
        if a[1] in ("vpos", "hpos") and self.neg and i and self.seq[i - 1][0] == "ent" \
                and self.seq[i - 1][2] not in L.VERBAL \
                and {"on", "in", "at"} & set(self.between(i - 1)) and set(self.between(i - 1)) <= L.LINKS:
            # "none of the roofs on the right are square": the place picks the things out, the
            # negation waits for the predicate
            self.neg = False
            self._attr(i, a)
            self.neg = True
            return
        dim, value = a[1], a[2]
        of = self.bound(i) if dim in L.BOUND_DIMS else None
        if dim == "hpos" and i and self.seq[i - 1][0] == "facing":     # "turned to the left": a direction
            self.claim("facing", value, a[3], of=self.subject_of(i))
            return
        if dim in ("vpos", "hpos", "orient"):   # placed or oriented: which thing is, in what
            named = self.named_near(i)
            value = (value, named)
            of = self.ground(i) if dim != "orient" else None
            if named and dim != "orient" and i not in self.presupposed:    # "the circle is at the top"
                self.claims.append(Claim(self.prefix.get(i, "") + "rel",
                                         ("above" if dim == "vpos" else "left", named, None),
                                         a[3] != (self.neg or self.neg_group == self.groups[i]), of))
        nxt = self.seq[i + 1] if i + 1 < len(self.seq) else None
        if nxt and nxt[0] == "ent" and nxt[2] in L.TEXTURES and any(self.clause <= k < i for k, _ in self.ents):
            dim = "texture:" + dim      # "the figure has horizontal stripes": its texture, not the figure, is
        self.claim(dim, value, a[3], of=of)

    def _facing(self, i, a):
        pass

    def _absent(self, i, a):
        domain = self.domain or a[1]
        dim, value = {"road": ("has", "vehicle"), "sky": ("has", "cloud")}.get(domain, ("filled", "filled"))
        self.claim(dim, value, False)

    def _plain(self, i, a):
        if self.domain == "road":
            self.claim("has", "roundabout", False)

    def _layout(self, i, a):            # "arranged in a circle": how the things are placed
        for j in range(i + 1, self.clause_end(i)):
            if self.seq[j][0] == "ent" and self.seq[j][1] not in (L.GENERIC, L.FRAME, L.PLACE, *L.PARTS):
                self.skip.add(j)
                self.claim("layout", self.seq[j][1])
                return

    def _sides(self, i, a):
        if a[1] in ("corner", "cornered", "angle", "vertex", "vertices"):
            self.claim("edges", "curved", False)            # "sharp corners"; "no corners" is curved

    def _aspect(self, i, a):
        pass

    def _cmp(self, i, a):
        aspect = self._aspect_of(i)
        other = self._compared_with(i)
        subj = self.subject_of(i)
        if other and other != subj:     # "the same colour as the road": compared with another thing
            self.claim("rel", ("same " + str(aspect), subj, other), a[1])
            return
        self.claim("same", aspect, a[1])

    def _compared_with(self, i: int) -> str | None:
        """The noun a same/different word compares with ("as the road", "from the road"): the
        first noun after it in its clause that a comparing word ("as", "from", "to", "than")
        introduces, with no relation or verb-like atom between."""
        for j in range(i, self.clause_end(i) - 1):
            if self.seq[j + 1][0] == "ent" and L.COMPARED & set(self.between(j)):
                return self.seq[j + 1][1]
            if self.seq[j + 1][0] not in ("aspect", "attr"):
                return None
        return None

    def _aspect_of(self, i: int) -> str | None:
        """What a same/different word compares: an aspect word just after it, a shape noun right
        after it ("same figure"), else an aspect word elsewhere in its clause, else None."""
        end = self.clause_end(i)
        for j in range(i + 1, min(end, i + 4)):
            x = self.seq[j]
            if x[0] == "aspect":
                return x[1]
            if x[0] == "attr" and x[1] in ("size", "colour") and j == i + 1:     # "equally big"
                self.skip.add(j)
                return x[1]
            if x[0] == "ent":
                if x[1] == L.FRAME:
                    return _FRAME_ASPECT
                if x[2] in _SHAPE_WORDS and (j == i + 1 or self.seq[j - 1][0] == "num"):
                    return "kind"
            if x[0] not in ("num", "vague"):
                break
        for j in range(self.clause, end):
            if self.seq[j][0] == "aspect":
                return self.seq[j][1]
        return None

    def _rel(self, i, a):
        name, swap, pol = a[1], a[2], a[3]
        weak = len(a) > 4
        end = self.clause_end(i)
        if name == "part":              # "starts with a vowel": what follows describes a part
            for j in range(i + 1, end):
                self.prefix[j] = "part:"
            return
        before = [c for k, c in self.ents if self.clause <= k < i]
        subj = before[-1] if before else None
        obj, between = None, []
        for j in range(i + 1, end):
            x = self.seq[j]
            if x[0] == "ent":
                obj = x[1]
                break
            if x[0] in ("rel", "cmp", "neg"):
                break
            if x[0] == "attr":
                between.append(j)
        if obj == L.FRAME or subj == L.FRAME and obj not in (None, L.FRAME) and not swap or \
                subj == L.FRAME and swap and obj is not None:
            self._position(name, subj, obj, pol != swap)
            return
        if subj == L.FRAME:
            subj = None
        if weak and (subj is None or obj is None):
            return
        if obj is None and subj is not None and name in ("above", "left"):
            self._placed(name, subj, pol != swap)
            return
        if swap:
            subj, obj = obj, subj
        if subj is None and obj is None and not any(x[0] == "ent" for x in self.seq):
            self.claim("rel", (name, None, None), pol)      # a bare "Inside.": the relation alone
            return
        if subj is None and (obj is None or swap) or name == "near" and obj is None:
            return                      # "contains a circle": presence, no relation; "near the top": a position
        for j in between if obj is not None else ():
            self.prefix[j] = "obj:"     # "next to a curved line": the line is curved, not the subject
        self.claim("rel", (name, subj, obj), pol)

    def _placed(self, name: str, subj: str, upper_left: bool) -> None:
        """A relation with nothing after it ("the circle is below"): the thing's position in the
        panel, and, for a named thing, its relation to whatever else is there."""
        thing = None if subj == L.GENERIC else subj
        if thing:
            negated = self.neg or self.neg_group == self.groups[self.i]
            self.claims.append(Claim("rel", (name, thing, None), upper_left != negated))
        if name == "above":
            self.claim("vpos", ("upper", thing), upper_left)
        else:
            self.claim("hpos", ("left", thing), upper_left)

    def _position(self, name: str, subj, obj, upper_left: bool) -> None:
        """A relation to the panel itself ("above the middle", "the centre is below the figure")
        as the thing's position in the panel."""
        thing = obj if subj == L.FRAME else subj
        if subj == L.FRAME:
            upper_left = not upper_left
        thing = None if thing in (L.GENERIC, L.FRAME) else thing
        if name == "above":
            self.claim("vpos", ("upper", thing), upper_left)
        elif name == "left":
            self.claim("hpos", ("left", thing), upper_left)


def _mixtures(claims: list[Claim]) -> list[Claim]:
    """Both values of a size or orientation ("some are big and some are small") state that
    they differ; several colours, that the colours differ."""
    out = list(claims)
    for dim, aspect in _MIXTURES.items():
        for of in {c.of for c in claims if c.dim == dim}:      # of one thing ("small houses on a big field": two)
            if len({c.pol for c in claims if c.dim == dim and c.of == of}) == 2:
                out = [c for c in out if c.dim != dim or c.of != of] + [Claim("same", aspect, False)]
    colours = {c.value for c in claims if c.dim == "colour" and c.pol}
    if len(colours) > 1:
        out.append(Claim("same", "colour", False))
    return out


@lru_cache(maxsize=4096)
def parse(sentence: str) -> Meaning:
    """The structured meaning of ``sentence`` (one sentence, any case and punctuation)."""
    words = tokens(sentence)
    r = _Reader(*atoms(words))
    r.read()
    claims = _mixtures(r.claims) + _letter_list(words)
    if not [c for c in claims if c.dim != "has"]:
        claims += r.picked              # nothing else is stated: the description is the statement
    # "Right: none." / "the opposite": nothing of its own, only the other side denied
    other = r.other or not claims and not r.ents and r.neg
    rel = next((c for c in claims if c.dim == "rel"), None)
    subject = rel.value[1] if rel and rel.value[1] else next(
        (c for _, c in r.ents if c not in (L.GENERIC, L.FRAME, L.PLACE)),
        L.GENERIC if any(c == L.GENERIC for _, c in r.ents) else None)
    count = next((c.value for c in claims if c.dim == "count"), None)
    attributes = tuple((c.dim, c.value, c.pol) for c in claims if c.dim not in ("has", "rel", "count"))
    return Meaning(sentence, subject, rel and ("" if rel.pol else "not ") + rel.value[0],
                   rel and rel.value[2], any(not c.pol for c in claims), count, attributes, frozenset(claims),
                   other)
