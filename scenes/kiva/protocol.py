"""The KiVA protocols: three stages in one conversation, and the per-stage report.

Stage 1 (verbal classification, "what"): the given pair and the trial's domain options;
stage 2 (verbal specification, "how"): the trial's change options (:mod:`.stages`); stage 3
(visual extrapolation): the options (A)(B)(C). The first option named in parentheses
decides (any option number, "(10)" too). ``kiva`` shows separate images (the given pair;
then the test input and the options), ``kiva-stitched`` the stitched composite in every
stage. The scored turn is stage 3; stages 1 and 2 are kept in the results (``what_correct``,
``how_correct``). Stage 3 is then asked again (``repeats`` runs in all), each time in a
fresh conversation that shows the given pair, the test input and the options reshuffled by a
seed drawn from the sample id; ``extrapolation_mean`` is the trial's mean over the runs.
"""
from __future__ import annotations

import hashlib
import re

import numpy as np

from engine.lazy import lazy_module
from engine.protocol import Protocol, Turn
from engine.sample import Sample

from .family import FAMILY
from .paper import MODELS
from .presentation import OPTIONS, composite
from .reading import read_choice
from .stages import chance, guesses
from .trials import EXTRAPOLATE, SYSTEM

rendering = lazy_module("engine.rendering")     # torch: loaded when a reshuffled composite is first drawn

WHAT = ("Which one of the following rules best describes the left-to-right transformation on top of the puzzle where "
        "the picture on the left transforms to the picture on the right? Answer with the correct rule number. "
        "Surrounded by parentheses, then provide a \"step-by-step\" reasoning for your choice.")
HOW = ("Which one of the following rules best describes the left-to-right transformation in the top of the puzzle where "
       "the picture on the left transforms to the picture on the right?. Answer with the correct rule number surrounded "
       "by parentheses. Then provide a \"step-by-step\" reasoning for your choice.")
GUIDE = ("The first two images show the transformation on top: the picture on the left transforms to the picture on "
         "the right. The third image shows the new object, and the last three images show what it becomes in options "
         "(A), (B) and (C), in that order.")
LETTERS = OPTIONS[:3]                   # what a guesser picks at stage 3 ("(D)" is left out, as chance is)
VARIANTS = {"kiva": "KiVA (kids)", "kiva_adults": "KiVA-adults", "kiva_compositional": "KiVA-compositional"}


def _numbered(options) -> str:
    return " ".join(f"({k + 1}) {o}" for k, o in enumerate(options))


def first_number(reply, count: int | None = None) -> int | None:
    """The first option number written in parentheses, e.g. "(2)" or "(10)" (with ``count``:
    the first one in 1..count), or None."""
    for m in re.finditer(r"\(\s*(\d{1,3})\s*\)", reply or ""):
        n = int(m.group(1))
        if count is None or 1 <= n <= count:
            return n
    return None


def _permutation(sample_id: str, run: int) -> list[int]:
    """The seeded option order of repeat ``run`` (run 0 is the trial's own order)."""
    if run == 0:
        return [0, 1, 2]
    key = int.from_bytes(hashlib.blake2b(f"{sample_id}\x00{run}".encode(), digest_size=8).digest(), "little")
    return [int(i) for i in np.random.Generator(np.random.Philox(key=key)).permutation(3)]


def _run_gold(sample: Sample, run: int) -> str:
    """The right letter of stage-3 run ``run``, once its options are in that run's order."""
    return OPTIONS[_permutation(sample.id, run).index("ABC".index(sample.answer_text[1]))]


