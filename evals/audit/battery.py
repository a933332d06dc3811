"""The reply battery: does a task's reply reader score what a reply states?

For each sample the battery writes realistic model replies in many styles, each knowing
what it states: the gold answer (``states="gold"``), a wrong answer (``"wrong"``) or no
answer at all (``"none"``). Each reply is scored exactly as the evaluation harness scores
it, ``task.read(reply, sample)`` (or a protocol's own reader, given as ``read``) then
:func:`engine.replies.is_correct`, and the battery counts

* false positives: a reply stating a wrong answer scored correct;
* false negatives: a compliant reply (below) stating the gold answer scored wrong or as a
  format error;
* no-answer replies scored as an answer (not a format error, correct or not);
* crashes: the reader (or the scoring) raised.

Compliance, the audit's definition. A reply is *compliant* (it states the answer in a form
the prompt allows) when it states ``x``, the answer written in the family's reply format
(``sample.reply_text`` for the gold, the same format for a wrong answer), either bare or
decorated by exactly one of: a trailing period; surrounding whitespace or newlines;
markdown bold; a label ``Answer:`` / ``Final answer:`` before it (optionally bold);
"The answer is x."; ``\\boxed{x}``; lines of reasoning before a final line ``x``; or an
explanation after ``x`` (on its line or the next) only when ``x`` carries a label (contains
``:``) or is an option in parentheses such as ``(B)``. Also compliant, with the same
decorations: the canonical answer (``sample.answer_text``) without the family's label
when the label (the part of ``reply_text`` before ``:``) does not occur in the prompt,
and a set answer with its items in another order. Not compliant (reported per style, never
counted as false negatives): other letter case, numbers written as words, JSON, a
self-correction or reasoning that names another answer first, hedges ("Probably yes."),
and lists written with other separators or brackets.

Wrong answers are other options, the gold list with two items swapped or one dropped, the
gold's last integer moved by one or two, or other gold answers of the task
(:func:`evals.runners.answer_space`); an answer the sample lists in ``meta["accepted"]``
(several answers are right) is never used as a wrong one.
"""
from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from typing import Callable

from engine.answers import format_answer, parse_answer
from engine.replies import NUMBER_WORDS, is_correct
from evals.runners import answer_space


@dataclass(frozen=True)
class Reply:
    """One battery reply: its ``style``, what it ``states`` (``gold``, ``wrong`` or
    ``none``), whether it is ``compliant`` (see the module docstring) and its ``text``."""

    style: str
    states: str
    compliant: bool
    text: str


REASONING = ("Let me look at the image carefully.\n"
             "I counted 3 rows and 12 items in total; the grid is 6x6.\n"
             "Two of them overlap, so I checked again.")
EXPLANATION = "(I checked 2 passes over the 6x6 layout.)"
YES_NO = ("yes", "no", "positive", "negative", "true", "false")
EXAMPLES = 12
_LABEL = re.compile(r"\A([A-Za-z][A-Za-z ]*?)\s*:\s*")
_INT = re.compile(r"(?<!\d)\d+(?!\d)")
_SEPS = (", ", " , ", ",", "; ", " ")


# ---------------------------------------------------------------- the reply format of the gold

def _spaced_words(t: str) -> str:
    """``t`` with commas as spaces and runs of spaces as one (``"(4,5)"`` -> ``"(4 5)"``)."""
    return " ".join(t.replace(",", " ").split())


_FIXES: tuple[Callable[[str], str], ...] = (lambda t: t, str.lower, _spaced_words, lambda t: _spaced_words(t.lower()))


@dataclass(frozen=True)
class _Layout:
    """How a sample's reply format writes an answer: ``prefix`` + items joined by ``sep`` +
    ``suffix``, each item ``fix``-ed into its canonical text (``sep`` None: one item)."""

    answer_type: str
    prefix: str
    suffix: str
    sep: str | None
    fix: Callable[[str], str]
    spaced: bool = False                      # a canonical item may hold a space

    def tokens(self, x: str) -> list[str] | None:
        """The items of ``x`` as the reply format writes them, or None when ``x`` is not in it."""
        if not (x.startswith(self.prefix) and x.endswith(self.suffix)) or len(x) < len(self.prefix + self.suffix):
            return None
        body = x[len(self.prefix):len(x) - len(self.suffix)]
        if not body.strip():
            return None
        return body.split(self.sep) if self.sep else [body]

    def join(self, tokens: list[str]) -> str:
        """Items written back in the reply format."""
        return self.prefix + (self.sep or ", ").join(tokens) + self.suffix

    def canon(self, x: str) -> str | None:
        """The canonical answer text ``x`` states, or None when it cannot be told."""
        tokens = self.tokens(x)
        if tokens is None:
            return None
        if self.answer_type in ("single", "fixed"):
            return self.fix("".join(tokens))
        items = [self.fix(t) for t in tokens]
        if not all(items) or any(re.search(r"[,\[\]]", i) for i in items):
            return None
        if self.sep is None and not self.spaced and re.search(r"[\s;]", items[0]):
            return None
        return format_answer(items, self.answer_type)


