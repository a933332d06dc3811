"""Image features for choosing hard distractors (similar-looking patches): a local
CLIP-style checkpoint when the ``jigsaw.embedder`` setting names one, else the colour and
layout feature :func:`kernels.images.colour_dct`.
"""
from __future__ import annotations

import functools
import json
from pathlib import Path

import torch

from engine.errors import UserError
from kernels.images import colour_dct

CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
CLIP_STD = (0.26862954, 0.26130258, 0.27577711)


class ModelFeatures:
    """Image embeddings from a local CLIP-style checkpoint: any transformers model with
    ``get_image_features`` (CLIP, SigLIP, ...), loaded from ``path`` with no network.

    Preprocessing runs on tensors on the model's device (resize to the vision tower's
    ``image_size``, rescale, normalise with the checkpoint's ``image_mean``/``image_std``
    from ``preprocessor_config.json`` when present, else CLIP's), so no image processor
    that needs torchvision is involved. Calling it maps ``[N,3,H,W]`` uint8 to ``[N, D]``
    unit-length float32 embeddings on the CPU.
    """

    def __init__(self, path, device: str = "cpu", batch_size: int = 64):
        from transformers import AutoModel   # heavy (about a second) and only needed with a checkpoint

        p = Path(path)
        if not (p / "config.json").is_file():
            raise UserError(f"no model checkpoint at {str(p)!r} (expected a folder with config.json)")
        self.model = AutoModel.from_pretrained(str(p)).eval().to(device)
        if not hasattr(self.model, "get_image_features"):
            raise UserError(f"the model at {str(p)!r} ({type(self.model).__name__}) has no get_image_features")
        vision = getattr(self.model.config, "vision_config", self.model.config)
        self.size = int(vision.image_size)
        mean, std = CLIP_MEAN, CLIP_STD
        pre = p / "preprocessor_config.json"
        if pre.is_file():
            cfg = json.loads(pre.read_text())
            mean, std = cfg.get("image_mean", mean), cfg.get("image_std", std)
        self.device = torch.device(device)
        self.mean = torch.tensor(mean, device=self.device).view(1, 3, 1, 1)
        self.std = torch.tensor(std, device=self.device).view(1, 3, 1, 1)
        self.batch_size = batch_size

    @torch.no_grad()
    def __call__(self, images: torch.Tensor) -> torch.Tensor:
        out = []
        for lo in range(0, images.shape[0], self.batch_size):
            x = images[lo:lo + self.batch_size].to(self.device).float() / 255.0
            x = torch.nn.functional.interpolate(x, size=(self.size, self.size), mode="bilinear", antialias=True,
                                                align_corners=False)
            res = self.model.get_image_features(pixel_values=(x - self.mean) / self.std)
            if isinstance(res, torch.Tensor):
                emb = res
            else:
                emb = getattr(res, "image_embeds", None)
                emb = res.pooler_output if emb is None else emb
            out.append(torch.nn.functional.normalize(emb.float(), dim=1).cpu())
        return torch.cat(out)


@functools.lru_cache(maxsize=4)
def extractor(embedder: str):
    """The feature extractor the ``jigsaw.embedder`` setting names: a checkpoint folder, or
    ``""`` for :func:`kernels.images.colour_dct`."""
    return ModelFeatures(embedder) if embedder else colour_dct
