"""Image features for choosing hard distractors: similar-looking patches.

The offline default is a colour histogram (4 bins per channel) joined with the
low-frequency 8x8 DCT coefficients of the grey image at 32x32, L2-normalised, so cosine
similarity compares both palette and coarse layout.
"""
from __future__ import annotations

import math

import torch


def _dct_matrix(n: int) -> torch.Tensor:
    k = torch.arange(n, dtype=torch.float64)[:, None]
    i = torch.arange(n, dtype=torch.float64)[None, :]
    m = torch.cos(math.pi * (2 * i + 1) * k / (2 * n)) * math.sqrt(2.0 / n)
    m[0] /= math.sqrt(2.0)
    return m.float()


_DCT32 = _dct_matrix(32)


def colour_dct(images: torch.Tensor) -> torch.Tensor:
    """Features of ``images [N,3,H,W]`` uint8: ``[N, 128]`` float32, unit length."""
    x = images.float() / 255.0
    N = x.shape[0]
    bins = (x * 3.999).long().clamp(0, 3)
    code = bins[:, 0] * 16 + bins[:, 1] * 4 + bins[:, 2]
    hist = torch.zeros(N, 64).scatter_add_(1, code.reshape(N, -1), torch.ones(N, code[0].numel()))
    hist = hist / hist.sum(1, keepdim=True)
    grey = torch.nn.functional.interpolate(x.mean(1, keepdim=True), size=(32, 32), mode="area")[:, 0]
    coef = (_DCT32 @ grey @ _DCT32.T)[:, :8, :8].reshape(N, 64)
    feats = torch.cat([hist.sqrt(), coef / 8.0], 1)
    return feats / feats.norm(dim=1, keepdim=True).clamp_min(1e-12)


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
        import json
        from pathlib import Path

        from transformers import AutoModel

        p = Path(path)
        if not (p / "config.json").is_file():
            raise FileNotFoundError(f"no model checkpoint at {str(p)!r} (expected a folder with config.json)")
        self.model = AutoModel.from_pretrained(str(p)).eval().to(device)
        if not hasattr(self.model, "get_image_features"):
            raise ValueError(f"the model at {str(p)!r} ({type(self.model).__name__}) has no get_image_features")
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
