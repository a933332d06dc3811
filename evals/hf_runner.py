"""Running a local Hugging Face vision-language checkpoint in-process.

Rendered images go into the checkpoint's own processor as ``uint8 [3,H,W]`` tensors: no
PNG, no base64, no files. Prompts use the checkpoint's chat template (all images first,
then the text); requests are batched with left padding and decoded greedily, or sampled
(``temperature`` > 0, with ``top_p``) from a torch generator seeded per batch from ``seed``
and the batch's request ids, so the same command gives the same replies.

A ``--model`` that is not a folder but reads ``ORG/NAME`` (optionally ``@REVISION``) is a
Hugging Face Hub id, resolved from the local cache only (:func:`resolve_checkpoint`; nothing
is downloaded).

Families run in process here (each tested end to end through ``procvis eval`` from a tiny
random checkpoint, with the same replies at batch sizes 1 and 3: ``evals.tiny_families``):
LLaVA, LLaVA-NeXT, Idefics3 (SmolVLM), SmolVLM2 (its processor needs the num2words
package), PaliGemma, Gemma 3, Qwen2-VL, Qwen2.5-VL, Qwen3-VL and InternVL (the
transformers-native ``-hf`` checkpoints); any other ``AutoModelForImageTextToText`` model
whose processor takes images nested per request should run too. Images go to the
processor nested per request (``[[request 1's images], [request 2's], ...]``), which every
family counts its image tokens against. Without torchvision, a processor is built without
its video part (video processors need torchvision; images use the PIL image processors),
see :func:`without_video`; so is one whose checkpoint ships no video processor config
(such as one saved by a processor without its video part), with torchvision or without. A
checkpoint with no chat template (PaliGemma's) gets :func:`default_chat_template`.

Loading never prompts: a checkpoint whose code lives in its folder (``auto_map``) runs only
with ``trust_remote_code`` (``--trust-remote-code``), and a checkpoint that cannot run (no
config or weights, a model type this transformers does not know or does not run as a
vision-language model, a missing package, unreadable files) is a one-line
:class:`UserError` naming what is missing (:func:`check_checkpoint`, :func:`load_checkpoint`).

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


WEIGHT_FILES = ("*.safetensors", "*.safetensors.index.json", "pytorch_model*.bin", "pytorch_model.bin.index.json")
TESTED_FAMILIES = ("llava", "llava_next", "idefics3", "smolvlm", "paligemma", "gemma3", "qwen2_vl", "qwen2_5_vl",
                   "qwen3_vl", "internvl")     # model types tests/test_hf_families.py runs (evals/tiny_families.py)
LOAD_ERRORS = (OSError, ValueError, ImportError, KeyError, RuntimeError)   # a checkpoint transformers cannot load


def default_chat_template(image_token: str) -> str:
    """The chat template of a checkpoint that ships none (PaliGemma's do not): every image of
    the conversation as ``image_token``, then the turns' texts, one a line, with no role
    names (such a processor adds its own prefix and separator). Returns the Jinja source."""
    return ("{% for m in messages %}{% for c in m['content'] %}{% if c['type'] == 'image' %}" + image_token
            + "{% endif %}{% endfor %}{% endfor %}{% for m in messages %}{% for c in m['content'] %}"
            "{% if c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}"
            "{% if not loop.last %}{{ '\\n' }}{% endif %}{% endfor %}")


def without_video(cls: type) -> type:
    """A subclass of the processor class ``cls`` (of the same name, saving the same files
    less the video part) that neither loads nor holds a video processor: video processors
    need torchvision, images do not. Build it with ``video_processor=None``. Returns ``cls``
    itself when it has no video processor."""
    parts = cls.get_attributes()
    if "video_processor" not in parts:
        return cls
    slot = parts.index("video_processor")

    class Processor(cls):
        @classmethod
        def get_attributes(c) -> list[str]:
            """The sub-processors loaded, held and saved: ``cls``'s less the video processor."""
            return [p for p in parts if p != "video_processor"]

        @classmethod
        def _get_arguments_from_pretrained(c, *args, **kwargs) -> list:
            """The loaded sub-processors in ``cls``'s argument order, None for the video processor."""
            loaded = super()._get_arguments_from_pretrained(*args, **kwargs)
            return [*loaded[:slot], None, *loaded[slot:]]

    if "video_processor" in getattr(getattr(cls.apply_chat_template, "__code__", None), "co_names", ()):
        from transformers.processing_utils import ProcessorMixin

        # SmolVLM's reads its video processor's frame defaults before rendering: render as every processor does
        Processor.apply_chat_template = ProcessorMixin.apply_chat_template

    Processor.__name__ = Processor.__qualname__ = cls.__name__
    Processor.__module__, Processor.__doc__ = cls.__module__, cls.__doc__
    return Processor


def _read_config(path: Path) -> dict:
    """``path``'s config.json as a dict; a :class:`UserError` when there is none or it is not JSON."""
    try:
        config = json.loads((path / "config.json").read_text())
    except FileNotFoundError:
        raise UserError(f"--model {str(path)!r}: no model checkpoint there (expected a folder with "
                        "config.json)") from None
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as e:
        raise UserError(f"--model {str(path)!r}: config.json is not readable JSON ({e})") from None
    if not isinstance(config, dict):
        raise UserError(f"--model {str(path)!r}: config.json is not a JSON object")
    return config


def check_checkpoint(path: Path, config: dict, trust_remote_code: bool = False) -> None:
    """A one-line :class:`UserError` naming what keeps the checkpoint at ``path`` (its parsed
    ``config``) from running here: no weights, code in the checkpoint without
    ``trust_remote_code``, a model type the installed transformers does not know or does not
    run as a vision-language (image-text-to-text) model. Returns None when none applies."""
    from transformers import __version__
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES
    from transformers.models.auto.modeling_auto import MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES as VLM

    where, kind = f"--model {str(path)!r}", config.get("model_type")
    if not any(next(path.glob(p), None) for p in WEIGHT_FILES):
        raise UserError(f"{where}: no weights in the folder (expected model.safetensors, sharded *.safetensors "
                        "with their index, or pytorch_model.bin)")
    if kind in VLM and kind in CONFIG_MAPPING_NAMES:
        return                                      # transformers' own code, remote code or not
    if config.get("auto_map"):
        if trust_remote_code:
            return
        code = ", ".join(sorted({str(v).split(".")[0] + ".py" for v in config["auto_map"].values()
                                 if isinstance(v, str)}))
        raise UserError(f"{where}: model type {kind!r} runs only with the Python code in the checkpoint ({code}); "
                        "pass --trust-remote-code to run it if you trust that code")
    if not kind:
        raise UserError(f"{where}: config.json names no model_type")
    if kind not in CONFIG_MAPPING_NAMES:
        raise UserError(f"{where}: model type {kind!r} is unknown to the installed transformers {__version__} "
                        "(a newer transformers may know it)")
    raise UserError(f"{where}: model type {kind!r} is not a vision-language model (transformers {__version__} "
                    f"runs {len(VLM)} image-text-to-text model types here, e.g. {', '.join(TESTED_FAMILIES)})")


def _processor_class(path: Path, config: dict) -> type | None:
    """The transformers processor class the checkpoint names (its processor files' or its
    model type's), or None for one that transformers does not ship (remote code)."""
    import transformers
    from transformers.models.auto.processing_auto import PROCESSOR_MAPPING_NAMES

    for name in ("processor_config.json", "preprocessor_config.json", "tokenizer_config.json"):
        try:
            found = json.loads((path / name).read_text()).get("processor_class")
        except (OSError, ValueError, AttributeError):
            continue
        if found:
            return getattr(transformers, found, None)
    found = PROCESSOR_MAPPING_NAMES.get(config.get("model_type"))
    return getattr(transformers, found, None) if isinstance(found, str) else None


def torchvision_installed() -> bool:
    """Whether torchvision can be imported here (video processors need it). Returns the answer."""
    return importlib.util.find_spec("torchvision") is not None


def ships_video_processor(path: Path) -> bool:
    """Whether the checkpoint folder ``path`` holds a video processor's config where
    transformers looks for one: the ``video_processor`` entry of processor_config.json,
    video_preprocessor_config.json, or preprocessor_config.json (older checkpoints' image
    processor config, which their video processor shares). Returns the answer."""
    from transformers.utils import IMAGE_PROCESSOR_NAME, PROCESSOR_NAME, VIDEO_PROCESSOR_NAME

    if (path / VIDEO_PROCESSOR_NAME).is_file() or (path / IMAGE_PROCESSOR_NAME).is_file():
        return True
    try:
        return "video_processor" in json.loads((path / PROCESSOR_NAME).read_text())
    except (OSError, ValueError, TypeError):
        return False


def load_processor(path: Path, config: dict, trust_remote_code: bool = False):
    """The checkpoint's processor: without its video part when torchvision is absent or the
    checkpoint ships no video processor config (see :func:`without_video`), with
    :func:`default_chat_template` when it ships no chat template. Returns the processor; a
    :class:`UserError` when it has no tokenizer."""
    from transformers import AutoProcessor

    cls = _processor_class(path, config)
    # With torchvision, AutoProcessor loads a video processor and fails where the folder has no config for one
    if cls is not None and (not torchvision_installed()
                            or (not ships_video_processor(path) and without_video(cls) is not cls)):
        processor = without_video(cls).from_pretrained(str(path), trust_remote_code=trust_remote_code)
    else:
        processor = AutoProcessor.from_pretrained(str(path), trust_remote_code=trust_remote_code)
    tok = getattr(processor, "tokenizer", None)
    if tok is None or not hasattr(processor, "image_processor"):
        raise UserError(f"--model {str(path)!r}: the checkpoint's processor has no "
                        f"{'tokenizer' if tok is None else 'image processor'}: not a vision-language checkpoint")
    if not processor.chat_template:
        processor.chat_template = tok.chat_template or default_chat_template(str(getattr(processor, "image_token",
                                                                                         "<image>")))
    return processor


def load_checkpoint(path: Path, dtype, device_map: str | None, trust_remote_code: bool = False) -> tuple:
    """The processor and model of the checkpoint at ``path`` (:func:`check_checkpoint` first);
    a failure to load them is a one-line :class:`UserError` naming the folder and the cause.
    Nothing prompts: ``trust_remote_code`` is passed as given. Returns ``(processor, model)``."""
    from transformers import AutoModelForImageTextToText

    config = _read_config(path)
    check_checkpoint(path, config, trust_remote_code)
    placement = {} if device_map is None else {"device_map": device_map}
    try:
        processor = load_processor(path, config, trust_remote_code)
        model = AutoModelForImageTextToText.from_pretrained(str(path), dtype=dtype, trust_remote_code=trust_remote_code,
                                                            **placement)
    except UserError:
        raise
    except LOAD_ERRORS as e:
        first = next((line.strip() for line in str(e).splitlines() if line.strip()), type(e).__name__)
        hint = "; pass --trust-remote-code to run it" if "trust_remote_code" in str(e) else ""
        raise UserError(f"--model {str(path)!r}: cannot load the checkpoint: {first}{hint}") from None
    return processor, model


def _images(r: Request) -> list:
    """Every image of ``r``'s conversation in the order its prompt shows them: earlier turns' first."""
    return [*(i for t in r.history for i in t[1]), *r.images]


class HFRunner:
    """``generate(requests)`` with a local checkpoint at ``path`` (a folder, or a Hub id in
    the local cache); ``identity`` names its checkpoint's contents and generation settings,
    ``source`` the folder or the Hub id and revision (see the module docstring)."""

    def __init__(self, path: str | Path, device: str = "cpu", batch_size: int = 8, max_new_tokens: int = 32,
                 dtype: torch.dtype | str = torch.float32, temperature: float = 0.0, top_p: float = 1.0,
                 seed: int = 0, device_map: str | None = None, trust_remote_code: bool = False):
        _check_generation(max_new_tokens, temperature, top_p)
        dtype = parse_dtype(dtype)
        if device_map is not None and importlib.util.find_spec("accelerate") is None:
            raise UserError(f"--device-map {device_map!r} needs the accelerate package, which is not installed")
        path, self.source = resolve_checkpoint(str(path))
        self.processor, model = load_checkpoint(path, dtype, device_map, bool(trust_remote_code))
        self.tokenizer = self.processor.tokenizer
        self.tokenizer.padding_side = "left"       # generation continues every row from its last token
        self.model = (model if device_map is not None else model.to(device)).eval()
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
        if trust_remote_code:
            self.settings["trust_remote_code"] = True          # recorded; the checkpoint digest covers its code
        ident = {k: v for k, v in self.settings.items() if k not in ("device_map", "trust_remote_code")}
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
        """One reply per request, in order: batches of ``batch_size`` requests, each batch's
        requests with images and without run apart (processors take images nested per request)."""
        replies: dict[int, str] = {}
        for lo in range(0, len(requests), self.batch_size):
            chunk = range(lo, min(lo + self.batch_size, len(requests)))
            pictured = [i for i in chunk if _images(requests[i])]
            for part in (pictured, [i for i in chunk if i not in pictured]):
                if part:
                    replies.update(zip(part, self._batch([requests[i] for i in part])))
        return [replies[i] for i in range(len(requests))]

    def _batch(self, chunk: list[Request]) -> list[str]:
        """The replies to ``chunk``, requests that all have images or all have none."""
        images = [[img.cpu() for img in _images(r)] for r in chunk]
        inputs = self.processor(text=[self.prompt(r) for r in chunk], images=images if images[0] else None,
                                padding=True, return_tensors="pt")
        inputs = inputs.to(self.device)
        if "pixel_values" in inputs and inputs["pixel_values"].is_floating_point():
            inputs["pixel_values"] = inputs["pixel_values"].to(self.model.dtype)
        out = self._generate(inputs, [r.id for r in chunk])
        new = out[:, inputs["input_ids"].shape[1]:]
        return [t.strip() for t in self.tokenizer.batch_decode(new, skip_special_tokens=True)]

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
