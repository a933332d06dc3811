"""The KiVA protocols: three stages in one conversation, and the per-stage report.

Stage 1 (verbal classification, "what"): the given pair and the rule list of the trial;
stage 2 (verbal specification, "how"): the parameters of the domain; stage 3 (visual
extrapolation): the options. The first "(n)" or "(A)" of each reply decides. ``kiva``
shows separate images (given pair; then test input and the options), ``kiva-stitched``
shows the stitched composite in every stage. The scored turn is stage 3; stages 1 and 2
are kept in the results (``what_correct``, ``how_correct``). Stage 3 is then asked again
(``repeats`` runs in all, fresh conversations) with the options reshuffled by a seed drawn
from the sample id; ``extrapolation_mean`` is the trial's mean over the runs.
"""
from __future__ import annotations

import hashlib
import re

import numpy as np

from engine.lazy import lazy_module
from engine.protocol import Protocol, Turn
from engine.sample import Sample

from .family import FAMILY
from .trials import EXTRAPOLATE, OPTIONS, SYSTEM, composite

rendering = lazy_module("engine.rendering")     # torch: loaded when a reshuffled composite is first drawn

WHAT = ("Which one of the following rules best describes the left-to-right transformation on top of the puzzle where "
        "the picture on the left transforms to the picture on the right? Answer with the correct rule number. "
        "Surrounded by parentheses, then provide a \"step-by-step\" reasoning for your choice.")
HOW = ("Which one of the following rules best describes the left-to-right transformation in the top of the puzzle where "
       "the picture on the left transforms to the picture on the right?. Answer with the correct rule number surrounded "
       "by parentheses. Then provide a \"step-by-step\" reasoning for your choice.")
CHANCE = {"what": 0.25, "how": 1 / 3, "extrapolation": 1 / 3}


def _numbered(options) -> str:
    return " ".join(f"({k + 1}) {o}" for k, o in enumerate(options))


def first_number(reply) -> int | None:
    m = re.search(r"\((\d)\)", reply or "")
    return int(m.group(1)) if m else None


def _permutation(sample_id: str, run: int) -> list[int]:
    """The seeded option order of repeat ``run`` (run 0 is the trial's own order)."""
    if run == 0:
        return [0, 1, 2]
    key = int.from_bytes(hashlib.blake2b(f"{sample_id}\x00{run}".encode(), digest_size=8).digest(), "little")
    return [int(i) for i in np.random.Generator(np.random.Philox(key=key)).permutation(3)]


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
                    gold=f"({what['gold']})")

    def next(self, sample: Sample, images, turns):
        if len(turns) == 1:
            how = sample.meta["how"]
            gold = f"({how['gold']})" if how["gold"] else f"({len(how['options'])})"
            return Turn(HOW + " " + _numbered(how["options"]), self._images(images, 2), gold=gold)
        if len(turns) == 2:
            return Turn(EXTRAPOLATE, self._images(images, 3), gold=sample.answer_text)
        run = len(turns) - 2
        if run < self.repeats:
            return self._rerun(sample, images, run)
        return None

    def _rerun(self, sample: Sample, images, run: int) -> Turn:
        """Stage 3 again, in a fresh conversation, with the options in another seeded order."""
        perm = _permutation(sample.id, run)
        answer = "ABC".index(sample.answer_text[1])
        gold = OPTIONS[perm.index(answer)]
        if self.stitched:
            sprites = [p.sprites[0] for p in sample.panels[1:7]]
            scene = composite(sprites[0], sprites[1], sprites[2], [sprites[3 + k] for k in perm])
            shown = list(rendering.render([scene], tuple(images[0].shape[-2:])))
        else:
            shown = [images[3]] + [images[4 + k] for k in perm]
        return Turn(SYSTEM + "\n\n" + EXTRAPOLATE, shown, gold=gold, history=False)

    def scored(self, turns) -> int:
        return 2

    def extras(self, sample: Sample, turns) -> dict:
        what, how = sample.meta["what"], sample.meta["how"]
        how_gold = how["gold"] or len(how["options"])            # a control's change "doesn't apply"
        runs = []
        answer = "ABC".index(sample.answer_text[1])
        for run, t in enumerate(turns[2:2 + self.repeats]):
            m = re.search(r"\(([A-D])\)", (t.reply or "").upper())
            runs.append(bool(m) and m.group(1) == "ABC"[_permutation(sample.id, run).index(answer)])
        return {"what_correct": first_number(turns[0].reply) == what["gold"],
                "how_correct": first_number(turns[1].reply) == how_gold,
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


@FAMILY.report
def report(results: list[dict], folder=None, title: str = "") -> str:
    """Accuracy per stage and domain with the chance rows (25%, 33%, 33%)."""
    rs = [r for r in results if r["task"].startswith("kiva/")]
    if not rs:
        return ""
    by: dict[str, list[dict]] = {}
    for r in rs:
        by.setdefault(r["task"].split("/")[1], []).append(r)
    lines = ["## KiVA", "", "Extrapolation: the first run; over reshuffles: the mean over the runs with the options "
             "reshuffled (per trial, then per domain).", "",
             "| domain | n | what % | how % | extrapolation % | over reshuffles % |", "|---|---|---|---|---|---|"]
    pct = lambda rows, key: 100 * sum(bool(x.get(key)) for x in rows) / len(rows)  # noqa: E731
    for d, rows in sorted(by.items()):
        mean = 100 * sum(x.get("extrapolation_mean", x["correct"]) for x in rows) / len(rows)
        lines.append(f"| {d} | {len(rows)} | {pct(rows, 'what_correct'):.1f} | {pct(rows, 'how_correct'):.1f} | "
                     f"{pct(rows, 'correct'):.1f} | {mean:.1f} |")
    lines.append(f"| chance | | {100 * CHANCE['what']:.1f} | {100 * CHANCE['how']:.1f} | "
                 f"{100 * CHANCE['extrapolation']:.1f} | {100 * CHANCE['extrapolation']:.1f} |")
    return "\n".join(lines) + "\n"
