"""The Bongard protocols: the seed's five prompting strategies.

Panels of a Bongard sample: the collage, then left panels 1-6, right panels 1-6 (see
``scenes.bongard.tasks``). Every strategy ends with a turn whose reply is the two-sentence
answer; the seed's common system prompt opens each fresh conversation.

* ``bongard-direct``: the collage, one turn.
* ``bongard-descriptive-direct``: each of the 12 images described alone, then the collage
  with all descriptions.
* ``bongard-contrastive-direct``: each of the 6 left/right pairs contrasted alone, then the
  collage with all difference lists.
* ``bongard-contrastive-iterative``: the pairs one after another, each refining a candidate
  concept carried in the prompt; the last pair asks for the answer.
* ``bongard-descriptive-iterative``: each side's images one after another, refining a
  description of that side; then the collage with both descriptions.
"""
from __future__ import annotations

from engine.protocol import Protocol, Turn
from engine.sample import Sample

from .family import FAMILY
from .tasks import SYSTEM

A2 = ("Here is the Bongard problem collage. Provide your answer as two plain sentences: first the concept for all left "
      "images, then the concept for all right images.")
A3_IMAGE = ("This is a single image from either the left or right side of a Bongard problem. Do not solve the problem "
            "yet. Describe this image in detail. Focus on all visual features: objects, shapes, colors, spatial "
            "arrangements, textures, and any other distinctive properties. Be thorough, as these descriptions will "
            "later be used to identify a common concept.")
A3_FINAL = ("Here is the Bongard problem collage. Below are the detailed descriptions of each left image and each right "
            "image. Based on this information, provide your answer. Left class image descriptions: {}. Right class "
            "image descriptions: {}.")
A4_PAIR = ("Here is a pair: one image from the left side of a Bongard problem and one from the right side. Do not solve "
           "the full problem yet. Instead, carefully examine both images and list all differences between them. Focus "
           "on contrasting visual features: objects, shapes, colors, positions, textures, counts, orientations, or any "
           "other properties that distinguish the left image from the right image. Output your answer as a simple "
           "list of differences. Use plain text, no markdown.")
A4_FINAL = ("Here is the full Bongard problem collage. Below are all the difference lists obtained from comparing "
            "left-right image pairs. Based on this information, determine the common concept that unites all left "
            "images but no right images, and the common concept that unites all right images but no left images. "
            "Provide your answer.")
A5_FIRST = ("Here is a pair: one image from the left side of a Bongard problem and one from the right side. Carefully "
            "examine both images and list all differences between them. Focus on contrasting visual features: objects, "
            "shapes, colors, positions, textures, counts, orientations, or any other properties that distinguish the "
            "left image from the right image. Propose a candidate concept that distinguishes the left image from the "
            "right image.")
A5_NEXT = ("Here is the next left-right pair. Your goal is to generalize the concept to fit all of the pairs you have "
           "seen. Carefully examine the new pair and find all differences between the images. Focus on contrasting "
           "visual features: objects, shapes, colors, positions, textures, counts, orientations, or any other "
           "properties that distinguish the left image from the right image. Your previous candidate concept is: {}. "
           "Check whether the previous concept applies to the new pair. If it is fully correct, output the same "
           "concept unchanged. If it is partially correct, refine the concept by removing or adjusting the failing "
           "parts, keeping only the aspects valid for all left images seen so far and false for all right images. If it "
           "is completely wrong, discard it and formulate a completely new concept based on all pairs seen now, "
           "including this one. Output the updated concept as one detailed sentence covering all distinguishing "
           "features common to all processed pairs.")
A5_LAST = ("This is the last left-right pair. Based on all six pairs and your iterative refinement, provide your final "
           "answer. Output exactly two plain sentences: the first describes the concept that holds for all left images "
           "but no right images, and the second describes the concept that holds for all right images but no left "
           "images. Your iterative concept is: {}.")
A6_FIRST = ("This is the first image from one side of a Bongard problem. Later you will see more images from this same "
            "side. Your goal is to formulate a general description of all images on this side for solving the problem "
            "later. Do not solve the problem yet. Describe this image in detail. Focus on all visual features: objects, "
            "shapes, colors, spatial arrangements, textures, counts, orientations, and any other distinctive "
            "properties. Be thorough, as these descriptions will later be used to identify a common concept.")
