"""Percept-V protocols.

``perceptv`` is the benchmark's zero-shot protocol: the domain's prompt (with its output
format line and the closing instruction) and the image(s), one turn. ``perceptv-1shot``
first shows a solved exemplar, a different instance of the same domain and size with its
gold answer written in the output format, as an earlier exchange, then asks the problem.

"""
from __future__ import annotations

from engine.lazy import lazy_module
from engine.protocol import Protocol, Turn
from engine.registry import task_of
from engine.sample import Sample

from .family import FAMILY

outputs = lazy_module("engine.outputs")         # torch: loaded when an exemplar is first rendered

EXEMPLAR_OFFSET = 1_000_000          # exemplars come from indices no dataset of 200 per domain uses


def _side(sample: Sample, image) -> int:
    """The panel side ``sample`` was rendered at, read back from its first image ``[3,H,W]``
    (a panel of extent ``(h, w)`` is ``w`` sides wide)."""
    width = int(image.shape[-1])
    return round(width / sample.panel_extents[0][1]) if sample.panel_extents else width


@FAMILY.protocol
class PerceptV(Protocol):
    """Percept-V zero-shot: the domain's prompt and the image(s)."""

    name = "perceptv"

    def first(self, sample: Sample, images) -> Turn:
        return Turn(sample.question, list(images), gold=sample.reply_text)


@FAMILY.protocol
class PerceptVOneShot(Protocol):
    """Percept-V: a solved exemplar of the same domain and size, then the problem."""

    name = "perceptv-1shot"

    def first(self, sample: Sample, images) -> Turn:
        # same size (index // 10 % 20), another instance
        ex = task_of(sample).sample(sample.seed, EXEMPLAR_OFFSET + sample.index)
        shown = outputs.render_samples([ex], _side(sample, images[0]))[0]
        return Turn(ex.question, list(shown), reply=ex.reply_text)

    def next(self, sample: Sample, images, turns):
        if len(turns) == 1:
            return Turn(sample.question, list(images), gold=sample.reply_text)
        return None