def _layout(sample) -> _Layout | None:
    """The layout of ``sample``'s reply format, checked to read its own gold back; None
    when no simple layout writes it (e.g. several labelled values)."""
    reply, canonical, kind = sample.reply_text, sample.answer_text, sample.answer_type
    if reply == canonical:
        listed = kind in ("list", "set")
        return _Layout(kind, "[" if listed else "", "]" if listed else "", ", " if listed else None, _FIXES[0])
    m = _LABEL.match(reply) if ":" in reply else None
    prefix = m.group(0) if m else ""
    if kind in ("single", "fixed"):
        candidates = [_Layout(kind, prefix, "", None, f) for f in _FIXES]
    else:
        many = len(sample.answer) > 1
        spaced = any(re.search(r"\s", a) for a in sample.answer)
        candidates = [_Layout(kind, prefix, "", sep if many else None, f, spaced)
                      for sep in (_SEPS if many else (None,)) for f in _FIXES]
    return next((c for c in candidates if c.canon(reply) == canonical), None)


def _label(sample) -> str:
    """The label of the reply format (``COUNT`` for ``COUNT: 7``), or "" when it has none."""
    if sample.reply_text == sample.answer_text:
        return ""
    m = _LABEL.match(sample.reply_text)
    return m.group(1).strip() if m else ""


def _canon_of(sample, layout: _Layout | None, x: str) -> str | None:
    """The canonical answer the reply-format text ``x`` states, or None when it cannot be told."""
    if x == sample.reply_text:
        return sample.answer_text
    return layout.canon(x) if layout else None


def _same(sample, layout: _Layout | None, a: str, b: str) -> bool:
    """Whether reply-format texts ``a`` and ``b`` state the same answer (as far as can be told)."""
    if a.strip() == b.strip():
        return True
    ca, cb = _canon_of(sample, layout, a), _canon_of(sample, layout, b)
    if ca is None or cb is None:
        return False
    return ca.lower() == cb.lower() if sample.answer_type == "single" else ca == cb


# ---------------------------------------------------------------- wrong answers

def _option_candidates(sample) -> list[str]:
    """The other options, from the one after the gold on (when options are written as replies)."""
    opts = list(sample.options or [])
    if not opts or sample.reply_text != sample.answer_text or sample.answer_text not in opts:
        return []
    i = opts.index(sample.answer_text)
    return opts[i + 1:] + opts[:i]


def _list_candidates(sample, layout: _Layout | None) -> list[str]:
    """The gold list with its first two items swapped (lists), and with its last item dropped."""
    if layout is None or sample.answer_type not in ("list", "set"):
        return []
    tokens = layout.tokens(sample.reply_text) or []
    if len(tokens) < 2:
        return []
    out = [layout.join(tokens[:-1])]
    if sample.answer_type == "list" and tokens[0] != tokens[1]:
        out.insert(0, layout.join([tokens[1], tokens[0], *tokens[2:]]))
    return out


def _int_candidates(sample) -> list[str]:
    """The gold reply with its last integer moved up by one, and down by one (or up by two)."""
    reply = sample.reply_text
    hits = list(_INT.finditer(reply))
    if not hits:
        return []
    m, n = hits[-1], int(hits[-1].group(0))
    return [reply[:m.start()] + str(v) + reply[m.end():] for v in (n + 1, n - 1 if n > 0 else n + 2)]


def _space_candidates(task, sample) -> list[str]:
    """The task's gold answers in its reply format, starting at a place set by the sample index."""
    answers = [a for a, _ in answer_space(task)]
    if not answers:
        return []
    start = sample.index % len(answers)
    return answers[start:] + answers[:start]