A6_NEXT = ("Here is the next image from the same side. Your goal is to generalize the class description to fit all "
           "images from this side that you have seen so far. Carefully examine this new image and list all its "
           "relevant visual features: objects, shapes, colors, spatial arrangements, textures, counts, orientations, "
           "or any other distinctive properties. Your previous candidate description for this side is: {}. Check "
           "whether it applies to the new image. If it is fully correct, output the same description unchanged. If it "
           "is partially correct, refine the description by removing or adjusting the failing parts, keeping only what "
           "is true for all images seen so far. If it is completely wrong, discard it and formulate a completely new "
           "description based on all images seen now, including this one.")
A6_LAST = ("This is the last image from this side. Based on all six images and your iterative refinement, provide the "
           "final description that unites all images on this side. Your iterative description is: {}.")
A6_FINAL = ("Here is the Bongard problem collage. Below are generalized descriptions of the left and right sides of "
            "images. Based on this information, solve the Bongard problem. Left class image descriptions: {}. Right "
            "class image descriptions: {}.")


class _Strategy(Protocol):
    """A strategy as a list of steps: ``step(k, sample, images, replies)`` builds turn ``k``."""

    def steps(self) -> int:
        raise NotImplementedError

    def step(self, k: int, sample: Sample, images, replies: list[str]) -> Turn:
        raise NotImplementedError

    def first(self, sample, images):
        return self._turn(0, sample, images, [])

    def next(self, sample, images, turns):
        k = len(turns)
        return self._turn(k, sample, images, [t.reply for t in turns]) if k < self.steps() else None

    def _turn(self, k, sample, images, replies):
        t = self.step(k, sample, images, replies)
        t.prompt = SYSTEM + "\n\n" + t.prompt
        if k == self.steps() - 1:
            t.gold = sample.reply_text
        else:
            t.gold = f"{sample.meta['reference']['left']} {sample.meta['reference']['right']}"
            t.history = False
        return t


def _left(images, i):
    return images[1 + i]


def _right(images, i):
    return images[7 + i]


@FAMILY.protocol
class Direct(_Strategy):
    """Bongard: the collage, one turn."""

    name = "bongard-direct"

    def steps(self):
        return 1

    def step(self, k, sample, images, replies):
        return Turn(A2, [images[0]])


@FAMILY.protocol
class DescriptiveDirect(_Strategy):
    """Bongard: each of the 12 images described alone, then the collage with all descriptions."""

    name = "bongard-descriptive-direct"

    def steps(self):
        return 13

    def step(self, k, sample, images, replies):
        if k < 12:
            return Turn(A3_IMAGE, [images[1 + k]], history=False)
        return Turn(A3_FINAL.format(" | ".join(replies[:6]), " | ".join(replies[6:12])), [images[0]], history=False)


@FAMILY.protocol
class ContrastiveDirect(_Strategy):
    """Bongard: each left/right pair contrasted alone, then the collage with all difference lists."""

    name = "bongard-contrastive-direct"

    def steps(self):
        return 7

    def step(self, k, sample, images, replies):
        if k < 6:
            return Turn(A4_PAIR, [_left(images, k), _right(images, k)], history=False)
        lists = " ".join(f"Pair {i + 1}: {r}" for i, r in enumerate(replies[:6]))
        return Turn(A4_FINAL + " " + lists, [images[0]], history=False)


@FAMILY.protocol
class ContrastiveIterative(_Strategy):
    """Bongard: the pairs one after another, refining a candidate concept; the last asks for the answer."""

    name = "bongard-contrastive-iterative"

    def steps(self):
        return 6

    def step(self, k, sample, images, replies):
        pair = [_left(images, k), _right(images, k)]
        if k == 0:
            return Turn(A5_FIRST, pair, history=False)
        return Turn((A5_LAST if k == 5 else A5_NEXT).format(replies[-1]), pair, history=False)


@FAMILY.protocol
class DescriptiveIterative(_Strategy):
    """Bongard: each side's images one after another refining its description, then the collage."""

    name = "bongard-descriptive-iterative"

    def steps(self):
        return 13

    def step(self, k, sample, images, replies):
        if k == 12:
            return Turn(A6_FINAL.format(replies[5], replies[11]), [images[0]], history=False)
        side, i = divmod(k, 6)
        img = [(_left if side == 0 else _right)(images, i)]
        if i == 0:
            return Turn(A6_FIRST, img, history=False)
        return Turn((A6_LAST if i == 5 else A6_NEXT).format(replies[-1]), img, history=False)


STRATEGIES = ("bongard-direct", "bongard-descriptive-direct", "bongard-contrastive-direct",
              "bongard-contrastive-iterative", "bongard-descriptive-iterative")
