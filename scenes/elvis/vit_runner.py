"""The ELVIS ViT baseline as a runner (``--model vit`` or ``vit:WEIGHTS``): a fresh 2-class ViT per task, trained on the task's
train split and asked to label each test image.

It speaks the ``elvis`` protocol: the rule-induction turn (train images, positives first)
trains a classifier from the same initial weights every time (the paper's recipe: AdamW,
lr 1e-3, weight decay 5e-5, 10 epochs, 224 px, mean/std 0.5) and replies with its name,
``trained classifier <key>``; the classification turn, whose prompt quotes that name,
gets the classifier's label for its image. The model is a ViT-B/16 from local weights when
given, otherwise randomly initialised; ``config`` overrides the architecture (tests use a
tiny one).
"""
from __future__ import annotations

import copy
import hashlib
import json
import re
from collections import OrderedDict
from pathlib import Path

import torch
import torch.nn.functional as F

from engine.errors import UserError
from engine.protocol import Request

from .protocol import INDUCTION

VIT_B16 = dict(image_size=224, patch_size=16, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
               intermediate_size=3072)
LABELS = ("positive", "negative")


class ViTRunner:
    """``generate`` answers ``elvis``-protocol requests; see the module docstring."""

    stateful = True           # the classifier lives in memory: the harness re-asks induction turns

    def __init__(self, weights: str | None = None, config: dict | None = None, epochs: int = 10, lr: float = 1e-3,
                 weight_decay: float = 5e-5, seed: int = 0, device: str = "cpu", keep: int = 2):
        from transformers import ViTConfig, ViTForImageClassification

        if weights and not (Path(weights) / "config.json").is_file():
            raise UserError(f"--model vit:{weights}: not a folder holding a ViT checkpoint (config.json); give a local "
                            "folder, or plain 'vit' for random initial weights")
        torch.manual_seed(seed)
        if weights:
            model = ViTForImageClassification.from_pretrained(weights, num_labels=2, ignore_mismatched_sizes=True)
        else:
            model = ViTForImageClassification(ViTConfig(**{**VIT_B16, **(config or {})}, num_labels=2))
        self.initial = copy.deepcopy(model.state_dict())
        self.model = model.to(device)
        self.size = model.config.image_size
        self.epochs, self.lr, self.weight_decay, self.seed, self.device = epochs, lr, weight_decay, seed, device
        self.trained: OrderedDict[str, dict] = OrderedDict()
        self.keep = keep
        self.name = f"vit-{'pretrained' if weights else 'scratch'}-{seed}"
        # what the replies depend on: the starting weights' contents and the training settings
        from engine.digests import checkpoint_digest

        start = checkpoint_digest(weights) if weights else json.dumps({**VIT_B16, **(config or {})}, sort_keys=True)
        self.identity = "vit " + json.dumps({"start": start, "epochs": epochs, "lr": lr, "weight_decay": weight_decay,
                                             "seed": seed}, sort_keys=True)

    def _pixels(self, images) -> torch.Tensor:
        x = torch.stack([im.to(self.device) for im in images]).float() / 255.0
        x = F.interpolate(x, size=(self.size, self.size), mode="bilinear", antialias=True, align_corners=False)
        return (x - 0.5) / 0.5

    def train(self, images, labels) -> str:
        """Train a fresh classifier on ``images`` with ``labels`` (1 = positive); returns its key."""
        key = hashlib.blake2b(b"".join(im.cpu().numpy().tobytes() for im in images) + bytes(labels),
                              digest_size=8).hexdigest()
        if key in self.trained:
            return key
        torch.manual_seed(self.seed)
        self.model.load_state_dict(self.initial)
        self.model.train()
        opt = torch.optim.AdamW(self.model.parameters(), lr=self.lr, weight_decay=self.weight_decay)
        x = self._pixels(images)
        y = torch.tensor([0 if v else 1 for v in labels], device=self.device)   # class 0 = positive
        for _ in range(self.epochs):
            opt.zero_grad()
            loss = F.cross_entropy(self.model(pixel_values=x).logits, y)
            loss.backward()
            opt.step()
        self.trained[key] = {k: v.detach().clone() for k, v in self.model.state_dict().items()}
        while len(self.trained) > self.keep:
            self.trained.popitem(last=False)
        return key

    @torch.no_grad()
    def predict(self, key: str, images) -> list[str]:
        self.model.load_state_dict(self.trained[key])
        self.model.eval()
        logits = self.model(pixel_values=self._pixels(images)).logits
        return [LABELS[int(i)] for i in logits.argmax(-1)]

    def generate(self, requests: list[Request]) -> list[str]:
        out = []
        for r in requests:
            m = re.search(r"trained classifier ([0-9a-f]{16})", r.prompt)
            if m:
                if m.group(1) not in self.trained:
                    raise UserError(f"classifier {m.group(1)} is not in memory; the ViT baseline answers only the "
                                     "elvis protocol, asked in order")
                out.append(self.predict(m.group(1), r.images)[0])
            elif r.prompt.startswith(INDUCTION_OPENING) and len(r.images) % 2 == 0:
                half = len(r.images) // 2
                out.append(f"trained classifier {self.train(r.images, [1] * half + [0] * half)}")
            else:
                raise UserError(f"request {r.id}: the ViT baseline answers the elvis protocol only "
                                 "(--protocol elvis or elvis-blind)")
        return out


INDUCTION_OPENING = INDUCTION.split("{", 1)[0]     # the induction prompt's fixed first words