def wrong_answers(task, sample, k: int = 2) -> list[str]:
    """Up to ``k`` reply-format strings that state an answer other than the gold, in a fixed
    order (other options, list edits, integer edits, other gold answers of the task)."""
    layout = _layout(sample)
    accepted = {str(a) for a in (sample.meta.get("accepted") or [])}
    out: list[str] = []
    generators = (lambda: _option_candidates(sample), lambda: _list_candidates(sample, layout),
                  lambda: _int_candidates(sample), lambda: _space_candidates(task, sample))
    for make in generators:
        if len(out) >= k:                  # the task's answer space is only drawn when needed
            break
        for cand in make():
            if len(out) < k and _fresh(sample, layout, cand, [sample.reply_text, *out], accepted):
                out.append(cand)
    return out


def _fresh(sample, layout: _Layout | None, cand: str, taken: list[str], accepted: set[str]) -> bool:
    """Whether ``cand`` states an answer none of ``taken`` states and the sample does not accept."""
    if cand in accepted or _canon_of(sample, layout, cand) in accepted:
        return False
    return not any(_same(sample, layout, cand, t) for t in taken)


# ---------------------------------------------------------------- the styles

_DECORATIONS: tuple[tuple[str, str, object], ...] = (
    ("exact", "{x}", True),
    ("period", "{x}.", True),
    ("whitespace", "\n  {x}  \n\n", True),
    ("bold", "**{x}**", True),
    ("bold-label", "**Answer:** {x}", True),
    ("answer-is", "The answer is {x}.", True),
    ("final-answer", "Final answer: {x}", True),
    ("boxed", "\\boxed{{{x}}}", True),
    ("reasoning-then-final", REASONING + "\n{x}", True),
    ("answer-then-explanation", "{x}\n" + EXPLANATION, "explained"),
    ("answer-then-explanation-inline", "{x} " + EXPLANATION, "explained"),
)


def _explainable(x: str) -> bool:
    """Whether an explanation may follow ``x``: it carries a label or is an option in parentheses."""
    return ":" in x or re.fullmatch(r"\(\w\)", x.strip()) is not None


def _decorated(states: str, prefix: str, x: str, ok: bool) -> list[Reply]:
    """Every decoration of ``x`` (compliant when ``ok`` and the decoration is allowed), plus
    the JSON and letter-case variants (never compliant). ``prefix`` starts each style name."""
    out = []
    for style, template, allowed in _DECORATIONS:
        compliant = ok and (_explainable(x) if allowed == "explained" else bool(allowed))
        out.append(Reply(prefix + style, states, compliant, template.format(x=x)))
    out.append(Reply(prefix + "json", states, False, json.dumps({"answer": x})))
    for style, variant in (("lower-case", x.lower()), ("upper-case", x.upper())):
        if variant != x:
            out.append(Reply(prefix + style, states, False, variant))
    return out


def _number_words(states: str, x: str, canon: str | None, labelled: bool) -> list[Reply]:
    """A small integer answer written as a word, in ``x`` and (for a labelled format) alone."""
    hits = list(_INT.finditer(x))
    if canon is None or not canon.isdigit() or int(canon) >= len(NUMBER_WORDS) or not hits:
        return []
    word = NUMBER_WORDS[int(canon)]
    out = [Reply("number-as-word", states, False, x[:hits[-1].start()] + word + x[hits[-1].end():])]
    if labelled:
        out.append(Reply("bare:number-as-word", states, False, word))
    return out


def _hedges(states: str, canon: str | None) -> list[Reply]:
    """Hedged statements of a yes/no-like answer."""
    if canon is None or canon.strip().lower() not in YES_NO:
        return []
    return [Reply("hedge-probably", states, False, f"Probably {canon}."),
            Reply("hedge-i-think", states, False, f"I think the answer is {canon}")]


def _second_thoughts(states: str, x: str, other: str | None) -> list[Reply]:
    """``other`` named first, then ``x`` as the final answer."""
    if other is None:
        return []
    return [Reply("self-correction", states, False, f"{other}... wait, no. Actually {x}"),
            Reply("reasoning-names-another", states, False,
                  f"At first glance it could be {other}, but let me check again.\n{REASONING}\n{x}")]


def _list_styles(states: str, canon: str | None, answer_type: str, stated: set[str]) -> list[Reply]:
    """Lists written with other separators or brackets (never compliant; a form already
    stated is left out)."""
    if canon is None or answer_type not in ("list", "set"):
        return []
    items = parse_answer(canon, answer_type)
    joined = {"list:bullets": "\n".join(f"- {i}" for i in items), "list:semicolons": "; ".join(items),
              "list:and": ", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1 else items[0],
              "list:lines": "\n".join(items), "list:brackets": "[" + ", ".join(items) + "]",
              "list:braces": "{" + ", ".join(items) + "}", "list:parens": "(" + ", ".join(items) + ")"}
    return [Reply(style, states, False, text) for style, text in joined.items() if text not in stated]


