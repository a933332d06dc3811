"""Running a local Hugging Face vision-language checkpoint in-process.

Rendered images go into the checkpoint's own processor as ``uint8 [3,H,W]`` tensors: no
PNG, no base64, no files. Prompts use the checkpoint's chat template (all images first,
then the text); requests are batched with left padding and decoded greedily.

Supported here: processors that construct without torchvision. On CPU machines without it
that means families whose image processor has a numpy/PIL backend chosen by
``AutoProcessor`` (LLaVA is tested; Idefics3-style processors have such a backend);
processors whose video slot needs torchvision (Qwen2-VL, Qwen2.5-VL, SmolVLM) fail to load
there and need a machine with torchvision, where the fast processors take the tensors
directly.

A runner's ``identity`` is what its replies depend on: a sha256 over the checkpoint's files
(config, weights, tokenizer, processor; hashed once per file path, size and modification
time in a process) and the generation settings. The evaluation cache keys on it, so
another checkpoint in a folder of the same name never reuses these replies.
"""
from __future__ import annotations

import json
from pathlib import Path

import torch

from engine.errors import UserError
from engine.digests import checkpoint_digest
from engine.protocol import Request


class HFRunner:
    """``generate(requests)`` with a local checkpoint at ``path``; ``identity`` names its
    checkpoint's contents and generation settings (see the module docstring)."""

    def __init__(self, path: str | Path, device: str = "cpu", batch_size: int = 8, max_new_tokens: int = 32,
                 dtype: torch.dtype = torch.float32):
        from transformers import AutoModelForImageTextToText, AutoProcessor

        path = Path(path)
        if not (path / "config.json").is_file():
            raise UserError(f"no model checkpoint at {str(path)!r} (expected a folder with config.json)")
        self.processor = AutoProcessor.from_pretrained(str(path))
        tok = getattr(self.processor, "tokenizer", None)
        if tok is None:
            raise UserError(f"the processor at {str(path)!r} has no tokenizer")
        tok.padding_side = "left"       # generation continues every row from its last token
        self.tokenizer = tok
        self.model = AutoModelForImageTextToText.from_pretrained(str(path), dtype=dtype).to(device).eval()
        self.device = torch.device(device)
        self.batch_size = int(batch_size)
        self.max_new_tokens = int(max_new_tokens)
        self.name = f"hf:{path.name}"
        self.identity = "hf " + json.dumps({"checkpoint": checkpoint_digest(path), "dtype": str(dtype),
                                            "max_new_tokens": self.max_new_tokens, "do_sample": False}, sort_keys=True)

    def prompt(self, r: Request) -> str:
        """The chat-templated text of the whole conversation, ending with the generation cue."""
        def user(text, images):
            return {"role": "user", "content": [{"type": "image"} for _ in images] + [{"type": "text", "text": text}]}

        messages = []
        for text, images, reply in r.history:
            messages += [user(text, images), {"role": "assistant", "content": [{"type": "text", "text": reply}]}]
        messages.append(user(r.prompt, r.images))
        return self.processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)

    @torch.no_grad()
    def generate(self, requests: list[Request]) -> list[str]:
        replies: list[str] = []
        for lo in range(0, len(requests), self.batch_size):
            chunk = requests[lo:lo + self.batch_size]
            images = [img.cpu() for r in chunk for img in [*(i for t in r.history for i in t[1]), *r.images]]
            inputs = self.processor(text=[self.prompt(r) for r in chunk], images=images or None, padding=True,
                                    return_tensors="pt").to(self.device)
            out = self.model.generate(**inputs, do_sample=False, max_new_tokens=self.max_new_tokens)
            new = out[:, inputs["input_ids"].shape[1]:]
            replies += [t.strip() for t in self.tokenizer.batch_decode(new, skip_special_tokens=True)]
        return replies