class _Kiva(Protocol):
    stitched = False
    repeats = 3                         # stage 3 is asked again with the options reshuffled

    def _images(self, images, stage):
        if self.stitched:
            return [images[0]]
        return [images[1], images[2]] if stage < 3 else [images[3], images[4], images[5], images[6]]

    def first(self, sample: Sample, images) -> Turn:
        what = sample.meta["what"]
        return Turn(SYSTEM + "\n\n" + WHAT + " " + _numbered(what["options"]), self._images(images, 1),
                    gold=f"({what['gold']})", choices=guesses(what))

    def next(self, sample: Sample, images, turns):
        if len(turns) == 1:
            how = sample.meta["how"]
            return Turn(HOW + " " + _numbered(how["options"]), self._images(images, 2), gold=f"({how['gold']})",
                        choices=guesses(how))
        if len(turns) == 2:
            return Turn(EXTRAPOLATE, self._images(images, 3), gold=sample.answer_text, choices=LETTERS)
        run = len(turns) - 2
        if run < self.repeats:
            return self._rerun(sample, images, run)
        return None

    def _rerun(self, sample: Sample, images, run: int) -> Turn:
        """Stage 3 again, in a fresh conversation, with the options in another seeded order:
        the given pair, the test input and the reshuffled options, all in this one turn."""
        perm = _permutation(sample.id, run)
        if self.stitched:
            sprites = [p.sprites[0] for p in sample.panels[1:7]]
            scene = composite(sprites[0], sprites[1], sprites[2], [sprites[3 + k] for k in perm])
            shown = list(rendering.render([scene], tuple(images[0].shape[-2:])))
            prompt = SYSTEM + "\n\n" + EXTRAPOLATE
        else:
            shown = [images[1], images[2], images[3]] + [images[4 + k] for k in perm]
            prompt = SYSTEM + "\n\n" + GUIDE + "\n\n" + EXTRAPOLATE
        return Turn(prompt, shown, gold=_run_gold(sample, run), history=False, choices=LETTERS)

    def scored(self, turns) -> int:
        return 2

    def extras(self, sample: Sample, turns) -> dict:
        what, how = sample.meta["what"], sample.meta["how"]
        runs = [read_choice(t.reply, sample).value == _run_gold(sample, run)      # read as the scored run is
                for run, t in enumerate(turns[2:2 + self.repeats])]
        return {"what_correct": first_number(turns[0].reply, len(what["options"])) == what["gold"],
                "how_correct": first_number(turns[1].reply, len(how["options"])) == how["gold"],
                "what_chance": chance(what), "how_chance": chance(how),
                "extrapolation_runs": runs, "extrapolation_mean": sum(runs) / max(1, len(runs))}


@FAMILY.protocol
class Kiva(_Kiva):
    """KiVA: the three stages on separate images, stage 3 re-asked with reshuffled options."""

    name = "kiva"


@FAMILY.protocol
class KivaStitched(_Kiva):
    """KiVA: the three stages on the stitched composite, stage 3 re-asked with reshuffled options."""

    name = "kiva-stitched"
    stitched = True


def _pct(rows, key) -> float:
    return 100 * sum(float(x.get(key) or 0) for x in rows) / len(rows)


def _variant_table(variant: str, rows: list[dict]) -> list[str]:
    """One variant's section: per domain and overall, each stage's accuracy, its chance row
    (from the trials' own option sets) and the paper's model rows where it reports them."""
    by: dict[str, list[dict]] = {}
    for r in rows:
        by.setdefault(r["task"].split("/")[1], []).append(r)
    staged = all("what_correct" in r for r in rows)
    lines = [f"### {VARIANTS[variant]}", "",
             "| domain | n | what % | how % | extrapolation % | over reshuffles % |", "|---|---|---|---|---|---|"]
    for d, rs in sorted(by.items()) + [("all", rows)]:
        mean = 100 * sum(x.get("extrapolation_mean", x["correct"]) for x in rs) / len(rs)
        what, how = (f"{_pct(rs, k):.1f}" if staged else "–" for k in ("what_correct", "how_correct"))
        lines.append(f"| {'**all**' if d == 'all' else d} | {len(rs)} | {what} | {how} | {_pct(rs, 'correct'):.1f} "
                     f"| {mean:.1f} |")
    if staged:
        lines.append(f"| chance | | {_pct(rows, 'what_chance'):.1f} | {_pct(rows, 'how_chance'):.1f} | 33.3 | 33.3 |")
    else:
        lines.append("| chance | | | | 33.3 | 33.3 |")
    paper = MODELS.get(variant)
    if paper:
        lines += ["", "The paper's models (accuracy %, from its released responses; what / how / extrapolation):", "",
                  "| model | " + " | ".join(sorted(by)) + " |", "|---" * (len(by) + 1) + "|"]
        for model, per in paper.items():
            cells = [" / ".join(f"{v:.0f}" for v in per[d][:3]) if d in per else "–" for d in sorted(by)]
            lines.append(f"| {model} | " + " | ".join(cells) + " |")
    return lines + [""]


@FAMILY.report
def report(results: list[dict], folder=None, title: str = "") -> str:
    """Per variant (kids, adults, compositional): accuracy per stage and domain with the
    chance rows of the trials' own option sets and the paper's model rows."""
    lines = []
    for variant in VARIANTS:
        rows = [r for r in results if r["task"].split("/")[0] == variant]
        if rows:
            lines += _variant_table(variant, rows)
    if not lines:
        return ""
    head = ["## KiVA", "", "Extrapolation: the first run; over reshuffles: the mean over the runs with the options "
            "reshuffled (per trial, then per domain). Chance leaves out \"Doesn't apply\" and \"(D)\", as the paper "
            "does. The paper gives human accuracy only in figures (adults near 100% at every stage).", ""]
    return "\n".join(head + lines)