def _reordered(states: str, x: str, canon: str | None, layout: _Layout | None, bare_ok: bool | None) -> list[Reply]:
    """A set answer with its items reversed: the same answer (compliant as its form is)."""
    if layout is None or layout.answer_type != "set":
        return []
    out = []
    tokens = layout.tokens(x) or []
    if len(tokens) > 1:
        out.append(Reply("set-reordered", states, True, layout.join(tokens[::-1])))
    items = parse_answer(canon, "set") if canon else []
    if bare_ok is not None and len(items) > 1:
        out.append(Reply("bare:set-reordered", states, bare_ok, "[" + ", ".join(items[::-1]) + "]"))
    return out


def _answer_replies(sample, states: str, x: str, other: str | None, layout: _Layout | None) -> list[Reply]:
    """Every style stating the answer ``x`` (reply format); ``other``: another answer, for
    the self-corrections."""
    canon = sample.answer_text if states == "gold" else (layout.canon(x) if layout else None)
    label = _label(sample)
    bare_ok = (label not in sample.question) if label and canon is not None and canon != x else None
    out = _decorated(states, "", x, True)
    if bare_ok is not None:
        out += _decorated(states, "bare:", canon, bare_ok)
    out += _second_thoughts(states, x, other)
    out += _number_words(states, x, canon, bool(label))
    out += _hedges(states, canon)
    out += _reordered(states, x, canon, layout, bare_ok)
    out += _list_styles(states, canon, sample.answer_type, {x, canon if bare_ok is not None else x})
    return out


# ---------------------------------------------------------------- replies that state nothing

