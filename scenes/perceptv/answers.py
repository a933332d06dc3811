"""Percept-V answer formats: how each domain writes its gold answer and how a model's reply
is read.

A reply is read the way its domain's prompt asks for the answer:

* **Statements.** A *statement* is a label followed by a value: the domain's own labels
  (``COUNT:``, ``QUADRANT:`` ... ``COUNT:``, ``SHAPES :``, also written ``KEY=value``, in
  markdown emphasis, or with the value on the next line) or an explicit final-answer marker
  (``Answer:``, ``Final answer:``, ``The answer is``, ``\\boxed{...}``). When a reply holds
  statements, the last one that states a value wins (a self-correction keeps its last
  value) and nothing else in the reply is read: numbers in reasoning or in an explanation
  after the value never count. A value runs to the end of its line or up to an
  explanation (``(``, a sentence end, ``because`` ...); a single number or word is the first
  item after its label.
* **A final line.** A reply without statements is read from its last non-empty line, which
  must be the answer and nothing else (bare, in brackets, bold, with a trailing period):
  the prompts ask for the answer as the last line. Domains whose prompt has no label
  (sorting, maze, grid cells, list_colours, list_shapes) are answered this way.
* **Items.** Lists may be separated by commas, spaces, semicolons or ``and``, and wrapped
  in ``[]``, ``{}`` or ``()``; words are read ignoring case; a maze path may be joined by
  arrows. A word outside the domain's vocabulary stays in the answer, which is then wrong
  (``light blue`` is not ``blue``). Sets may be in any order.
* **No answer.** A reply without a statement or a final line that is an answer is a format
  error in every domain, as is one that lists alternatives (``COUNT: 1 or COUNT: 2?``) or
  asks a question. Numbers longer than 6 digits are not numbers of any domain.

Reading is linear in the reply's length (no reply crashes or stalls an evaluation);
``strict`` is true when the reply is exactly the gold format (ignoring case and spaces).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from engine.replies import MARKER, NUMBER_WORDS, clean

_INT = r"-?\d{1,6}(?![\d])"
_ARROWS = re.compile(r"->|→|⇒|=>|⟶")
# where an explanation starts after a list or word value
_EXPLAIN = re.compile(r"\(|\s[-–—]\s|\.(?:\s|$)|!|\bbecause\b|\bsince\b|\bas\b|\bwhich\b|\bwhere\b|\bwith\b"
                      r"|\bin\s+total\b")
_ALTERNATIVE = re.compile(r"\s*(?:\?|\bor\b)")
_SEP = re.compile(r"(?:\s*[,;]\s*|\s+and\s+|\s+)")
_CELL = re.compile(r"\s*(?:[,;]\s*)?(?:and\s+)?\(\s*(\d{1,3})\s*[,\s]\s*(\d{1,3})\s*\)")
_NONE = re.compile(r"\s*none\b")
_BRACKETS = {"[": "]", "{": "}", "(": ")"}
_REMARK = re.compile(r"\((?=[^()]*[a-z]{2})[^()]*\)\.?")                 # "(I counted twice.)"
_TRAILING_REMARK = re.compile(r"\s+\((?=[^()]*[a-z]{2})[^()]*\)\.?$")
_NUMBER_WORDS = r"\b(?:" + "|".join(NUMBER_WORDS) + r")\b"


class _Alternatives(Exception):
    """The reply offers several answers (``x or y``, ``x?``): it states none."""


@dataclass(frozen=True)
class Form:
    """How a domain's answer is written and read.

    ``keys``: labels before the values (``COUNT``, ``QUADRANT``/``COUNT``, ``ANSWER``, ...);
    ``aliases``: other labels a reply may use for the single key (``colours``, ``colors``);
    ``item``: ``int``, ``word``, ``words`` (a fixed-length word list), ``cell`` or ``label``
    (maze cells: ``S``, ``E`` and numbers); ``sep``: how list items are joined; ``case``:
    how words are written in the gold text (``lower``, ``title``, ``upper``); ``space``: a
    space after the colon; ``vocab``: the words an answer is made of."""

    kind: str
    keys: tuple[str, ...] = ()
    item: str = "int"
    sep: str = ", "
    case: str = "lower"
    space: bool = False
    vocab: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()

    # ------------------------------------------------------------ writing

    def _word(self, w: str) -> str:
        return {"lower": w.lower(), "title": w.title(), "upper": w.upper()}[self.case] if self.item == "word" else w

    def render(self, answer) -> str:
        """The gold answer in the domain's output format."""
        colon = ": " if self.space else ":"
        if self.kind == "fixed" and len(self.keys) > 1:
            return " ".join(f"{k}{colon}{v}" for k, v in zip(self.keys, answer.split()))
        if self.kind in ("single", "fixed") and self.item == "words":
            body = self.sep.join(answer.split())
        elif self.kind in ("single", "fixed"):
            body = self._word(answer)
        else:                   # list/set cells are "(r c)" inside procvis: items may not hold commas
            body = self.sep.join(self._word(a).replace(" ", ",") if self.item == "cell" else self._word(a)
                                 for a in answer)
        return f"{self.keys[0]}{colon}{body}" if self.keys else body

    # ------------------------------------------------------------ reading

    def read(self, reply):
        """``(canonical answer or None, strict)`` from a model reply (see the module docstring)."""
        text = reply if isinstance(reply, str) else ""
        if not text.strip():
            return None, False
        try:
            value = self._read(clean(text))
        except _Alternatives:
            return None, False
        if value is None:
            return None, False
        return value, _norm(text) == _norm(self.render(value))

    def _read(self, t: str):
        if self.kind == "fixed" and len(self.keys) > 1:
            return self._read_keys(t)
        for body in reversed(self._statements(t)):
            value = self._value(body, whole=False)
            if value is not None:
                return value
        return self._final_lines([ln.strip() for ln in t.splitlines() if ln.strip()])

    def _final_lines(self, lines: list[str]):
        """The answer the last line states, read as a whole line; a last line that is only a
        remark in parentheses is passed over, and a list written one item per line (bullets
        or not, three lines or more) is read from its trailing lines."""
        while lines and _REMARK.fullmatch(lines[-1]) and self._remark(lines[-1]):
            lines = lines[:-1]
        if not lines:
            return None
        value = self._value(lines[-1], whole=True)
        if self.kind in ("list", "set") and isinstance(value, list) and len(value) == 1:
            items = []
            for ln in reversed(lines):
                try:
                    one = self._value(ln, whole=True)
                except _Alternatives:                    # a question above the list ends it
                    break
                if not (isinstance(one, list) and len(one) == 1):
                    break
                items = one + items
            if len(items) >= 3:                          # two lines may be a remark and an answer
                value = sorted(set(items)) if self.kind == "set" else items
        return value

    def _remark(self, line: str) -> bool:
        """Whether a line in parentheses is a remark rather than an answer (a grid cell)."""
        try:
            return self._value(line, whole=True) is None
        except _Alternatives:
            return True

    def _read_keys(self, t: str):
        """Several labelled integers (``QUADRANT:x COUNT:y``): the last value of each key,
        wherever it is; every key must be there."""
        values = []
        for k in self.keys:
            hits = list(re.finditer(r"(?<![a-z])" + k.lower() + r"\s*[:=]\s*(" + _INT + r")", t))
            if not hits:
                return None
            if _ALTERNATIVE.match(t, hits[-1].end()):
                raise _Alternatives
            values.append(str(int(hits[-1].group(1))))
        return " ".join(values)

    def _statements(self, t: str) -> list[str]:
        """The value text after each label or final-answer marker, in reply order: up to the
        next label on its line or the line's end (the next line when that is empty)."""
        labels = [re.escape(k.lower()) + r"\s*[:=]" for k in (*self.keys, *self.aliases)]
        pattern = re.compile(r"(?<![a-z])(?:" + "|".join([MARKER, *labels]) + ")")
        hits = list(pattern.finditer(t))
        bodies = []
        for i, m in enumerate(hits):
            end = t.find("\n", m.end())
            end = len(t) if end < 0 else end
            if i + 1 < len(hits):
                end = min(end, hits[i + 1].start())
            body = t[m.end():end]
            if not body.strip(" \t:.*"):                     # "COUNT:" then the value on the next line
                nxt = re.match(r"[ \t:]*\n\s*([^\n]*)", t[m.end():m.end() + 400])
                body = nxt.group(1) if nxt and (i + 1 == len(hits) or hits[i + 1].start() > m.end()) else ""
            bodies.append(body)
        if len(bodies) > 1 and re.search(r"\bor\s*$", bodies[-2]):
            raise _Alternatives
        return bodies

    def _value(self, body: str, whole: bool):
        """The answer ``body`` states, or None. ``whole``: the body is a whole final line,
        which must be the answer and nothing else; otherwise it is a labelled value, which an
        explanation may follow."""
        body = body.strip()
        if whole:
            if body.endswith("?"):
                raise _Alternatives
            body = _TRAILING_REMARK.sub("", body)
        if self.item == "cell":
            return self._cells(body, whole)
        if self.item == "int" and self.kind in ("single", "fixed"):
            m = re.match(r"[\s\[({]*(" + _INT + "|" + _NUMBER_WORDS + r")[\s\])}]*", body)
            if m is None or (whole and body[m.end():].strip(" .")):
                return None
            if _ALTERNATIVE.match(body, m.end()):
                raise _Alternatives
            n = m.group(1)
            return str(int(n)) if n[-1].isdigit() else str(NUMBER_WORDS.index(n))
        tokens = self._tokens(body, whole)
        if not tokens:
            return None
        if not self._answer_like(tokens, whole):
            return None
        if self.kind in ("single", "fixed") and self.item == "word":
            return tokens[0] if tokens[0] in self.vocab else " ".join(tokens)
        if self.item == "words":
            return " ".join(tokens)
        if self.item == "label":
            tokens = [t.upper() if t in ("s", "e") else t for t in tokens]
        elif self.item == "int":
            tokens = [str(int(t)) if re.fullmatch(_INT, t) else t for t in tokens]
        return sorted(set(tokens)) if self.kind == "set" else tokens

    def _tokens(self, body: str, whole: bool) -> list[str]:
        """The items of a list or word value: brackets unwrapped, cut at an explanation
        (a labelled value only; a whole line must be the list), split at separators (arrows
        too, for a maze path)."""
        body = body.strip()
        if body[:1] in _BRACKETS and _BRACKETS[body[0]] in body:
            body = body[1:body.index(_BRACKETS[body[0]])]
        if self.item == "label":
            body = _ARROWS.sub(",", body)
            body = re.sub(r"(?<=\w)\s*-\s*(?=\w)", ",", body)
        cut = re.search(r"\.\s*$", body) if whole else _EXPLAIN.search(body)
        rest = body[cut.start():] if cut else ""
        body = body[:cut.start()] if cut else body
        alt = re.search(r"\?|\bor\b", body)
        if alt or rest.startswith("?"):
            raise _Alternatives
        return [t.strip(".'[](){}") for t in _SEP.split(body.strip(" .,;")) if t.strip(".'[](){}")]

    def _answer_like(self, tokens: list[str], whole: bool) -> bool:
        """Whether items make an answer of this domain. A bare final line: all numbers (or
        S/E) where items are numbers, at least half domain words where they are words, one
        domain word for a yes/no answer. A labelled value: at least one such item (its
        other items stay in the answer and make it wrong)."""
        ok = [bool(re.fullmatch(_INT, t)) if self.item == "int" else
              bool(re.fullmatch(_INT, t)) or t in ("s", "e") if self.item == "label" else t in self.vocab
              for t in tokens]
        if not whole:
            return any(ok)
        if self.item in ("int", "label"):
            return all(ok)
        if self.kind in ("single", "fixed") and self.item == "word":
            return len(tokens) == 1 and ok[0]
        return 2 * sum(ok) >= len(ok)

    def _cells(self, body: str, whole: bool):
        """Grid cells ``(r,c)`` (``None`` for no cell): one for a fixed answer, a set otherwise."""
        inner = body.strip(" .")
        if inner[:1] in "[{" and inner[-1:] in "]}":
            inner = inner[1:-1]
        m = _NONE.match(inner)
        if m:
            if whole and inner[m.end():].strip(" ."):
                return None
            return "None" if self.kind == "fixed" else []
        cells, pos = [], 0
        while True:
            m = _CELL.match(inner, pos)
            if m is None:
                break
            cells.append((int(m.group(1)), int(m.group(2))))
            pos = m.end()
        rest = inner[pos:]
        if not cells or (whole and rest.strip(" .,;")):
            return None
        if _ALTERNATIVE.match(rest):
            raise _Alternatives
        if self.kind == "fixed":
            return f"({cells[0][0]},{cells[0][1]})" if len(cells) == 1 else None
        items = [f"({a} {b})" for a, b in cells]
        return sorted(set(items)) if self.kind == "set" else items


def _norm(text: str) -> str:
    return re.sub(r"\s+", "", text).lower().rstrip(".")
