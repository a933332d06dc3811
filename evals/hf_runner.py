"""Running a local Hugging Face vision-language checkpoint in-process.

Rendered images go into the checkpoint's own processor as ``uint8 [3,H,W]`` tensors: no
PNG, no base64, no files. Prompts use the checkpoint's chat template (all images first,
then the text); requests are batched with left padding and decoded greedily, or sampled
(``temperature`` > 0, with ``top_p``) from a torch generator seeded per batch from ``seed``
and the batch's request ids, so the same command gives the same replies.

A ``--model`` that is not a folder but reads ``ORG/NAME`` (optionally ``@REVISION``) is a
Hugging Face Hub id, resolved from the local cache only (:func:`resolve_checkpoint`; nothing
is downloaded).

Supported here: processors that construct without torchvision. On CPU machines without it
that means families whose image processor has a numpy/PIL backend chosen by
``AutoProcessor`` (LLaVA is tested; Idefics3-style processors have such a backend);
processors whose video slot needs torchvision (Qwen2-VL, Qwen2.5-VL, SmolVLM) fail to load
there and need a machine with torchvision, where the fast processors take the tensors
directly.

A runner's ``identity`` is what its replies depend on: a sha256 over the checkpoint's files
(config, weights, tokenizer, processor; hashed once per file path, size and modification
time in a process) and the generation settings (dtype, max_new_tokens, and temperature,
top_p and seed when sampling). The evaluation cache keys on it, so another checkpoint in a
folder of the same name never reuses these replies.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
from pathlib import Path

import torch

from engine.errors import UserError
from engine.digests import checkpoint_digest
from engine.protocol import Request


DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16, "auto": "auto"}
HUB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*(@[A-Za-z0-9._/-]+)?")


# Reply length limits per family, in new tokens, when --max-new-tokens is not given; a run
# takes the largest over its tasks' families. Gold answers measured in characters; a token
# is counted as 2 characters (conservative: English text averages about 4).
#   kiva: 300, the reply limit of the KiVA paper's evaluation (its gold answers are an
#     option, but its stages ask a model to say what changed, which takes a sentence or two).
#   perceptv: the longest gold answer at problem size 20 (the largest) over every domain is
#     205 characters (layered_shapes: 20 shape names, seed 0, indices 190..199), about 103
#     tokens; doubled for a model's own wording around the strict format and rounded up: 256.
#   bongard: free-text rule descriptions; the longest gold answer is 90 characters (both
#     sides' rules, 20 samples per task), about 45 tokens, but its strategy protocols ask a
#     model to describe the panels and induce the rule in its own words first: 512.
#   jigsaw, shapes, elvis: short gold answers (an option, a number, a list: shapes' longest
#     is 37 characters, a list of 5 colour names); 64 leaves room for a short preamble.
MAX_NEW_TOKENS = {"kiva": 300, "perceptv": 256, "bongard": 512, "jigsaw": 64, "shapes": 64, "elvis": 64}
FALLBACK_MAX_NEW_TOKENS = 64         # a family not in the table (a plug-in)


def default_max_new_tokens(families) -> int:
    """The reply length limit of a run over tasks of ``families``: the largest of their
    :data:`MAX_NEW_TOKENS` (:data:`FALLBACK_MAX_NEW_TOKENS` for one not listed)."""
    return max((MAX_NEW_TOKENS.get(f, FALLBACK_MAX_NEW_TOKENS) for f in families), default=FALLBACK_MAX_NEW_TOKENS)


def parse_dtype(value) -> torch.dtype | str:
    """``value`` (a name in :data:`DTYPES` or a ``torch.dtype``) as ``from_pretrained`` takes
    it: a ``torch.dtype`` or ``"auto"``; a :class:`UserError` naming the allowed names otherwise."""
    if isinstance(value, torch.dtype) and value in DTYPES.values():
        return value
    if isinstance(value, str) and value in DTYPES:
        return DTYPES[value]
    raise UserError(f"--dtype {value!r}: allowed: {', '.join(DTYPES)}")


def hub_cache() -> Path:
    """The local Hugging Face Hub cache folder (``HF_HUB_CACHE``, else ``HF_HOME/hub``, else the
    library's default), read when called."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]) / "hub"
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def is_hub_id(model: str) -> bool:
    """Whether ``model`` reads as a Hub id (``ORG/NAME`` or ``ORG/NAME@REVISION``) and is not
    an existing path."""
    return bool(HUB_ID.fullmatch(model)) and not Path(model).exists()


def resolve_checkpoint(model: str) -> tuple[Path, dict]:
    """The local folder of ``model`` and what names it: ``({"path": ...})`` for a folder, or
    for a Hub id ``{"id", "revision" (the commit of the cached snapshot)}``, found in the
    local cache with no download. A Hub id absent from the cache is a one-line
    :class:`UserError` naming the id and the cache folder searched."""
    if not is_hub_id(model):
        return Path(model), {"path": str(Path(model).resolve())}
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HFValidationError, LocalEntryNotFoundError

    repo, _, revision = model.partition("@")
    cache = hub_cache()
    try:
        folder = Path(snapshot_download(repo, revision=revision or None, cache_dir=str(cache), local_files_only=True))
    except (LocalEntryNotFoundError, HFValidationError, FileNotFoundError, ValueError):
        folder = None
    if folder is None or not (folder / "config.json").is_file():
        raise UserError(f"--model {model!r}: not a folder, and no such Hub checkpoint (with config.json) in the "
                        f"local Hugging Face cache {str(cache)!r}; nothing is downloaded: fetch it into that cache "
                        "first, or give the checkpoint's folder")
    return folder, {"id": repo, "revision": folder.name}


def _check_generation(max_new_tokens, temperature, top_p) -> None:
    """A :class:`UserError` for a generation setting out of range; returns None otherwise."""
    if isinstance(max_new_tokens, bool) or int(max_new_tokens) != max_new_tokens or max_new_tokens < 1:
        raise UserError(f"--max-new-tokens {max_new_tokens!r}: must be a positive integer")
    if not 0 <= float(temperature) < float("inf"):
        raise UserError(f"--temperature {temperature!r}: must be a finite number >= 0 (0: greedy decoding)")
    if not 0 < float(top_p) <= 1:
        raise UserError(f"--top-p {top_p!r}: must lie in (0, 1]")


class HFRunner:
    """``generate(requests)`` with a local checkpoint at ``path`` (a folder, or a Hub id in
    the local cache); ``identity`` names its checkpoint's contents and generation settings,
    ``source`` the folder or the Hub id and revision (see the module docstring)."""

    def __init__(self, path: str | Path, device: str = "cpu", batch_size: int = 8, max_new_tokens: int = 32,
                 dtype: torch.dtype | str = torch.float32, temperature: float = 0.0, top_p: float = 1.0,
                 seed: int = 0, device_map: str | None = None):
        from transformers import AutoModelForImageTextToText, AutoProcessor

        _check_generation(max_new_tokens, temperature, top_p)
        dtype = parse_dtype(dtype)
        if device_map is not None and importlib.util.find_spec("accelerate") is None:
            raise UserError(f"--device-map {device_map!r} needs the accelerate package, which is not installed")
        path, self.source = resolve_checkpoint(str(path))
        if not (path / "config.json").is_file():
            raise UserError(f"no model checkpoint at {str(path)!r} (expected a folder with config.json)")
        self.processor = AutoProcessor.from_pretrained(str(path))
        tok = getattr(self.processor, "tokenizer", None)
        if tok is None:
            raise UserError(f"the processor at {str(path)!r} has no tokenizer")
        tok.padding_side = "left"       # generation continues every row from its last token
        self.tokenizer = tok
        if device_map is None:
            model = AutoModelForImageTextToText.from_pretrained(str(path), dtype=dtype).to(device)
        else:
            model = AutoModelForImageTextToText.from_pretrained(str(path), dtype=dtype, device_map=device_map)
        self.model = model.eval()
        self.device = self.model.device if device_map is not None else torch.device(device)
        self.batch_size = int(batch_size)
        self.max_new_tokens = int(max_new_tokens)
        self.temperature, self.top_p, self.seed = float(temperature), float(top_p), int(seed)
        self.name = f"hf:{self.source.get('id', path.name)}"
        self.settings = {"dtype": str(self.model.dtype), "max_new_tokens": self.max_new_tokens,
                         "do_sample": self.temperature > 0}
        if self.temperature > 0:
            self.settings.update(temperature=self.temperature, top_p=self.top_p, seed=self.seed)
        if device_map is not None:
            self.settings["device_map"] = device_map
        ident = {k: v for k, v in self.settings.items() if k != "device_map"}
        self.identity = "hf " + json.dumps({"checkpoint": checkpoint_digest(path), **ident}, sort_keys=True)

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
            out = self._generate(inputs, [r.id for r in chunk])
            new = out[:, inputs["input_ids"].shape[1]:]
            replies += [t.strip() for t in self.tokenizer.batch_decode(new, skip_special_tokens=True)]
        return replies

    def _generate(self, inputs, ids: list[str]) -> torch.Tensor:
        """The model's output ids for one batch: greedy, or sampled under a torch seed drawn
        from ``seed`` and the batch's request ``ids`` (the global RNG state is restored after)."""
        if self.temperature == 0:
            return self.model.generate(**inputs, do_sample=False, max_new_tokens=self.max_new_tokens)
        digest = hashlib.blake2b("\x00".join([str(self.seed), *ids]).encode(), digest_size=8).digest()
        devices = [self.device] if self.device.type == "cuda" else []
        with torch.random.fork_rng(devices=devices):
            torch.manual_seed(int.from_bytes(digest, "little") % 2 ** 63)
            return self.model.generate(**inputs, do_sample=True, temperature=self.temperature, top_p=self.top_p,
                                       max_new_tokens=self.max_new_tokens)