@functools.lru_cache(maxsize=1)
def _filler() -> str:
    """About 1 MB of filler text without numbers or answer words."""
    line = "The picture is quite busy and I would rather describe the scene in general terms here.\n"
    return line * (1_000_000 // len(line) + 1)


def _no_answers(sample, wrong: list[str], huge: bool) -> list[Reply]:
    """Replies that state no answer (with the 1 MB and 10,000-digit ones when ``huge``)."""
    opts = list(sample.options or [])
    listed = opts or sorted({sample.reply_text, *wrong})
    texts = [("refusal", "I cannot determine this from the image."),
             ("refusal-then-number", "I cannot determine this from the image. I can only see 2 in the bottom"),
             ("empty", ""), ("whitespace", "  \n\t \n"), ("list-all-options", " or ".join(listed) + "?")]
    if opts:
        texts.append(("refusal-then-option", f"I cannot determine this; it is too blurry to tell if it is {opts[0]}."))
    if huge:
        texts += [("filler-1mb", _filler()), ("digits-10000", "7" * 10_000)]
    return [Reply(style, "none", False, text) for style, text in texts]


def replies_for(sample, wrong: list[str], huge: bool = False) -> list[Reply]:
    """The battery for one sample: every style applied to the gold answer and to each wrong
    answer text in ``wrong`` (reply-format strings), plus the no-answer replies (with the
    1 MB and 10,000-digit ones when ``huge``). Returns the replies, each text once per state
    (a compliant duplicate wins)."""
    layout = _layout(sample)
    gold = sample.reply_text
    replies = _answer_replies(sample, "gold", gold, wrong[0] if wrong else None, layout)
    for w in wrong:
        replies += _answer_replies(sample, "wrong", w, gold, layout)
    replies += _no_answers(sample, wrong, huge)
    kept: dict[tuple[str, str], Reply] = {}
    for r in replies:
        key = (r.states, r.text)
        if key not in kept or (r.compliant and not kept[key].compliant):
            kept[key] = r
    return list(kept.values())


# ---------------------------------------------------------------- scoring

def _score(read: Callable, sample, text: str) -> tuple[str | None, bool, bool, str | None]:
    """``(parsed value, format error, scored correct, error)``: ``text`` read by ``read`` and
    scored as the harness scores it; ``error`` is the exception text when either raised."""
    try:
        parsed = read(text, sample)
        return parsed.value, parsed.format_error, bool(is_correct(parsed, sample.answer_text, sample.answer_type)), None
    except Exception as exc:                          # a crash is a finding, not a failure of the audit
        return None, True, False, f"{type(exc).__name__}: {exc}"[:300]


# kind of failure -> (its column in ``by_style``, the totals it adds to); listed worst first
_KINDS = {"crash": ("crashes", ("crashes",)),
          "compliant-fp": ("fp", ("false_positives", "compliant_false_positives")),
          "compliant-fn": ("fn", ("false_negatives", "compliant_false_negatives", "gold_misses")),
          "noanswer-scored": ("noanswer_scored", ("noanswer_scored",)),
          "fp": ("fp", ("false_positives",)),
          "fn": ("fn", ("gold_misses",))}
_PRIORITY = tuple(_KINDS)


def _failure(reply: Reply, format_error: bool, correct: bool, error: str | None) -> str | None:
    """What went wrong with a scored reply (one of ``_PRIORITY``), or None."""
    if error is not None:
        return "crash"
    if reply.states == "wrong" and correct:
        return "compliant-fp" if reply.compliant else "fp"
    if reply.states == "gold" and not correct:
        return "compliant-fn" if reply.compliant else "fn"
    if reply.states == "none" and not format_error:
        return "noanswer-scored"
    return None


class _Tally:
    """The battery's counts, per style, and its failing cases."""

    def __init__(self):
        self.counts = {k: 0 for k in ("n", "false_positives", "false_negatives", "noanswer_scored", "crashes",
                                      "compliant_false_positives", "compliant_false_negatives", "gold_misses")}
        self.by_style: dict[str, dict[str, int]] = {}
        self.failures: list[tuple[int, int, dict]] = []

    def add(self, sample, reply: Reply, scored: tuple[str | None, bool, bool, str | None]) -> None:
        """Count ``reply`` to ``sample``, scored as ``(value, format error, correct, error)``."""
        value, format_error, correct, error = scored
        style = self.by_style.setdefault(reply.style, {"n": 0, "fp": 0, "fn": 0, "noanswer_scored": 0, "crashes": 0})
        style["n"] += 1
        self.counts["n"] += 1
        kind = _failure(reply, format_error, correct, error)
        if kind is None:
            return
        column, totals = _KINDS[kind]
        style[column] += 1
        for name in totals:
            self.counts[name] += 1
        case = {"sample": sample.id, "kind": kind, "style": reply.style, "states": reply.states,
                "compliant": reply.compliant, "reply": reply.text[:300], "parsed": value, "gold": sample.answer_text,
                "error": error}
        self.failures.append((_PRIORITY.index(kind), len(self.failures), case))

    def examples(self) -> list[dict]:
        """Up to ``EXAMPLES`` failing cases, the worst kinds first, one per (kind, style) before repeats."""
        ranked = sorted(self.failures, key=lambda f: f[:2])
        seen: set[tuple[str, str]] = set()
        first, rest = [], []
        for _, _, case in ranked:
            key = (case["kind"], case["style"])
            (rest if key in seen else first).append(case)
            seen.add(key)
        return (first + rest)[:EXAMPLES]

    def result(self) -> dict:
        """The counts, ``by_style`` and ``examples`` (what :func:`run_battery` returns)."""
        return {**self.counts, "by_style": dict(sorted(self.by_style.items())), "examples": self.examples()}


def run_battery(task, samples, read: Callable | None = None) -> dict:
    """Score the battery on ``samples`` with the task's reader (``read(reply, sample) -> Parsed``
    when given, e.g. a protocol's own ``parse``). Returns ``{"n", "false_positives",
    "false_negatives", "noanswer_scored", "crashes", "compliant_false_positives",
    "compliant_false_negatives", "gold_misses", "by_style", "examples"}``:
    ``false_negatives`` (equal to ``compliant_false_negatives``) counts compliant gold
    replies not scored correct, ``gold_misses`` every gold reply not scored correct;
    ``false_positives`` counts every wrong reply scored correct; ``by_style`` maps each style
    to its ``n``, ``fp``, ``fn`` (every gold miss), ``noanswer_scored`` and ``crashes``;
    ``examples`` holds up to 12 failing cases (each also names its ``kind``). A free-text
    task (``open_answer``, graded by a judge) is not audited: it gets the zero counts plus
    ``"skipped"`` saying why (no other result has that key). The 1 MB and 10,000-digit
    replies go with the first sample only. Deterministic; a reader that raises is counted,
    not raised."""
    tally = _Tally()
    if task.open_answer:
        return {**tally.result(), "skipped": "free-text answer, graded by a judge"}
    read = read or task.read
    for i, sample in enumerate(samples):
        for reply in replies_for(sample, wrong_answers(task, sample), huge=i == 0):
            tally.add(sample, reply, _score(read, sample, reply.text))
    return tally.result()
